import Foundation

// libFuzzer calls these two C functions; `-sanitize=fuzzer` links its own `main`.

/// The target `FACESEAL_FUZZ_TARGET` names, resolved once.
let selectedTarget: FuzzTarget? = ProcessInfo.processInfo.environment["FACESEAL_FUZZ_TARGET"].flatMap { name in
    FuzzTargets.all.first { $0.name == name }
}

/// Refuses to start without a known target, listing them.
@_cdecl("LLVMFuzzerInitialize")
public func fuzzerInitialize(_ argc: UnsafeMutablePointer<CInt>?,
                             _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?) -> CInt {
    guard selectedTarget != nil else {
        let names = FuzzTargets.all.map(\.name).joined(separator: " ")
        FileHandle.standardError.write(Data("faceseal-fuzz: set FACESEAL_FUZZ_TARGET to one of: \(names)\n".utf8))
        exit(2)
    }
    return 0
}

/// Runs one input through the selected parser; a trap is the finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    selectedTarget?.run(bytes)
    return 0
}
