import FaceSealAuthority
import FaceSealCrypto
import FaceSealHTTP
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `faceseal bench authority`: full sign-in ceremonies end to end over loopback HTTP against a `faceseal serve`
/// child process (SPEC §11: ≥ 1,000 a second, p99 < 20 ms at 64 concurrent, SQLite; < 150 MB resident with 10,000
/// pending requests). Each of `--concurrency` workers plays applications and their users' enrolled devices in turn:
/// backchannel request → the link through the outbox (the device's long poll) → request details → face-token
/// download → completion with the token opened and really re-sealed → token endpoint, the ID token verified; a second
/// run in ping mode waits for the ping callback before the token request. The ceiling, in the same run and with the
/// same load generator: a trivial handler on FaceSeal's HTTP server and a plain C libmicrohttpd responder (`--peer`),
/// both in child processes too. CPU comes from `/proc` for the children and `getrusage` for this process (the load
/// generator shares the machine's cores with the server, so its share is printed).
enum BenchAuthority {
    static let usage = """
    usage: faceseal bench authority [--database sqlite|postgres|postgres://…] [--concurrency N (1…512, default 64)]
                                    [--seconds N (1…3600, default 10)] [--pending N (0…100000, default 0)]
                                    [--devices N (default: concurrency)] [--modes poll,ping] [--peer PATH]
                                    [--instances N (1…8, default 1; PostgreSQL only)]
      postgres: the URL in FACESEAL_TEST_POSTGRES_URL (scripts/with-postgres.sh sets it)
      --instances: that many `faceseal serve` processes on the one database; each device talks to another
                   instance than its application, so every link crosses processes
      --peer: a C libmicrohttpd responder (scripts/bench-authority.sh builds one) measured as a second ceiling
    """

    enum Mode: String, Sendable { case poll, ping }

    struct Options: Sendable {
        var database = "sqlite"
        var concurrency = 64
        var seconds = 10
        var pending = 0
        var devices: Int?
        var modes: [Mode] = [.poll, .ping]
        var peer: String?
        var instances = 1
        /// Internal: run as the trivial-handler ceiling server instead of the driver.
        var trivialServer = false
    }

    static func run(_ arguments: [String]) async -> Int32 {
        let options: Options
        do {
            options = try parse(arguments)
        } catch {
            printError("faceseal bench authority: \(error)\n\(usage)")
            return 64
        }
        if options.trivialServer { return await serveTrivially() }
        do {
            return try await BenchAuthorityRun(options).drive()
        } catch {
            printError("faceseal bench authority: \(error)")
            return 1
        }
    }

    static func parse(_ arguments: [String]) throws(BenchAuthorityError) -> Options {
        var options = Options()
        var rest = arguments[...]
        func number(_ text: String, _ flag: String, _ range: ClosedRange<Int>) throws(BenchAuthorityError) -> Int {
            guard text.utf8.count <= 7, let value = Int(text), range.contains(value) else {
                throw BenchAuthorityError("\(flag) must be \(range.lowerBound)…\(range.upperBound)")
            }
            return value
        }
        while let flag = rest.popFirst() {
            if flag == "--serve-trivial" {
                options.trivialServer = true
                continue
            }
            guard let value = rest.popFirst() else { throw BenchAuthorityError("\(flag) needs a value") }
            switch flag {
            case "--database":
                guard value == "sqlite" || value == "postgres" || value.hasPrefix("postgres://") || value.hasPrefix("postgresql://") else {
                    throw BenchAuthorityError("--database is sqlite, postgres or a postgres:// URL")
                }
                options.database = value
            case "--concurrency": options.concurrency = try number(value, flag, 1...512)
            case "--seconds": options.seconds = try number(value, flag, 1...3600)
            case "--pending": options.pending = try number(value, flag, 0...100_000)
            case "--devices": options.devices = try number(value, flag, 1...100_000)
            case "--peer": options.peer = value
            case "--instances": options.instances = try number(value, flag, 1...8)
            case "--modes":
                let modes = value.split(separator: ",").map { Mode(rawValue: String($0)) }
                guard !modes.isEmpty, modes.allSatisfy({ $0 != nil }) else { throw BenchAuthorityError("--modes is a list of poll and ping") }
                options.modes = modes.compactMap { $0 }
            default:
                throw BenchAuthorityError("unknown option \(flag)")
            }
        }
        if options.instances > 1 && options.database == "sqlite" {
            throw BenchAuthorityError("--instances above 1 needs --database postgres (several processes share one PostgreSQL)")
        }
        if let devices = options.devices, devices < options.concurrency {
            throw BenchAuthorityError("--devices must be at least --concurrency (one ceremony at a time per device)")
        }
        return options
    }

    /// The ceiling server: FaceSeal's HTTP server with the authority's defaults and request log, one handler that
    /// answers a small JSON body. Runs until SIGTERM.
    private static func serveTrivially() async -> Int32 {
        let termination = TerminationSignal()
        let body = Array(#"{"ok":true}"#.utf8)
        let server = HTTPServer(configuration: HTTPServer.Configuration(perAddressConnectionLimit: 0),
                                logger: Authority.redactingBearers(.standardError)) { _ in
            HTTPResponse(jsonBytes: body)
        }
        do {
            try server.start()
        } catch {
            printError("faceseal bench authority --serve-trivial: \(error)")
            return 1
        }
        FileHandle.standardOutput.write(Data("faceseal: listening on \(server.baseURL?.absoluteString ?? "")\n".utf8))
        await termination.wait()
        await server.stop()
        return 0
    }
}
