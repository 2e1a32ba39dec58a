@testable import FaceSealAuthority
import FaceSealCrypto
import FaceSealHTTP
import FaceSealTestSupport
import FaceSealWire
import Foundation
import Synchronization
import Testing
@testable import FaceSealSDK

/// A real authority (SQLite in a temporary directory or a fresh PostgreSQL schema, its router on an ephemeral loopback port), set up
/// through its management API, plus an application (CIBA client and delivery endpoint) and devices running the
/// real SDK seams (HTTP authority client, delivery poster, face tokens, file vault with P-256 and AES-GCM).
/// The face step is the fake verifier (these scenarios are about the flows; the engine has its own tests).
final class LiveSystem: Sendable {
    let served: LoopbackAuthority
    let root: URL
    let management: ManagementClient
    let application: RelyingParty
    let tenant = "acme"
    /// The authority's clock: the real time plus a skew a test may advance (request expiry).
    let clock: SkewedClock
    /// The database, removed at `stop()`.
    let database: ScratchDatabase

    var authority: Authority { served.authority }
    var baseURL: URL { served.baseURL }
    var adminKey: String { management.apiKey }

    struct Policy {
        var algorithms = ["ML-DSA-65", "ML-KEM-768"]
        var attemptsMax = 3
        var passwordMode = "none"
        var oneDevicePerUser = false
        var livenessRequired = true
        var furtherDeviceApproval = "enrolled_device"
    }

    private init(served: LoopbackAuthority, root: URL, management: ManagementClient, application: RelyingParty, clock: SkewedClock,
                 database: ScratchDatabase) {
        self.served = served
        self.root = root
        self.management = management
        self.application = application
        self.clock = clock
        self.database = database
    }

    static func start(policy: Policy = Policy(), backend: StoreBackend = .sqlite) async throws -> LiveSystem {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("faceseal-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let clock = SkewedClock()
        let database = try await backend.makeScratch()
        let store = try await database.open(clock: clock)
        let served = try LoopbackAuthority.start(store: store, clock: clock)
        let adminKey = try #require(try await served.authority.bootstrapAdminKey())
        let system = LiveSystem(served: served, root: root, management: ManagementClient(baseURL: served.baseURL.absoluteString, apiKey: adminKey),
                                application: try RelyingParty(), clock: clock, database: database)
        _ = try await system.manage("POST", "/tenants", [
            "id": "acme", "name": "Acme",
            "policy": ["key_algorithms": policy.algorithms, "attempts_max": policy.attemptsMax, "liveness_required": policy.livenessRequired,
                       "password_policy": ["mode": policy.passwordMode], "one_device_per_user": policy.oneDevicePerUser,
                       "further_device_approval": policy.furtherDeviceApproval],
        ])
        return system
    }

    func stop() async {
        await served.stop()
        await application.server.stop()
        await authority.store.close()
        try? FileManager.default.removeItem(at: root)
        await database.destroy()
    }

    // MARK: Management API

    /// Calls the management API with the administrator key; answers the JSON object (or empty for 204).
    @discardableResult
    func manage(_ method: String, _ path: String, _ body: [String: Any]? = nil) async throws -> [String: Any] {
        try await management.send(HTTPMethod(rawValue: method), path, body)
    }

    func url(_ path: String) -> URL { served.url(path) }

    /// A registered application: client id and secret.
    struct Client: Sendable {
        let clientId: String
        let secret: String
    }

    func createApplication(label: String) async throws -> Client {
        let created = try await manage("POST", "/tenants/\(tenant)/applications", [
            "label": label, "delivery_mode": "poll", "delivery_endpoint": application.deliveryURL.absoluteString,
            "branding": ["name": label, "primary_color": "#0A84FF"],
        ])
        return Client(clientId: try #require(created["client_id"] as? String), secret: try #require(created["client_secret"] as? String))
    }

    /// Creates a user; answers its subject.
    func createUser(email: String) async throws -> String {
        try #require(try await manage("POST", "/tenants/\(tenant)/users", ["email": email])["subject"] as? String)
    }

    /// An enrolment (or recovery) invitation's link bytes.
    func invitation(email: String, client: Client, kind: String = "enrolment") async throws -> [UInt8] {
        let created = try await manage("POST", "/tenants/\(tenant)/invitations", ["email": email, "client_id": client.clientId, "kind": kind])
        return Array(try #require(created["link"] as? String).utf8)
    }

    // MARK: CIBA (the application's side)

    /// `POST /backchannel` with client_secret_basic; answers `auth_req_id`.
    func backchannel(_ client: Client, email: String, pkiKind: String? = nil, context: [UInt8] = Array("invoices".utf8),
                     data: [UInt8]? = nil, binding: String = "Sign invoice 2026-114", bearer: String? = nil) async throws -> String {
        let notificationToken = bearer ?? "cnt-" + Base64URL.encode(SecureRandom.bytes(count: 9))
        var items = [("scope", "openid"), ("login_hint", email), ("binding_message", binding), ("client_notification_token", notificationToken)]
        if let pkiKind {
            items.append(("pki_kind", pkiKind))
            items.append(("pki_context", String(decoding: context, as: UTF8.self)))
            if let data { items.append(("pki_data", Base64URL.encode(data))) }
        }
        let response = try await application(client).backchannel(items)
        guard response.status.code == 200 else {
            throw SetupError("backchannel → \(response.status.code) \(String(decoding: response.body, as: UTF8.self))")
        }
        let object = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        let rid = try #require(object["auth_req_id"] as? String)
        application.expect(rid: rid, bearer: notificationToken)
        return rid
    }

    /// `POST /token`: the status and the JSON object.
    func token(_ client: Client, rid: String) async throws -> (status: Int, body: [String: Any]) {
        let response = try await application(client).token(rid)
        let object = (try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]) ?? [:]
        return (response.status.code, object)
    }

    /// The claims of an ID token (its signature is the authority's concern, tested there).
    static func claims(ofIDToken token: String) throws -> [String: Any] {
        let parts = token.split(separator: ".")
        guard parts.count == 3 else { throw SetupError("not a JWS") }
        return try #require(try JSONSerialization.jsonObject(with: Data(Base64URL.decode(parts[1]))) as? [String: Any])
    }

    /// `client` as the application calls the authority (`client_secret_basic`).
    private func application(_ client: Client) -> ApplicationHarness {
        ApplicationHarness(authority: baseURL, clientID: client.clientId, secret: client.secret)
    }

    // MARK: Devices

    /// A device: its own vault directory, installation marker, pin file and Authenticator environment.
    func device(name: String = "phone", deviceProtocol: Int = 7, faceVerifier: any FaceVerifier = FakeFaceVerifier(),
                clock: any WallClock = SystemWallClock()) throws -> Device {
        let directory = root.appendingPathComponent("device-\(name)")
        return try Device(directory: directory, baseURL: baseURL, deviceProtocol: deviceProtocol,
                          faceVerifier: faceVerifier, clock: clock, name: name)
    }
}

/// One simulated device with the real seams.
struct Device: Sendable {
    let directory: URL
    let client: HTTPAuthorityClient
    let pin: AuthorityKeyPin
    let vault: FileKeyVault
    let presence: ScriptedUserPresence
    let epoch: Epoch
    let environment: AuthenticatorEnvironment

    final class Epoch: Sendable {
        let value = Mutex("epoch-1")
    }

    init(directory: URL, baseURL: URL, deviceProtocol: Int, faceVerifier: any FaceVerifier,
         clock: any WallClock, name: String) throws {
        self.directory = directory
        let epoch = Epoch()
        self.epoch = epoch
        // The device passphrase at the lowest scrypt cost a device accepts, typed by the scripted presence.
        presence = ScriptedUserPresence(clock: FixedClock(), passphrase: DevicePassphrase(directory: directory.appendingPathComponent("vault"), logN: 10))
        let sealer = try AESRecordSealer(keyFile: directory.appendingPathComponent("secrets/vault.key"))
        vault = try FileKeyVault(
            directory: directory.appendingPathComponent("vault"), installationMarker: directory.appendingPathComponent("installed"),
            factory: P256SoftwareKeyFactory(), sealer: sealer, userPresence: presence, enrolmentEpoch: { epoch.value.withLock { $0 } })
        pin = try AuthorityKeyPin(file: directory.appendingPathComponent("vault/authority.pin"))
        client = HTTPAuthorityClient(baseURL: baseURL, pin: pin, deviceProtocol: deviceProtocol, deviceName: name, clock: clock)
        environment = AuthenticatorEnvironment(
            authority: client, delivery: HTTPDeliveryPoster(), faceVerifier: faceVerifier,
            faceTokens: WireFaceTokens(scryptLogN: 10, clock: clock), vault: vault,
            recordSealer: sealer, clock: clock, deviceProtocol: deviceProtocol)
    }

    func open() async throws -> Authenticator { try await Authenticator.open(environment: environment) }

    /// Enrols through the registration flow with an invitation link; answers the key. A further device's enrolment is
    /// approved by `approver` (by default this device, when it already holds an enrolment of the user) with a sign-in
    /// and a face scan, as docs/PROTOCOL.md §8.1 has it; under `password` approval `password` is proven.
    func enrol(_ authn: Authenticator, link: [UInt8], capture label: String = "ada", password: String? = nil,
               session: (any FaceCaptureSession)? = nil, approver: (device: Device, authn: Authenticator)? = nil) async throws -> Key {
        let flow = authn.startRegistrationFlow()
        var states = Observed(flow.stateStream())
        let approving = approver ?? (authn.keys.isEmpty ? nil : (self, authn))
        flow.submitLinkPayload(payload: link)
        while true {
            guard let state = await states.until({ state in
                switch state {
                case .awaitingFaceCapture, .succeeded, .failed, .choosingPassword, .downloadingFaceToken(true, _), .awaitingApproval: true
                default: false
                }
            }) else { throw SetupError("enrolment stream ended: \(states.seen)") }
            if state.isAwaitingFaceCapture { break }
            if state.isTerminal { throw SetupError("enrolment did not reach the face capture: \(states.seen)") }
            if case .awaitingApproval(.enrolledDevice, let code, _) = state {
                guard let approving else { throw SetupError("a further device's enrolment needs an approver") }
                try await approving.device.approveEnrolment(approving.authn, code: code, capture: label)
                continue
            }
            if case .awaitingApproval = state { continue }
            guard let password else { throw SetupError("enrolment asks for a password") }
            flow.submitPassword(password: password)
        }
        flow.submitFaceCapture(captureSession: session ?? capture(label))
        guard case .succeeded(let key) = await states.rest().last else { throw SetupError("enrolment failed: \(states.seen)") }
        return key
    }

    /// Approves a further device's enrolment from this enrolled device: the approval request from the outbox (its
    /// binding message names `code`), answered by a `LoginFlow` with a face scan.
    func approveEnrolment(_ authn: Authenticator, code: String, capture label: String = "ada",
                          session: (any FaceCaptureSession)? = nil) async throws {
        var found: [UInt8]?
        for _ in 0..<3 where found == nil {
            found = try await links(authn).map { Array($0.utf8) }.first
        }
        guard let link = found else { throw SetupError("no approval request in the outbox") }
        let login = authn.startLoginFlow()
        var states = Observed(login.stateStream())
        login.submitLinkPayload(payload: link)
        guard case .awaitingFaceCapture(let binding, _, _, _, _, _, _) = await states.until({ state in
            if case .awaitingFaceCapture = state { return true }
            return state.isTerminal
        }) else { throw SetupError("the approval did not reach the face capture: \(states.seen)") }
        guard binding?.hasSuffix("code \(code)") == true else { throw SetupError("the approval names another code: \(binding ?? "none")") }
        login.submitFaceCapture(captureSession: session ?? capture(label))
        guard case .succeeded = await states.until(\.isTerminal) else { throw SetupError("the approval failed: \(states.seen)") }
    }

    /// The links waiting in this device's outbox, read with the ambient keys of `authn` (`Authenticator.pendingLinks`).
    func links(_ authn: Authenticator) async throws -> [String] {
        guard !authn.keyRing().records.isEmpty else { throw SetupError("no key") }
        return try await authn.pendingLinks(from: client, wait: 5).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The outbox link of request `rid`.
    func link(_ authn: Authenticator, rid: String) async throws -> [UInt8] {
        for link in try await links(authn) {
            if let parsed = try? LinkSignature.parse(Array(link.utf8)), parsed.claims.rid == rid { return Array(link.utf8) }
        }
        throw SetupError("no link for \(rid) in the outbox")
    }
}

/// The application's delivery endpoint (SPEC §4.4): checks the bearer, the request, the kind and the ML-DSA
/// signature (the key delivered by `public_keys`, then pinned), and records what it accepted.
final class RelyingParty: Sendable {
    struct State {
        var bearers: [String: String] = [:]
        var accepted: [String: [UInt8]] = [:]
        var refuseWith: Int?
        var posts = 0
        var pinned: [UInt8]?
        var failures: [String] = []
        /// Every body received, in order (refused ones too).
        var received: [[UInt8]] = []
    }

    final class Inbox: Sendable {
        let state = Mutex(State())
    }

    let inbox = Inbox()
    let server: HTTPServer

    init() throws {
        let inbox = self.inbox
        var router = Router()
        router.post("/delivery") { request in RelyingParty.receive(request, inbox: inbox) }
        server = HTTPServer(logger: .disabled, router: router)
        try server.start()
    }

    var deliveryURL: URL { server.baseURL!.appendingPathComponent("delivery") }

    func expect(rid: String, bearer: String) { inbox.state.withLock { $0.bearers[rid] = bearer } }
    func accepted(_ rid: String) -> [UInt8]? { inbox.state.withLock { $0.accepted[rid] } }
    var posts: Int { inbox.state.withLock { $0.posts } }
    var failures: [String] { inbox.state.withLock { $0.failures } }
    var received: [[UInt8]] { inbox.state.withLock { $0.received } }
    func refuse(with status: Int?) { inbox.state.withLock { $0.refuseWith = status } }

    static func receive(_ request: HTTPRequest, inbox: Inbox) -> HTTPResponse {
        inbox.state.withLock { s in
            s.posts += 1
            s.received.append(request.body)
            if let status = s.refuseWith { return .empty(HTTPStatus(code: status)) }
            guard let body = try? DeliveryBody.decode(request.body), body.isConsistent else { s.failures.append("body"); return .empty(.badRequest) }
            guard let expected = s.bearers[body.authReqId], constantTimeEquals(Array((request.headers["Authorization"] ?? "").utf8), Array("Bearer \(expected)".utf8)) else {
                s.failures.append("bearer"); return .empty(.unauthorized)
            }
            guard s.accepted[body.authReqId] == nil else { s.failures.append("duplicate"); return .empty(.conflict) }
            let key: [UInt8]
            if body.kind == .publicKeys {
                guard let delivered = body.publicKeys?["ML-DSA-65"]?.bytes else { s.failures.append("no key"); return .empty(.badRequest) }
                key = delivered
            } else {
                guard let pinned = s.pinned else { s.failures.append("nothing pinned"); return .empty(.badRequest) }
                key = pinned
            }
            guard let publicKey = try? MLDSA65.PublicKey(rawRepresentation: key),
                  let signature = try? Base64URL.decode(request.headers[DeliveryNames.signatureHeader] ?? ""),
                  publicKey.isValidSignature(signature, for: request.body, context: DeliveryNames.signatureContext),
                  body.keyId == Base64URL.encode(SHA256.hash(data: key).bytes) else {
                s.failures.append("signature"); return .empty(.unauthorized)
            }
            if body.kind == .publicKeys { s.pinned = key }
            s.accepted[body.authReqId] = request.body
            return .empty(.noContent)
        }
    }
}

extension RegistrationFlow.State {
    var isTerminal: Bool {
        switch self {
        case .succeeded, .failed: true
        default: false
        }
    }
}

/// A file vault whose `createKey` fails once `budget` keys were made: an enrolment that fails after its first key.
final class BudgetedVault: KeyVault {
    let inner: FileKeyVault
    let budget: Mutex<Int>

    init(_ inner: FileKeyVault, budget: Int) {
        self.inner = inner
        self.budget = Mutex(budget)
    }

    var userPresence: any UserPresence { inner.userPresence }

    func createKey(protection: KeyProtection, alias: String, presence: UserPresenceProof?) throws(VaultError) -> DeviceKeyDescriptor {
        let allowed = budget.withLock { left -> Bool in
            guard left > 0 else { return false }
            left -= 1
            return true
        }
        guard allowed else { throw .storageFailed("secure hardware refused the key") }
        return try inner.createKey(protection: protection, alias: alias, presence: presence)
    }

    func deleteKey(deviceKeyId: String) throws(VaultError) { try inner.deleteKey(deviceKeyId: deviceKeyId) }
    func hasKeyMaterial(deviceKeyId: String) -> Bool { inner.hasKeyMaterial(deviceKeyId: deviceKeyId) }
    func signer(deviceKeyId: String, presence: UserPresenceProof?) throws(VaultError) -> any DeviceRequestSigner {
        try inner.signer(deviceKeyId: deviceKeyId, presence: presence)
    }
    func readRecordFile() throws(VaultError) -> [UInt8]? { try inner.readRecordFile() }
    func writeRecordFile(_ bytes: [UInt8]) throws(VaultError) { try inner.writeRecordFile(bytes) }
    func readAuditFile() throws(VaultError) -> [UInt8]? { try inner.readAuditFile() }
    func writeAuditFile(_ bytes: [UInt8]) throws(VaultError) { try inner.writeAuditFile(bytes) }
    func isFreshInstall() -> Bool { inner.isFreshInstall() }
    func markInstalled() throws(VaultError) { try inner.markInstalled() }
}

/// A loopback proxy in front of the authority that answers chosen requests with an unsigned 503 (what a load
/// balancer answers when no authority process is reachable): either before forwarding them (the authority never sees
/// the request) or after (the authority acted, the device lost the answer).
final class FlakyProxy: Sendable {
    let server: HTTPServer

    /// When a failure is injected. `late`: answered at once, forwarded only after the next request has been answered
    /// by the authority (a request still in flight while the device asks about it).
    enum Moment: Sendable { case beforeForwarding, afterForwarding, late }

    init(target: URL) throws {
        let client = HTTPClient()
        let rules = Rules()
        self.rules = rules
        var base = target.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        let prefix = base
        server = HTTPServer(logger: .disabled) { request in
            let unavailable = HTTPResponse(status: 503, body: Array("upstream unavailable".utf8))
            if rules.take(path: request.path, .beforeForwarding) { return unavailable }
            var headers = HTTPHeaders()
            for field in request.headers where field.name.lowercased().hasPrefix("faceseal-") || field.name.lowercased() == "content-type" {
                headers[field.name] = field.value
            }
            let url = URL(string: prefix + request.path + (request.rawQuery.map { "?" + $0 } ?? ""))!
            let forwarded = HTTPClientRequest(method: request.method, url: url, headers: headers, body: request.body)
            if rules.take(path: request.path, .late) {
                rules.hold(forwarded)
                return unavailable
            }
            let response = try await client.send(forwarded)
            for late in rules.takeHeld() { _ = try await client.send(late) }
            if rules.take(path: request.path, .afterForwarding) { return unavailable }
            var back = HTTPHeaders()
            for field in response.headers where field.name.lowercased().hasPrefix("faceseal-") || field.name.lowercased() == "content-type" {
                back[field.name] = field.value
            }
            return HTTPResponse(status: response.status, headers: back, body: response.body)
        }
        try server.start()
    }

    private let rules: Rules

    /// Fails the next `count` completions before they reach the authority.
    func failNextCompletions(_ count: Int) { fail(pathSuffix: "/completion", .beforeForwarding, count: count) }

    /// Fails `count` requests whose path ends with `pathSuffix`, after letting `skip` of them through.
    func fail(pathSuffix: String, _ moment: Moment, skip: Int = 0, count: Int) {
        rules.add(Rules.Rule(suffix: pathSuffix, moment: moment, skip: skip, count: count))
    }

    /// An authenticator of `device` whose authority client goes through this proxy (the same vault and pin).
    func authenticator(_ device: Device, vault: (any KeyVault)? = nil) async throws -> Authenticator {
        var environment = device.environment
        environment.authority = HTTPAuthorityClient(
            baseURL: try #require(server.baseURL), pin: try AuthorityKeyPin(file: device.directory.appendingPathComponent("vault/authority.pin")),
            clock: environment.clock)
        if let vault { environment.vault = vault }
        return try await Authenticator.open(environment: environment)
    }

    final class Rules: Sendable {
        struct Rule {
            let suffix: String
            let moment: Moment
            var skip: Int
            var count: Int
        }

        private let rules = Mutex<[Rule]>([])
        private let held = Mutex<[HTTPClientRequest]>([])
        func hold(_ request: HTTPClientRequest) { held.withLock { $0.append(request) } }
        func takeHeld() -> [HTTPClientRequest] { held.withLock { held in defer { held = [] }; return held } }
        func add(_ rule: Rule) { rules.withLock { $0.append(rule) } }
        func take(path: String, _ moment: Moment) -> Bool {
            rules.withLock { rules in
                guard let index = rules.firstIndex(where: { path.hasSuffix($0.suffix) && $0.moment == moment && $0.count > 0 }) else { return false }
                if rules[index].skip > 0 {
                    rules[index].skip -= 1
                    return false
                }
                rules[index].count -= 1
                return true
            }
        }
    }
}

/// A file vault that plays a process dying in the middle of a rotation: once armed, the `n`-th write of the record
/// file (or the first key deletion) fails, and from then on nothing reaches the disk — no write, no key created or
/// deleted — as if the process had stopped there. `open()` on the inner vault is then the next process start. It can
/// also refuse one key's signatures (the secure hardware refusing key N of a rotation).
final class CrashingVault: KeyVault {
    struct State {
        var writes = 0
        var crashAtWrite: Int?
        var crashAtDelete = false
        var dead = false
        var refusedSigner: String?
    }

    let inner: FileKeyVault
    let state = Mutex(State())

    init(_ inner: FileKeyVault) { self.inner = inner }

    /// The `n`-th record write from now on fails (1 is the next one).
    func crash(atRecordWrite n: Int) { state.withLock { $0 = State(crashAtWrite: n) } }
    /// The next key deletion fails.
    func crashAtNextDelete() { state.withLock { $0 = State(crashAtDelete: true) } }
    /// Signatures of this key fail with `notAvailable`.
    func refuseSignatures(of deviceKeyId: String) { state.withLock { $0.refusedSigner = deviceKeyId } }
    var died: Bool { state.withLock { $0.dead } }

    private func alive() throws(VaultError) {
        if state.withLock({ $0.dead }) { throw .storageFailed("the process died") }
    }

    var userPresence: any UserPresence { inner.userPresence }

    func createKey(protection: KeyProtection, alias: String, presence: UserPresenceProof?) throws(VaultError) -> DeviceKeyDescriptor {
        try alive()
        return try inner.createKey(protection: protection, alias: alias, presence: presence)
    }

    func deleteKey(deviceKeyId: String) throws(VaultError) {
        let dies = state.withLock { s -> Bool in
            if s.crashAtDelete { s.dead = true }
            return s.dead
        }
        if dies { throw .storageFailed("the process died") }
        try inner.deleteKey(deviceKeyId: deviceKeyId)
    }

    func hasKeyMaterial(deviceKeyId: String) -> Bool { inner.hasKeyMaterial(deviceKeyId: deviceKeyId) }

    func signer(deviceKeyId: String, presence: UserPresenceProof?) throws(VaultError) -> any DeviceRequestSigner {
        let signer = try inner.signer(deviceKeyId: deviceKeyId, presence: presence)
        return state.withLock { $0.refusedSigner } == deviceKeyId ? RefusingSigner(deviceKeyId: deviceKeyId, protection: signer.protection) : signer
    }

    func readRecordFile() throws(VaultError) -> [UInt8]? { try inner.readRecordFile() }

    func writeRecordFile(_ bytes: [UInt8]) throws(VaultError) {
        let dies = state.withLock { s -> Bool in
            s.writes += 1
            if s.writes == s.crashAtWrite { s.dead = true }
            return s.dead
        }
        if dies { throw .storageFailed("the process died") }
        try inner.writeRecordFile(bytes)
    }

    func readAuditFile() throws(VaultError) -> [UInt8]? { try inner.readAuditFile() }

    func writeAuditFile(_ bytes: [UInt8]) throws(VaultError) {
        try alive()
        try inner.writeAuditFile(bytes)
    }

    func isFreshInstall() -> Bool { inner.isFreshInstall() }
    func markInstalled() throws(VaultError) { try inner.markInstalled() }

    private struct RefusingSigner: DeviceRequestSigner {
        let deviceKeyId: String
        let protection: KeyProtection
        func sign(_ message: [UInt8]) async throws(SignKeypairError) -> [UInt8] {
            throw SignKeypairError(code: .notAvailable, message: "the secure hardware refused")
        }
    }
}


/// Real time plus an adjustable skew.
final class SkewedClock: WallClock {
    private let skew = Mutex<TimeInterval>(0)
    func now() -> Date { Date().addingTimeInterval(skew.withLock { $0 }) }
    func advance(by seconds: TimeInterval) { skew.withLock { $0 += seconds } }
}
