/// Every way a JOSE input (JWS, JWK, JWKS, JWT claims, base64url, JSON) can be refused.
public enum JOSEError: Error, Equatable, Sendable {
    /// The input is larger than the configured limit (bytes).
    case inputTooLarge(limit: Int)
    /// A compact JWS must have exactly three dot-separated segments.
    case wrongSegmentCount(Int)
    /// A part (`header`, `payload`, `signature`, a JWK member) is not strict unpadded base64url.
    case invalidBase64URL(part: String)
    /// A part is not well-formed JSON of the expected shape.
    case malformedJSON(part: String, reason: String)
    /// A required member is absent (`alg`, `kty`, `x`, `exp`, …).
    case missingField(String)
    /// A member has the wrong type or an invalid value.
    case invalidField(String)
    /// `alg: none` (unsecured JWS) is never accepted.
    case algorithmNone
    /// An `alg` this implementation does not support.
    case unsupportedAlgorithm(String)
    /// The header's `alg` does not fit the key (or the key's own `alg`).
    case algorithmMismatch(header: String, key: String)
    /// The header has `crit`: no extension is understood, so none may be critical.
    case criticalHeaderUnsupported
    /// The signature does not verify.
    case invalidSignature
    /// The signer failed (its reason).
    case signingFailed(String)
    /// A JWK `kty` (or `crv`) this implementation does not support.
    case unsupportedKeyType(String)
    /// A JWK whose material is not a valid key (the reason).
    case invalidKey(String)
    /// No key of the set matches the header's `kid` (or, without `kid`, its `alg`).
    case keyNotFound(keyID: String?)
    /// Without a `kid`, more than one key of the set could verify the token.
    case ambiguousKey
    /// `exp` has passed (leeway included).
    case expired
    /// `nbf` is still ahead (leeway included).
    case notYetValid
    /// `iat` lies in the future (leeway included).
    case issuedInFuture
    /// `iat` is older than the allowed maximum age.
    case issuedTooLongAgo
    /// `iss` is not the expected issuer.
    case invalidIssuer
    /// `aud` does not contain the expected audience.
    case invalidAudience
}
