import FaceSealCrypto
import Foundation

extension Authority {
    /// Re-wraps the secrets stored before the master key became HKDF input only (schema version 5 marked them):
    /// each face token's server share moves from the raw master key to the share-wrapping key, each ID-token signing
    /// key to the signing-key-wrapping key, with the same associated data. Idempotent and safe to run from several
    /// processes at once; `prepareSigningKeys()` runs it before the signing keys are loaded. Returns how many secrets
    /// it re-wrapped.
    /// - Throws: when a legacy secret does not open under this master key (the wrong `--master-key-file`).
    @discardableResult
    public func migrateWrappedSecrets() async throws -> Int {
        let keys = self.keys
        return try await store.rewrapLegacySecrets(
            share: { token in
                try Self.rewrap(token.encryptedServerShare, from: keys.legacyWrappingKey, to: keys.shareWrappingKey,
                                aad: FaceTokenCustody.shareAAD(subject: token.subject, tokenID: token.tokenID, generation: token.generation))
            },
            signingKey: { record in
                try Self.rewrap(record.encryptedPrivateKey, from: keys.legacyWrappingKey, to: keys.signingKeyWrappingKey,
                                aad: SigningKeySeal.associatedData(keyID: record.keyID, algorithm: record.algorithm))
            })
    }

    /// Opens an AES-256-GCM box (nonce ‖ ciphertext ‖ tag) under `old` and seals its content under `new`.
    private static func rewrap(_ combined: [UInt8], from old: SymmetricKey, to new: SymmetricKey, aad: [UInt8]) throws -> [UInt8] {
        let secret = try AES.GCM.openSecret(AES.GCM.SealedBox(combined: combined), using: old, authenticating: aad)
        let box = try secret.withUnsafeBytes { try AES.GCM.seal($0, using: new, authenticating: aad) }
        return [UInt8](box.combined)
    }
}
