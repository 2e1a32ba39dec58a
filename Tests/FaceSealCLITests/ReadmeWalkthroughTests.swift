import FaceSealTestSupport
import Foundation
import Synchronization
import Testing

/// README.md's manual walkthrough, run as written: the fenced block after the `<!-- walkthrough -->` marker, line by
/// line, each through `/bin/sh` in a fresh directory with the built `faceseal` first on `PATH` — so every command is
/// a child process of this test and they talk over loopback on the defaults (8080, 8788). A line ending in `&` runs
/// in the background and is ready when it prints the text its comment quotes (`ready when it prints "…"`);
/// `NAME=value` lines set a variable for the lines after; `wait $!` waits for the last background line and needs
/// its exit 0; every other line must exit 0.
@Suite(.serialized) struct ReadmeWalkthroughTests {
    static var cache: URL {
        ProcessInfo.processInfo.environment["FACESEAL_CACHE"].map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache/faceseal")
    }

    /// The models and photos `make setup` fetches: without them the walkthrough is skipped, except under CI.
    static var assetsPresent: Bool {
        FileManager.default.fileExists(atPath: cache.appendingPathComponent("models/dlib_face_recognition_resnet_model_v1.dat").path)
            && FileManager.default.fileExists(atPath: cache.appendingPathComponent("images/johns/John_Salley").path)
            || ProcessInfo.processInfo.environment["CI"] == "true"
    }

    /// The walkthrough's lines, continuation lines joined.
    static func walkthrough() throws -> [String] {
        let readme = try String(contentsOf: FacesealBinary.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let marker = try #require(readme.range(of: "<!-- walkthrough -->"), "README.md has no <!-- walkthrough --> marker")
        let after = readme[marker.upperBound...]
        let open = try #require(after.range(of: "```sh\n"))
        let close = try #require(after[open.upperBound...].range(of: "\n```"))
        var lines: [String] = []
        var pending = ""
        for line in after[open.upperBound..<close.lowerBound].split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasSuffix("\\") {
                pending += line.dropLast() + " "
                continue
            }
            let full = pending + line
            pending = ""
            let trimmed = full.trimmingCharacters(in: .whitespaces)
            if !trimmed.isEmpty && !trimmed.hasPrefix("#") { lines.append(trimmed) }
        }
        return lines
    }

    @Test(.enabled(if: assetsPresent, "run `make setup`: face models and photos are missing"), .timeLimit(.minutes(8)))
    func theReadmeWalkthroughRunsAsWritten() async throws {
        let lines = try Self.walkthrough()
        #expect(lines.count >= 10, "\(lines)")
        for port in [8080, 8788] { try #require(!Walkthrough.listening(port: port), "port \(port) is in use: the walkthrough needs it") }
        let walkthrough = try Walkthrough()
        defer { walkthrough.stop() }
        var outputs: [String] = []
        for line in lines {
            outputs.append(try await walkthrough.run(line))
        }
        let transcript = outputs.joined(separator: "\n")
        #expect(transcript.contains("faceseal: listening on http://127.0.0.1:8080"))
        #expect(transcript.contains("delivery endpoint: http://127.0.0.1:8788/faceseal/delivery"))
        #expect(transcript.contains("state: succeeded(key: "), "the enrolment")
        #expect(transcript.contains("verified: public keys"), "the public-keys request")
        #expect(transcript.contains("verified: ML-DSA-65 signature"), "the signature request")
        // `device inbox` showed the link and left it for `approve --next`, which found it at once.
        let inbox = try #require(lines.firstIndex { $0.contains("device inbox") })
        #expect(outputs[inbox].contains("eyJ"), "inbox: \(outputs[inbox])")
        #expect(outputs[inbox + 1].contains("state: succeeded(rp: "), "approve --next: \(outputs[inbox + 1])")

        // The same system, past the README. A used invitation says so (not "expired"), exit 1, nothing enrolled.
        let photos = "$PHOTOS/000192_02159531.jpg $PHOTOS/000194_02159572.jpg"
        let reused = try await walkthrough.run("faceseal device --state-dir second --presence scripted enrol --link @invitation.txt --faces \(photos)",
                                               status: 1)
        #expect(reused.contains("faceseal device enrol: the invitation was already used"), "\(reused)")
        // A tenant that requires liveness: still photos are refused with that reason, before anything is submitted.
        for line in ["faceseal admin tenant create --id live --name Live --liveness-required true --password-mode none",
                     "faceseal admin user create --tenant live --email lin@example.com",
                     "LIVE_APP=$(faceseal admin --get client_id app create --tenant live --label Live --delivery-endpoint http://127.0.0.1:8788/faceseal/delivery)",
                     "faceseal admin --get link invite create --tenant live --email lin@example.com --client-id \"$LIVE_APP\" > live-invitation.txt"] {
            _ = try await walkthrough.run(line)
        }
        let live = try await walkthrough.run("faceseal device --state-dir third --presence scripted enrol --link @live-invitation.txt --faces \(photos)",
                                             status: 1)
        #expect(live.contains("faceseal device enrol: the tenant requires liveness"), "\(live)")
        #expect(!live.contains("state: verifying"), "\(live)")
        // The SDK's errors read as sentences, not Swift values.
        let unknownKey = try await walkthrough.run("faceseal device revoke --key nope", status: 1)
        #expect(unknownKey.contains("faceseal device revoke: this device holds no key nope"), "\(unknownKey)")
        let noTerminal = try await walkthrough.run("faceseal device rotate < /dev/null", status: 1)
        #expect(noTerminal.contains("rotation failed: user presence is not available"), "\(noTerminal)")
        for text in [unknownKey, noTerminal] {
            #expect(!text.contains("FaceSealSDK.") && !text.contains("UnknownKey("), "\(text)")
        }
        // `inbox --take` removes what it shows; a plain `inbox` keeps it.
        _ = try await walkthrough.run("""
            faceseal rp request login --user ada@example.com --message "Sign in" --timeout 60 &    # ready when it prints "started: "
            """)
        let kept = try await walkthrough.run("faceseal device inbox --wait 30")
        #expect(try await walkthrough.run("faceseal device inbox") == kept)
        let taken = try await walkthrough.run("faceseal device inbox --take")
        #expect(taken == kept && taken.contains("eyJ"), "\(taken)")
        #expect(try await walkthrough.run("faceseal device inbox").isEmpty)
    }
}

/// Runs walkthrough lines in one scratch directory; keeps the background ones until `stop()`.
final class Walkthrough: Sendable {
    let directory: URL
    let environment: Mutex<[String: String]>
    private let background = Mutex<[Background]>([])

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("faceseal-walkthrough-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let binDirectory = URL(fileURLWithPath: try FacesealBinary.path).deletingLastPathComponent().path
        var variables = ["PATH": "\(binDirectory):/usr/bin:/bin", "HOME": FileManager.default.homeDirectoryForCurrentUser.path]
        variables["FACESEAL_CACHE"] = ProcessInfo.processInfo.environment["FACESEAL_CACHE"]
        environment = Mutex(variables)
    }

    /// Whether something accepts connections on 127.0.0.1:`port`.
    static func listening(port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    /// Runs one line, which must exit with `status`; answers what it printed (a background line: up to its ready text).
    func run(_ line: String, status: Int32 = 0) async throws -> String {
        let shell = "cd '\(directory.path)' && "
        if line == "wait $!" {
            let last = try #require(background.withLock { $0.last })
            let status = await last.exit(within: .seconds(300))
            #expect(status == 0, "`\(last.line)` exited \(status.map(String.init) ?? "late"): \(last.output)\n\(last.errors)")
            return last.output
        }
        if let assignment = line.firstMatch(of: /^(export )?([A-Z_][A-Z0-9_]*)=(.*)$/) {
            let name = String(assignment.2)
            let run = try await CLIRun.shell(shell + "\(name)=\(assignment.3) && printf %s \"$\(name)\"", environment: environment.withLock { $0 })
            #expect(run.status == 0, "`\(line)`: \(run.stderr)")
            environment.withLock { $0[name] = run.stdout }
            return run.stdout
        }
        if let job = line.firstMatch(of: /^(.*?)\s*&\s*(#.*)?$/) {
            let ready = try #require(job.2.flatMap { $0.firstMatch(of: /ready when it prints "([^"]+)"/) }.map { String($0.1) },
                                     "`\(line)` does not say when it is ready")
            let process = try Background(line: line, script: shell + "exec " + job.1, environment: environment.withLock { $0 })
            background.withLock { $0.append(process) }
            let seen = await process.waitFor(ready, within: .seconds(120))
            try #require(seen, "`\(line)` never printed \"\(ready)\": \(process.output)\n\(process.errors)")
            return process.output
        }
        let run = try await CLIRun.shell(shell + line, environment: environment.withLock { $0 })
        #expect(run.status == status, "`\(line)` exited \(run.status): \(run.stdout)\n\(run.stderr)")
        return run.stdout + run.stderr
    }

    /// Stops the background lines (newest first) and removes the directory.
    func stop() {
        for process in background.withLock({ $0 }).reversed() { process.stop() }
        try? FileManager.default.removeItem(at: directory)
    }
}

/// A background line: its output collected as it arrives, its ready text and exit awaited.
final class Background: Sendable {
    let line: String
    private let process: SpawnedProcess
    /// What arrived on each pipe, the exit status, and how many of the two pipes reached their end: the status can be
    /// known before the last output is read, so an end is judged only once both pipes are drained too.
    private let state = Mutex((output: "", errors: "", status: Int32?.none, closedPipes: 0))
    private let changed = DispatchSemaphore(value: 0)

    init(line: String, script: String, environment: [String: String]) throws {
        self.line = line
        process = try SpawnedProcess(binary: "/bin/sh", arguments: ["-c", script], environment: environment)
        for (handle, isError) in [(process.output, false), (process.errors, true)] {
            Thread.detachNewThread { [self] in
                while true {
                    let data = handle.availableData
                    if data.isEmpty {
                        state.withLock { $0.closedPipes += 1 }
                        changed.signal()
                        break
                    }
                    let text = String(decoding: data, as: UTF8.self)
                    state.withLock { if isError { $0.errors += text } else { $0.output += text } }
                    changed.signal()
                }
            }
        }
        Thread.detachNewThread { [self] in
            let status = process.wait()
            state.withLock { $0.status = status }
            changed.signal()
        }
    }

    var output: String { state.withLock { $0.output } }
    var errors: String { state.withLock { $0.errors } }

    /// Whether `text` appeared on standard output before the process ended or `limit` passed.
    func waitFor(_ text: String, within limit: Duration) async -> Bool {
        let seen: Bool? = await blocking(limit) { state in
            state.output.contains(text) ? true : (state.status != nil && state.closedPipes == 2 ? false : nil)
        }
        return seen ?? false
    }

    /// The exit status once everything the process printed was read, nil when it did not end within `limit`.
    func exit(within limit: Duration) async -> Int32? {
        await blocking(limit) { state in state.closedPipes == 2 ? state.status : nil }
    }

    /// Waits on a plain thread, woken by every change, until `decide` answers or the time is up.
    private func blocking<T: Sendable>(
        _ limit: Duration, _ decide: @escaping @Sendable ((output: String, errors: String, status: Int32?, closedPipes: Int)) -> T?
    ) async -> T? {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { [self] in
                let deadline = DispatchTime.now() + .milliseconds(Int(limit.components.seconds * 1000))
                while true {
                    if let answer = state.withLock({ decide($0) }) { return continuation.resume(returning: answer) }
                    if changed.wait(timeout: deadline) == .timedOut { return continuation.resume(returning: state.withLock { decide($0) }) }
                }
            }
        }
    }

    /// SIGTERM, then waits (up to 10 s) for the end.
    func stop() {
        if state.withLock({ $0.status }) == nil { process.terminate() }
        let deadline = DispatchTime.now() + 10
        while state.withLock({ $0.status }) == nil, changed.wait(timeout: deadline) == .success {}
    }
}
