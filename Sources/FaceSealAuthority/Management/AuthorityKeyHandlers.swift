import FaceSealCrypto
import FaceSealHTTP
import FaceSealWire
public import Foundation

// The authority's own keys (administrator): the ID-token keys and the device-response key, listed and rotated.
extension Authority {
    /// Default and bounds of a device-key rollover window (days).
    static let rolloverWindowDays = (default: 90, range: 1...365)

    /// `GET /keys` (administrator).
    @Sendable func listAuthorityKeys(_ request: HTTPRequest, _ caller: ManagementCaller) async throws -> HTTPResponse {
        try caller.requireAdministrator()
        return try ManagementJSON.response(try await managedAuthorityKeys())
    }

    /// `POST /keys/rotate` (administrator): `{id_token?, device?, rollover_days?}`, at least one of the two true.
    @Sendable func rotateAuthorityKeys(_ request: HTTPRequest, _ caller: ManagementCaller) async throws -> HTTPResponse {
        try caller.requireAdministrator()
        let body = try JSONObjectReader.body(of: request, maxBytes: 1024, allowed: ["id_token", "device", "rollover_days"])
        let idToken = try body.bool("id_token") ?? false
        let device = try body.bool("device") ?? false
        guard idToken || device else {
            throw ManagementError.invalidRequest(status: 400, "name what to rotate: 'id_token': true, 'device': true, or both")
        }
        let days = try body.integer("rollover_days", in: Self.rolloverWindowDays.range) ?? Self.rolloverWindowDays.default
        var detail: [String: JSONValue] = [:]
        if idToken {
            detail["id_token_keys"] = .array(try await rotateIDTokenKeys().map { .string($0.keyID) })
        }
        if device {
            let key = try await rotateDeviceResponseKey(window: Int64(days) * 86_400)
            detail["device_key"] = .string(key.keyID)
            detail["rollover_expires_at"] = key.rolloverExpiresAt.map { .string(SQLAuthorityStore.rfc3339($0)) } ?? .null
        }
        try await audit(caller, tenant: nil, kind: "keys.rotated", target: nil, detail: detail)
        return try ManagementJSON.response(try await managedAuthorityKeys())
    }

    func managedAuthorityKeys() async throws -> ManagedAuthorityKeys {
        try await refreshDeviceResponseKey(force: true)
        let now = clock.now()
        let keys = try await store.signingKeys().map { record in
            ManagedAuthorityKey(record, published: record.algorithm != DeviceResponseKeyRing.algorithm && IDTokenKeyRing.isPublished(record, at: now))
        }
        return ManagedAuthorityKeys(keys: keys, devicePublicKey: Base64URL.encode(Array(deviceKey.publicKey.rawRepresentation)))
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

    init(_ record: SigningKeyRecord, published: Bool) {
        let device = record.algorithm == DeviceResponseKeyRing.algorithm
        keyID = record.keyID
        use = device ? "device" : "id_token"
        algorithm = device ? JWSAlgorithm.edDSA.rawValue : record.algorithm
        createdAt = record.createdAt
        retiredAt = record.retiredAt
        self.published = device ? nil : published
        rolloverExpiresAt = record.rolloverExpiresAt
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
}
