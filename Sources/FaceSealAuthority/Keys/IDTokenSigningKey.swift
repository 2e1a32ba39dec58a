import FaceSealCrypto
import Foundation

/// One of the authority's ID-token signing keys with its private half in memory.
struct IDTokenSigningKey: Sendable {
    /// The JWK `kid`: the RFC 7638 thumbprint of the public key.
    let keyID: String
    /// Its JWS algorithm.
    let algorithm: JWSAlgorithm
    /// Signs JWS signing inputs.
    let signer: any JWSSigner
    /// The public key as published at `/jwks` (`kid` and `use: sig` set).
    let publicJWK: JWK

    /// The algorithms the authority signs ID tokens with (SPEC §4.3): RS256 first, as OpenID Connect requires it.
    static let algorithms: [JWSAlgorithm] = [.rs256, .edDSA, .es256, .mlDSA65]

    /// A fresh key of `algorithm` (RSA keys are 2048 bits) and its private key bytes, to be sealed for storage.
    static func generate(_ algorithm: JWSAlgorithm) throws -> (key: IDTokenSigningKey, privateKey: SecretBytes) {
        switch algorithm {
        case .rs256:
            let key = try RSA.Signing.PrivateKey(keySize: 2048)
            return (try make(signer: key, jwk: JWK(publicKey: key.publicKey)), key.secretRepresentation)
        case .edDSA:
            let key = Curve25519.Signing.PrivateKey()
            return (try make(signer: key, jwk: JWK(publicKey: key.publicKey)), key.secretRepresentation)
        case .es256:
            let key = P256.Signing.PrivateKey()
            return (try make(signer: key, jwk: JWK(publicKey: key.publicKey)), key.secretRepresentation)
        case .mlDSA65:
            let key = MLDSA65.PrivateKey()
            let jwk = try JWK(mlDSA65PublicKey: key.publicKey.rawRepresentation)
            return (try make(signer: key, jwk: jwk), SecretBytes(key.seedRepresentation))
        }
    }

    /// Rebuilds a key from its stored private bytes (DER for RSA, the raw scalar or seed otherwise) and checks
    /// that it matches the stored public JWK, so a swapped or corrupted record is never used to sign.
    static func restore(_ algorithm: JWSAlgorithm, privateKey: SecretBytes, publicJWK: JWK) throws -> IDTokenSigningKey {
        let key: IDTokenSigningKey
        switch algorithm {
        case .rs256:
            let signer = try privateKey.withUnsafeBytes { try RSA.Signing.PrivateKey(derRepresentation: $0) }
            key = try make(signer: signer, jwk: JWK(publicKey: signer.publicKey))
        case .edDSA:
            let signer = try privateKey.withUnsafeBytes { try Curve25519.Signing.PrivateKey(rawRepresentation: $0) }
            key = try make(signer: signer, jwk: JWK(publicKey: signer.publicKey))
        case .es256:
            let signer = try privateKey.withUnsafeBytes { try P256.Signing.PrivateKey(rawRepresentation: $0) }
            key = try make(signer: signer, jwk: JWK(publicKey: signer.publicKey))
        case .mlDSA65:
            let signer = try privateKey.withUnsafeBytes { try MLDSA65.PrivateKey(seedRepresentation: $0) }
            key = try make(signer: signer, jwk: JWK(mlDSA65PublicKey: signer.publicKey.rawRepresentation))
        }
        guard key.keyID == publicJWK.thumbprintBase64URL, key.keyID == publicJWK.keyID else {
            throw SigningKeyError.publicKeyMismatch(keyID: publicJWK.keyID ?? "")
        }
        return key
    }

    private static func make(signer: any JWSSigner, jwk: JWK) throws -> IDTokenSigningKey {
        var published = jwk
        published.keyID = jwk.thumbprintBase64URL
        published.use = "sig"
        return IDTokenSigningKey(keyID: published.keyID ?? "", algorithm: signer.algorithm, signer: signer, publicJWK: published)
    }
}

/// Why a stored signing key could not be used.
public enum SigningKeyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The record names an algorithm the authority does not sign with.
    case unsupportedAlgorithm(String)
    /// The private key does not decrypt under the master key (another master key, or a tampered record).
    case undecryptable(keyID: String)
    /// The decrypted private key does not belong to the stored public key.
    case publicKeyMismatch(keyID: String)
    /// The stored public JWK does not parse.
    case malformedPublicKey(keyID: String)

    /// A message for logs (names the key, never material).
    public var description: String {
        switch self {
        case .unsupportedAlgorithm(let alg): "signing key algorithm \(alg) is not supported"
        case .undecryptable(let kid): "signing key \(kid) does not decrypt under this master key"
        case .publicKeyMismatch(let kid): "signing key \(kid): private key does not match its public key"
        case .malformedPublicKey(let kid): "signing key \(kid): stored public JWK is malformed"
        }
    }
}

/// Seals signing keys for the store: AES-256-GCM under the master key, the key id and algorithm as associated data
/// (so a sealed key cannot be moved to another record).
enum SigningKeySeal {
    static func associatedData(keyID: String, algorithm: String) -> [UInt8] {
        Array("faceseal/signing-key/v1\u{0}\(algorithm)\u{0}\(keyID)".utf8)
    }

    static func seal(_ privateKey: SecretBytes, keyID: String, algorithm: JWSAlgorithm, masterKey: SymmetricKey) throws -> [UInt8] {
        try seal(privateKey, keyID: keyID, algorithmName: algorithm.rawValue, masterKey: masterKey)
    }

    /// Seals under the record's `algorithm` column as it is stored (the device-response key's is not a JWS name).
    static func seal(_ privateKey: SecretBytes, keyID: String, algorithmName: String, masterKey: SymmetricKey) throws -> [UInt8] {
        let aad = associatedData(keyID: keyID, algorithm: algorithmName)
        let box = try privateKey.withUnsafeBytes { try AES.GCM.seal($0, using: masterKey, authenticating: aad) }
        return [UInt8](box.combined)
    }

    static func open(_ record: SigningKeyRecord, masterKey: SymmetricKey) throws -> SecretBytes {
        do {
            let box = try AES.GCM.SealedBox(combined: record.encryptedPrivateKey)
            return try AES.GCM.openSecret(box, using: masterKey,
                                          authenticating: associatedData(keyID: record.keyID, algorithm: record.algorithm))
        } catch {
            throw SigningKeyError.undecryptable(keyID: record.keyID)
        }
    }
}
