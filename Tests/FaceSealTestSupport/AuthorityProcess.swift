import Foundation

/// `faceseal serve`, the built binary, as a child process on an ephemeral loopback port over its own data directory:
/// the live mode of the harnesses (the whole executable, its start-up and its files), where `LoopbackAuthority` is
/// the in-process one.
package struct AuthorityProcess: Sendable {
    /// The running `faceseal serve`.
    package let process: ChildProcess
    /// The URL it announced (`faceseal: listening on URL`), which is its issuer.
    package let issuer: String
    /// The management API with the first admin key it wrote to its data directory.
    package let management: ManagementClient

    /// Starts `faceseal serve --data-dir dataDirectory --port 0` plus `arguments` and waits for its URL.
    package static func start(dataDirectory: String, arguments: [String] = []) async throws -> AuthorityProcess {
        let process = try ChildProcess.start(try FacesealBinary.path, ["serve", "--data-dir", dataDirectory, "--port", "0"] + arguments)
        do {
            let listening = try await process.line(containing: "faceseal: listening on ", within: .seconds(60))
            let issuer = String(listening.split(separator: " ").last ?? "")
            let adminKey = try String(contentsOfFile: dataDirectory + "/admin-api-key", encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            return AuthorityProcess(process: process, issuer: issuer, management: ManagementClient(baseURL: issuer, apiKey: adminKey))
        } catch {
            process.stop()
            throw error
        }
    }
}
