import FaceSealTestSupport
import Foundation
import Testing

/// `faceseal` explains itself: `--help` on every command and subcommand (found by walking the help's own lists),
/// `--version`, and every refused command line answered with a sentence, exit 64, and no crash on any input.
@Suite struct HelpAndErrorsTests {
    /// The subcommand names a help text lists under `subcommands:`.
    static func subcommands(in help: String) -> [String] {
        let lines = help.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(of: "subcommands:") else { return [] }
        return lines[(start + 1)...].prefix { !$0.isEmpty }.compactMap { $0.split(separator: " ").first.map(String.init) }
    }

    @Test func everyCommandAndSubcommandAnswersHelp() async throws {
        var pending: [[String]] = [[]]
        var seen: [String] = []
        while let path = pending.popLast() {
            let run = try await CLIRun.faceseal(path + ["--help"])
            let name = (["faceseal"] + path).joined(separator: " ")
            #expect(run.status == 0, "\(name) --help: \(run.stderr)")
            #expect(run.stdout.hasPrefix("usage: \(name)"), "\(name) --help: \(run.stdout)")
            #expect(run.stderr.isEmpty, "\(name) --help wrote to stderr: \(run.stderr)")
            seen.append(name)
            pending += Self.subcommands(in: run.stdout).map { path + [$0] }
        }
        for named in ["faceseal rp serve", "faceseal rp request", "faceseal device enrol", "faceseal device revoke", "faceseal bench",
                      "faceseal bench crypto", "faceseal serve", "faceseal admin tenant create", "faceseal admin invite create", "faceseal demo"] {
            #expect(seen.contains(named), "\(named) is not reachable from `faceseal --help`")
        }
        #expect(seen.count >= 40, "\(seen)")
        // -h and `--help` after other arguments work too, and help wins over a wrong value.
        let short = try await CLIRun.faceseal(["device", "approve", "-h"])
        #expect(short.status == 0 && short.stdout.hasPrefix("usage: faceseal device approve"))
        let late = try await CLIRun.faceseal(["serve", "--port", "nope", "--help"])
        #expect(late.status == 0 && late.stdout.contains("--print-config"))
    }

    @Test func versionIsPrinted() async throws {
        let run = try await CLIRun.faceseal(["--version"])
        #expect(run.status == 0)
        #expect(run.stdout.range(of: #"^faceseal \d+\.\d+\.\d+\n$"#, options: .regularExpression) != nil, "\(run.stdout)")
    }

    /// The refused command lines, and a phrase each message must contain.
    static let refused: [([String], String)] = [
        ([], "a subcommand is needed"),
        (["frobnicate"], "unknown subcommand 'frobnicate'"),
        (["serve", "--bogus"], "unknown option --bogus."),
        (["serve", "--port"], "--port needs a value."),
        (["serve", "--port", "1", "--port", "2"], "--port is given more than once."),
        (["serve", "--print-config=yes"], "--print-config takes no value."),
        (["serve", "extra"], "unexpected argument 'extra'"),
        (["device"], "a subcommand is needed: enrol, inbox, approve"),
        (["device", "fly"], "unknown subcommand 'fly'"),
        (["device", "enrol", "--faces", "a.jpg"], "--link is required."),
        (["device", "approve", "--faces", "a.jpg"], "Give --link LINK or --next."),
        (["device", "approve", "--link", "x", "--next", "--faces", "a.jpg"], "--link and --next cannot be used together."),
        (["device", "--presence", "maybe", "keys"], "--presence 'maybe' is not valid: expected terminal or scripted."),
        (["device", "keys", "--limit", "3"], "unknown option --limit."),
        (["device", "--authority", "nope", "keys"], "--authority 'nope' is not valid: expected an http:// or https:// URL"),
        (["device", "--authority", "ftp://example.com", "keys"], "--authority 'ftp://example.com' is not valid"),
        (["device", "--authority", "http://", "keys"], "--authority 'http://' is not valid"),
        (["rp"], "a subcommand is needed: serve, request"),
        (["rp", "serve", "--client-id", "x", "--client-secret-file", "/nonexistent"], "--issuer is required."),
        (["rp", "serve", "--issuer", "http://127.0.0.1:1", "--client-id", "x", "--client-secret-file", "/nonexistent"],
         "Cannot read the client secret from /nonexistent"),
        (["rp", "request", "fly", "--user", "a@b", "--message", "m"], "KIND 'fly' is not valid"),
        (["rp", "request", "sign", "--user", "a@b", "--context", "c", "--message", "m"], "sign needs --data or --data-file."),
        (["admin", "--api-key", "fsk_x", "tenant", "list"], "The API key is never an argument"),
        (["admin", "--url", "ftp://x", "tenant", "list"], "--url 'ftp://x' is not valid"),
        (["admin", "tenant", "show"], "TENANT is missing."),
        (["admin", "tenant", "create", "--id", "a", "--name", "A", "--colour", "red"], "unknown option --colour."),
        (["bench"], "a subcommand is needed: crypto, face, auth, wait, authority, chaos"),
        (["bench", "crypto", "--openssl", "m"], "--openssl and --python-library go together."),
        (["demo", "--fast"], "unknown option --fast."),
    ]

    @Test func refusedCommandLinesAreSentencesWithExit64() async throws {
        for (arguments, phrase) in Self.refused {
            let run = try await CLIRun.faceseal(arguments, environment: ["FACESEAL_API_KEY": "fsk_not_used"])
            #expect(run.status == 64, "\(arguments): \(run.status) \(run.stderr)")
            #expect(run.stdout.isEmpty, "\(arguments) wrote to stdout: \(run.stdout)")
            let lines = run.stderr.split(separator: "\n").map(String.init)
            #expect(lines.count == 2, "\(arguments): \(run.stderr)")
            let first = lines.first ?? ""
            // `faceseal <command words>: <a sentence>.` then where the help is.
            #expect(first.range(of: #"^faceseal( [a-z]+)*: .+\.$"#, options: .regularExpression) != nil, "\(arguments): \(first)")
            #expect(first.contains(phrase), "\(arguments): \(first)")
            #expect(lines.last?.range(of: #"^Run `faceseal( [a-z]+)* --help` for usage\.$"#, options: .regularExpression) != nil,
                    "\(arguments): \(run.stderr)")
            for swiftValue in ["(\"", "Error.", "Optional(", "FaceSeal"] {
                #expect(!first.contains(swiftValue), "\(arguments) prints a Swift value: \(first)")
            }
        }
    }

    /// Every numeric option, with values that are out of range, not numbers, or built to overflow.
    @Test func numbersFromArgumentsAreRangeCheckedWithoutACrash() async throws {
        let options: [[String]] = [
            ["serve", "--port"], ["serve", "--max-connections-per-address"], ["serve", "--request-head-timeout"],
            ["serve", "--client-auth-failures"], ["serve", "--pending-requests-per-user"],
            ["device", "inbox", "--wait"], ["device", "audit", "--limit"],
            ["rp", "serve", "--issuer", "http://127.0.0.1:1", "--client-id", "x", "--client-secret-file", "/x", "--port"],
            ["rp", "request", "login", "--user", "a@b", "--message", "m", "--timeout"],
            ["admin", "audit", "--limit"], ["admin", "tenant", "create", "--id", "a", "--name", "A", "--attempts-max"],
            ["bench", "auth", "--requests"], ["bench", "authority", "--concurrency"], ["bench", "chaos", "--kills"],
            ["bench", "crypto", "--batches"], ["bench", "face", "--iterations"],
        ]
        let values = ["99999999999999999999999", "-9223372036854775808", "9223372036854775807", "-1", "0x10", "1e3", " 5", "٣",
                      "", "20/0", "1/99999999999999999999", "\u{1B}[31mred", String(repeating: "9", count: 5000)]
        for option in options {
            for value in values {
                let run = try await CLIRun.faceseal(option + [value], environment: ["FACESEAL_API_KEY": "fsk_not_used"])
                #expect(run.status == 64, "\(option) \(value.prefix(40)): \(run.status) \(run.stderr.prefix(300))")
                #expect(!run.stderr.contains("\u{1B}"), "a control character is echoed: \(option)")
                #expect(run.stderr.utf8.count < 2_000, "\(option): the message repeats a long value")
            }
        }
        let huge = try await CLIRun.faceseal(["device", "--state-dir", String(repeating: "d", count: 70_000), "keys"])
        #expect(huge.status == 64 && huge.stderr.contains("longer than 64 KiB"), "\(huge.stderr.prefix(300))")
    }
}
