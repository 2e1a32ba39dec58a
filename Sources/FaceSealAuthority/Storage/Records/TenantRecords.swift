public import FaceSealWire
public import Foundation

/// The password policy of a tenant.
public struct PasswordPolicy: Sendable, Hashable, Codable {
    /// Whether a password is off, optional or required.
    public var mode: PasswordMode
    /// The shortest password accepted when one is set (characters).
    public var minimumLength: Int

    /// Creates a password policy.
    public init(mode: PasswordMode = .none, minimumLength: Int = 8) {
        self.mode = mode
        self.minimumLength = minimumLength
    }
}

/// A tenant's policy: what reaches the device with every request, and how the authority behaves.
public struct TenantPolicy: Sendable, Hashable, Codable {
    /// The key policy: one face-locked master per algorithm (SPEC §5.2), e.g. `["ML-DSA-65", "ML-KEM-768"]`.
    public var keyAlgorithms: [String]
    /// How many face mismatches a request may spend (SPEC §5.4).
    public var attemptsMax: Int
    /// How many liveness and capture-quality failures a request may spend.
    public var captureRetriesMax: Int
    /// Whether the liveness challenge runs before the match.
    public var livenessRequired: Bool
    /// The match threshold (mean embedding distance, at most 6 decimals; lower is stricter). Tokens with a looser
    /// threshold are matched at this one and carry it from their next rotation.
    public var matchThreshold: Double
    /// Whether face tokens are also sealed under a password.
    public var passwordPolicy: PasswordPolicy
    /// A new enrolment of an application replaces the user's keys for it on other devices (`replaced`).
    public var oneDevicePerUser: Bool
    /// Lifetime of a CIBA request in seconds (`expires_in` when the client asks for no shorter one).
    public var requestLifetimeSeconds: Int
    /// What releases the face token to a further device (docs/PROTOCOL.md §8.1).
    public var furtherDeviceApproval: FurtherDeviceApproval

    /// The default policy: ML-DSA-65 + ML-KEM-768, 3 attempts, 10 capture retries, liveness on, threshold 0.52, no
    /// password, several devices, 5 minutes, further devices approved by an enrolled device.
    public init(
        keyAlgorithms: [String] = ["ML-DSA-65", "ML-KEM-768"],
        attemptsMax: Int = 3,
        captureRetriesMax: Int = 10,
        livenessRequired: Bool = true,
        matchThreshold: Double = MatchPolicy.defaultThreshold,
        passwordPolicy: PasswordPolicy = PasswordPolicy(),
        oneDevicePerUser: Bool = false,
        requestLifetimeSeconds: Int = 300,
        furtherDeviceApproval: FurtherDeviceApproval = .enrolledDevice
    ) {
        self.furtherDeviceApproval = furtherDeviceApproval
        self.keyAlgorithms = keyAlgorithms
        self.attemptsMax = attemptsMax
        self.captureRetriesMax = captureRetriesMax
        self.livenessRequired = livenessRequired
        self.matchThreshold = matchThreshold
        self.passwordPolicy = passwordPolicy
        self.oneDevicePerUser = oneDevicePerUser
        self.requestLifetimeSeconds = requestLifetimeSeconds
    }
}

/// A tenant: an organisation with its users, applications and policy.
public struct TenantRecord: Sendable, Hashable {
    /// Stable identifier chosen by the caller (URL-safe).
    public var id: String
    /// Display name.
    public var name: String
    /// The tenant's policy.
    public var policy: TenantPolicy
    /// When the tenant was created (set by the store's clock).
    public var createdAt: Date

    /// Creates a tenant record; `createdAt` is replaced by the store's clock on insert.
    public init(id: String, name: String, policy: TenantPolicy = TenantPolicy(), createdAt: Date = Date(timeIntervalSince1970: 0)) {
        self.id = id
        self.name = name
        self.policy = policy
        self.createdAt = createdAt
    }
}

/// A management API key. Only its hash is stored; the caller hashes the presented key and looks it up.
public struct APIKeyRecord: Sendable, Hashable {
    /// Identifier of the key (not secret; shown in listings).
    public var id: String
    /// The tenant the key administers; `nil` for an operator key that may create tenants.
    public var tenantID: String?
    /// SHA-256 (or another one-way hash chosen by the caller) of the key's secret.
    public var keyHash: [UInt8]
    /// What the key is for.
    public var label: String
    /// When the key was created.
    public var createdAt: Date
    /// When the key was revoked, if it was.
    public var revokedAt: Date?

    /// Creates an API key record; `createdAt` is set by the store on insert.
    public init(id: String, tenantID: String?, keyHash: [UInt8], label: String, createdAt: Date = Date(timeIntervalSince1970: 0), revokedAt: Date? = nil) {
        self.id = id
        self.tenantID = tenantID
        self.keyHash = keyHash
        self.label = label
        self.createdAt = createdAt
        self.revokedAt = revokedAt
    }
}

/// How a confidential client authenticates: a hashed shared secret or a JWKS for `private_key_jwt`.
public enum ClientCredential: Sendable, Hashable {
    /// Hash of the client secret (the caller chooses the hash; compare in constant time).
    case secretHash([UInt8])
    /// The client's public keys as a JWKS JSON document.
    case jwks(String)
}

/// A registered application (an OIDC confidential client).
public struct ApplicationRecord: Sendable, Hashable {
    /// The OAuth `client_id`, unique across the authority.
    public var clientID: String
    /// The tenant the application belongs to.
    public var tenantID: String
    /// Label shown to the user on the device.
    public var label: String
    /// Client authentication material.
    public var credential: ClientCredential
    /// Branding shown on the device, a JSON object kept as text.
    public var brandingJSON: String
    /// Poll or ping.
    public var deliveryMode: DeliveryMode
    /// Where pings go (required for ping mode).
    public var notificationEndpoint: String?
    /// Where the device delivers face-PKI results (SPEC §4.4).
    public var deliveryEndpoint: String?
    /// The JWS algorithm of the application's ID tokens (`RS256`, `EdDSA`, `ES256`, `ML-DSA-65`).
    public var idTokenSignedResponseAlg: String
    /// Where the authorization endpoint may send a browser back (exact strings, OIDC Core §3.1.2.1); none: no
    /// browser sign-in.
    public var redirectURIs: [String]
    /// When the application was registered.
    public var createdAt: Date

    /// Creates an application record; `createdAt` is set by the store on insert.
    public init(
        clientID: String, tenantID: String, label: String, credential: ClientCredential,
        brandingJSON: String = "{}", deliveryMode: DeliveryMode = .poll,
        notificationEndpoint: String? = nil, deliveryEndpoint: String? = nil,
        idTokenSignedResponseAlg: String = "RS256", redirectURIs: [String] = [], createdAt: Date = Date(timeIntervalSince1970: 0)
    ) {
        self.clientID = clientID
        self.tenantID = tenantID
        self.label = label
        self.credential = credential
        self.brandingJSON = brandingJSON
        self.deliveryMode = deliveryMode
        self.notificationEndpoint = notificationEndpoint
        self.deliveryEndpoint = deliveryEndpoint
        self.idTokenSignedResponseAlg = idTokenSignedResponseAlg
        self.redirectURIs = redirectURIs
        self.createdAt = createdAt
    }
}

/// A user of a tenant. `subject` is the authority-wide stable identifier (ID tokens carry a pairwise form).
public struct UserRecord: Sendable, Hashable {
    /// Stable subject identifier, unique across the authority.
    public var subject: String
    /// The tenant the user belongs to.
    public var tenantID: String
    /// E-mail address, unique within the tenant (used as `login_hint`).
    public var email: String
    /// When the user was created.
    public var createdAt: Date

    /// Creates a user record; `createdAt` is set by the store on insert.
    public init(subject: String, tenantID: String, email: String, createdAt: Date = Date(timeIntervalSince1970: 0)) {
        self.subject = subject
        self.tenantID = tenantID
        self.email = email
        self.createdAt = createdAt
    }
}

/// An enrolment invitation: lets one user enrol one device for one application, once, before it expires.
public struct InvitationRecord: Sendable, Hashable {
    /// Enrolment or recovery.
    public var kind: InvitationKind
    /// The enrolment that consumed it (bound to that enrolment's keys); nil while unused.
    public var enrolmentID: String?
    /// Identifier of the invitation (the enrolment link carries it).
    public var id: String
    /// Tenant of the user and application.
    public var tenantID: String
    /// The invited user.
    public var subject: String
    /// The application the enrolment is for.
    public var clientID: String
    /// Hash of the one-time enrolment secret the link carries (compare in constant time).
    public var secretHash: [UInt8]
    /// When the invitation was created.
    public var createdAt: Date
    /// After this instant the invitation can no longer be used.
    public var expiresAt: Date
    /// When an enrolment consumed it.
    public var consumedAt: Date?
    /// When it was cancelled (management API, or its user or application deleted); set by the store.
    public var cancelledAt: Date?

    /// Creates an invitation record; `createdAt` is set by the store on insert.
    public init(id: String, tenantID: String, subject: String, clientID: String, secretHash: [UInt8], expiresAt: Date, createdAt: Date = Date(timeIntervalSince1970: 0), consumedAt: Date? = nil,
                kind: InvitationKind = .enrolment, enrolmentID: String? = nil) {
        self.kind = kind
        self.enrolmentID = enrolmentID
        self.id = id
        self.tenantID = tenantID
        self.subject = subject
        self.clientID = clientID
        self.secretHash = secretHash
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.consumedAt = consumedAt
    }
}

/// A signing key of the authority (ID tokens, links, device responses). The private half is stored
/// encrypted under the master key by the caller; the store never sees it in clear.
public struct SigningKeyRecord: Sendable, Hashable {
    /// The JWK `kid`.
    public var keyID: String
    /// The JWS algorithm (`RS256`, `EdDSA`, `ES256`, `ML-DSA-65`).
    public var algorithm: String
    /// The public key as a JWK JSON object (published at `/jwks`).
    public var publicJWK: String
    /// The private key, encrypted under the authority's master key.
    public var encryptedPrivateKey: [UInt8]
    /// When it was created.
    public var createdAt: Date
    /// When it stopped signing; retired ID-token keys stay published for `Authority.idTokenKeyOverlap`.
    public var retiredAt: Date?
    /// A device-response key: the rollover statement its predecessor signed over it (set by the store).
    public var rollover: String?
    /// A device-response key: the end of that statement's window.
    public var rolloverExpiresAt: Date?

    /// Creates a signing key record; `createdAt` is set by the store on insert.
    public init(keyID: String, algorithm: String, publicJWK: String, encryptedPrivateKey: [UInt8], createdAt: Date = Date(timeIntervalSince1970: 0), retiredAt: Date? = nil) {
        self.keyID = keyID
        self.algorithm = algorithm
        self.publicJWK = publicJWK
        self.encryptedPrivateKey = encryptedPrivateKey
        self.createdAt = createdAt
        self.retiredAt = retiredAt
    }
}

/// One audit event (management actions, enrolments, revocations, completions…).
public struct AuditEvent: Sendable, Hashable {
    /// Monotonic sequence number assigned by the store (0 before insert).
    public var sequence: Int64
    /// Tenant the event concerns, if any.
    public var tenantID: String?
    /// When it happened (set by the store's clock).
    public var at: Date
    /// What happened, e.g. `device.revoked`.
    public var kind: String
    /// Who did it (API key id, key id, client id), if known.
    public var actor: String?
    /// What it was done to (subject, client id, key id), if any.
    public var target: String?
    /// Details as a JSON object kept as text; never secrets.
    public var detailJSON: String

    /// Creates an audit event; `sequence` and `at` are set by the store on append.
    public init(tenantID: String?, kind: String, actor: String? = nil, target: String? = nil, detailJSON: String = "{}", sequence: Int64 = 0, at: Date = Date(timeIntervalSince1970: 0)) {
        self.sequence = sequence
        self.tenantID = tenantID
        self.at = at
        self.kind = kind
        self.actor = actor
        self.target = target
        self.detailJSON = detailJSON
    }
}
