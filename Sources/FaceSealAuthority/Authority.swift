public import FaceSealCrypto
public import FaceSealHTTP
public import FaceSealWire
public import Foundation

/// How an authority is set up: one value, read at start.
public struct AuthorityConfiguration: Sendable {
    /// The issuer: the externally visible base URL, e.g. `http://127.0.0.1:8080`.
    public var issuer: String
    /// Default lifetime of a CIBA request when the tenant policy does not say, seconds.
    public var defaultRequestLifetime: Int
    /// The minimum polling interval given to applications, seconds.
    public var pollInterval: Int
    /// How long the previous device key stays valid after a rotation, seconds.
    public var rotationOverlap: Int
    /// The limits on what an attacker could repeat for profit (docs/PROTOCOL.md, "Rate limits").
    public var rateLimits: RateLimits
    /// How long a further device's enrolment waits for its approval and download, seconds (docs/PROTOCOL.md §8.1).
    public var enrolmentApprovalWindow: Int
    /// Where operational events go (`faceseal serve --log-format`, `--log-level`).
    public var log: EventLog
    /// How webhook pushes are sent (docs/PROTOCOL.md §12).
    public var webhooks: WebhookPolicy
    /// Lifetime of ID tokens and access tokens, seconds.
    public var tokenLifetime = 600
    /// How long a ping callback may take before it is given up.
    public var pingTimeout: Duration = .seconds(5)
    /// The longest long poll (`wait=N` of the outbox and of the enrolment token), seconds.
    public var outboxMaximumWait = 30
    /// An invitation's lifetime when the administrator does not say, and the lifetimes one may ask for, seconds.
    public var invitationLifetime = (default: 7 * 24 * 3600, range: 60...(30 * 24 * 3600))
    /// The largest `private_key_jwt` client assertion read, bytes (room for an ML-DSA-65 signature), the longest
    /// remaining lifetime accepted (it bounds how long its `jti` is remembered) and the clock skew tolerated, seconds.
    public var clientAssertionLimits = (maxBytes: 16 * 1024, maxLifetime: TimeInterval(600), leeway: TimeInterval(30))
    /// Where the authority's own requests — ping callbacks and webhook pushes, to URLs a tenant registered — may
    /// connect: public addresses only by default, so a tenant cannot aim the authority at its loopback, private
    /// network or a cloud metadata service (docs/PROTOCOL.md §10). `.any` for development on one host.
    public var callbackDestinations: HTTPClient.Destinations
    /// How long a finished request (completed, denied, expired or stale) is kept after its expiry, seconds; then the
    /// retention sweep deletes it (`sweepRequests()`). Nil keeps every request. Its audit events stay either way.
    public var requestRetention: Int? = 86_400
    /// How long an audit event is kept, seconds; then the retention sweep deletes it (`sweepAuditEvents()`). Nil (the
    /// default) keeps the whole log.
    public var auditRetention: Int?

    /// Builds a configuration.
    public init(issuer: String, defaultRequestLifetime: Int = 300, pollInterval: Int = 5, rotationOverlap: Int = 7 * 24 * 3600,
                rateLimits: RateLimits = RateLimits(), enrolmentApprovalWindow: Int = 600, log: EventLog = .standardError(),
                webhooks: WebhookPolicy = WebhookPolicy(), callbackDestinations: HTTPClient.Destinations = .publicOnly) {
        self.enrolmentApprovalWindow = enrolmentApprovalWindow
        self.issuer = issuer
        self.defaultRequestLifetime = defaultRequestLifetime
        self.pollInterval = pollInterval
        self.rotationOverlap = rotationOverlap
        self.rateLimits = rateLimits
        self.log = log
        self.webhooks = webhooks
        self.callbackDestinations = callbackDestinations
    }
}

/// The authority (SPEC §1, §4): an OpenID Provider with CIBA, the device API and the management API over one
/// storage. Handlers are plain async functions installed into one router; each API lives in its own folder
/// (`CIBA/`, `Device/`, `Management/`) and installs its routes from there.
public final class Authority: Sendable {
    /// The configuration it was started with.
    public let configuration: AuthorityConfiguration
    /// Where everything is kept.
    public let store: any AuthorityStore
    /// The authority's keys.
    public let keys: AuthorityKeys
    /// The clock every handler reads (injected in tests).
    public let clock: any WallClock
    /// Serving or draining (`AuthorityService` begins the drain; long polls and readiness read it).
    public let lifecycle = AuthorityLifecycle()
    /// Wakes this authority's outbox long polls when a link is queued for their device.
    let outbox = OutboxNotifier()

    /// The ID-token signing keys, loaded from the store on first use (`prepareSigningKeys()`).
    let idTokenKeys = IDTokenKeyLoader()
    /// The parsed JWKS of `private_key_jwt` clients.
    let clientKeySets = ClientKeySets()
    /// The parsed keys of device keys.
    let devicePublicKeys = DevicePublicKeys()
    /// The device-response key in use and its rollover statements (`refreshDeviceResponseKey()`).
    let deviceResponseKeys: DeviceResponseKeyRing
    /// Sends ping callbacks to applications (CIBA ping mode).
    let notificationClient: HTTPClient
    /// The counters `GET /metrics` exports.
    public let metrics = AuthorityMetrics()
    /// Where each new request's link is pushed (SPEC §4.6): the outbox always, a tenant's webhook when it has one.
    let pushSenders: [any PushSender]
    /// The webhook sender among them (its deliveries can be awaited).
    let webhookSender: WebhookPushSender

    /// Builds an authority over `store`.
    public init(configuration: AuthorityConfiguration, store: any AuthorityStore, keys: AuthorityKeys,
                clock: any WallClock = SystemWallClock()) {
        self.configuration = configuration
        self.store = store
        self.keys = keys
        self.clock = clock
        deviceResponseKeys = DeviceResponseKeyRing(initial: keys.deviceKey)
        notificationClient = HTTPClient(configuration: HTTPClient.Configuration(
            maxResponseBodySize: 64 * 1024, destinations: configuration.callbackDestinations))
        webhookSender = WebhookPushSender(policy: configuration.webhooks, destinations: configuration.callbackDestinations)
        pushSenders = [OutboxPushSender(), webhookSender]
    }

    /// Every route of the public listener, each counted and timed in `metrics` under its pattern.
    public func makeRouter() -> Router {
        var router = Router()
        installCIBARoutes(into: &router)
        installWebRoutes(into: &router)
        installDeviceRoutes(into: &router)
        installManagementRoutes(into: &router)
        installOperationsRoutes(into: &router, metricsNeedAdministrator: true)
        installLinkPage(into: &router)
        return instrumented(router)
    }

    /// The operational log (`configuration.log`).
    var log: EventLog { configuration.log }

    /// The current time in Unix seconds.
    var now: Int64 { Int64(clock.now().timeIntervalSince1970) }

    /// The nonce of a request's link (and so the seed of its liveness challenge): HMAC-SHA256 of the request id
    /// under a key derived from the master key. Derived, not stored: unpredictable before the link exists,
    /// identical in the link and in the request details.
    func linkNonce(for requestID: String) -> String {
        let code = HMAC<SHA256>.authenticationCode(for: Array(requestID.utf8), using: keys.nonceKey)
        return Base64URL.encode(Array(code).prefix(16))
    }
}

/// The authority's own keys. The master key is only ever HKDF-SHA256 input: each purpose has its own key, derived
/// with a versioned label (`faceseal/<purpose>/v1`), so no key serves two purposes and a purpose can move to a new
/// version alone.
public struct AuthorityKeys: Sendable {
    /// Signs links and every response to a device (Ed25519); its public half is pinned by devices at enrolment.
    public let deviceKey: Curve25519.Signing.PrivateKey

    /// Wraps the face tokens' server shares at rest (AES-256-GCM): `faceseal/share-wrapping/v1`.
    let shareWrappingKey: SymmetricKey
    /// Wraps the ID-token signing keys at rest (AES-256-GCM): `faceseal/signing-key-wrapping/v1`.
    let signingKeyWrappingKey: SymmetricKey
    /// Keys the link nonces: `faceseal/link-nonce/v1`.
    let nonceKey: SymmetricKey
    /// Keys the pairwise subject identifiers of ID tokens: `faceseal/pairwise-subject/v1`.
    let pairwiseKey: SymmetricKey
    /// Wraps the tenants' webhook signing secrets at rest (AES-256-GCM): `faceseal/webhook-secret-wrapping/v1`.
    let webhookSecretWrappingKey: SymmetricKey
    /// The master key itself, only to re-wrap secrets stored before the wrapping keys were derived (schema
    /// version 5 marks them): `migrateWrappedSecrets()`.
    let legacyWrappingKey: SymmetricKey

    /// Derives every per-purpose key from `masterKey`; the device key is given (tests; `init(derivingFrom:)` derives it).
    /// - Throws: a `CryptoError` if derivation fails (it does not for a 32-byte key); there is no fallback to the raw key.
    public init(deviceKey: Curve25519.Signing.PrivateKey, masterKey: SymmetricKey) throws {
        func derive(_ purpose: String) throws -> SymmetricKey {
            try HKDF<SHA256>.deriveKey(inputKeyMaterial: masterKey, info: Array("faceseal/\(purpose)/v1".utf8), outputByteCount: 32)
        }
        self.deviceKey = deviceKey
        shareWrappingKey = try derive("share-wrapping")
        signingKeyWrappingKey = try derive("signing-key-wrapping")
        nonceKey = try derive("link-nonce")
        pairwiseKey = try derive("pairwise-subject")
        webhookSecretWrappingKey = try derive("webhook-secret-wrapping")
        legacyWrappingKey = masterKey
    }
}
