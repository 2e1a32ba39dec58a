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

/// The cleartext header of a face token (SPEC §5.1): authenticated as the AEAD's additional data.
public struct FaceTokenHeader: WireMessage {
    /// Format version (1).
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
    public init(v: Int = 1, tid: String, sub: String, tenant: String, gen: Int, passwordRequired: Bool,
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

/// A sealed face token as stored and transported: the exact header bytes (the AAD) and the AES-256-GCM box.
public struct FaceTokenEnvelope: WireMessage {
    /// The exact bytes of the encoded `FaceTokenHeader` (so the AAD is byte-identical everywhere).
    public var header: Base64URLBytes
    /// The 12-byte GCM nonce.
    public var nonce: Base64URLBytes
    /// Ciphertext followed by the 16-byte tag.
    public var sealed: Base64URLBytes

    public enum CodingKeys: String, CodingKey, CaseIterable { case header, nonce, sealed }
    public static var maxBytes: Int { 256 * 1024 }

    /// Builds an envelope.
    public init(header: [UInt8], nonce: [UInt8], sealed: [UInt8]) {
        self.header = Base64URLBytes(header)
        self.nonce = Base64URLBytes(nonce)
        self.sealed = Base64URLBytes(sealed)
    }

    /// The parsed header (readable without opening the token: it tells whether a password is needed).
    public func parsedHeader() throws(WireError) -> FaceTokenHeader { try FaceTokenHeader.decode(header.bytes) }
}

/// The sealed content of a face token: enrolled face templates and one 32-byte master per key algorithm.
/// Only ever in clear on a device.
public struct FaceTokenBody: WireMessage {
    /// Embeddings from the enrolment captures (128 floats each).
    public var templates: [[Float]]
    /// Master secrets by algorithm name (fill-only: never replaced once present).
    public var masters: [String: Base64URLBytes]

    public enum CodingKeys: String, CodingKey, CaseIterable { case templates, masters }
    public static var maxBytes: Int { 200 * 1024 }

    /// Builds a body.
    public init(templates: [[Float]], masters: [KeyAlgorithm: [UInt8]]) {
        self.templates = templates
        self.masters = Dictionary(uniqueKeysWithValues: masters.map { ($0.key.rawValue, Base64URLBytes($0.value)) })
    }

    /// The master for `algorithm`, if present.
    public func master(for algorithm: KeyAlgorithm) -> [UInt8]? { masters[algorithm.rawValue]?.bytes }
}

/// A face-token download (`GET /device/v1/requests/{rid}/token`): the token and the authority's share,
/// released only to an active device key of the token's user for a pending request.
public struct FaceTokenDownload: WireMessage {
    /// Protocol version.
    public var v: Int
    /// The sealed token.
    public var token: FaceTokenEnvelope
    /// The server share (32 bytes), one input of the sealing key.
    public var serverShare: Base64URLBytes

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case v, token
        case serverShare = "server_share"
    }

    public static var maxBytes: Int { 512 * 1024 }

    /// Builds a download.
    public init(v: Int = ProtocolVersion.current, token: FaceTokenEnvelope, serverShare: [UInt8]) {
        self.v = v
        self.token = token
        self.serverShare = Base64URLBytes(serverShare)
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
