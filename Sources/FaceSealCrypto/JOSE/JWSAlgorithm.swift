/// The JWS algorithms FaceSeal signs and verifies (RFC 7518, RFC 8037, the JOSE ML-DSA draft).
///
/// Anything else — `none`, `HS256`, `PS256`, unknown names — is refused when parsing a header.
public enum JWSAlgorithm: String, Sendable, Hashable, CaseIterable {
    /// RSASSA-PKCS1-v1_5 with SHA-256 (required by OpenID Connect for ID tokens).
    case rs256 = "RS256"
    /// ECDSA P-256 with SHA-256, signature `r ‖ s` (64 bytes).
    case es256 = "ES256"
    /// Ed25519 (RFC 8037).
    case edDSA = "EdDSA"
    /// ML-DSA-65, pure, empty context (JOSE ML-DSA draft), keys as `kty: AKP`.
    case mlDSA65 = "ML-DSA-65"

    /// Parses a header's `alg`, naming the refusal.
    /// - Throws: ``JOSEError/algorithmNone`` for `none` (any case), ``JOSEError/unsupportedAlgorithm(_:)`` otherwise.
    public init(headerValue: String) throws(JOSEError) {
        if headerValue.lowercased() == "none" { throw .algorithmNone }
        guard let algorithm = JWSAlgorithm(rawValue: headerValue) else { throw .unsupportedAlgorithm(headerValue) }
        self = algorithm
    }
}

/// Something that can sign a JWS signing input with one algorithm.
///
/// The classical private keys conform (`Curve25519.Signing.PrivateKey`, `P256.Signing.PrivateKey`,
/// `RSA.Signing.PrivateKey`); an ML-DSA-65 key conforms by returning `.mlDSA65` and the pure ML-DSA
/// signature with an empty context.
public protocol JWSSigner: Sendable {
    /// The JWS `alg` this signer produces.
    var algorithm: JWSAlgorithm { get }
    /// The JWS signature bytes of `signingInput` (ASCII `base64url(header) '.' base64url(payload)`).
    func sign(_ signingInput: [UInt8]) throws -> [UInt8]
}

/// Something that can verify JWS signatures of one algorithm.
public protocol JWSVerifier: Sendable {
    /// The JWS `alg` this verifier accepts; a token with another `alg` is refused before verification.
    var algorithm: JWSAlgorithm { get }
    /// Whether `signature` is valid for `signingInput`. Wrong lengths are simply invalid.
    func verify(_ signingInput: [UInt8], signature: [UInt8]) -> Bool
}

extension Curve25519.Signing.PrivateKey: JWSSigner {
    /// `.edDSA`.
    public var algorithm: JWSAlgorithm { .edDSA }
    /// The 64-byte Ed25519 signature.
    public func sign(_ signingInput: [UInt8]) throws -> [UInt8] { signatureBytes(for: signingInput) }
}

extension Curve25519.Signing.PublicKey: JWSVerifier {
    /// `.edDSA`.
    public var algorithm: JWSAlgorithm { .edDSA }
    /// Ed25519 verification.
    public func verify(_ signingInput: [UInt8], signature: [UInt8]) -> Bool {
        isValidSignature(signature, for: signingInput)
    }
}

extension P256.Signing.PrivateKey: JWSSigner {
    /// `.es256`.
    public var algorithm: JWSAlgorithm { .es256 }
    /// The 64-byte `r ‖ s` signature JOSE uses (not DER).
    public func sign(_ signingInput: [UInt8]) throws -> [UInt8] {
        [UInt8](try signature(for: signingInput).rawRepresentation)
    }
}

extension P256.Signing.PublicKey: JWSVerifier {
    /// `.es256`.
    public var algorithm: JWSAlgorithm { .es256 }
    /// Verifies a 64-byte `r ‖ s` signature; DER or any other length is refused.
    public func verify(_ signingInput: [UInt8], signature: [UInt8]) -> Bool {
        guard let parsed = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
        return isValidSignature(parsed, for: signingInput)
    }
}

extension RSA.Signing.PrivateKey: JWSSigner {
    /// `.rs256`.
    public var algorithm: JWSAlgorithm { .rs256 }
    /// The RSASSA-PKCS1-v1_5 SHA-256 signature.
    public func sign(_ signingInput: [UInt8]) throws -> [UInt8] {
        [UInt8](try signature(for: signingInput).rawRepresentation)
    }
}

extension RSA.Signing.PublicKey: JWSVerifier {
    /// `.rs256`.
    public var algorithm: JWSAlgorithm { .rs256 }
    /// RSASSA-PKCS1-v1_5 SHA-256 verification.
    public func verify(_ signingInput: [UInt8], signature: [UInt8]) -> Bool {
        isValidSignature(RSA.Signing.RSASignature(rawRepresentation: signature), for: signingInput)
    }
}
