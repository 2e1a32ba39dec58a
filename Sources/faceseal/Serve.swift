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
    static let spec = CommandSpec(
        name: "serve", summary: "Run the authority until SIGINT or SIGTERM.",
        details: """
        Every setting can also come from a configuration file (--config FILE: `key = value` lines, the keys being the
        option names, e.g. `port = 8080`; see deploy/faceseal.conf) or from an environment variable FACESEAL_<KEY>
        (e.g. FACESEAL_PORT=8080, FACESEAL_DATA_DIR=/var/lib/faceseal). A flag wins over the environment, the
        environment over the file. --print-config shows the effective configuration (a database password is
        never shown) and exits.
        """,
        options: [
            .value("config", "FILE", "read settings from FILE (also FACESEAL_CONFIG)"),
            .flag("print-config", "print the effective configuration and where each value came from, then exit"),
        ] + ServeConfiguration.settings.map { .value($0.name, $0.valueName, $0.help) })

    /// The configuration from the file (`--config` or `FACESEAL_CONFIG`), the environment and the flags.
    static func configuration(_ parsed: ParsedArguments, environment: [String: String]) throws(ServeCommandError)
        -> (ServeConfiguration, [String: ServeConfiguration.Source]) {
        var file: (path: String, entries: [ServeConfiguration.FileEntry])?
        if let path = parsed.string("config") ?? environment["FACESEAL_CONFIG"] {
            let text = try readConfigurationFile(path)
            do { file = (path, try ServeConfiguration.parseFile(text, path: path)) } catch { throw .configuration(error) }
        }
        var flags: [String: String] = [:]
        for setting in ServeConfiguration.settings { flags[setting.name] = parsed.string(setting.name) }
        do {
            return try ServeConfiguration.resolve(file: file, environment: environment, flags: flags)
        } catch {
            throw .configuration(error)
        }
    }

    /// The file's text: a regular file of at most the format's limit, UTF-8.
    private static func readConfigurationFile(_ path: String) throws(ServeCommandError) -> String {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw .cannotRead(path) }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: ServeConfiguration.maxFileBytes + 1) ?? Data() else { throw .cannotRead(path) }
        guard data.count <= ServeConfiguration.maxFileBytes else {
            throw .configuration(.fileTooLarge(path: path, limit: ServeConfiguration.maxFileBytes))
        }
        guard let text = String(data: data, encoding: .utf8) else { throw .notUTF8(path) }
        return text
    }

    static func run(_ parsed: ParsedArguments, environment: [String: String] = ProcessInfo.processInfo.environment) async -> Int32 {
        let options: ServeConfiguration
        do {
            let (configuration, sources) = try configuration(parsed, environment: environment)
            if parsed.flag("print-config") {
                print(configuration.rendered(sources: sources))
                return 0
            }
            options = configuration
        } catch {
            printError("faceseal serve: \(error)")
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

    private static func serve(_ options: ServeConfiguration) async throws {
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

}

/// A configuration `faceseal serve` cannot start with (exit 64).
enum ServeCommandError: Error, CustomStringConvertible {
    case cannotRead(String)
    case notUTF8(String)
    case configuration(ServeConfigurationError)

    var description: String {
        switch self {
        case .cannotRead(let path): "Cannot read the configuration file \(path)."
        case .notUTF8(let path): "The configuration file \(path) is not UTF-8 text."
        case .configuration(let error): error.description
        }
    }
}

/// Writes `text` and a newline to a new file readable by its owner only (an existing file is replaced).
func writeSecretFile(_ text: String, to path: String) throws(ServeError) {
    unlink(path)
    let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else { throw .cannotWrite(path) }
    defer { close(descriptor) }
    let bytes = Array((text + "\n").utf8)
    guard write(descriptor, bytes, bytes.count) == bytes.count else { throw .cannotWrite(path) }
}

/// Why `faceseal serve` stopped, or a secret file could not be written.
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
