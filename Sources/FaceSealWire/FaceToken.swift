public import FaceSealCrypto

/// scrypt parameters of a password-protected face token.
public struct ScryptParameters: Codable, Sendable, Equatable {
    /// log2 of the cost N.
    public var logN: Int
    /// Block size r.
    public var r: Int
    /// Parallelism p.
    public var p: Int
    /// The salt (16 bytes).
    public var salt: Base64URLBytes

    enum CodingKeys: String, CodingKey {
        case logN = "log_n"
        case r, p, salt
    }

    /// The default: N = 2^15, r = 8, p = 1.
    public init(logN: Int = 15, r: Int = 8, p: Int = 1, salt: [UInt8]) {
        self.logN = logN
        self.r = r
        self.p = p
        self.salt = Base64URLBytes(salt)
    }

    /// Whether the parameters are within the bounds a device will spend (N ≤ 2^20, r ≤ 16, p ≤ 4).
    public var isWithinLimits: Bool { (10...20).contains(logN) && (1...16).contains(r) && (1...4).contains(p) && salt.bytes.count == 16 }
}

/// The cleartext header of a face token (SPEC §5.1): authenticated as the AEAD's additional data of every layer.
public struct FaceTokenHeader: WireMessage {
    /// The format every new or rotated token is sealed in: a templates layer and a keys layer.
    public static let currentFormat = 2
    /// The formats a device opens: 1 (one body with templates and masters, migrated at its next rotation) and 2.
    public static let readableFormats = 1...2

    /// Format version (2; 1 for a token not rotated since format 2).
    public var v: Int
    /// The token id.
    public var tid: String
    /// The user's subject at the authority.
    public var sub: String
    /// The tenant id.
    public var tenant: String
    /// Incremented by every completion (SPEC §5.3).
    public var gen: Int
    /// Whether opening needs the user's password.
    public var passwordRequired: Bool
    /// Whether a capture must pass liveness.
    public var livenessRequired: Bool
    /// The match threshold (embedding distance).
    public var threshold: Double
    /// The password KDF's parameters, when `passwordRequired`.
    public var scrypt: ScryptParameters?
    /// Creation time, Unix seconds.
    public var createdAt: Int64

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case v, tid, sub, tenant, gen, threshold, scrypt
        case passwordRequired = "password_required"
        case livenessRequired = "liveness_required"
        case createdAt = "created_at"
    }

    public static var maxBytes: Int { 4096 }

    /// Builds a header.
    public init(v: Int = FaceTokenHeader.currentFormat, tid: String, sub: String, tenant: String, gen: Int, passwordRequired: Bool,
                livenessRequired: Bool, threshold: Double, scrypt: ScryptParameters?, createdAt: Int64) {
        self.v = v
        self.tid = tid
        self.sub = sub
        self.tenant = tenant
        self.gen = gen
        self.passwordRequired = passwordRequired
        self.livenessRequired = livenessRequired
        self.threshold = threshold
        self.scrypt = scrypt
        self.createdAt = createdAt
    }
}

/// A sealed face token as stored and transported: the exact header bytes (the AAD) and its AES-256-GCM layers.
///
/// Format 2: `nonce`/`sealed` hold the templates layer and `keys_nonce`/`keys_sealed` the keys layer, each under its
/// own key. Format 1: `nonce`/`sealed` hold the one body and the keys fields are absent.
public struct FaceTokenEnvelope: WireMessage {
    /// The exact bytes of the encoded `FaceTokenHeader` (so the AAD is byte-identical everywhere).
    public var header: Base64URLBytes
    /// The 12-byte GCM nonce of the templates layer (format 1: of the body).
    public var nonce: Base64URLBytes
    /// The templates layer (format 1: the body): ciphertext followed by the 16-byte tag.
    public var sealed: Base64URLBytes
    /// Format 2: the 12-byte GCM nonce of the keys layer.
    public var keysNonce: Base64URLBytes?
    /// Format 2: the keys layer, ciphertext followed by the 16-byte tag.
    public var keysSealed: Base64URLBytes?

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case header, nonce, sealed
        case keysNonce = "keys_nonce"
        case keysSealed = "keys_sealed"
    }

    public static var maxBytes: Int { 256 * 1024 }

    /// Builds an envelope (the keys layer's fields only for format 2).
    public init(header: [UInt8], nonce: [UInt8], sealed: [UInt8], keysNonce: [UInt8]? = nil, keysSealed: [UInt8]? = nil) {
        self.header = Base64URLBytes(header)
        self.nonce = Base64URLBytes(nonce)
        self.sealed = Base64URLBytes(sealed)
        self.keysNonce = keysNonce.map(Base64URLBytes.init)
        self.keysSealed = keysSealed.map(Base64URLBytes.init)
    }

    /// The parsed header (readable without opening the token: it tells whether a password is needed).
    public func parsedHeader() throws(WireError) -> FaceTokenHeader { try FaceTokenHeader.decode(header.bytes) }

    /// The parsed header (its integers range-checked), checked against the envelope's shape: a readable format, 12-byte
    /// nonces, layers at least a tag long, and the keys layer present exactly in format 2.
    public func checkedHeader() throws(FaceTokenError) -> FaceTokenHeader {
        let header: FaceTokenHeader
        do {
            header = try parsedHeader()
        } catch {
            throw .malformed("header")
        }
        guard FaceTokenHeader.readableFormats.contains(header.v) else { throw .malformed("token format \(header.v)") }
        try Self.checkLayer(nonce: nonce.bytes, sealed: sealed.bytes)
        switch (header.v, keysNonce, keysSealed) {
        case (1, nil, nil):
            break
        case (2, let nonce?, let sealed?):
            try Self.checkLayer(nonce: nonce.bytes, sealed: sealed.bytes)
        default:
            throw .malformed("the layers do not fit format \(header.v)")
        }
        return header
    }

    private static func checkLayer(nonce: [UInt8], sealed: [UInt8]) throws(FaceTokenError) {
        guard nonce.count == AES.GCM.nonceByteCount else { throw .malformed("nonce length") }
        guard sealed.count >= AES.GCM.tagByteCount else { throw .malformed("sealed layer too short") }
    }
}

/// A face-token download (`GET /device/v1/requests/{rid}/token`): the token and the authority's share,
/// released only to an active device key of the token's user for a pending request.
public struct FaceTokenDownload: WireMessage {
    /// Protocol version.
    public var v: Int
    /// The sealed token.
    public var token: FaceTokenEnvelope
    /// The server share (32 bytes), one input of the layer keys.
    public var serverShare: Base64URLSecret

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case v, token
        case serverShare = "server_share"
    }

    public static var maxBytes: Int { 512 * 1024 }

    /// Builds a download.
    public init(v: Int = ProtocolVersion.current, token: FaceTokenEnvelope, serverShare: SecretBytes) {
        self.v = v
        self.token = token
        self.serverShare = Base64URLSecret(serverShare)
    }
}

extension FaceTokenHeader {
    public func checkRanges() throws(WireError) {
        try WireRange.check(v, WireRange.version, "v")
        try WireRange.check(gen, WireRange.generation, "gen")
        try WireRange.check(createdAt, WireRange.unixTime, "created_at")
        if let scrypt {
            try WireRange.check(scrypt.logN, WireRange.scryptLogN, "scrypt.log_n")
            try WireRange.check(scrypt.r, WireRange.scryptFactor, "scrypt.r")
            try WireRange.check(scrypt.p, WireRange.scryptFactor, "scrypt.p")
        }
    }
}

extension FaceTokenDownload {
    public func checkRanges() throws(WireError) { try WireRange.check(v, WireRange.version, "v") }
}
