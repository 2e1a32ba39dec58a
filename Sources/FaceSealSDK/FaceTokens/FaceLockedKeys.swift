public import FaceSealCrypto
public import FaceSealWire
import Foundation

/// The face-locked key derivation of SPEC §5.2, exactly:
/// `seed = HKDF-SHA256(ikm: master, salt: "faceseal/key/v1", info: alg ‖ 0 ‖ clientId ‖ 0 ‖ context)` (32 bytes),
/// then `ML-DSA KeyGen(ξ = seed)` or `ML-KEM KeyGen(d ‖ z = HKDF-expand(seed, 64))` (empty info).
///
/// Public so an application, a test or the authority's tooling can recompute a user's public key from a
/// master it holds (tests do; nothing in production holds a master outside an opened token).
public enum FaceLockedKeys {
    /// The HKDF salt of the derivation.
    public static let salt = Array("faceseal/key/v1".utf8)

    /// The 32-byte seed for `algorithm`, application `clientId` and `context`.
    public static func seed(master: SecretBytes, algorithm: KeyAlgorithm, clientId: String,
                            context: [UInt8]) throws(KeyOperationError) -> SymmetricKey {
        guard master.count == 32 else { throw .internalFailure("a master secret is not 32 bytes") }
        let info = Array(algorithm.rawValue.utf8) + [0] + Array(clientId.utf8) + [0] + context
        do {
            return try HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(secret: master), salt: salt, info: info,
                                              outputByteCount: 32)
        } catch {
            throw .internalFailure("key derivation failed")
        }
    }

    /// The ML-DSA-65 private key for a seed (ξ = seed).
    public static func mlDSA65(seed: SymmetricKey) throws(KeyOperationError) -> MLDSA65.PrivateKey {
        do {
            return try seed.withUnsafeBytes { raw throws(MLDSAError) in try MLDSA65.PrivateKey(seedRepresentation: raw) }
        } catch {
            throw .internalFailure("ML-DSA key generation failed")
        }
    }

    /// d ‖ z for ML-KEM: HKDF-expand(seed, 64), empty info.
    static func kemSeed(_ seed: SymmetricKey) throws(KeyOperationError) -> SymmetricKey {
        do {
            return try HKDF<SHA256>.expand(pseudoRandomKey: seed, info: [UInt8](), outputByteCount: 64)
        } catch {
            throw .internalFailure("key derivation failed")
        }
    }

    /// The ML-KEM private key for a seed, for the parameter set `Set`.
    static func mlKEM<Set: MLKEMParameterSet>(_ type: Set.Type, seed: SymmetricKey) throws(KeyOperationError) -> MLKEMPrivateKey<Set> {
        let dz = try kemSeed(seed)
        do {
            return try dz.withUnsafeBytes { raw in try MLKEMPrivateKey<Set>(seedRepresentation: raw) }
        } catch {
            throw .internalFailure("ML-KEM key generation failed")
        }
    }

    /// The encoded public key of `algorithm` for a seed.
    public static func publicKey(_ algorithm: KeyAlgorithm, seed: SymmetricKey) throws(KeyOperationError) -> [UInt8] {
        do {
            switch algorithm {
            case .mlDSA44:
                return Array(try seed.withUnsafeBytes { raw throws(MLDSAError) in try MLDSA44.PrivateKey(seedRepresentation: raw) }
                    .publicKey.rawRepresentation)
            case .mlDSA65:
                return Array(try mlDSA65(seed: seed).publicKey.rawRepresentation)
            case .mlDSA87:
                return Array(try seed.withUnsafeBytes { raw throws(MLDSAError) in try MLDSA87.PrivateKey(seedRepresentation: raw) }
                    .publicKey.rawRepresentation)
            case .mlKEM512:
                return Array(try mlKEM(MLKEM512.self, seed: seed).publicKey.rawRepresentation)
            case .mlKEM768:
                return Array(try mlKEM(MLKEM768.self, seed: seed).publicKey.rawRepresentation)
            case .mlKEM1024:
                return Array(try mlKEM(MLKEM1024.self, seed: seed).publicKey.rawRepresentation)
            }
        } catch let error as KeyOperationError {
            throw error
        } catch {
            throw .internalFailure("key generation failed")
        }
    }

    /// ML-KEM decapsulation of `ciphertext` with the key of `algorithm` (an ML-KEM); a wrong length is `invalidData`.
    static func decapsulate(_ algorithm: KeyAlgorithm, seed: SymmetricKey, ciphertext: [UInt8]) throws(KeyOperationError) -> SecretBytes {
        do {
            let key: SymmetricKey
            switch algorithm {
            case .mlKEM512: key = try mlKEM(MLKEM512.self, seed: seed).decapsulate(try checked(ciphertext, MLKEM512.parameters))
            case .mlKEM768: key = try mlKEM(MLKEM768.self, seed: seed).decapsulate(try checked(ciphertext, MLKEM768.parameters))
            case .mlKEM1024: key = try mlKEM(MLKEM1024.self, seed: seed).decapsulate(try checked(ciphertext, MLKEM1024.parameters))
            default: throw KeyOperationError.notPermitted
            }
            return key.secret
        } catch let error as KeyOperationError {
            throw error
        } catch {
            throw .internalFailure("decapsulation failed")
        }
    }

    private static func checked(_ ciphertext: [UInt8], _ parameters: MLKEMParameters) throws(KeyOperationError) -> [UInt8] {
        guard ciphertext.count == parameters.ciphertextByteCount else {
            throw .invalidData("the ciphertext is \(ciphertext.count) bytes, not \(parameters.ciphertextByteCount)")
        }
        return ciphertext
    }

    /// `key_id` of a delivery: base64url SHA-256 of the ML-DSA public key.
    public static func keyId(mlDSAPublicKey: [UInt8]) -> String {
        Base64URL.encode(SHA256.hash(data: mlDSAPublicKey).bytes)
    }
}
