public import FaceSealCrypto

/// A device public key registered with the authority: a P-256 key as a JWK, with its id.
public struct DevicePublicKey: Codable, Sendable, Equatable {
    /// The key id (random, fixed at creation).
    public var kid: String
    /// The public key, x963 uncompressed point (65 bytes).
    public var x963: Base64URLBytes

    /// Builds a key entry.
    public init(kid: String, x963: [UInt8]) {
        self.kid = kid
        self.x963 = Base64URLBytes(x963)
    }
}

/// What the device learns from an enrolment invitation before it creates keys (`GET /device/v1/enrolments/{inv}`).
public struct EnrolmentDetails: WireMessage {
    /// Protocol version.
    public var v: Int
    /// The invitation id.
    public var invitation: String
    /// The user's email.
    public var email: String
    /// The user's subject at the authority: a first device writes it as its new face token's header `sub`.
    public var subject: String
    /// The user's tenant: a first device writes it as its new face token's header `tenant`.
    public var tenant: String
    /// The application's client id.
    public var clientId: String
    /// The application's label.
    public var appLabel: String
    /// The application's branding.
    public var branding: BrandingInfo?
    /// Whether the user already has a face token (a further device): the device must match against it.
    public var tokenExists: Bool
    /// Whether the tenant requires a password on new tokens.
    public var passwordRequired: Bool
    /// Whether captures must pass liveness.
    public var livenessRequired: Bool
    /// The tenant's key policy.
    public var keyPolicy: KeyPolicy
    /// Expiry of the invitation, Unix seconds.
    public var expiresAt: Int64
    /// A recovery invitation (docs/PROTOCOL.md §8.1): `true` only then. With `token_exists: false` the device enrols
    /// as a first device and its new token replaces the user's old one (new keys).
    public var recovery: Bool?

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case v, invitation, email, branding, tenant, recovery
        case subject = "sub"
        case clientId = "client_id"
        case appLabel = "app_label"
        case tokenExists = "token_exists"
        case passwordRequired = "password_required"
        case livenessRequired = "liveness_required"
        case keyPolicy = "key_policy"
        case expiresAt = "expires_at"
    }

    /// Builds the details.
    public init(v: Int = ProtocolVersion.current, invitation: String, email: String, subject: String, tenant: String,
                clientId: String, appLabel: String, branding: BrandingInfo?, tokenExists: Bool, passwordRequired: Bool,
                livenessRequired: Bool, keyPolicy: KeyPolicy, expiresAt: Int64, recovery: Bool? = nil) {
        self.v = v
        self.recovery = recovery
        self.invitation = invitation
        self.email = email
        self.subject = subject
        self.tenant = tenant
        self.clientId = clientId
        self.appLabel = appLabel
        self.branding = branding
        self.tokenExists = tokenExists
        self.passwordRequired = passwordRequired
        self.livenessRequired = livenessRequired
        self.keyPolicy = keyPolicy
        self.expiresAt = expiresAt
    }
}

/// An enrolment (`POST /device/v1/enrolments/{inv}`): both device keys at once, all or nothing. The request is
/// signed with the new user-present key; `ambientProof` is a compact JWS by the new ambient key over
/// `{"inv": invitation, "jti": <the request's jti>}`, proving possession of both. A first device also sends the
/// face token it created and its server share.
public struct EnrolmentRequest: WireMessage {
    /// Protocol version the device speaks.
    public var v: Int
    /// The ambient key.
    public var ambientKey: DevicePublicKey
    /// The user-present key.
    public var userPresentKey: DevicePublicKey
    /// Proof of possession of the ambient key.
    public var ambientProof: String
    /// First device: the new face token (generation 1).
    public var token: FaceTokenEnvelope?
    /// First device: the server share of that token.
    public var serverShare: Base64URLSecret?
    /// A label for the device (shown in the management API and in approval requests).
    public var deviceName: String
    /// First device with a password-protected token: the public key of its password verifier (`PasswordVerifier`).
    public var passwordVerifier: Base64URLBytes?

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case v, token
        case ambientKey = "ambient_key"
        case userPresentKey = "user_present_key"
        case ambientProof = "ambient_proof"
        case serverShare = "server_share"
        case deviceName = "device_name"
        case passwordVerifier = "password_verifier"
    }

    public static var maxBytes: Int { 512 * 1024 }

    /// Builds an enrolment.
    public init(v: Int = ProtocolVersion.current, ambientKey: DevicePublicKey, userPresentKey: DevicePublicKey,
                ambientProof: String, token: FaceTokenEnvelope?, serverShare: SecretBytes?, deviceName: String,
                passwordVerifier: [UInt8]? = nil) {
        self.v = v
        self.passwordVerifier = passwordVerifier.map(Base64URLBytes.init)
        self.ambientKey = ambientKey
        self.userPresentKey = userPresentKey
        self.ambientProof = ambientProof
        self.token = token
        self.serverShare = serverShare.map(Base64URLSecret.init)
        self.deviceName = deviceName
    }
}

/// The answer to an enrolment: the identity the keys now belong to.
public struct EnrolmentResponse: WireMessage {
    /// Protocol version.
    public var v: Int
    /// The pairwise subject (identity id) for this application.
    public var identityId: String
    /// The user's email.
    public var email: String
    /// The application's client id.
    public var clientId: String
    /// The application's label.
    public var appLabel: String
    /// The application's branding.
    public var branding: BrandingInfo?
    /// The authority's issuer.
    public var issuer: String
    /// The authority's Ed25519 key (confirms the one the enrolment link carried).
    public var authorityKey: Base64URLBytes
    /// Keys of this user on another device that this enrolment replaced (one device per user).
    public var replacedKeys: [String]
    /// A further device: the enrolment is pending until this approval releases the token (docs/PROTOCOL.md §8.1).
    public var approval: EnrolmentApproval?

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case v, email, branding, issuer, approval
        case identityId = "identity_id"
        case clientId = "client_id"
        case appLabel = "app_label"
        case authorityKey = "authority_key"
        case replacedKeys = "replaced_keys"
    }

    /// Builds the answer.
    public init(v: Int = ProtocolVersion.current, identityId: String, email: String, clientId: String, appLabel: String,
                branding: BrandingInfo?, issuer: String, authorityKey: [UInt8], replacedKeys: [String] = [],
                approval: EnrolmentApproval? = nil) {
        self.v = v
        self.approval = approval
        self.identityId = identityId
        self.email = email
        self.clientId = clientId
        self.appLabel = appLabel
        self.branding = branding
        self.issuer = issuer
        self.authorityKey = Base64URLBytes(authorityKey)
        self.replacedKeys = replacedKeys
    }
}

extension EnrolmentDetails {
    public func checkRanges() throws(WireError) {
        try WireRange.check(v, WireRange.version, "v")
        try WireRange.check(expiresAt, WireRange.unixTime, "expires_at")
    }
}

extension EnrolmentRequest {
    public func checkRanges() throws(WireError) { try WireRange.check(v, WireRange.version, "v") }
}

extension EnrolmentResponse {
    public func checkRanges() throws(WireError) {
        try WireRange.check(v, WireRange.version, "v")
        if let approval { try WireRange.check(approval.expiresAt, WireRange.unixTime, "approval.expires_at") }
    }
}
