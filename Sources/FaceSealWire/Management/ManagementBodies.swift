import FaceSealCrypto

// The request bodies of the management API (docs/openapi.yaml), as the authority reads them and `faceseal admin` writes
// them. Every object is closed (an unknown member is refused, nested ones too), every string has a byte limit, every
// array a count limit, every integer a range, all checked while decoding. What the values mean (an e-mail address,
// a callback URL, a JWKS) the authority checks when it uses them.

/// The nesting a management body may have (a JWKS inside an application is the deepest).
private let managementDepth = 8

/// `POST /tenants` (administrator).
public struct TenantCreation: WireMessage {
    /// The tenant id (the authority checks its characters).
    public var id: String
    /// Display name.
    public var name: String
    /// The policy; absent fields take the defaults.
    public var policy: PolicyChange?

    public enum CodingKeys: String, CodingKey, CaseIterable { case id, name, policy }

    /// 16 KiB.
    public static var maxBytes: Int { 16 * 1024 }
    /// See `managementDepth`.
    public static var maxDepth: Int { managementDepth }

    /// A creation.
    public init(id: String, name: String, policy: PolicyChange? = nil) {
        self.id = id
        self.name = name
        self.policy = policy
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.requiredString(.id, maxBytes: 256)
        name = try container.requiredString(.name, maxBytes: 1024)
        policy = try container.member(PolicyChange.self, .policy)
    }
}

/// `PATCH /tenants/{tenant}/policy` (and `policy` of a creation): the fields given replace the current ones.
public struct PolicyChange: WireMessage {
    /// Face mismatches a request may spend.
    public static let attemptsRange = 1...10
    /// Liveness and capture-quality failures a request may spend.
    public static let captureRetriesRange = 1...100
    /// A CIBA request's lifetime in seconds.
    public static let requestLifetimeRange = 30...3600
    /// The shortest minimum password length a policy may set, and the longest.
    public static let passwordLengthRange = 4...128

    /// Face-locked key algorithms (`KeyAlgorithm` raw values; the authority checks them).
    public var keyAlgorithms: [String]?
    /// Within ``attemptsRange``.
    public var attemptsMax: Int?
    /// Within ``captureRetriesRange``.
    public var captureRetriesMax: Int?
    /// Whether liveness runs before the match.
    public var livenessRequired: Bool?
    /// Within `MatchPolicy.thresholdRange`.
    public var matchThreshold: Double?
    /// The password part.
    public var passwordPolicy: PasswordPolicyChange?
    /// One device per user.
    public var oneDevicePerUser: Bool?
    /// Within ``requestLifetimeRange``.
    public var requestLifetimeSeconds: Int?
    /// What releases the face token to a further device.
    public var furtherDeviceApproval: FurtherDeviceApproval?

    public enum CodingKeys: String, CodingKey, CaseIterable {
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

    /// 16 KiB.
    public static var maxBytes: Int { 16 * 1024 }
    /// See `managementDepth`.
    public static var maxDepth: Int { managementDepth }

    /// A change of the fields given.
    public init(keyAlgorithms: [String]? = nil, attemptsMax: Int? = nil, captureRetriesMax: Int? = nil, livenessRequired: Bool? = nil,
                matchThreshold: Double? = nil, passwordPolicy: PasswordPolicyChange? = nil, oneDevicePerUser: Bool? = nil,
                requestLifetimeSeconds: Int? = nil, furtherDeviceApproval: FurtherDeviceApproval? = nil) {
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

    public init(from decoder: any Decoder) throws {
        try refuseUnknownMembers(decoder, CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        keyAlgorithms = try container.strings(.keyAlgorithms, maxCount: KeyAlgorithm.allCases.count, maxBytes: 32)
        attemptsMax = try container.integer(.attemptsMax, in: Self.attemptsRange)
        captureRetriesMax = try container.integer(.captureRetriesMax, in: Self.captureRetriesRange)
        livenessRequired = try container.member(Bool.self, .livenessRequired)
        matchThreshold = try container.number(.matchThreshold, in: MatchPolicy.thresholdRange)
        passwordPolicy = try container.member(PasswordPolicyChange.self, .passwordPolicy)
        oneDevicePerUser = try container.member(Bool.self, .oneDevicePerUser)
        requestLifetimeSeconds = try container.integer(.requestLifetimeSeconds, in: Self.requestLifetimeRange)
        furtherDeviceApproval = try container.oneOf(FurtherDeviceApproval.self, .furtherDeviceApproval)
    }

    /// Whether no field is given.
    public var isEmpty: Bool { self == PolicyChange() }
}

/// The password part of a policy change.
public struct PasswordPolicyChange: Codable, Sendable, Equatable {
    /// `none`, `optional` or `required`.
    public var mode: PasswordMode?
    /// Within `PolicyChange.passwordLengthRange`.
    public var minimumLength: Int?

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case mode
        case minimumLength = "minimum_length"
    }

    /// A change of the fields given.
    public init(mode: PasswordMode? = nil, minimumLength: Int? = nil) {
        self.mode = mode
        self.minimumLength = minimumLength
    }

    public init(from decoder: any Decoder) throws {
        try refuseUnknownMembers(decoder, CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        mode = try container.oneOf(PasswordMode.self, .mode)
        minimumLength = try container.integer(.minimumLength, in: PolicyChange.passwordLengthRange)
    }
}

/// `POST /tenants/{tenant}/applications` (`label` required) and `PATCH …/applications/{client}`: the fields given
/// replace the current ones; `null` clears an endpoint; a `jwks` makes the application use `private_key_jwt`.
public struct ApplicationFields: WireMessage {
    /// The most redirect URIs one application registers.
    public static let maxRedirectURIs = 16

    /// Label shown on the device.
    public var label: String?
    /// Branding shown on the device; replaces the whole branding.
    public var branding: BrandingChange?
    /// `poll` or `ping`.
    public var deliveryMode: DeliveryMode?
    /// Where pings go.
    public var notificationEndpoint: FieldChange<String>
    /// Where devices deliver face-PKI results.
    public var deliveryEndpoint: FieldChange<String>
    /// ID-token algorithm (the authority checks it).
    public var idTokenSignedResponseAlg: String?
    /// The client JWKS (the authority checks every key); `null` on creation means a client secret.
    public var jwks: FieldChange<JSONDocument>
    /// Where the authorization endpoint may send a browser back.
    public var redirectURIs: [String]?

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case label, branding, jwks
        case deliveryMode = "delivery_mode"
        case notificationEndpoint = "notification_endpoint"
        case deliveryEndpoint = "delivery_endpoint"
        case idTokenSignedResponseAlg = "id_token_signed_response_alg"
        case redirectURIs = "redirect_uris"
    }

    /// 128 KiB (a JWKS of RSA keys).
    public static var maxBytes: Int { 128 * 1024 }
    /// See `managementDepth`.
    public static var maxDepth: Int { managementDepth }

    /// The fields given.
    public init(label: String? = nil, branding: BrandingChange? = nil, deliveryMode: DeliveryMode? = nil,
                notificationEndpoint: FieldChange<String> = .keep, deliveryEndpoint: FieldChange<String> = .keep,
                idTokenSignedResponseAlg: String? = nil, jwks: FieldChange<JSONDocument> = .keep, redirectURIs: [String]? = nil) {
        self.label = label
        self.branding = branding
        self.deliveryMode = deliveryMode
        self.notificationEndpoint = notificationEndpoint
        self.deliveryEndpoint = deliveryEndpoint
        self.idTokenSignedResponseAlg = idTokenSignedResponseAlg
        self.jwks = jwks
        self.redirectURIs = redirectURIs
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        label = try container.string(.label, maxBytes: 1024)
        branding = try container.member(BrandingChange.self, .branding)
        deliveryMode = try container.oneOf(DeliveryMode.self, .deliveryMode)
        notificationEndpoint = try container.stringChange(.notificationEndpoint, maxBytes: 4096)
        deliveryEndpoint = try container.stringChange(.deliveryEndpoint, maxBytes: 4096)
        idTokenSignedResponseAlg = try container.string(.idTokenSignedResponseAlg, maxBytes: 32)
        if !container.contains(.jwks) {
            jwks = .keep
        } else if try container.decodeNil(forKey: .jwks) {
            jwks = .clear
        } else {
            jwks = .set(try container.decode(JSONDocument.self, forKey: .jwks))
        }
        redirectURIs = try container.strings(.redirectURIs, maxCount: Self.maxRedirectURIs, maxBytes: 2048)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(label, forKey: .label)
        try container.encodeIfPresent(branding, forKey: .branding)
        try container.encodeIfPresent(deliveryMode, forKey: .deliveryMode)
        try container.encode(notificationEndpoint, forKey: .notificationEndpoint)
        try container.encode(deliveryEndpoint, forKey: .deliveryEndpoint)
        try container.encodeIfPresent(idTokenSignedResponseAlg, forKey: .idTokenSignedResponseAlg)
        try container.encode(jwks, forKey: .jwks)
        try container.encodeIfPresent(redirectURIs, forKey: .redirectURIs)
    }
}

/// An application's branding as a body sets it: `name` defaults to the label; `null` (or absence) leaves out the logo
/// or a colour.
public struct BrandingChange: Codable, Sendable, Equatable {
    /// The name devices show.
    public var name: String?
    /// An `https:` or `data:image/…` URL (the authority checks it).
    public var logoURL: String?
    /// `#RRGGBB`.
    public var primaryColor: String?
    /// `#RRGGBB`.
    public var secondaryColor: String?

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case name
        case logoURL = "logo_url"
        case primaryColor = "primary_color"
        case secondaryColor = "secondary_color"
    }

    /// The fields given.
    public init(name: String? = nil, logoURL: String? = nil, primaryColor: String? = nil, secondaryColor: String? = nil) {
        self.name = name
        self.logoURL = logoURL
        self.primaryColor = primaryColor
        self.secondaryColor = secondaryColor
    }

    public init(from decoder: any Decoder) throws {
        try refuseUnknownMembers(decoder, CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.string(.name, maxBytes: 512)
        logoURL = try container.string(.logoURL, maxBytes: 48 * 1024, nullable: true)
        primaryColor = try container.string(.primaryColor, maxBytes: 16, nullable: true)
        secondaryColor = try container.string(.secondaryColor, maxBytes: 16, nullable: true)
    }
}

/// `POST /tenants/{tenant}/users`.
public struct UserCreation: WireMessage {
    /// The user's e-mail address (the authority checks and lower-cases it).
    public var email: String

    public enum CodingKeys: String, CodingKey, CaseIterable { case email }

    /// 4 KiB.
    public static var maxBytes: Int { 4096 }
    /// See `managementDepth`.
    public static var maxDepth: Int { managementDepth }

    /// A creation.
    public init(email: String) { self.email = email }

    public init(from decoder: any Decoder) throws {
        email = try decoder.container(keyedBy: CodingKeys.self).requiredString(.email, maxBytes: 1024)
    }
}

/// `POST /tenants/{tenant}/invitations`: exactly one of `subject` and `email`.
public struct InvitationCreation: WireMessage {
    /// The invited user by subject.
    public var subject: String?
    /// The invited user by e-mail address.
    public var email: String?
    /// The application to enrol for.
    public var clientID: String
    /// The link's lifetime in seconds (the authority's configured range applies).
    public var expiresIn: SchemaInteger?
    /// `enrolment` (default) or `recovery`.
    public var kind: InvitationKind?

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case subject, email, kind
        case clientID = "client_id"
        case expiresIn = "expires_in"
    }

    /// 4 KiB.
    public static var maxBytes: Int { 4096 }
    /// See `managementDepth`.
    public static var maxDepth: Int { managementDepth }

    /// A creation.
    public init(subject: String? = nil, email: String? = nil, clientID: String, expiresIn: Int? = nil, kind: InvitationKind? = nil) {
        self.subject = subject
        self.email = email
        self.clientID = clientID
        self.expiresIn = expiresIn.map(SchemaInteger.init)
        self.kind = kind
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        kind = try container.oneOf(InvitationKind.self, .kind)
        subject = try container.string(.subject, maxBytes: 256)
        email = try container.string(.email, maxBytes: 1024)
        clientID = try container.requiredString(.clientID, maxBytes: 256)
        expiresIn = try container.member(SchemaInteger.self, .expiresIn)
    }
}

/// `POST /api-keys` and `POST /tenants/{tenant}/api-keys`.
public struct APIKeyCreation: WireMessage {
    /// What the key is for.
    public var label: String

    public enum CodingKeys: String, CodingKey, CaseIterable { case label }

    /// 4 KiB.
    public static var maxBytes: Int { 4096 }
    /// See `managementDepth`.
    public static var maxDepth: Int { managementDepth }

    /// A creation.
    public init(label: String) { self.label = label }

    public init(from decoder: any Decoder) throws {
        label = try decoder.container(keyedBy: CodingKeys.self).requiredString(.label, maxBytes: 1024)
    }
}

/// `PUT /tenants/{tenant}/webhook`.
public struct WebhookRegistration: WireMessage {
    /// Where links are POSTed (the authority checks it).
    public var url: String

    public enum CodingKeys: String, CodingKey, CaseIterable { case url }

    /// 4 KiB.
    public static var maxBytes: Int { 4096 }
    /// See `managementDepth`.
    public static var maxDepth: Int { managementDepth }

    /// A registration.
    public init(url: String) { self.url = url }

    public init(from decoder: any Decoder) throws {
        url = try decoder.container(keyedBy: CodingKeys.self).requiredString(.url, maxBytes: 2048)
    }
}

/// `POST /keys/rotate` (administrator): which keys to rotate (at least one).
public struct AuthorityKeyRotation: WireMessage {
    /// How long a device still on the old device key can follow it, in days.
    public static let rolloverDaysRange = 1...365
    /// The default of ``rolloverDays``.
    public static let defaultRolloverDays = 90

    /// New ID-token keys.
    public var idToken: Bool?
    /// A new device key.
    public var device: Bool?
    /// Within ``rolloverDaysRange``.
    public var rolloverDays: Int?

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case device
        case idToken = "id_token"
        case rolloverDays = "rollover_days"
    }

    /// 1 KiB.
    public static var maxBytes: Int { 1024 }
    /// See `managementDepth`.
    public static var maxDepth: Int { managementDepth }

    /// A rotation.
    public init(idToken: Bool? = nil, device: Bool? = nil, rolloverDays: Int? = nil) {
        self.idToken = idToken
        self.device = device
        self.rolloverDays = rolloverDays
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        idToken = try container.member(Bool.self, .idToken)
        device = try container.member(Bool.self, .device)
        rolloverDays = try container.integer(.rolloverDays, in: Self.rolloverDaysRange)
    }
}

/// The body an action (revoke, cancel, delete…) may have: none, or an empty object.
public struct EmptyBody: WireMessage {
    public enum CodingKeys: CodingKey, CaseIterable {}

    /// 1 KiB.
    public static var maxBytes: Int { 1024 }
    /// See `managementDepth`.
    public static var maxDepth: Int { managementDepth }

    /// The empty object.
    public init() {}
}
