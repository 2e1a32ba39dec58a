/// The sizes and constants of one ML-KEM parameter set (FIPS 203 §8, Table 2 and 3).
public struct MLKEMParameters: Sendable, Hashable {
    /// The module rank k.
    public let k: Int
    /// η₁: the CBD width for the secret and (at key generation) error vectors.
    public let eta1: Int
    /// η₂: the CBD width for the encryption noise e₁, e₂.
    public let eta2: Int
    /// d_u: bits per coefficient of the compressed vector u in a ciphertext.
    public let du: Int
    /// d_v: bits per coefficient of the compressed polynomial v in a ciphertext.
    public let dv: Int

    /// Length of an encapsulation key ek in bytes (384k + 32).
    public var encapsulationKeyByteCount: Int { 384 * k + 32 }
    /// Length of an expanded decapsulation key dk in bytes (768k + 96).
    public var decapsulationKeyByteCount: Int { 768 * k + 96 }
    /// Length of a ciphertext in bytes (32(d_u·k + d_v)).
    public var ciphertextByteCount: Int { 32 * (du * k + dv) }
    /// Length of the seed d‖z in bytes.
    public static let seedByteCount = 64
    /// Length of the shared secret K and of the encapsulation randomness m in bytes.
    public static let sharedSecretByteCount = 32

    /// ML-KEM-512 (security category 1).
    public static let mlkem512 = MLKEMParameters(k: 2, eta1: 3, eta2: 2, du: 10, dv: 4)
    /// ML-KEM-768 (security category 3).
    public static let mlkem768 = MLKEMParameters(k: 3, eta1: 2, eta2: 2, du: 10, dv: 4)
    /// ML-KEM-1024 (security category 5).
    public static let mlkem1024 = MLKEMParameters(k: 4, eta1: 2, eta2: 2, du: 11, dv: 5)

    /// Byte length of one compressed polynomial of u.
    var polyCompressedUBytes: Int { 32 * du }
    /// Byte length of the compressed polynomial v.
    var polyCompressedVBytes: Int { 32 * dv }
}
