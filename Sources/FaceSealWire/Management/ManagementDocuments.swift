public import Foundation

// The JSON documents the management API answers with (docs/openapi.yaml). Keys are snake_case, times are RFC 3339
// strings in UTC, absent optionals are omitted. The authority builds them from its records; clients (`faceseal admin`)
// decode them with `ManagementJSON.makeDecoder()`.

/// A tenant's policy as the management API shows and accepts it.
public struct ManagedPolicy: Codable, Sendable, Equatable {
    /// The password part of the policy.
    public struct Password: Codable, Sendable, Equatable {
        /// `none`, `optional` or `required`.
        public var mode: PasswordMode
        /// Shortest password accepted when one is set.
        public var minimumLength: Int

        typealias CodingKeys = PasswordPolicyChange.CodingKeys

        /// A document with these members.
        public init(mode: PasswordMode, minimumLength: Int) {
            self.mode = mode
            self.minimumLength = minimumLength
        }
    }

    /// Face-locked key algorithms (`KeyAlgorithm` raw values).
    public var keyAlgorithms: [String]
    /// Face mismatches a request may spend, 1…10.
    public var attemptsMax: Int
    /// Liveness and capture-quality failures a request may spend, 1…100.
    public var captureRetriesMax: Int
    /// Whether liveness runs before the match.
    public var livenessRequired: Bool
    /// The match threshold, 0.1…1.0 (kept to 6 decimals; lower is stricter).
    public var matchThreshold: Double
    /// Whether tokens are also sealed under a password.
    public var passwordPolicy: Password
    /// A new enrolment replaces the user's keys for that application on other devices.
    public var oneDevicePerUser: Bool
    /// CIBA request lifetime in seconds, 30…3600.
    public var requestLifetimeSeconds: Int
    /// What releases the face token to a further device: `enrolled_device` (default), `password` or `none`.
    public var furtherDeviceApproval: FurtherDeviceApproval

    /// The members a policy change may give.
    typealias CodingKeys = PolicyChange.CodingKeys

    /// A document with these members.
    public init(keyAlgorithms: [String], attemptsMax: Int, captureRetriesMax: Int, livenessRequired: Bool,
                matchThreshold: Double, passwordPolicy: Password, oneDevicePerUser: Bool, requestLifetimeSeconds: Int,
                furtherDeviceApproval: FurtherDeviceApproval) {
        self.keyAlgorithms = keyAlgorithms
        self.attemptsMax = attemptsMax
        self.captureRetriesMax = captureRetriesMax
        self.livenessRequired = livenessRequired
        self.matchThreshold = matchThreshold
        self.passwordPolicy = passwordPolicy
        self.oneDevicePerUser = oneDevicePerUser
        self.requestLifetimeSeconds = requestLifetimeSeconds
        self.furtherDeviceApproval = furtherDeviceApproval
    }
}

/// A tenant.
public struct ManagedTenant: Codable, Sendable, Equatable {
    /// The tenant id (chosen at creation).
    public var id: String
    /// Display name.
    public var name: String
    /// Its policy.
    public var policy: ManagedPolicy
    /// Creation time.
    public var createdAt: Date

    enum CodingKeys: String, CodingKey {
        case id, name, policy
        case createdAt = "created_at"
    }

    /// A document with these members.
    public init(id: String, name: String, policy: ManagedPolicy, createdAt: Date) {
        self.id = id
        self.name = name
        self.policy = policy
        self.createdAt = createdAt
    }
}

/// A management API key, without its secret — except in the answer to its creation (`key`, shown once).
public struct ManagedAPIKey: Codable, Sendable, Equatable {
    /// The key id (not secret).
    public var id: String
    /// The tenant it administers; absent for an administrator key.
    public var tenantID: String?
    /// What it is for.
    public var label: String
    /// Creation time.
    public var createdAt: Date
    /// Revocation time, if revoked.
    public var revokedAt: Date?
    /// The secret `fsk_…`, only in the creation response.
    public var key: String?

    enum CodingKeys: String, CodingKey {
        case id, label, key
        case tenantID = "tenant_id"
        case createdAt = "created_at"
        case revokedAt = "revoked_at"
    }

    /// A document with these members.
    public init(id: String, tenantID: String? = nil, label: String, createdAt: Date, revokedAt: Date? = nil, key: String? = nil) {
        self.id = id
        self.tenantID = tenantID
        self.label = label
        self.createdAt = createdAt
        self.revokedAt = revokedAt
        self.key = key
    }
}

/// An application (a confidential OIDC client).
public struct ManagedApplication: Codable, Sendable, Equatable {
    /// The OAuth `client_id` (generated).
    public var clientID: String
    /// Its tenant.
    public var tenantID: String
    /// Label shown on the device.
    public var label: String
    /// `client_secret` (basic or post) or `private_key_jwt`.
    public var clientAuth: String
    /// The client JWKS for `private_key_jwt`.
    public var jwks: JSONDocument?
    /// Branding shown on the device.
    public var branding: BrandingInfo
    /// `poll` or `ping`.
    public var deliveryMode: DeliveryMode
    /// Where pings go.
    public var notificationEndpoint: String?
    /// Where devices deliver face-PKI results.
    public var deliveryEndpoint: String?
    /// ID-token algorithm.
    public var idTokenSignedResponseAlg: String
    /// Where the authorization endpoint may send a browser back (exact strings).
    public var redirectURIs: [String]
    /// Creation time.
    public var createdAt: Date
    /// The client secret, only in the responses that create it (shown once).
    public var clientSecret: String?

    enum CodingKeys: String, CodingKey {
        case label, jwks, branding
        case clientID = "client_id"
        case tenantID = "tenant_id"
        case clientAuth = "client_auth"
        case deliveryMode = "delivery_mode"
        case notificationEndpoint = "notification_endpoint"
        case deliveryEndpoint = "delivery_endpoint"
        case idTokenSignedResponseAlg = "id_token_signed_response_alg"
        case redirectURIs = "redirect_uris"
        case createdAt = "created_at"
        case clientSecret = "client_secret"
    }

    /// A document with these members.
    public init(clientID: String, tenantID: String, label: String, clientAuth: String, jwks: JSONDocument? = nil,
                branding: BrandingInfo, deliveryMode: DeliveryMode, notificationEndpoint: String? = nil,
                deliveryEndpoint: String? = nil, idTokenSignedResponseAlg: String, redirectURIs: [String], createdAt: Date,
                clientSecret: String? = nil) {
        self.clientID = clientID
        self.tenantID = tenantID
        self.label = label
        self.clientAuth = clientAuth
        self.jwks = jwks
        self.branding = branding
        self.deliveryMode = deliveryMode
        self.notificationEndpoint = notificationEndpoint
        self.deliveryEndpoint = deliveryEndpoint
        self.idTokenSignedResponseAlg = idTokenSignedResponseAlg
        self.redirectURIs = redirectURIs
        self.createdAt = createdAt
        self.clientSecret = clientSecret
    }
}

/// A user of a tenant.
public struct ManagedUser: Codable, Sendable, Equatable {
    /// The authority-wide subject (generated).
    public var subject: String
    /// Its tenant.
    public var tenantID: String
    /// E-mail address, lower-cased (the `login_hint`).
    public var email: String
    /// Creation time.
    public var createdAt: Date

    enum CodingKeys: String, CodingKey {
        case subject, email
        case tenantID = "tenant_id"
        case createdAt = "created_at"
    }

    /// A document with these members.
    public init(subject: String, tenantID: String, email: String, createdAt: Date) {
        self.subject = subject
        self.tenantID = tenantID
        self.email = email
        self.createdAt = createdAt
    }
}

/// An enrolment invitation with its link.
public struct ManagedInvitation: Codable, Sendable, Equatable {
    /// The invitation id (also the `rid` of the link).
    public var id: String
    /// Its tenant.
    public var tenantID: String
    /// The invited user.
    public var subject: String
    /// The application to enrol for.
    public var clientID: String
    /// Creation time.
    public var createdAt: Date
    /// Expiry.
    public var expiresAt: Date
    /// When a device used it.
    public var consumedAt: Date?
    /// When it was cancelled.
    public var cancelledAt: Date?
    /// `pending`, `consumed`, `cancelled` or `expired`.
    public var status: InvitationStatus
    /// The enrolment link: a compact JWS signed by the authority (`LinkClaims`, kind `enrolment`, with `akey`).
    public var link: String
    /// The same link as a universal link `<issuer>/l/<JWS>` (for a QR code or an e-mail).
    public var universalLink: String
    /// `enrolment` or `recovery` (docs/PROTOCOL.md §8.1).
    public var kind: InvitationKind

    enum CodingKeys: String, CodingKey {
        case id, status, subject, link, kind
        case tenantID = "tenant_id"
        case clientID = "client_id"
        case createdAt = "created_at"
        case expiresAt = "expires_at"
        case consumedAt = "consumed_at"
        case cancelledAt = "cancelled_at"
        case universalLink = "universal_link"
    }

    /// A document with these members.
    public init(id: String, tenantID: String, subject: String, clientID: String, createdAt: Date, expiresAt: Date,
                consumedAt: Date? = nil, cancelledAt: Date? = nil, status: InvitationStatus, link: String,
                universalLink: String, kind: InvitationKind) {
        self.id = id
        self.tenantID = tenantID
        self.subject = subject
        self.clientID = clientID
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.consumedAt = consumedAt
        self.cancelledAt = cancelledAt
        self.status = status
        self.link = link
        self.universalLink = universalLink
        self.kind = kind
    }
}

/// What a deletion did (`DELETE` of a user, application or tenant).
public struct ManagedDeletion: Codable, Sendable, Equatable {
    /// `user`, `application` or `tenant`.
    public var deleted: String
    /// Its subject, client id or tenant id.
    public var id: String
    /// Enrolments ended (revoked for a user, terminated for an application).
    public var enrolmentsEnded: Int
    /// Pending requests denied.
    public var requestsEnded: Int
    /// Unused invitations cancelled.
    public var invitationsCancelled: Int
    /// Face tokens erased (the user's, with its server share).
    public var faceTokensErased: Int
    /// Management API keys revoked.
    public var apiKeysRevoked: Int

    enum CodingKeys: String, CodingKey {
        case deleted, id
        case enrolmentsEnded = "enrolments_ended"
        case requestsEnded = "requests_ended"
        case invitationsCancelled = "invitations_cancelled"
        case faceTokensErased = "face_tokens_erased"
        case apiKeysRevoked = "api_keys_revoked"
    }

    /// A document with these members.
    public init(deleted: String, id: String, enrolmentsEnded: Int, requestsEnded: Int, invitationsCancelled: Int,
                faceTokensErased: Int, apiKeysRevoked: Int) {
        self.deleted = deleted
        self.id = id
        self.enrolmentsEnded = enrolmentsEnded
        self.requestsEnded = requestsEnded
        self.invitationsCancelled = invitationsCancelled
        self.faceTokensErased = faceTokensErased
        self.apiKeysRevoked = apiKeysRevoked
    }
}

/// One device key of an enrolment.
public struct ManagedDeviceKey: Codable, Sendable, Equatable {
    /// The key id (JWS `kid`).
    public var keyID: String
    /// `ambient` or `user_present`.
    public var role: DeviceKeyRole
    /// `active`, `superseded`, `revoked`, `terminated` or `replaced`.
    public var status: DeviceKeyStatus
    /// For a superseded key: its successor.
    public var supersededBy: String?
    /// For a superseded key: the end of its overlap window.
    public var overlapUntil: Date?
    /// Registration time.
    public var createdAt: Date

    enum CodingKeys: String, CodingKey {
        case role, status
        case keyID = "key_id"
        case supersededBy = "superseded_by"
        case overlapUntil = "overlap_until"
        case createdAt = "created_at"
    }

    /// A document with these members.
    public init(keyID: String, role: DeviceKeyRole, status: DeviceKeyStatus, supersededBy: String? = nil,
                overlapUntil: Date? = nil, createdAt: Date) {
        self.keyID = keyID
        self.role = role
        self.status = status
        self.supersededBy = supersededBy
        self.overlapUntil = overlapUntil
        self.createdAt = createdAt
    }
}

/// A device enrolment: one user and one application on one device, with its two keys (SPEC §6.1).
public struct ManagedDevice: Codable, Sendable, Equatable {
    /// The enrolment id (the SDK's `Key.id`); what `revoke` and `terminate` take.
    public var id: String
    /// The physical device.
    public var deviceID: String
    /// The device's label.
    public var deviceLabel: String
    /// Its tenant.
    public var tenantID: String
    /// The enrolled user.
    public var subject: String
    /// The application.
    public var clientID: String
    /// `active`, or how it ended: `revoked`, `terminated`, `replaced`.
    public var status: DeviceKeyStatus
    /// Enrolment time.
    public var createdAt: Date
    /// Last status change.
    public var statusChangedAt: Date
    /// Its keys, current and superseded, oldest first.
    public var keys: [ManagedDeviceKey]

    enum CodingKeys: String, CodingKey {
        case id, subject, status, keys
        case deviceID = "device_id"
        case deviceLabel = "device_label"
        case tenantID = "tenant_id"
        case clientID = "client_id"
        case createdAt = "created_at"
        case statusChangedAt = "status_changed_at"
    }

    /// A document with these members.
    public init(id: String, deviceID: String, deviceLabel: String, tenantID: String, subject: String, clientID: String,
                status: DeviceKeyStatus, createdAt: Date, statusChangedAt: Date, keys: [ManagedDeviceKey]) {
        self.id = id
        self.deviceID = deviceID
        self.deviceLabel = deviceLabel
        self.tenantID = tenantID
        self.subject = subject
        self.clientID = clientID
        self.status = status
        self.createdAt = createdAt
        self.statusChangedAt = statusChangedAt
        self.keys = keys
    }
}

/// An audit event.
public struct ManagedAuditEvent: Codable, Sendable, Equatable {
    /// Monotonic sequence number (use it as `before` to page).
    public var sequence: Int64
    /// Tenant concerned; absent for operator events.
    public var tenantID: String?
    /// When it happened.
    public var at: Date
    /// What happened, e.g. `device.revoked`.
    public var kind: String
    /// Who did it (API key id, …).
    public var actor: String?
    /// What it was done to.
    public var target: String?
    /// Details (never secrets).
    public var detail: JSONDocument

    enum CodingKeys: String, CodingKey {
        case sequence, at, kind, actor, target, detail
        case tenantID = "tenant_id"
    }

    /// A document with these members.
    public init(sequence: Int64, tenantID: String? = nil, at: Date, kind: String, actor: String? = nil, target: String? = nil,
                detail: JSONDocument) {
        self.sequence = sequence
        self.tenantID = tenantID
        self.at = at
        self.kind = kind
        self.actor = actor
        self.target = target
        self.detail = detail
    }
}

/// A page of audit events, newest first.
public struct ManagedAuditPage: Codable, Sendable, Equatable {
    /// The events.
    public var events: [ManagedAuditEvent]
    /// Pass as `before` to get the next (older) page; absent on the last page.
    public var nextBefore: Int64?

    enum CodingKeys: String, CodingKey {
        case events
        case nextBefore = "next_before"
    }

    /// A document with these members.
    public init(events: [ManagedAuditEvent], nextBefore: Int64? = nil) {
        self.events = events
        self.nextBefore = nextBefore
    }
}

/// A list answer: `{"<name>": [...]}`.
public struct ManagedList<Item: Codable & Sendable & Equatable>: Codable, Sendable, Equatable {
    /// The items.
    public var items: [Item]

    /// Wraps `items`.
    public init(_ items: [Item]) { self.items = items }

    /// The member name of the list.
    static var member: String {
        switch Item.self {
        case is ManagedTenant.Type: "tenants"
        case is ManagedAPIKey.Type: "api_keys"
        case is ManagedApplication.Type: "applications"
        case is ManagedUser.Type: "users"
        case is ManagedInvitation.Type: "invitations"
        case is ManagedDevice.Type: "devices"
        default: "items"
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: MemberKey.self)
        items = try container.decode([Item].self, forKey: MemberKey(stringValue: Self.member))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: MemberKey.self)
        try container.encode(items, forKey: MemberKey(stringValue: Self.member))
    }
}

/// A tenant's webhook push endpoint — with its signing secret only in the answer to its registration (shown once).
public struct ManagedWebhook: Codable, Sendable, Equatable {
    /// The tenant.
    public var tenantID: String
    /// Where links are POSTed.
    public var url: String
    /// When it was registered (re-registering replaces it and its secret).
    public var createdAt: Date
    /// `whsec_…`: the HMAC-SHA256 key of `FaceSeal-Signature` (its ASCII bytes), only in the registration response.
    public var secret: String?

    enum CodingKeys: String, CodingKey {
        case url, secret
        case tenantID = "tenant_id"
        case createdAt = "created_at"
    }

    /// A document with these members.
    public init(tenantID: String, url: String, createdAt: Date, secret: String? = nil) {
        self.tenantID = tenantID
        self.url = url
        self.createdAt = createdAt
        self.secret = secret
    }
}

/// One of the authority's signing keys, without its private half.
public struct ManagedAuthorityKey: Codable, Sendable, Equatable {
    /// The key id (RFC 7638 thumbprint; the ID token's `kid`).
    public var keyID: String
    /// `id_token` or `device`.
    public var use: String
    /// The JWS algorithm (`RS256`, `EdDSA`, `ES256`, `ML-DSA-65`; `EdDSA` for the device key).
    public var algorithm: String
    /// Creation time.
    public var createdAt: Date
    /// When it stopped signing.
    public var retiredAt: Date?
    /// An ID-token key: whether `/jwks` still serves it.
    public var published: Bool?
    /// A device key: the end of its rollover statement's window.
    public var rolloverExpiresAt: Date?

    enum CodingKeys: String, CodingKey {
        case use, algorithm, published
        case keyID = "key_id"
        case createdAt = "created_at"
        case retiredAt = "retired_at"
        case rolloverExpiresAt = "rollover_expires_at"
    }

    /// A document with these members.
    public init(keyID: String, use: String, algorithm: String, createdAt: Date, retiredAt: Date? = nil, published: Bool? = nil,
                rolloverExpiresAt: Date? = nil) {
        self.keyID = keyID
        self.use = use
        self.algorithm = algorithm
        self.createdAt = createdAt
        self.retiredAt = retiredAt
        self.published = published
        self.rolloverExpiresAt = rolloverExpiresAt
    }
}

/// The authority's keys: every stored one, oldest first, and the device-response key in use.
public struct ManagedAuthorityKeys: Codable, Sendable, Equatable {
    /// The stored keys (the master-derived device key, in use until the first device rotation, is not stored).
    public var keys: [ManagedAuthorityKey]
    /// The Ed25519 public key links and device responses are signed with now (base64url, 32 bytes).
    public var devicePublicKey: String

    enum CodingKeys: String, CodingKey {
        case keys
        case devicePublicKey = "device_public_key"
    }

    /// A document with these members.
    public init(keys: [ManagedAuthorityKey], devicePublicKey: String) {
        self.keys = keys
        self.devicePublicKey = devicePublicKey
    }
}

/// Encoding and decoding of management documents (sorted keys, RFC 3339 times).
public enum ManagementJSON {
    /// The encoder of responses.
    public static func makeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }

    /// The decoder clients use for responses.
    public static func makeDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}
