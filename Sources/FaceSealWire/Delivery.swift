/// The body a device POSTs to the application's delivery endpoint (SPEC §4.4), with
/// `Authorization: Bearer <client_notification_token>` and `X-FaceSeal-Signature`: base64url of a pure
/// ML-DSA-65 signature over these exact bytes, context `faceseal-delivery-v1`, by the user's key for this
/// application and context. Exactly one of `publicKeys`, `signature`, `sharedSecret` is present, per `kind`.
public struct DeliveryBody: WireMessage {
    /// Protocol version.
    public var v: Int
    /// The CIBA request id.
    public var authReqId: String
    /// The operation.
    public var kind: PKIKind
    /// Issued at, Unix seconds.
    public var iat: Int64
    /// The id of the signing key: base64url SHA-256 of its public key.
    public var keyId: String
    /// `public_keys`: the public keys for this application and context, by algorithm name.
    public var publicKeys: [String: Base64URLBytes]?
    /// `sign`: the signature over `pki_data` (pure ML-DSA with the empty context, verifiable by any ML-DSA library).
    public var signature: Base64URLBytes?
    /// `decapsulate`: the ML-KEM shared secret.
    public var sharedSecret: Base64URLBytes?

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case v, kind, iat, signature
        case authReqId = "auth_req_id"
        case keyId = "key_id"
        case publicKeys = "public_keys"
        case sharedSecret = "shared_secret"
    }

    public static var maxBytes: Int { 32 * 1024 }

    /// Builds a delivery body.
    public init(v: Int = ProtocolVersion.current, authReqId: String, kind: PKIKind, iat: Int64, keyId: String,
                publicKeys: [KeyAlgorithm: [UInt8]]? = nil, signature: [UInt8]? = nil, sharedSecret: [UInt8]? = nil) {
        self.v = v
        self.authReqId = authReqId
        self.kind = kind
        self.iat = iat
        self.keyId = keyId
        self.publicKeys = publicKeys.map { Dictionary(uniqueKeysWithValues: $0.map { ($0.key.rawValue, Base64URLBytes($0.value)) }) }
        self.signature = signature.map(Base64URLBytes.init)
        self.sharedSecret = sharedSecret.map(Base64URLBytes.init)
    }

    /// Whether the result fields match `kind` (exactly the one the kind calls for).
    public var isConsistent: Bool {
        switch kind {
        case .publicKeys: publicKeys != nil && signature == nil && sharedSecret == nil
        case .sign: publicKeys == nil && signature != nil && sharedSecret == nil
        case .decapsulate: publicKeys == nil && signature == nil && sharedSecret != nil
        }
    }
}

/// Constants of the delivery.
public enum DeliveryNames {
    /// The header carrying the ML-DSA signature over the body.
    public static let signatureHeader = "X-FaceSeal-Signature"
    /// The ML-DSA context of the delivery signature.
    public static let signatureContext: [UInt8] = Array("faceseal-delivery-v1".utf8)
    /// The ML-DSA context of a `sign` result: empty, so any ML-DSA library verifies it; the delivery's own
    /// context keeps a `sign` result from ever passing as a delivery signature.
    public static let signContext: [UInt8] = []
}

extension DeliveryBody {
    public func checkRanges() throws(WireError) {
        try WireRange.check(v, WireRange.version, "v")
        try WireRange.check(iat, WireRange.unixTime, "iat")
    }
}
