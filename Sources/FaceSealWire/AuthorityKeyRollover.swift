public import FaceSealCrypto

/// What the authority's old device-response key signs when it hands over to a new one (docs/PROTOCOL.md §2,
/// "Authority key rollover"): the device re-pins from `old` to `new` only with a statement its pinned key signed.
public struct AuthorityKeyRolloverClaims: WireMessage {
    /// The format version (1).
    public var v: Int
    /// The authority's issuer URL.
    public var iss: String
    /// The key that signs the statement: the one being rolled over (raw Ed25519, 32 bytes).
    public var old: Base64URLBytes
    /// The key that takes over (raw Ed25519, 32 bytes).
    public var new: Base64URLBytes
    /// When the rollover was made, Unix seconds.
    public var iat: Int64
    /// The end of the rollover window, Unix seconds: a device still on `old` after it must enrol again.
    public var exp: Int64

    public enum CodingKeys: String, CodingKey, CaseIterable { case v, iss, old, new, iat, exp }

    public static var maxBytes: Int { 1024 }

    /// Builds rollover claims.
    public init(v: Int = 1, iss: String, old: [UInt8], new: [UInt8], iat: Int64, exp: Int64) {
        self.v = v
        self.iss = iss
        self.old = Base64URLBytes(old)
        self.new = Base64URLBytes(new)
        self.iat = iat
        self.exp = exp
    }

    public func checkRanges() throws(WireError) {
        try WireRange.check(v, WireRange.version, "v")
        try WireRange.check(iat, WireRange.unixTime, "iat")
        try WireRange.check(exp, WireRange.unixTime, "exp")
    }
}

/// `GET /device/v1/authority-keys` (unsigned: every statement authenticates itself): the authority's rollover
/// statements, oldest first. A device walks them from the key it pinned.
public struct AuthorityKeyChain: WireMessage {
    /// Protocol version.
    public var v: Int
    /// Compact JWS of `AuthorityKeyRolloverClaims`, oldest first.
    public var rollovers: [String]

    public enum CodingKeys: String, CodingKey, CaseIterable { case v, rollovers }

    /// Builds a chain.
    public init(v: Int = ProtocolVersion.current, rollovers: [String]) {
        self.v = v
        self.rollovers = rollovers
    }

    public func checkRanges() throws(WireError) {
        try WireRange.check(v, WireRange.version, "v")
        guard rollovers.count <= AuthorityKeyRollover.maxChainLength else { throw .invalidValue(field: "rollovers", reason: "more than \(AuthorityKeyRollover.maxChainLength) statements") }
    }
}

/// Why a rollover statement was refused.
public enum AuthorityKeyRolloverError: Error, Equatable, Sendable {
    /// Not a compact JWS of rollover claims, or over the size limit.
    case malformed
    /// It does not hand over from the pinned key, or the pinned key did not sign it.
    case notFromPinnedKey
    /// Another issuer's statement.
    case wrongIssuer
    /// Outside its window, a window longer than `maximumWindow`, or the pinned key is older than `pinLifetime`.
    case outsideWindow
}

/// Signs and verifies rollover statements: compact JWS (EdDSA, `typ: faceseal-rollover+jwt`) by the old key.
///
/// The bound on a stolen old key: a device accepts a statement only from the key it has pinned now, only within the
/// statement's window (at most `maximumWindow` long), and only while that pin is younger than `pinLifetime` on the
/// device's own clock. A device that rolled over never listens to the old key again; one that did not can be re-pinned
/// by whoever holds the old key for at most `pinLifetime` after it pinned that key — and only by answering its
/// request to its own authority URL.
public enum AuthorityKeyRollover {
    /// The JWS `typ`.
    public static let type = "faceseal-rollover+jwt"
    /// The longest window a statement may give (`exp − iat`), seconds: one year.
    public static let maximumWindow: Int64 = 365 * 86_400
    /// How long after pinning a key a device still accepts its rollover, seconds: 400 days (rotate at least yearly).
    public static let pinLifetime: Int64 = 400 * 86_400
    /// How far `iat` may be ahead of the device's clock, seconds.
    public static let clockSkew: Int64 = 300
    /// The most statements a chain carries.
    public static let maxChainLength = 64

    /// Signs `claims` with the old key (which must be `claims.old`).
    public static func make(_ claims: AuthorityKeyRolloverClaims, oldKey: Curve25519.Signing.PrivateKey) throws(JOSEError) -> String {
        try JWS.sign(payload: claims.encoded(), signer: oldKey, type: type)
    }

    /// The claims as written, signature unchecked: only to order statements, never to act on them.
    public static func unverifiedClaims(_ statement: String) -> AuthorityKeyRolloverClaims? {
        guard let jws = try? JWS.parse(statement, options: JWSParsingOptions(maximumSize: 2048, allowedAlgorithms: [.edDSA])) else { return nil }
        return try? AuthorityKeyRolloverClaims.decode(jws.payload)
    }

    /// The claims of `statement` if it hands over from `pinned` of `issuer`, `pinned` signed it, `now` is inside its
    /// window, and the pin (made at `pinnedAt`) is younger than `pinLifetime`.
    public static func verify(_ statement: String, pinned: Curve25519.Signing.PublicKey, pinnedAt: Int64, issuer: String,
                              now: Int64) throws(AuthorityKeyRolloverError) -> AuthorityKeyRolloverClaims {
        let jws: UnverifiedJWS
        let claims: AuthorityKeyRolloverClaims
        do {
            jws = try JWS.parse(statement, options: JWSParsingOptions(maximumSize: 2048, allowedAlgorithms: [.edDSA]))
            guard jws.header.type == type else { throw AuthorityKeyRolloverError.malformed }
            claims = try AuthorityKeyRolloverClaims.decode(jws.payload)
        } catch {
            throw .malformed
        }
        guard claims.old.bytes.count == 32, claims.new.bytes.count == 32, claims.old.bytes != claims.new.bytes,
              (try? Curve25519.Signing.PublicKey(rawRepresentation: claims.new.bytes)) != nil else { throw .malformed }
        guard constantTimeEquals(claims.old.bytes, Array(pinned.rawRepresentation)) else { throw .notFromPinnedKey }
        do {
            _ = try JWS.verify(jws, verifier: pinned)
        } catch {
            throw .notFromPinnedKey
        }
        guard claims.iss == issuer else { throw .wrongIssuer }
        // Ranges were checked at decode, so the subtractions cannot overflow.
        guard claims.iat <= claims.exp, claims.exp - claims.iat <= maximumWindow, claims.iat <= now + clockSkew, now < claims.exp,
              now - pinnedAt < pinLifetime else { throw .outsideWindow }
        return claims
    }
}
