import FaceSealTestSupport
import Foundation
import Synchronization
import Testing

/// One finished run of the built `faceseal` binary.
struct CLIRun: Sendable {
    let status: Int32
    let stdout: String
    let stderr: String

    /// Runs `faceseal <arguments>` to its end with `PATH` plus `environment` (and `HOME`, for the asset cache).
    static func faceseal(_ arguments: [String], environment: [String: String] = [:]) async throws -> CLIRun {
        try await run(try FacesealBinary.path, arguments, environment: environment)
    }

    /// Runs `/bin/sh -c script` to its end.
    static func shell(_ script: String, environment: [String: String]) async throws -> CLIRun {
        try await run("/bin/sh", ["-c", script], environment: environment)
    }

    private static func run(_ binary: String, _ arguments: [String], environment: [String: String]) async throws -> CLIRun {
        var variables = environment
        variables["HOME"] = variables["HOME"] ?? ProcessInfo.processInfo.environment["HOME"]
        let fixed = variables
        return try await withCheckedThrowingContinuation { continuation in
            // Blocking reads on a plain queue thread, not the concurrency pool; posix_spawn, not Foundation.Process.
            DispatchQueue.global().async {
                do {
                    let process = try SpawnedProcess(binary: binary, arguments: arguments, environment: fixed)
                    let errors = Mutex(Data())
                    let group = DispatchGroup()
                    group.enter()
                    DispatchQueue.global().async {
                        let data = process.errors.readDataToEndOfFile()
                        errors.withLock { $0 = data }
                        group.leave()
                    }
                    let output = process.output.readDataToEndOfFile()
                    group.wait()
                    let status = process.wait()
                    continuation.resume(returning: CLIRun(status: status, stdout: String(decoding: output, as: UTF8.self),
                                                          stderr: String(decoding: errors.withLock { $0 }, as: UTF8.self)))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }
}
