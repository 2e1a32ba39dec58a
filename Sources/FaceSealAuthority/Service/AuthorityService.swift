import FaceSealCrypto
public import FaceSealHTTP
public import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One running authority process: what `faceseal serve` runs. It owns the start-up (the data directory, the master
/// key, the store, the HTTP server, the issuer, the signing keys, the cross-process wake-ups, the first admin key),
/// the signals, the retention sweep of finished requests and audit events, and the graceful shutdown: new requests get
/// `503` with `Retry-After`, in-flight requests finish within `drainTime`, long polls answer at once
/// (`AuthorityLifecycle`), the sweep stops, then the store closes.
///
/// ```swift
/// try await AuthorityService.run(AuthorityService.Settings(dataDirectory: "/var/lib/faceseal"), announce: { print($0) })
/// ```
public final class AuthorityService: Sendable {
    /// What the service starts with.
    public struct Settings: Sendable {
        /// Where the SQLite database, the generated master key and the admin key live (created with mode 0700).
        public var dataDirectory: String
        /// A `postgres://` URL to keep everything in PostgreSQL instead of SQLite under `dataDirectory`.
        public var database: String?
        /// A file of 32 raw bytes (default: `<dataDirectory>/master-key`, generated on first start).
        public var masterKeyFile: String?
        /// The HTTP server: address, port (0: ephemeral), limits.
        public var server: HTTPServer.Configuration
        /// The public base URL (default: `http://HOST:PORT` of the bound port).
        public var issuer: String?
        /// The rate limits.
        public var rateLimits: RateLimits
        /// How long a shutdown waits for in-flight requests before it cancels them.
        public var drainTime: Duration
        /// A loopback port serving `/healthz`, `/readyz` and `/metrics` without credentials (0: ephemeral; none by default).
        public var adminPort: Int?
        /// Where events and request lines go.
        public var log: EventLog
        /// Where ping callbacks and webhook pushes may connect.
        public var callbackDestinations: HTTPClient.Destinations
        /// How long finished requests are kept after their expiry, seconds (nil: kept forever;
        /// `AuthorityConfiguration.requestRetention`).
        public var requestRetention: Int?
        /// How long audit events are kept, seconds (nil: the whole log; `AuthorityConfiguration.auditRetention`).
        public var auditRetention: Int?

        /// Settings; everything after `dataDirectory` has a default.
        public init(dataDirectory: String, database: String? = nil, masterKeyFile: String? = nil,
                    server: HTTPServer.Configuration = HTTPServer.Configuration(), issuer: String? = nil,
                    rateLimits: RateLimits = RateLimits(), drainTime: Duration = .seconds(10), adminPort: Int? = nil,
                    log: EventLog = .standardError(), callbackDestinations: HTTPClient.Destinations = .publicOnly,
                    requestRetention: Int? = 86_400, auditRetention: Int? = nil) {
            self.dataDirectory = dataDirectory
            self.database = database
            self.masterKeyFile = masterKeyFile
            self.server = server
            self.issuer = issuer
            self.rateLimits = rateLimits
            self.drainTime = drainTime
            self.adminPort = adminPort
            self.log = log
            self.callbackDestinations = callbackDestinations
            self.requestRetention = requestRetention
            self.auditRetention = auditRetention
        }
    }

    /// The authority being served.
    public let authority: Authority
    /// Where it listens: `http://host:port`.
    public let baseURL: URL
    /// Where the loopback admin listener listens, when there is one.
    public let adminURL: URL?
    private let server: HTTPServer
    private let admin: HTTPServer?
    private let drainTime: Duration
    /// The retention sweep, every second until the shutdown (`Authority.sweepRequests()`, `sweepAuditEvents()`).
    private let sweeper: Task<Void, Never>

    private init(authority: Authority, baseURL: URL, server: HTTPServer, admin: HTTPServer?, drainTime: Duration) {
        self.authority = authority
        self.baseURL = baseURL
        self.adminURL = admin?.baseURL
        self.server = server
        self.admin = admin
        self.drainTime = drainTime
        sweeper = Task { await authority.sweepRequestsPeriodically(every: Authority.retentionSweepInterval) }
    }

    /// Runs the authority of `settings` until SIGINT or SIGTERM, then shuts it down gracefully. Files it creates are
    /// its owner's alone (umask 077). `announce` gets each line for the operator, the listening URL among them
    /// (`faceseal: listening on URL`), written before any request is answered.
    public static func run(_ settings: Settings, announce: @escaping @Sendable (String) -> Void) async throws {
        // Before anything is announced: a supervisor may signal as soon as it reads the URL.
        let termination = TerminationSignal()
        umask(0o077)
        let service = try await start(settings, announce: announce)
        await termination.wait()
        announce("faceseal: stopping (in-flight requests get up to \(settings.drainTime) to finish)")
        await service.shutdown()
    }

    /// Starts serving: prepares the data directory and the master key, opens the store, binds, sets the issuer to the
    /// bound port unless given, loads the signing keys, listens for links queued by other processes, creates the
    /// first admin key and starts the admin listener if asked. Answers once requests are being answered.
    public static func start(_ settings: Settings, announce: @escaping @Sendable (String) -> Void) async throws -> AuthorityService {
        let dataDirectory = URL(fileURLWithPath: settings.dataDirectory)
        try prepareDataDirectory(dataDirectory.path)
        let masterKey: SymmetricKey
        if let path = settings.masterKeyFile {
            masterKey = try MasterKeyFile.load(path: path)
        } else {
            let path = dataDirectory.appendingPathComponent("master-key").path
            let (key, created) = try MasterKeyFile.loadOrCreate(path: path)
            if created { announce("faceseal: generated a master key at \(path) (back it up: it decrypts every stored secret)") }
            masterKey = key
        }
        let location: StoreLocation = settings.database.map(StoreLocation.parse)
            ?? .sqlite(path: dataDirectory.appendingPathComponent("authority.sqlite").path)
        let store = try await SQLAuthorityStore.open(location)

        // The issuer must name the bound port, so the router is set once the server listens.
        let slot = RouterSlot()
        let server = HTTPServer(configuration: settings.server, logger: settings.log.requestLogger) { request in
            try await slot.router().respond(to: request)
        }
        do {
            try server.start()
        } catch {
            await store.close()
            throw error
        }
        let host = settings.server.host
        guard let baseURL = server.baseURL else {
            await server.stop()
            await store.close()
            throw HTTPServerError.invalidHost(host)
        }
        let authority: Authority
        var admin: HTTPServer?
        do {
            var configuration = AuthorityConfiguration(issuer: settings.issuer ?? baseURL.absoluteString, rateLimits: settings.rateLimits,
                                                       log: settings.log, callbackDestinations: settings.callbackDestinations)
            configuration.requestRetention = settings.requestRetention
            configuration.auditRetention = settings.auditRetention
            authority = Authority(configuration: configuration, store: store, keys: try AuthorityKeys(derivingFrom: masterKey))
            try await authority.prepareSigningKeys()
            await authority.wakeOnLinksQueuedElsewhere()
            if let adminKey = try await authority.bootstrapAdminKey() {
                let path = dataDirectory.appendingPathComponent("admin-api-key").path
                try writeSecretFile(adminKey, to: path)
                announce("faceseal: created the first admin API key in \(path)")
            }
            if let port = settings.adminPort {
                let listener = HTTPServer(configuration: HTTPServer.Configuration(host: "127.0.0.1", port: port),
                                          logger: settings.log.requestLogger, router: authority.makeAdminRouter())
                try listener.start()
                admin = listener
            }
        } catch {
            await server.stop()
            await store.close()
            throw error
        }
        slot.set(authority.makeRouter())
        if let url = admin?.baseURL { announce("faceseal: admin listener on \(url.absoluteString)") }
        announce("faceseal: listening on \(baseURL.absoluteString)")
        return AuthorityService(authority: authority, baseURL: baseURL, server: server, admin: admin, drainTime: settings.drainTime)
    }

    /// The graceful shutdown: new requests are answered `503` with `Retry-After` (before the long polls end, so a
    /// device asking again is refused rather than let in), long polls answer at once, in-flight requests get up to
    /// `drainTime` to finish (then they are cancelled), the server stops and the store closes. Idempotent.
    public func shutdown() async {
        server.beginDraining()
        authority.lifecycle.beginDraining()
        await server.stop(gracePeriod: drainTime)
        await admin?.stop()
        // A sweep under way finishes before the store closes.
        sweeper.cancel()
        await sweeper.value
        await authority.store.close()
    }

    /// Creates the data directory (mode 0700), or checks that an existing one is a directory group and others cannot
    /// access: it holds the master key, the admin key and the SQLite database.
    private static func prepareDataDirectory(_ path: String) throws {
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else { throw AuthorityServiceError.notADirectory(path) }
        let mode = UInt32(info.st_mode) & 0o777
        guard mode & 0o077 == 0 else { throw AuthorityServiceError.dataDirectoryTooOpen(path, mode: mode) }
    }

    /// Writes `text` to a new file readable by its owner only (an existing file is replaced).
    private static func writeSecretFile(_ text: String, to path: String) throws {
        unlink(path)
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw AuthorityServiceError.cannotWrite(path) }
        defer { close(descriptor) }
        let bytes = Array((text + "\n").utf8)
        guard write(descriptor, bytes, bytes.count) == bytes.count else { throw AuthorityServiceError.cannotWrite(path) }
    }
}

/// Why an authority service could not start.
public enum AuthorityServiceError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A file could not be written (the path).
    case cannotWrite(String)
    /// The data directory's path names something else.
    case notADirectory(String)
    /// The data directory is open to its group or others.
    case dataDirectoryTooOpen(String, mode: UInt32)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .cannotWrite(let path): "cannot write \(path)"
        case .notADirectory(let path): "the data directory \(path) is not a directory"
        case .dataDirectoryTooOpen(let path, let mode):
            "the data directory \(path) has mode \(String(mode, radix: 8)); make it accessible by its owner only (chmod 700)"
        }
    }
}
