/// What a link asks the device to do (SPEC §4.1).
public enum LinkKind: String, Codable, Sendable, CaseIterable {
    /// A CIBA sign-in.
    case login
    /// A face-PKI ceremony: public keys, a signature or a decapsulation.
    case ceremony
    /// An enrolment invitation.
    case enrolment
}

/// The claims of a link: a compact JWS (EdDSA) signed by the authority, opaque to the host app.
///
/// The device verifies it with the authority key it pinned at enrolment; an enrolment link carries that key
/// in `akey` (confirmed by the enrolment response).
public struct LinkClaims: WireMessage {
    /// The protocol version of the link format.
    public var v: Int
    /// The authority's issuer URL.
    public var iss: String
    /// The request id: the CIBA request for login and ceremony, the invitation for enrolment.
    public var rid: String
    /// What the link asks for.
    public var kind: LinkKind
    /// Expiry, Unix seconds.
    public var exp: Int64
    /// A random nonce; also the seed of the liveness challenge, which binds a capture to this request.
    public var nonce: String
    /// Enrolment links only: the authority's Ed25519 public key (raw 32 bytes).
    public var akey: Base64URLBytes?

    public enum CodingKeys: String, CodingKey, CaseIterable { case v, iss, rid, kind, exp, nonce, akey }

    public static var maxBytes: Int { 2048 }

    /// Builds link claims.
    public init(v: Int = 1, iss: String, rid: String, kind: LinkKind, exp: Int64, nonce: String, akey: [UInt8]? = nil) {
        self.v = v
        self.iss = iss
        self.rid = rid
        self.kind = kind
        self.exp = exp
        self.nonce = nonce
        self.akey = akey.map(Base64URLBytes.init)
    }
}

/// Limits on link bytes before any parsing.
public enum LinkLimits {
    /// The largest link accepted, in bytes (a compact JWS of `LinkClaims`).
    public static let maxBytes = 4096
    /// The path prefix of a universal link: `https://<authority>/l/<compact JWS>`.
    public static let universalLinkPath = "/l/"
}

extension LinkClaims {
    public func checkRanges() throws(WireError) {
        try WireRange.check(v, WireRange.version, "v")
        try WireRange.check(exp, WireRange.unixTime, "exp")
    }
}
