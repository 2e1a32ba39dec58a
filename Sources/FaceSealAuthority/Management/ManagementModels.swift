public import FaceSealCrypto
import FaceSealHTTP
public import FaceSealWire
public import Foundation

// The JSON documents the management API answers with (docs/openapi.yaml). Keys are snake_case, times are
// RFC 3339 strings in UTC, absent optionals are omitted. Clients (`faceseal admin`) decode the same types.

/// A tenant's policy as the management API shows and accepts it.
public struct ManagedPolicy: Codable, Sendable, Equatable {
    /// The password part of the policy.
    public struct Password: Codable, Sendable, Equatable {
        /// `none`, `optional` or `required`.
        public var mode: PasswordMode
        /// Shortest password accepted when one is set.
        public var minimumLength: Int

        enum CodingKeys: String, CodingKey {
            case mode
            case minimumLength = "minimum_length"
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

    enum CodingKeys: String, CodingKey, CaseIterable {
        case furtherDeviceApproval = "further_device_approval"
        case keyAlgorithms = "key_algorithms"
        case attemptsMax = "attempts_max"
        case captureRetriesMax = "capture_retries_max"
        case livenessRequired = "liveness_required"
        case matchThreshold = "match_threshold"
        case passwordPolicy = "password_policy"
        case oneDevicePerUser = "one_device_per_user"
        case requestLifetimeSeconds = "request_lifetime_seconds"
    }

    init(_ policy: TenantPolicy) {
        keyAlgorithms = policy.keyAlgorithms
        attemptsMax = policy.attemptsMax
        captureRetriesMax = policy.captureRetriesMax
        livenessRequired = policy.livenessRequired
        matchThreshold = policy.matchThreshold
        passwordPolicy = Password(mode: policy.passwordPolicy.mode, minimumLength: policy.passwordPolicy.minimumLength)
        oneDevicePerUser = policy.oneDevicePerUser
        requestLifetimeSeconds = policy.requestLifetimeSeconds
        furtherDeviceApproval = policy.furtherDeviceApproval
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

    init(_ record: TenantRecord) {
        id = record.id
        name = record.name
        policy = ManagedPolicy(record.policy)
        createdAt = record.createdAt
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

    init(_ record: APIKeyRecord, key: String? = nil) {
        id = record.id
        tenantID = record.tenantID
        label = record.label
        createdAt = record.createdAt
        revokedAt = record.revokedAt
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

    init(_ record: ApplicationRecord, clientSecret: String? = nil) {
        clientID = record.clientID
        tenantID = record.tenantID
        label = record.label
        switch record.credential {
        case .secretHash:
            clientAuth = "client_secret"
            jwks = nil
        case .jwks(let text):
            clientAuth = "private_key_jwt"
            jwks = (try? JSONValue.parse(Array(text.utf8))).map(JSONDocument.init)
        }
        branding = ApplicationBranding.decode(record.brandingJSON, label: record.label)
        deliveryMode = record.deliveryMode
        notificationEndpoint = record.notificationEndpoint
        deliveryEndpoint = record.deliveryEndpoint
        idTokenSignedResponseAlg = record.idTokenSignedResponseAlg
        redirectURIs = record.redirectURIs
        createdAt = record.createdAt
        self.clientSecret = clientSecret
    }
}

/// How an application's branding is kept in `ApplicationRecord.brandingJSON`: the canonical encoding of
/// Wire's `BrandingInfo`, so the device API can hand it to devices unchanged.
public enum ApplicationBranding {
    /// The stored form.
    public static func encode(_ branding: BrandingInfo) -> String { String(decoding: WireJSON.encode(branding), as: UTF8.self) }

    /// The stored branding; a record without one (`{}`) shows the label as its name.
    public static func decode(_ json: String, label: String) -> BrandingInfo {
        (try? JSONDecoder().decode(BrandingInfo.self, from: Data(json.utf8))) ?? BrandingInfo(name: label)
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

    init(_ record: UserRecord) {
        subject = record.subject
        tenantID = record.tenantID
        email = record.email
        createdAt = record.createdAt
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

    init(kind: String, id: String, _ summary: DeletionSummary) {
        deleted = kind
        self.id = id
        enrolmentsEnded = summary.enrolmentsEnded
        requestsEnded = summary.requestsEnded
        invitationsCancelled = summary.invitationsCancelled
        faceTokensErased = summary.faceTokensErased
        apiKeysRevoked = summary.apiKeysRevoked
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

    init(_ record: DeviceKeyRecord) {
        keyID = record.keyID
        role = record.role
        status = record.status
        supersededBy = record.supersededBy
        overlapUntil = record.overlapUntil
        createdAt = record.createdAt
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

    init(_ event: AuditEvent) {
        sequence = event.sequence
        tenantID = event.tenantID
        at = event.at
        kind = event.kind
        actor = event.actor
        target = event.target
        detail = JSONDocument((try? JSONValue.parse(Array(event.detailJSON.utf8))) ?? .object([:]))
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
}

/// A list answer: `{"<name>": [...]}`.
public struct ManagedList<Item: Codable & Sendable & Equatable>: Codable, Sendable, Equatable {
    /// The items.
    public var items: [Item]

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

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
        let container = try decoder.container(keyedBy: Key.self)
        items = try container.decode([Item].self, forKey: Key(stringValue: Self.member))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(items, forKey: Key(stringValue: Self.member))
    }
}

/// Free-form JSON inside a typed document (audit details, a JWKS).
public struct JSONDocument: Codable, Sendable, Hashable {
    /// The value.
    public var value: JSONValue

    /// Wraps `value`.
    public init(_ value: JSONValue) { self.value = value }

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public init(from decoder: any Decoder) throws {
        if var array = try? decoder.unkeyedContainer() {
            var values: [JSONValue] = []
            while !array.isAtEnd { values.append(try array.decode(JSONDocument.self).value) }
            value = .array(values)
        } else if let object = try? decoder.container(keyedBy: Key.self) {
            var members: [String: JSONValue] = [:]
            for key in object.allKeys { members[key.stringValue] = try object.decode(JSONDocument.self, forKey: key).value }
            value = .object(members)
        } else {
            let single = try decoder.singleValueContainer()
            if single.decodeNil() {
                value = .null
            } else if let flag = try? single.decode(Bool.self) {
                value = .bool(flag)
            } else if let integer = try? single.decode(Int64.self) {
                value = .integer(integer)
            } else if let number = try? single.decode(Double.self) {
                value = .double(number)
            } else {
                value = .string(try single.decode(String.self))
            }
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch value {
        case .null:
            var single = encoder.singleValueContainer()
            try single.encodeNil()
        case .bool(let flag):
            var single = encoder.singleValueContainer()
            try single.encode(flag)
        case .integer(let integer):
            var single = encoder.singleValueContainer()
            try single.encode(integer)
        case .double(let number):
            var single = encoder.singleValueContainer()
            try single.encode(number)
        case .string(let text):
            var single = encoder.singleValueContainer()
            try single.encode(text)
        case .array(let values):
            var array = encoder.unkeyedContainer()
            for element in values { try array.encode(JSONDocument(element)) }
        case .object(let members):
            var object = encoder.container(keyedBy: Key.self)
            for (key, element) in members { try object.encode(JSONDocument(element), forKey: Key(stringValue: key)) }
        }
    }
}

/// Encoding and decoding of management documents (sorted keys, RFC 3339 times).
public enum ManagementJSON {
    /// The encoder of responses.
    public static func makeEncoder() -> JSONEncoder {
        let encoder = JSONBody.makeEncoder()
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }

    /// The decoder clients use for responses.
    public static func makeDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }

    /// A JSON response with `Cache-Control: no-store` (some carry secrets shown once).
    static func response(_ value: some Encodable, status: HTTPStatus = .ok) throws -> HTTPResponse {
        try HTTPResponse.json(value, status: status, headers: ["Cache-Control": "no-store"], encoder: makeEncoder())
    }
}
