public import FaceSealCrypto

/// What releases the face token to a further device (docs/PROTOCOL.md §8.1), the tenant's
/// `further_device_approval`.
public enum FurtherDeviceApproval: String, Codable, Sendable, CaseIterable {
    /// An enrolled device of the user approves with a face scan (a sign-in-kind approval request). The default.
    case enrolledDevice = "enrolled_device"
    /// The new device proves the token's password to the authority, which counts the failures.
    case password
    /// Nothing: the bound key downloads once within the window. Weaker, and documented so.
    case none
}

/// The approval a further device's pending enrolment waits for, in `EnrolmentResponse.approval`.
public struct EnrolmentApproval: Codable, Sendable, Equatable {
    /// What releases the token.
    public var method: FurtherDeviceApproval
    /// The end of the approval window, Unix seconds: approval and download must both happen before it.
    public var expiresAt: Int64
    /// Six digits the new device shows and the approval request names (``code(userPresentKey:)``).
    public var code: String
    /// `password` only: the stored token's header (its `tid` and scrypt parameters derive the verifier key).
    public var tokenHeader: Base64URLBytes?

    enum CodingKeys: String, CodingKey {
        case method, code
        case expiresAt = "expires_at"
        case tokenHeader = "token_header"
    }

    /// Builds the approval description.
    public init(method: FurtherDeviceApproval, expiresAt: Int64, code: String, tokenHeader: [UInt8]? = nil) {
        self.method = method
        self.expiresAt = expiresAt
        self.code = code
        self.tokenHeader = tokenHeader.map(Base64URLBytes.init)
    }

    /// The approval code of a pending enrolment: the first 4 bytes of SHA-256(`"faceseal/approval-code/v1"` ‖
    /// the user-present key's x963 bytes), big-endian, mod 10⁶, as six digits. Both sides compute it from the key, so
    /// the code on the new device and the one in the approval request match only for that key.
    public static func code(userPresentKey x963: [UInt8]) -> String {
        let digest = SHA256.hash(data: Array("faceseal/approval-code/v1".utf8) + x963).bytes
        let value = digest.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) } % 1_000_000
        let digits = String(value)
        return String(repeating: "0", count: 6 - digits.count) + digits
    }
}

/// A further device's proof of the token's password (`POST /device/v1/enrolments/{inv}/password`, signed with the
/// pending enrolment's user-present key): a compact JWS (`EdDSA`) over `{"inv": <invitation>, "jti": <the request's
/// jti>}` by the password verifier key (``PasswordVerifier``).
public struct PasswordProof: WireMessage {
    /// Protocol version.
    public var v: Int
    /// The compact JWS.
    public var proof: String

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case v, proof
    }

    public static var maxBytes: Int { 4096 }

    /// Builds a proof message.
    public init(v: Int = ProtocolVersion.current, proof: String) {
        self.v = v
        self.proof = proof
    }

    public func checkRanges() throws(WireError) { try WireRange.check(v, WireRange.version, "v") }
}

/// The authority's answer to a ``PasswordProof``: whether it verified, and how many wrong proofs the enrolment has
/// left (at 0 it has ended).
public struct PasswordProofResult: WireMessage {
    /// Protocol version.
    public var v: Int
    /// The proof verified: the enrolment is approved.
    public var accepted: Bool
    /// Wrong proofs left before the enrolment ends.
    public var attemptsLeft: Int

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case v, accepted
        case attemptsLeft = "attempts_left"
    }

    /// Builds the answer.
    public init(v: Int = ProtocolVersion.current, accepted: Bool, attemptsLeft: Int) {
        self.v = v
        self.accepted = accepted
        self.attemptsLeft = attemptsLeft
    }

    public func checkRanges() throws(WireError) {
        try WireRange.check(v, WireRange.version, "v")
        try WireRange.check(attemptsLeft, 0...100, "attempts_left")
    }
}

/// The password verifier of a face token (docs/PROTOCOL.md §8.1): an Ed25519 key whose seed is
/// `HKDF-SHA256(ikm: passwordKey, salt: UTF-8(tid), info: "faceseal/password-verifier/v1")`. Devices that seal a
/// password-protected token upload its public key; a further device proves the password by signing with it.
public enum PasswordVerifier {
    /// The verifier key for `passwordKey` (the token's scrypt of the password) and the token id.
    public static func key(passwordKey: SymmetricKey, tokenID: String) throws(CryptoError) -> Curve25519.Signing.PrivateKey {
        let seed = try HKDF<SHA256>.deriveKey(inputKeyMaterial: passwordKey, salt: Array(tokenID.utf8),
                                              info: Array("faceseal/password-verifier/v1".utf8), outputByteCount: 32)
        return try seed.withUnsafeBytes { raw throws(CryptoError) in try Curve25519.Signing.PrivateKey(rawRepresentation: raw) }
    }

    /// The claims a proof signs.
    public static func proofClaims(invitation: String, jti: String) -> [UInt8] {
        WireJSON.encode(["inv": invitation, "jti": jti])
    }
}
