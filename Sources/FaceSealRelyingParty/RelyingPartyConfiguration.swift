public import FaceSealWire
public import Foundation
public import FaceSealCrypto
public import FaceSealHTTPClient

/// How the relying party authenticates to the authority's backchannel and token endpoints.
public enum ClientAuthentication: Sendable {
    /// HTTP Basic with the form-encoded client id and secret (RFC 6749 §2.3.1).
    case clientSecretBasic(secret: SecretBytes)
    /// `client_id` and `client_secret` in the form body.
    case clientSecretPost(secret: SecretBytes)
    /// A JWT assertion (RFC 7523) signed with a P-256, Ed25519, RSA or ML-DSA-65 key whose public half the
    /// authority holds in the application's JWKS; each assertion lives `lifetime` seconds and has a fresh `jti`.
    case privateKeyJWT(signer: any JWSSigner, keyID: String?, lifetime: TimeInterval = 60)

    /// The method's registered name.
    public var methodName: String {
        switch self {
        case .clientSecretBasic: "client_secret_basic"
        case .clientSecretPost: "client_secret_post"
        case .privateKeyJWT: "private_key_jwt"
        }
    }
}

/// How the relying party learns that a request finished.
public enum TokenDeliveryMode: String, Sendable, CaseIterable {
    /// Poll the token endpoint at the authority's interval.
    case poll
    /// Wait for the authority's ping callback, then call the token endpoint once.
    case ping
}

/// Everything a relying party needs, in one value.
public struct RelyingPartyConfiguration: Sendable {
    /// The authority's issuer identifier (discovery is at `issuer + /.well-known/openid-configuration`).
    public var issuer: URL
    /// This application's client id.
    public var clientID: String
    /// Client authentication.
    public var authentication: ClientAuthentication
    /// The public URL of this application's delivery endpoint (registered with the authority); its path is
    /// where `mount(on:)` installs the handler.
    public var deliveryEndpoint: URL
    /// The public URL of the ping notification endpoint, if the application uses ping mode.
    public var notificationEndpoint: URL?
    /// Poll or ping.
    public var tokenDeliveryMode: TokenDeliveryMode
    /// `requested_expiry` to send, seconds (nil: the authority's default).
    public var requestedExpiry: Int?
    /// Clock skew tolerated on the ID token's `exp` and `iat`.
    public var leeway: TimeInterval
    /// How many times the convenience API starts a new request after `stale_token`.
    public var maxStaleRetries: Int
    /// How long discovery and the JWKS are cached.
    public var metadataCacheLifetime: TimeInterval
    /// The current time (injected for tests).
    public var clock: any WallClock
    /// Waits between polls and before a retry a draining authority asked for (injected for tests).
    public var sleeper: any Sleeper
    /// How often, and after how long a `Retry-After` at most, a request a draining authority answered `503` is sent
    /// again (at the token endpoint too: a restarting authority does not end a poll).
    public var unavailableRetry: UnavailableRetry
    /// The HTTP client to the authority.
    public var httpClient: HTTPClient
    /// Told about every delivery the endpoint receives (accepted or refused), for logs.
    public var deliveryObserver: (@Sendable (_ authReqId: String?, _ outcome: Result<AcceptedDelivery, DeliveryRefusal>) -> Void)?

    /// A configuration; everything after `deliveryEndpoint` has a default.
    public init(issuer: URL, clientID: String, authentication: ClientAuthentication, deliveryEndpoint: URL,
                notificationEndpoint: URL? = nil, tokenDeliveryMode: TokenDeliveryMode = .poll, requestedExpiry: Int? = nil,
                leeway: TimeInterval = 60, maxStaleRetries: Int = 2, metadataCacheLifetime: TimeInterval = 300,
                clock: any WallClock = SystemWallClock(), sleeper: any Sleeper = TaskSleeper(),
                httpClient: HTTPClient = HTTPClient(configuration: .init(maxResponseBodySize: 1 << 20)),
                unavailableRetry: UnavailableRetry = UnavailableRetry(),
                deliveryObserver: (@Sendable (_ authReqId: String?, _ outcome: Result<AcceptedDelivery, DeliveryRefusal>) -> Void)? = nil) {
        self.issuer = issuer
        self.clientID = clientID
        self.authentication = authentication
        self.deliveryEndpoint = deliveryEndpoint
        self.notificationEndpoint = notificationEndpoint
        self.tokenDeliveryMode = tokenDeliveryMode
        self.requestedExpiry = requestedExpiry
        self.leeway = leeway
        self.maxStaleRetries = maxStaleRetries
        self.metadataCacheLifetime = metadataCacheLifetime
        self.clock = clock
        self.sleeper = sleeper
        self.httpClient = httpClient
        self.unavailableRetry = unavailableRetry
        self.deliveryObserver = deliveryObserver
    }

    /// The issuer as compared with `iss` (no trailing slash).
    var issuerString: String {
        var text = issuer.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        return text
    }
}
