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
    /// The options `bench chaos` shares.
    static let options: [OptionSpec] = [
        .value("database", "DB", "sqlite (default), postgres or a postgres:// URL"),
        .value("concurrency", "N", "workers, 1…512 (default 64)"),
    ]

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
        /// Fixed-rate (soak) mode: ceremonies started at this many a second, whatever the answers' latency.
        var rate: Int?
        /// The applications' ID-token algorithm (RS256, the registration default, unless told).
        var idTokenAlgorithm = JWSAlgorithm.rs256
        /// Fixed-rate mode: seconds per reported window.
        var reportEvery = 300
        /// Internal: run as the trivial-handler ceiling server instead of the driver.
        var trivialServer = false
    }

    static func run(_ options: Options) async -> Int32 {
        if options.trivialServer { return await serveTrivially() }
        do {
            return try await BenchAuthorityRun(options).drive()
        } catch {
            printError("faceseal bench authority: \(error)")
            return 1
        }
    }

    /// The database and concurrency options of `bench authority` and `bench chaos`.
    static func common(_ arguments: ParsedArguments) throws(ArgumentError) -> Options {
        var options = Options()
        if let database = arguments.string("database") {
            guard database == "sqlite" || database == "postgres" || database.hasPrefix("postgres://") || database.hasPrefix("postgresql://") else {
                throw .badValue(option: "database", value: database, expected: "sqlite, postgres or a postgres:// URL")
            }
            options.database = database
        }
        options.concurrency = try arguments.integer("concurrency", in: 1...512) ?? options.concurrency
        return options
    }

    static func parse(_ arguments: ParsedArguments) throws(ArgumentError) -> Options {
        var options = try common(arguments)
        options.trivialServer = arguments.flag("serve-trivial")
        options.seconds = try arguments.integer("seconds", in: 1...3600) ?? options.seconds
        options.pending = try arguments.integer("pending", in: 0...100_000) ?? options.pending
        options.devices = try arguments.integer("devices", in: 1...100_000)
        options.peer = arguments.string("peer")
        options.instances = try arguments.integer("instances", in: 1...8) ?? options.instances
        options.rate = try arguments.integer("rate", in: 1...10_000)
        options.reportEvery = try arguments.integer("report-every", in: 1...3600) ?? min(options.reportEvery, options.seconds)
        if let text = arguments.string("id-token-alg") {
            guard let algorithm = JWSAlgorithm(rawValue: text) else {
                throw .badValue(option: "id-token-alg", value: text, expected: JWSAlgorithm.allCases.map(\.rawValue).joined(separator: ", "))
            }
            options.idTokenAlgorithm = algorithm
        }
        if let text = arguments.string("modes") {
            let modes = text.split(separator: ",").map { Mode(rawValue: String($0)) }
            guard !modes.isEmpty, modes.allSatisfy({ $0 != nil }) else { throw .badValue(option: "modes", value: text, expected: "a list of poll and ping") }
            options.modes = modes.compactMap { $0 }
        }
        if options.instances > 1 && options.database == "sqlite" {
            throw .invalid("--instances above 1 needs --database postgres (several processes share one PostgreSQL).")
        }
        if let devices = options.devices, devices < options.concurrency {
            throw .invalid("--devices must be at least --concurrency (one ceremony at a time per device).")
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
