/// The constants of one ML-DSA parameter set (FIPS 204, Table 1) and the byte sizes they imply.
///
/// Only the three standard sets exist (`MLDSA44.parameters`, `MLDSA65.parameters`, `MLDSA87.parameters`);
/// the initializer is internal so no other combination can reach the implementation.
public struct MLDSAParameters: Sendable, Hashable {
    /// The name used by NIST and the JOSE draft, e.g. `"ML-DSA-65"`.
    public let name: String
    /// Rows of the matrix A (length of t, s2, w).
    public let k: Int
    /// Columns of the matrix A (length of s1, y, z).
    public let l: Int
    /// Bound of the secret coefficients.
    public let eta: Int32
    /// Number of ±1 coefficients of the challenge polynomial.
    public let tau: Int
    /// Collision strength λ in bits; the commitment hash c̃ has λ/4 bytes.
    public let lambda: Int
    /// Range of the mask y: coefficients in (−γ1, γ1].
    public let gamma1: Int32
    /// Low-order rounding range.
    public let gamma2: Int32
    /// Maximum number of 1s in the hint.
    public let omega: Int

    /// τ·η, the bound on ‖c·s‖∞.
    public var beta: Int32 { Int32(tau) * eta }
    /// Size of the commitment hash c̃.
    public var commitmentHashByteCount: Int { lambda / 4 }
    /// Bits per coefficient of an encoded s1/s2 coefficient (η = 2 → 3, η = 4 → 4).
    var etaBits: Int { eta == 2 ? 3 : 4 }
    /// Bits per coefficient of an encoded z (γ1 = 2^17 → 18, γ1 = 2^19 → 20).
    var gamma1Bits: Int { gamma1 == 1 << 17 ? 18 : 20 }
    /// Bits per coefficient of an encoded w1 (γ2 = (q−1)/88 → 6, γ2 = (q−1)/32 → 4).
    var w1Bits: Int { gamma2 == (MLDSAField.q - 1) / 88 ? 6 : 4 }

    /// Bytes of an encoded public key: ρ ‖ t1 (10 bits per coefficient).
    public var publicKeyByteCount: Int { 32 + k * 320 }
    /// Bytes of the expanded private key encoding: ρ ‖ K ‖ tr ‖ s1 ‖ s2 ‖ t0.
    public var expandedPrivateKeyByteCount: Int { 128 + (l + k) * 32 * etaBits + k * 416 }
    /// Bytes of a signature: c̃ ‖ z ‖ h.
    public var signatureByteCount: Int { commitmentHashByteCount + l * 32 * gamma1Bits + omega + k }
    /// Bytes of the packed w1 hashed into c̃.
    var w1PackedByteCount: Int { k * 32 * w1Bits }
    /// Bytes of one packed polynomial of s1/s2.
    var etaPolyByteCount: Int { 32 * etaBits }
    /// Bytes of one packed polynomial of z.
    var zPolyByteCount: Int { 32 * gamma1Bits }

    static let mldsa44 = MLDSAParameters(
        name: "ML-DSA-44", k: 4, l: 4, eta: 2, tau: 39, lambda: 128,
        gamma1: 1 << 17, gamma2: (MLDSAField.q - 1) / 88, omega: 80)
    static let mldsa65 = MLDSAParameters(
        name: "ML-DSA-65", k: 6, l: 5, eta: 4, tau: 49, lambda: 192,
        gamma1: 1 << 19, gamma2: (MLDSAField.q - 1) / 32, omega: 55)
    static let mldsa87 = MLDSAParameters(
        name: "ML-DSA-87", k: 8, l: 7, eta: 2, tau: 60, lambda: 256,
        gamma1: 1 << 19, gamma2: (MLDSAField.q - 1) / 32, omega: 75)
}
