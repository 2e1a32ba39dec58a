/// Errors of the classical primitives (OpenSSL's hashes, KDFs, AES-GCM, P-256, RSA; libsodium's Ed25519).
public enum CryptoError: Error, Equatable, Sendable {
    /// A key had the wrong number of bytes.
    case incorrectKeySize(expected: Int, actual: Int)
    /// A nonce, tag, output length or other parameter was out of range.
    case incorrectParameterSize(String)
    /// An AEAD tag did not verify: wrong key, nonce or AAD, or the data was modified.
    case authenticationFailure
    /// A key encoding (raw, x963, SPKI DER, PKCS#8 DER, JWK numbers) could not be parsed or is not a valid key.
    case invalidKeyRepresentation(String)
    /// A signature encoding (raw r‖s, DER) could not be parsed.
    case invalidSignatureEncoding
    /// OpenSSL refused an operation with valid-looking input; the text is its error queue.
    case underlyingLibraryFailure(String)
}
