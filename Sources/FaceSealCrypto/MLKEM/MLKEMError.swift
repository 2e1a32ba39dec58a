/// Errors of ML-KEM key import, encapsulation and decapsulation.
public enum MLKEMError: Error, Sendable, Equatable {
    /// A key's encoding has the wrong length for the parameter set.
    case invalidKeyLength(expected: Int, actual: Int)
    /// The FIPS 203 §7.2 encapsulation-key check (a coefficient ≥ q) or the §7.3 decapsulation-key
    /// check (H(ek) stored in dk does not match) failed, or a seed does not produce the given public key.
    case keyCheckFailed
    /// A ciphertext has the wrong length for the parameter set.
    case invalidCiphertextLength(expected: Int, actual: Int)
    /// A seed d‖z (64 bytes), encapsulation randomness m (32 bytes) or a 32-byte shared-secret output
    /// buffer (raw `MLKEM` entry points) has the wrong length.
    case invalidSeedLength(expected: Int, actual: Int)
}
