import FaceSealTestSupport
import Foundation
import Synchronization
import Testing

/// One finished run of the built `faceseal` binary.
struct CLIRun: Sendable {
    let status: Int32
    let stdout: String
    let stderr: String

    /// The package's root directory.
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The `faceseal` executable of this build: beside the test bundle, else in `.build/debug`.
    static var binary: String {
        get throws {
            let candidates = [
                URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("faceseal").path,
                packageRoot.appendingPathComponent(".build/debug/faceseal").path,
            ]
            return try #require(candidates.first { FileManager.default.isExecutableFile(atPath: $0) },
                                "the faceseal binary is not built (swift build --build-tests builds it)")
        }
    }

    /// Runs `faceseal <arguments>` to its end with `PATH` plus `environment` (and `HOME`, for the asset cache).
    static func faceseal(_ arguments: [String], environment: [String: String] = [:]) async throws -> CLIRun {
        try await run(try binary, arguments, environment: environment)
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
