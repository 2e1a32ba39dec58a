import FaceSealCrypto
public import FaceSealWire

/// The public keys an application pinned for one user and key context: what a `public_keys` ceremony
/// delivered. Later deliveries for that (user, context) must be signed by `signingKey`, and
/// decapsulations are encapsulated to `kemKey`.
public struct PinnedKeys: Sendable, Hashable, Codable {
    /// Every delivered public key, by algorithm.
    public var keys: [KeyAlgorithm: [UInt8]]

    /// Keys as delivered.
    public init(keys: [KeyAlgorithm: [UInt8]]) { self.keys = keys }

    /// The ML-DSA-65 public key (the delivery signature key), if present.
    public var signingKey: [UInt8]? { keys[.mlDSA65] }
    /// The ML-KEM-768 public key, if present.
    public var kemKey: [UInt8]? { keys[.mlKEM768] }

    /// The wire `key_id` of the signing key: base64url SHA-256 of its public key.
    public var signingKeyID: String? { signingKey.map(Self.keyID(of:)) }

    /// base64url SHA-256 of a public key: the `key_id` of the delivery body.
    public static func keyID(of publicKey: [UInt8]) -> String { Base64URL.encode(SHA256.hash(data: publicKey).bytes) }

    /// Decodes `{"ML-DSA-65": base64url, …}`; an unknown algorithm name is an error.
    public init(from decoder: any Decoder) throws {
        let raw = try [String: Base64URLBytes](from: decoder)
        var keys: [KeyAlgorithm: [UInt8]] = [:]
        for (name, value) in raw {
            guard let algorithm = KeyAlgorithm(rawValue: name) else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "unknown key algorithm \(name)"))
            }
            keys[algorithm] = value.bytes
        }
        self.keys = keys
    }

    /// Encodes `{"ML-DSA-65": base64url, …}`.
    public func encode(to encoder: any Encoder) throws {
        let raw = Dictionary(uniqueKeysWithValues: keys.map { ($0.key.rawValue, Base64URLBytes($0.value)) })
        try raw.encode(to: encoder)
    }
}

/// Who and what a pin is for: the user as the application names them in `login_hint`, and the key context.
public struct PinKey: Sendable, Hashable, Codable {
    /// The user, as sent in `login_hint` (an email or a subject).
    public var user: String
    /// The opaque key context (`pki_context`).
    public var context: String

    /// A pin key.
    public init(user: String, context: String) {
        self.user = user
        self.context = context
    }
}
