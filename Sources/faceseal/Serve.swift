import FaceSealAuthority
import FaceSealCrypto
import FaceSealHTTP
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `faceseal serve`: runs the authority until SIGINT or SIGTERM.
enum Serve {
    static let usage = """
    usage: faceseal serve [--data-dir DIR] [--database postgres://…] [--host ADDRESS] [--port N]
                          [--master-key-file PATH] [--issuer URL] [--max-connections-per-address N]
                          [--request-head-timeout SECONDS] [--client-auth-failures N/SECONDS]
                          [--device-signature-failures N/SECONDS] [--pending-requests-per-user N]
                          [--admin-port N] [--log-format text|json] [--log-level debug|info|warn|error]

      --data-dir DIR          where the SQLite database, the generated master key and the admin key live
                              (default ./faceseal-data, created with mode 0700)
      --database URL          postgres://… to keep everything in PostgreSQL instead of SQLite
      --host ADDRESS          numeric address to listen on (default 127.0.0.1)
      --port N                TCP port, 0 for an ephemeral one (default 8080)
      --master-key-file PATH  32 raw bytes, readable by its owner only (default: <data-dir>/master-key,
                              generated on first start); every process sharing a PostgreSQL database
                              must be given the same key
      --issuer URL            the public base URL (default http://HOST:PORT)
      --max-connections-per-address N
                              connections one IP address may hold open (default 128, 0: no limit; behind a
                              reverse proxy every connection comes from the proxy: raise it or use 0)
      --request-head-timeout SECONDS
                              time a connection has to send a complete request head (default 10)
      --client-auth-failures N/SECONDS
                              failed client authentications per client id before 429 (default 20/60, 0 off)
      --device-signature-failures N/SECONDS
                              failed device signatures per key id before rate_limited (default 20/60, 0 off)
      --pending-requests-per-user N
                              pending requests per user and application (default 5, 0 off)
      --admin-port N          also serve /healthz, /readyz and /metrics (no credentials) on 127.0.0.1:N;
                              /metrics on the public port needs an administrator API key
      --log-format FORMAT     text (default) or json: one event per line, each with its request id
      --log-level LEVEL       debug, info (default), warn or error
    """

    /// The parsed command line.
    struct Options: Equatable {
        var dataDirectory = "./faceseal-data"
        var database: String?
        var host = "127.0.0.1"
        var port = 8080
        var masterKeyFile: String?
        var issuer: String?
        var maxConnectionsPerAddress = HTTPServer.Configuration().perAddressConnectionLimit
        var requestHeadTimeout = Int(HTTPServer.Configuration().requestHeadTimeout.components.seconds)
        var rateLimits = RateLimits()
        var adminPort: Int?
        var logFormat = EventLog.Format.text
        var logLevel = EventLog.Level.info
    }

    /// A command line that cannot be run.
    enum ArgumentError: Error, Equatable, CustomStringConvertible {
        case unknownFlag(String)
        case missingValue(String)
        case badPort(String)
        case badValue(flag: String, reason: String)

        var description: String {
            switch self {
            case .unknownFlag(let flag): "unknown option '\(flag)'"
            case .missingValue(let flag): "option \(flag) needs a value"
            case .badPort(let value): "--port must be a number from 0 to 65535, got '\(value)'"
            case .badValue(let flag, let reason): "\(flag): \(reason)"
            }
        }
    }

    /// Parses `--flag value` and `--flag=value` forms.
    static func parse(_ arguments: [String]) throws(ArgumentError) -> Options {
        var options = Options()
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            var flag = argument
            var inlineValue: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                flag = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            func value() throws(ArgumentError) -> String {
                if let inlineValue { return inlineValue }
                guard index < arguments.count, !arguments[index].hasPrefix("--") else { throw .missingValue(flag) }
                index += 1
                return arguments[index - 1]
            }
            switch flag {
            case "--data-dir":
                let directory = try value()
                guard !directory.isEmpty else { throw .badValue(flag: flag, reason: "empty path") }
                options.dataDirectory = directory
            case "--database":
                let url = try value()
                guard url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") else {
                    throw .badValue(flag: flag, reason: "expected a postgres:// URL (SQLite is the default, under --data-dir)")
                }
                options.database = url
            case "--host":
                let host = try value()
                guard !host.isEmpty else { throw .badValue(flag: flag, reason: "empty address") }
                options.host = host
            case "--port":
                let text = try value()
                guard let port = Int(text), (0...65_535).contains(port) else { throw .badPort(text) }
                options.port = port
            case "--master-key-file":
                let path = try value()
                guard !path.isEmpty else { throw .badValue(flag: flag, reason: "empty path") }
                options.masterKeyFile = path
            case "--issuer":
                let issuer = try value()
                guard let url = URL(string: issuer), url.scheme == "https" || url.scheme == "http", url.host != nil else {
                    throw .badValue(flag: flag, reason: "expected an http(s) URL")
                }
                options.issuer = issuer
            case "--max-connections-per-address":
                options.maxConnectionsPerAddress = try count(try value(), flag: flag, in: 0...65_536)
            case "--request-head-timeout":
                options.requestHeadTimeout = try count(try value(), flag: flag, in: 1...3_600)
            case "--client-auth-failures":
                options.rateLimits.clientAuthenticationFailures = try failureLimit(try value(), flag: flag)
            case "--device-signature-failures":
                options.rateLimits.deviceSignatureFailures = try failureLimit(try value(), flag: flag)
            case "--pending-requests-per-user":
                options.rateLimits.pendingRequestsPerUser = try count(try value(), flag: flag, in: 0...1_000)
            case "--admin-port":
                options.adminPort = try count(try value(), flag: flag, in: 0...65_535)
            case "--log-format":
                guard let format = EventLog.Format(rawValue: try value()) else { throw .badValue(flag: flag, reason: "expected text or json") }
                options.logFormat = format
            case "--log-level":
                guard let level = EventLog.Level(rawValue: try value()) else {
                    throw .badValue(flag: flag, reason: "expected debug, info, warn or error")
                }
                options.logLevel = level
            default:
                throw .unknownFlag(argument)
            }
        }
        return options
    }

    private static func count(_ text: String, flag: String, in range: ClosedRange<Int>) throws(ArgumentError) -> Int {
        guard text.utf8.count <= 6, let number = Int(text), range.contains(number) else {
            throw .badValue(flag: flag, reason: "expected a number from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }

    /// `N/SECONDS`: at most N failures per window of SECONDS (N = 0 switches the limit off).
    private static func failureLimit(_ text: String, flag: String) throws(ArgumentError) -> RateLimits.FailureLimit {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 2 else { throw .badValue(flag: flag, reason: "expected N/SECONDS, e.g. 20/60") }
        return RateLimits.FailureLimit(limit: try count(parts[0], flag: flag, in: 0...100_000),
                                       window: try count(parts[1], flag: flag, in: 1...86_400))
    }

    static func run(_ arguments: [String]) async -> Int32 {
        if arguments.contains("--help") || arguments.contains("-h") {
            print(usage)
            return 0
        }
        let options: Options
        do {
            options = try parse(arguments)
        } catch {
            printError("faceseal serve: \(error)\n\(usage)")
            return 64
        }
        do {
            try await serve(options)
            return 0
        } catch {
            printError("faceseal serve: \(error)")
            return 1
        }
    }

    private static func serve(_ options: Options) async throws {
        // Before anything is announced: a supervisor may signal as soon as it reads the URL.
        let termination = TerminationSignal()
        // Everything this process creates — the data directory, the database and its journals, keys — is its owner's
        // alone from the moment it exists.
        umask(0o077)
        let dataDirectory = URL(fileURLWithPath: options.dataDirectory)
        try prepareDataDirectory(dataDirectory.path)
        let masterKey: SymmetricKey
        if let path = options.masterKeyFile {
            masterKey = try MasterKeyFile.load(path: path)
        } else {
            let path = dataDirectory.appendingPathComponent("master-key").path
            let (key, created) = try MasterKeyFile.loadOrCreate(path: path)
            if created { say("faceseal: generated a master key at \(path) (back it up: it decrypts every stored secret)") }
            masterKey = key
        }
        let location: StoreLocation = options.database.map(StoreLocation.parse)
            ?? .sqlite(path: dataDirectory.appendingPathComponent("authority.sqlite").path)
        let store = try await SQLAuthorityStore.open(location)

        // The issuer must name the bound port, so the router is set once the server listens.
        let slot = RouterSlot()
        let serverConfiguration = HTTPServer.Configuration(
            host: options.host, port: options.port, perAddressConnectionLimit: options.maxConnectionsPerAddress,
            requestHeadTimeout: .seconds(options.requestHeadTimeout))
        let log = EventLog.standardError(level: options.logLevel, format: options.logFormat)
        let server = HTTPServer(configuration: serverConfiguration, logger: log.requestLogger) { request in
            try await slot.router().respond(to: request)
        }
        do {
            try server.start()
        } catch {
            await store.close()
            throw error
        }
        let baseURL = server.baseURL?.absoluteString ?? "http://\(options.host):\(options.port)"
        let authority = Authority(configuration: AuthorityConfiguration(issuer: options.issuer ?? baseURL, rateLimits: options.rateLimits, log: log),
                                  store: store,
                                  keys: try AuthorityKeys(derivingFrom: masterKey))
        let admin = options.adminPort.map { port in
            HTTPServer(configuration: HTTPServer.Configuration(host: "127.0.0.1", port: port), logger: log.requestLogger,
                       router: authority.makeAdminRouter())
        }
        do {
            try await authority.prepareSigningKeys()
            await authority.wakeOnLinksQueuedElsewhere()
            if let adminKey = try await authority.bootstrapAdminKey() {
                let path = dataDirectory.appendingPathComponent("admin-api-key").path
                try writeSecretFile(adminKey, to: path)
                say("faceseal: created the first admin API key in \(path)")
            }
            try admin?.start()
        } catch {
            await server.stop()
            await store.close()
            throw error
        }
        slot.set(authority.makeRouter())
        if let url = admin?.baseURL { say("faceseal: admin listener on \(url.absoluteString)") }
        say("faceseal: listening on \(baseURL)")

        await termination.wait()
        say("faceseal: stopping")
        await admin?.stop()
        await server.stop()
        await store.close()
    }

    /// Creates the data directory (mode 0700), or checks that an existing one is a directory group and others cannot
    /// access: it holds the master key, the admin key and the SQLite database.
    private static func prepareDataDirectory(_ path: String) throws {
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else { throw ServeError.notADirectory(path) }
        let mode = UInt32(info.st_mode) & 0o777
        guard mode & 0o077 == 0 else { throw ServeError.dataDirectoryTooOpen(path, mode: mode) }
    }

    /// One line on standard output, written at once (a supervisor reads the listening URL from it).
    private static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    /// Writes `text` to a new file readable by its owner only (an existing file is replaced).
    private static func writeSecretFile(_ text: String, to path: String) throws {
        unlink(path)
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw ServeError.cannotWrite(path) }
        defer { close(descriptor) }
        let bytes = Array((text + "\n").utf8)
        guard write(descriptor, bytes, bytes.count) == bytes.count else { throw ServeError.cannotWrite(path) }
    }
}

/// Why `faceseal serve` stopped.
enum ServeError: Error, CustomStringConvertible {
    case cannotWrite(String)
    case notADirectory(String)
    case dataDirectoryTooOpen(String, mode: UInt32)

    var description: String {
        switch self {
        case .cannotWrite(let path): "cannot write \(path)"
        case .notADirectory(let path): "the data directory \(path) is not a directory"
        case .dataDirectoryTooOpen(let path, let mode):
            "the data directory \(path) has mode \(String(mode, radix: 8)); make it accessible by its owner only (chmod 700)"
        }
    }
}

/// Holds the router that is set once the server's port (and so the issuer) is known.
final class RouterSlot: Sendable {
    private let slot = Mutex<Router?>(nil)
    func set(_ router: Router) { slot.withLock { $0 = router } }
    func router() throws -> Router {
        guard let router = slot.withLock({ $0 }) else { throw HTTPError.unavailable }
        return router
    }
}

/// SIGINT and SIGTERM, caught from creation on (their default action is disabled) and awaited once.
final class TerminationSignal: Sendable {
    private enum State {
        case waiting(CheckedContinuation<Void, Never>?)
        case fired
    }

    private let state = Mutex(State.waiting(nil))
    /// The dispatch sources, only touched under the lock.
    private let sources: Mutex<[any DispatchSourceSignal]>

    init() {
        let queue = DispatchQueue(label: "faceseal.serve.signals")
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        sources = Mutex([SIGINT, SIGTERM].map { DispatchSource.makeSignalSource(signal: $0, queue: queue) })
        sources.withLock { sources in
            for source in sources {
                source.setEventHandler { [weak self] in self?.fire() }
                source.resume()
            }
        }
    }

    private func fire() {
        let continuation = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard case .waiting(let continuation) = state else { return nil }
            state = .fired
            return continuation
        }
        continuation?.resume()
    }

    /// Returns once a signal arrived (at once if one already did).
    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let firedAlready = state.withLock { state -> Bool in
                guard case .waiting = state else { return true }
                state = .waiting(continuation)
                return false
            }
            if firedAlready { continuation.resume() }
        }
        sources.withLock { $0.forEach { $0.cancel() } }
    }
}
