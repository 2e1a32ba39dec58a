/// Why an ML-DSA operation refused its input.
public enum MLDSAError: Error, Equatable, Sendable {
    /// A seed ξ must be exactly 32 bytes.
    case invalidSeedLength(expected: Int, actual: Int)
    /// An encoded public key has the wrong size for its parameter set.
    case invalidPublicKeyLength(expected: Int, actual: Int)
    /// An expanded private key encoding has the wrong size for its parameter set.
    case invalidPrivateKeyLength(expected: Int, actual: Int)
    /// An expanded private key encoding is malformed: a secret coefficient outside [−η, η], or t0/tr
    /// inconsistent with the rest of the key.
    case invalidPrivateKey
    /// The public key given with a seed is not the one the seed generates.
    case publicKeyMismatch
    /// FIPS 204 limits the context string to 255 bytes.
    case contextTooLong(length: Int)
    /// The signing randomness rnd must be exactly 32 bytes.
    case invalidRandomnessLength(expected: Int, actual: Int)
    /// An external message representative μ must be exactly 64 bytes.
    case invalidMessageRepresentativeLength(expected: Int, actual: Int)
    /// A HashML-DSA digest PH(M) has the wrong size for its hash function.
    case invalidDigestLength(expected: Int, actual: Int)
    /// A signature has the wrong size for its parameter set.
    case invalidSignatureLength(expected: Int, actual: Int)
    /// The signature does not verify (malformed hint, z out of range, or commitment mismatch).
    case invalidSignature
}
