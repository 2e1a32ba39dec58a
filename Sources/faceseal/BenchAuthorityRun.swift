import FaceSealAuthority
import FaceSealCrypto
import FaceSealHTTP
import FaceSealWire
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One run of `faceseal bench authority`: the world (tenant, users, applications, devices) seeded into a fresh store,
/// the authority started as a `faceseal serve` child, the measured phases, the ceilings, the printed lines.
final class BenchAuthorityRun: Sendable {
    /// The steps of a ceremony, in order; each is timed from the end of the one before.
    enum Step: String, CaseIterable, Sendable {
        case backchannel, link, details, tokenDownload = "token_download", completion, ping, token
    }

    /// HTTP requests the authority answers per ceremony (the long poll counts once; a ping is sent, not answered).
    static let requestsPerCeremony = 6
    /// The pending-request limit per user and application the authority keeps (its default): the pre-loaded
    /// requests are spread over enough users to stay within it.
    static let pendingPerUser = RateLimits().pendingRequestsPerUser

    let options: BenchAuthority.Options
    let devices: Int
    let directory: URL
    /// Ids of this run, so runs can share one PostgreSQL database.
    let prefix = "b" + String(UInt32.random(in: 0...UInt32.max), radix: 36)
    /// The load generator's one HTTP client, for its devices (their outbox long polls too) and its applications: one
    /// thread reads every connection (three clients cost 5–8 % more of its CPU a ceremony). `LoopbackHTTPClient` for the
    /// throughput runs, the product's `HTTPClient` for chaos and rolling restarts.
    let client: any BenchTransport
    let board = BenchPingBoard()

    /// A run whose parties send through `LoopbackHTTPClient`, or through `HTTPClient` when `productClient` (chaos: what is
    /// tested there is how the product's client retries a dying authority's answers).
    init(_ options: BenchAuthority.Options, productClient: Bool = false) {
        self.options = options
        devices = options.devices ?? options.concurrency
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("faceseal-bench-authority-\(getpid())")
        // The three former clients' caps together (2 × concurrency + 16 each): a ceremony keeps at most a long poll, a
        // device request and an application request open, and the set-up runs 16 wide.
        client = productClient ? HTTPClient(configuration: HTTPClient.Configuration(maxConnectionsPerHost: 6 * options.concurrency + 48)) : LoopbackHTTPClient()
    }

    var pendingUsers: Int { (options.pending + Self.pendingPerUser - 1) / Self.pendingPerUser }

    var location: StoreLocation {
        get throws {
            switch options.database {
            case "sqlite": return .sqlite(path: directory.appendingPathComponent("authority.sqlite").path)
            case "postgres":
                guard let url = ProcessInfo.processInfo.environment["FACESEAL_TEST_POSTGRES_URL"] else {
                    throw BenchAuthorityError("--database postgres needs FACESEAL_TEST_POSTGRES_URL (run under scripts/with-postgres.sh)")
                }
                return .postgres(url: url, schema: schema)
            default: return .postgres(url: options.database, schema: schema)
            }
        }
    }

    /// The PostgreSQL schema of this run (created by the seeding store): each run starts on an empty database.
    var schema: String { "bench_" + prefix }

    var databaseName: String { options.database == "sqlite" ? "sqlite" : "postgres" }

    /// Creates the run's directory (owner-only) with a fresh master key; answers where the store lives and the key file.
    func prepare() throws -> (location: StoreLocation, keyPath: String) {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let keyPath = directory.appendingPathComponent("master-key").path
        guard FileManager.default.createFile(atPath: keyPath, contents: Data(SecureRandom.bytes(count: 32)), attributes: [.posixPermissions: 0o600]) else {
            throw BenchAuthorityError("cannot write \(keyPath)")
        }
        return (try location, keyPath)
    }

    func removeDirectory() { try? FileManager.default.removeItem(at: directory) }

    /// `faceseal serve` on `data`, with the run's master key, issuer and database, without a port.
    func serveArguments(location: StoreLocation, keyPath: String, data: URL) -> [String] {
        // The ping endpoint of the load generator is on loopback.
        var arguments = ["serve", "--data-dir", data.path, "--master-key-file", keyPath, "--issuer", Self.issuer, "--max-connections-per-address", "0",
                         "--callback-destinations", "any"]
        if case .postgres(let url, _, let schema?) = location {
            // `faceseal serve` takes a URL only: the run's schema goes in as the session's search path.
            arguments += ["--database", url + (url.contains("?") ? "&" : "?") + "options=-csearch_path%3D" + schema]
        }
        return arguments
    }

    func drive() async throws -> Int32 {
        let (location, keyPath) = try prepare()
        defer { removeDirectory() }

        let pingServer = HTTPServer(configuration: HTTPServer.Configuration(perAddressConnectionLimit: 0), logger: .disabled) { [board] in
            board.handle($0)
        }
        try pingServer.start()
        defer { Task { await pingServer.stop() } }
        guard let pingURL = pingServer.baseURL?.appendingPathComponent("ping").absoluteString else { throw BenchAuthorityError("no ping address") }

        let invitations = try await seed(location)
        var instances: [BenchServer] = []
        defer { instances.forEach { $0.stop() } }
        for index in 0..<options.instances {
            // One data directory per instance (its admin key), the SQLite file in the first; one master key and issuer.
            let data = index == 0 ? directory : directory.appendingPathComponent("instance-\(index)")
            try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let arguments = serveArguments(location: location, keyPath: keyPath, data: data) + ["--port", "0"]
            instances.append(try await BenchServer.start(Self.ownPath, arguments, log: directory.appendingPathComponent("authority-\(index).log").path))
        }
        let bases = instances.map(\.base)
        let pids = instances.map(\.child.pid)
        print("faceseal bench authority: \(databaseName), " + (options.rate.map { "\($0) ceremonies a second (at most \(options.concurrency) at once), " }
                                                               ?? "\(options.concurrency) concurrent ceremonies, ") + "\(devices) devices and applications, "
              + "\(options.pending) pending requests pre-loaded, ID tokens \(options.idTokenAlgorithm.rawValue), \(options.seconds) s per mode" + (options.rate == nil ? " after a warm-up" : "")
              + (bases.count > 1 ? ", \(bases.count) authority processes (each device on another one than its application)" : ""))
        print("limits: connections per address unlimited for the run (--max-connections-per-address 0: every connection comes from "
              + "127.0.0.1); client-authentication, device-signature and pending-request limits at their defaults, which the load stays "
              + "within (one request at a time per ceremony user, \(Self.pendingPerUser) per pre-load user, no failures)")

        let parties = try await enrol(invitations, bases: bases)
        let keys = try await jwks(bases[0])
        try await preload(parties.idle)
        let loaded = Self.residentMB(pids)

        var lines: [String] = []
        var failed = false
        var authorityRate = 0.0
        for mode in options.modes {
            if mode == .ping { try await switchToPing(location, endpoint: pingURL, applications: parties.pairs.map(\.1)) }
            let result = options.rate == nil ? try await measure(mode: mode, pairs: parties.pairs, keys: keys, authorities: pids)
                : await soak(mode: mode, pairs: parties.pairs, keys: keys, authorities: pids)
            lines += result.lines
            failed = failed || result.failures > 0
            if mode == .poll || authorityRate == 0 { authorityRate = result.ceremoniesPerSecond * Double(Self.requestsPerCeremony) }
        }
        if let loaded {
            lines.append("bench=authority db=\(databaseName) pending=\(options.pending) rss_mb_after_preload=\(Self.format(loaded.current, 1)) "
                         + "rss_peak_mb=\(Self.format(Self.residentMB(pids)?.peak ?? loaded.peak, 1)) budget_rss_mb<150")
        }
        lines.forEach { print($0) }

        guard options.rate == nil else { return failed ? 1 : 0 }
        let ceilingSeconds = min(options.seconds, 5)
        var ceilings: [(String, Double)] = []
        let trivial = try await BenchServer.start(Self.ownPath, ["bench", "authority", "--serve-trivial"],
                                                  log: directory.appendingPathComponent("trivial.log").path)
        ceilings.append(("faceseal-http", try await ceiling(trivial, name: "faceseal-http-trivial", seconds: ceilingSeconds)))
        trivial.stop()
        if let peer = options.peer {
            let responder = try await BenchServer.start(peer, [], log: directory.appendingPathComponent("peer.log").path)
            ceilings.append(("libmicrohttpd-c", try await ceiling(responder, name: "libmicrohttpd-c", seconds: ceilingSeconds)))
            responder.stop()
        } else {
            print("bench=ceiling server=libmicrohttpd-c skipped (no --peer; make bench-authority builds it)")
        }
        for (name, rate) in ceilings where rate > 0 {
            print("ratio=\(Self.format(authorityRate / rate, 3)) authority_http_requests_per_s=\(Self.format(authorityRate, 0)) / "
                  + "\(name)_requests_per_s=\(Self.format(rate, 0)) (db=\(databaseName), poll mode, \(Self.requestsPerCeremony) requests per ceremony)")
        }
        return failed ? 1 : 0
    }

    /// The issuer every instance is started with (one authority, however many processes serve it).
    static let issuer = "https://authority.bench.example"

    /// The largest current and peak resident memory of `pids`, MB.
    static func residentMB(_ pids: [pid_t]) -> (current: Double, peak: Double)? {
        let samples = pids.compactMap(ProcessSample.residentMB)
        guard !samples.isEmpty else { return nil }
        return (samples.map(\.current).max()!, samples.map(\.peak).max()!)
    }

    static var ownPath: String { URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path }

    static func format(_ value: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", value) }

    // MARK: The world

    /// The pairs of one ceremony user (their application and invitation) and the pre-load users' invitations.
    struct Invitations {
        var pairs: [(invitation: String, application: BenchApplication)] = []
        var idle: [(invitation: String, application: BenchApplication)] = []
    }

    /// Everything the management API would set up, written straight into the store before the authority starts: one
    /// tenant, a user and an application per ceremony device, pre-load users sharing one application, one invitation
    /// per device.
    func seed(_ location: StoreLocation) async throws -> Invitations {
        let store = try await SQLAuthorityStore.open(location)
        do {
            let tenant = prefix + "-tenant"
            _ = try await store.createTenant(TenantRecord(id: tenant, name: "Bench \(prefix)"))
            var invitations = Invitations()
            func user(_ index: Int, application: BenchApplication) async throws -> String {
                let subject = "\(prefix)-user-\(index)"
                _ = try await store.createUser(UserRecord(subject: subject, tenantID: tenant, email: application.userEmail))
                return try await store.createInvitation(InvitationRecord(
                    id: "\(prefix)-inv-\(index)", tenantID: tenant, subject: subject, clientID: application.clientID,
                    secretHash: SHA256.hash(data: SecureRandom.bytes(count: 32)).bytes, expiresAt: Date().addingTimeInterval(3600))).id
            }
            func application(_ clientID: String, email: String, subject: String) async throws -> BenchApplication {
                let secret = ClientSecret.generate()
                _ = try await store.createApplication(ApplicationRecord(clientID: clientID, tenantID: tenant, label: clientID,
                                                                        credential: .secretHash(ClientSecret.hash(secret)),
                                                                        idTokenSignedResponseAlg: options.idTokenAlgorithm.rawValue))
                return BenchApplication(base: "", client: client, clientID: clientID, secret: secret, userEmail: email, subject: subject)
            }
            for index in 0..<devices {
                let app = try await application("\(prefix)-app-\(index)", email: "user-\(index)@\(prefix).bench", subject: "\(prefix)-user-\(index)")
                invitations.pairs.append((try await user(index, application: app), app))
            }
            if pendingUsers > 0 {
                let idle = try await application("\(prefix)-idle-app", email: "", subject: "")
                for index in 0..<pendingUsers {
                    var app = idle
                    app = BenchApplication(base: "", client: app.client, clientID: app.clientID, secret: app.secret,
                                           userEmail: "idle-\(index)@\(prefix).bench", subject: "\(prefix)-user-\(devices + index)")
                    invitations.idle.append((try await user(devices + index, application: app), app))
                }
            }
            await store.close()
            return invitations
        } catch {
            await store.close()
            throw error
        }
    }

    /// The enrolled parties: (device, application) for the ceremonies, and the pre-load users' applications.
    struct Parties {
        var pairs: [(BenchDevice, BenchApplication)]
        var idle: [BenchApplication]
    }

    /// Enrols every device over the device API (16 at a time). Party `i`'s application talks to instance `i`, its
    /// device to the next one.
    func enrol(_ invitations: Invitations, bases: [String]) async throws -> Parties {
        let all = Array((invitations.pairs + invitations.idle).enumerated())
        let enrolled = try await Self.forEach(all, width: 16) { [client] index, entry in
            var device = BenchDevice(base: bases[(index + 1) % bases.count], client: client)
            try await device.enrol(invitation: entry.invitation)
            let app = entry.application
            return (device, BenchApplication(base: bases[index % bases.count], client: app.client, clientID: app.clientID, secret: app.secret,
                                             userEmail: app.userEmail, subject: app.subject))
        }
        return Parties(pairs: Array(enrolled.prefix(invitations.pairs.count)), idle: enrolled.dropFirst(invitations.pairs.count).map(\.1))
    }

    func jwks(_ base: String) async throws -> JWKSet {
        let response = try await client.send(HTTPClientRequest(url: URL(string: base + CIBAPaths.jwks)!))
        guard response.status.code == 200 else { throw BenchAuthorityError("/jwks: HTTP \(response.status.code)") }
        return try JWKSet(json: response.body)
    }

    /// `--pending` requests through the backchannel endpoint, `pendingPerUser` per pre-load user (their links wait
    /// in the outbox of devices that never poll).
    private func preload(_ applications: [BenchApplication]) async throws {
        guard options.pending > 0 else { return }
        let starts = (0..<options.pending).map { applications[$0 / Self.pendingPerUser] }
        let token = board.token
        _ = try await Self.forEach(starts, width: 32) { app in try await app.start(notificationToken: token) }
    }

    /// Ping mode for the ceremony applications, written into the store (the authority reads applications per request).
    private func switchToPing(_ location: StoreLocation, endpoint: String, applications: [BenchApplication]) async throws {
        let store = try await SQLAuthorityStore.open(location)
        do {
            for app in applications {
                var record = try await store.application(clientID: app.clientID)
                record.deliveryMode = .ping
                record.notificationEndpoint = endpoint
                _ = try await store.updateApplication(record)
            }
        } catch {
            await store.close()
            throw error
        }
        await store.close()
    }

    /// Runs `body` over `items`, at most `width` at once; answers the results in order.
    static func forEach<Item: Sendable, Result: Sendable>(_ items: [Item], width: Int,
                                                          _ body: @escaping @Sendable (Item) async throws -> Result) async throws -> [Result] {
        try await withThrowingTaskGroup(of: (Int, Result).self) { group in
            var results = [Result?](repeating: nil, count: items.count)
            var next = 0
            while next < min(width, items.count) {
                let index = next
                group.addTask { (index, try await body(items[index])) }
                next += 1
            }
            while let (index, result) = try await group.next() {
                results[index] = result
                if next < items.count {
                    let index = next
                    group.addTask { (index, try await body(items[index])) }
                    next += 1
                }
            }
            return results.map { $0! }
        }
    }
}

/// A server child of the benchmark: started, its listening URL read from its standard output, stopped with SIGTERM.
struct BenchServer: Sendable {
    let child: BenchChild
    let base: String

    /// `FACESEAL_BENCH_WRAP`, e.g. `/usr/bin/valgrind --tool=callgrind`, prefixes the command of every server child
    /// (for profiles; the figures then include the wrapper).
    static func start(_ binary: String, _ arguments: [String], log: String) async throws -> BenchServer {
        let wrap = (ProcessInfo.processInfo.environment["FACESEAL_BENCH_WRAP"] ?? "").split(separator: " ").map(String.init)
        let child = try wrap.first.map { try BenchChild($0, Array(wrap.dropFirst()) + [binary] + arguments, errorsTo: log) }
            ?? BenchChild(binary, arguments, errorsTo: log)
        guard let url = await child.line(containing: "listening on ") else {
            let problems = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            throw BenchAuthorityError("\(binary) did not start: \(problems.suffix(2000))")
        }
        return BenchServer(child: child, base: url.trimmingCharacters(in: .whitespaces))
    }

    func stop() {
        child.send(SIGTERM)
        _ = child.wait()
    }
}
