/// What the device needs to show and perform a pending request (login or ceremony), from
/// `GET /device/v1/requests/{rid}` (SPEC §4.2). Readable with the ambient key.
public struct RequestDetails: WireMessage {
    /// Protocol version of the message.
    public var v: Int
    /// The request id (the CIBA `auth_req_id`).
    public var rid: String
    /// `login` or `ceremony`.
    public var kind: LinkKind
    /// The ceremony's operation; nil for a sign-in.
    public var pkiKind: PKIKind?
    /// The application's binding message (always present on a ceremony).
    public var bindingMessage: String?
    /// The application's client id (part of the key derivation).
    public var clientId: String
    /// The application's label.
    public var rpLabel: String
    /// The application's branding.
    public var branding: BrandingInfo?
    /// Expiry, Unix seconds.
    public var expiresAt: Int64
    /// The tenant's key policy.
    public var keyPolicy: KeyPolicy
    /// The face-mismatch budget.
    public var attemptsMax: Int
    /// Face mismatches the request has left (the authority counts them; a new flow on the same link does not reset it).
    public var attemptsLeft: Int
    /// The liveness and capture-quality failure budget.
    public var captureRetriesMax: Int
    /// Liveness and capture-quality failures the request has left.
    public var captureRetriesLeft: Int
    /// Whether the tenant requires liveness now (the device runs it when this or the token header asks).
    public var livenessRequired: Bool
    /// The tenant's match threshold now (the device matches at the lower of this and the header's).
    public var matchThreshold: Double
    /// The lowest device protocol this request accepts.
    public var minProtocol: Int
    /// Ceremonies: the application's delivery endpoint.
    public var deliveryEndpoint: String?
    /// Ceremonies: the bearer for the delivery (the application's `client_notification_token`).
    public var clientNotificationToken: String?
    /// Ceremonies: the key context (opaque; never shown to the host app).
    public var pkiContext: Base64URLBytes?
    /// Ceremonies: the message to sign or the ciphertext to decapsulate.
    public var pkiData: Base64URLBytes?
    /// The link's nonce, which seeds the liveness challenge.
    public var nonce: String

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case v, rid, kind, nonce, branding
        case pkiKind = "pki_kind"
        case bindingMessage = "binding_message"
        case clientId = "client_id"
        case rpLabel = "rp_label"
        case expiresAt = "expires_at"
        case keyPolicy = "key_policy"
        case attemptsMax = "attempts_max"
        case attemptsLeft = "attempts_left"
        case captureRetriesMax = "capture_retries_max"
        case captureRetriesLeft = "capture_retries_left"
        case livenessRequired = "liveness_required"
        case matchThreshold = "match_threshold"
        case minProtocol = "min_protocol"
        case deliveryEndpoint = "delivery_endpoint"
        case clientNotificationToken = "client_notification_token"
        case pkiContext = "pki_context"
        case pkiData = "pki_data"
    }

    public static var maxBytes: Int { 160 * 1024 }

    /// Builds request details.
    public init(v: Int = ProtocolVersion.current, rid: String, kind: LinkKind, pkiKind: PKIKind? = nil,
                bindingMessage: String? = nil, clientId: String, rpLabel: String, branding: BrandingInfo? = nil,
                expiresAt: Int64, keyPolicy: KeyPolicy, attemptsMax: Int, attemptsLeft: Int, captureRetriesMax: Int,
                captureRetriesLeft: Int, livenessRequired: Bool, matchThreshold: Double, minProtocol: Int,
                deliveryEndpoint: String? = nil, clientNotificationToken: String? = nil,
                pkiContext: [UInt8]? = nil, pkiData: [UInt8]? = nil, nonce: String) {
        self.v = v
        self.rid = rid
        self.kind = kind
        self.pkiKind = pkiKind
        self.bindingMessage = bindingMessage
        self.clientId = clientId
        self.rpLabel = rpLabel
        self.branding = branding
        self.expiresAt = expiresAt
        self.keyPolicy = keyPolicy
        self.attemptsMax = attemptsMax
        self.attemptsLeft = attemptsLeft
        self.captureRetriesMax = captureRetriesMax
        self.captureRetriesLeft = captureRetriesLeft
        self.livenessRequired = livenessRequired
        self.matchThreshold = matchThreshold
        self.minProtocol = minProtocol
        self.deliveryEndpoint = deliveryEndpoint
        self.clientNotificationToken = clientNotificationToken
        self.pkiContext = pkiContext.map(Base64URLBytes.init)
        self.pkiData = pkiData.map(Base64URLBytes.init)
        self.nonce = nonce
    }
}

extension RequestDetails {
    public func checkRanges() throws(WireError) {
        try WireRange.check(v, WireRange.version, "v")
        try WireRange.check(expiresAt, WireRange.unixTime, "expires_at")
        try WireRange.check(attemptsMax, WireRange.attempts, "attempts_max")
        try WireRange.check(attemptsLeft, 0...attemptsMax, "attempts_left")
        try WireRange.check(captureRetriesMax, WireRange.attempts, "capture_retries_max")
        try WireRange.check(captureRetriesLeft, 0...captureRetriesMax, "capture_retries_left")
        guard MatchPolicy.thresholdRange.contains(matchThreshold) else {
            throw .invalidValue(field: "match_threshold", reason: "must be within \(MatchPolicy.thresholdRange)")
        }
        try WireRange.check(minProtocol, WireRange.version, "min_protocol")
    }
}
