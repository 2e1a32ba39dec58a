/// Why the authority no longer accepts a device key (reported to the device by rotation and branding sync).
public struct DeadKey: Codable, Sendable, Equatable {
    /// The key id (either key of the enrolment).
    public var kid: String
    /// True when the user no longer has an application they could enrol through.
    public var terminated: Bool
    /// True when the enrolment moved to another device under a one-device-per-user tenant.
    public var replaced: Bool

    /// Builds an entry.
    public init(kid: String, terminated: Bool, replaced: Bool) {
        self.kid = kid
        self.terminated = terminated
        self.replaced = replaced
    }
}

/// One enrolment's new keys in a rotation: the request is signed with the old user-present key;
/// `proof` is a compact JWS by the new user-present key over `{"jti": <request jti>, "old": oldKid}` and
/// `ambientProof` the same by the new ambient key.
public struct KeyRotationEntry: Codable, Sendable, Equatable {
    /// The old user-present key id of the enrolment.
    public var oldKid: String
    /// The new ambient key.
    public var ambientKey: DevicePublicKey
    /// The new user-present key.
    public var userPresentKey: DevicePublicKey
    /// Proof of possession of the new user-present key.
    public var proof: String
    /// Proof of possession of the new ambient key.
    public var ambientProof: String

    enum CodingKeys: String, CodingKey {
        case oldKid = "old_kid"
        case ambientKey = "ambient_key"
        case userPresentKey = "user_present_key"
        case proof
        case ambientProof = "ambient_proof"
    }

    /// Builds an entry.
    public init(oldKid: String, ambientKey: DevicePublicKey, userPresentKey: DevicePublicKey, proof: String, ambientProof: String) {
        self.oldKid = oldKid
        self.ambientKey = ambientKey
        self.userPresentKey = userPresentKey
        self.proof = proof
        self.ambientProof = ambientProof
    }
}

/// A key rotation for one enrolment (`POST /device/v1/keys/rotation`), signed with its current user-present key.
public struct KeyRotationRequest: WireMessage {
    /// Protocol version.
    public var v: Int
    /// The new keys.
    public var entry: KeyRotationEntry

    public enum CodingKeys: String, CodingKey, CaseIterable { case v, entry }

    /// Builds a rotation.
    public init(v: Int = ProtocolVersion.current, entry: KeyRotationEntry) {
        self.v = v
        self.entry = entry
    }
}

/// The answer to a rotation: the old keys stay valid until `overlapUntil`, and using them sets the rotation hint.
public struct KeyRotationResponse: WireMessage {
    /// Protocol version.
    public var v: Int
    /// The new user-present key id now registered.
    public var kid: String
    /// End of the overlap window, Unix seconds.
    public var overlapUntil: Int64

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case v, kid
        case overlapUntil = "overlap_until"
    }

    /// Builds the answer.
    public init(v: Int = ProtocolVersion.current, kid: String, overlapUntil: Int64) {
        self.v = v
        self.kid = kid
        self.overlapUntil = overlapUntil
    }
}

/// A device-initiated revocation of one enrolment's keys (`POST /device/v1/keys/revocation`), signed with its
/// user-present key.
public struct KeyRevocationRequest: WireMessage {
    /// Protocol version.
    public var v: Int
    /// The user-present key id of the enrolment to revoke.
    public var kid: String

    public enum CodingKeys: String, CodingKey, CaseIterable { case v, kid }
    public static var maxBytes: Int { 1024 }

    /// Builds a revocation.
    public init(v: Int = ProtocolVersion.current, kid: String) {
        self.v = v
        self.kid = kid
    }
}

/// Branding for one enrolment, keyed by its user-present key id.
public struct BrandingEntry: Codable, Sendable, Equatable {
    /// The enrolment's user-present key id.
    public var kid: String
    /// The application's client id.
    public var clientId: String
    /// The branding.
    public var branding: BrandingInfo

    enum CodingKeys: String, CodingKey {
        case kid, branding
        case clientId = "client_id"
    }

    /// Builds an entry.
    public init(kid: String, clientId: String, branding: BrandingInfo) {
        self.kid = kid
        self.clientId = clientId
        self.branding = branding
    }
}

/// The branding sync (`GET /device/v1/branding`, signed by any of the device's ambient keys; the query names
/// the enrolments as `kids=a,b,c`): branding of live enrolments and the dead ones.
public struct BrandingSyncResponse: WireMessage {
    /// Protocol version.
    public var v: Int
    /// Branding of every live enrolment asked about.
    public var entries: [BrandingEntry]
    /// Enrolments the authority revoked, terminated or replaced.
    public var dead: [DeadKey]

    public enum CodingKeys: String, CodingKey, CaseIterable { case v, entries, dead }
    public static var maxBytes: Int { 1024 * 1024 }

    /// Builds the answer.
    public init(v: Int = ProtocolVersion.current, entries: [BrandingEntry], dead: [DeadKey]) {
        self.v = v
        self.entries = entries
        self.dead = dead
    }
}

/// The link outbox (`GET /device/v1/outbox?wait=<seconds>`, ambient key): links waiting for this device's user.
public struct OutboxResponse: WireMessage {
    /// Protocol version.
    public var v: Int
    /// Compact-JWS links, oldest first.
    public var links: [String]

    public enum CodingKeys: String, CodingKey, CaseIterable { case v, links }

    /// Builds the answer.
    public init(v: Int = ProtocolVersion.current, links: [String]) {
        self.v = v
        self.links = links
    }
}

extension KeyRotationRequest {
    public func checkRanges() throws(WireError) { try WireRange.check(v, WireRange.version, "v") }
}

extension KeyRotationResponse {
    public func checkRanges() throws(WireError) {
        try WireRange.check(v, WireRange.version, "v")
        try WireRange.check(overlapUntil, WireRange.unixTime, "overlap_until")
    }
}

extension KeyRevocationRequest {
    public func checkRanges() throws(WireError) { try WireRange.check(v, WireRange.version, "v") }
}

extension BrandingSyncResponse {
    public func checkRanges() throws(WireError) { try WireRange.check(v, WireRange.version, "v") }
}

extension OutboxResponse {
    public func checkRanges() throws(WireError) { try WireRange.check(v, WireRange.version, "v") }
}
