import Foundation

// The authority's own keys: rotating the device-response key with its rollover statement.
extension SQLAuthorityStore {
    public func rotateDeviceResponseKey(_ key: SigningKeyRecord, replacing current: String?) async throws -> SigningKeyRecord {
        try Self.checkIdentifier(key.keyID, field: "keyID")
        guard key.algorithm == DeviceResponseKeyRing.algorithm, let rollover = key.rollover, let expiresAt = key.rolloverExpiresAt else {
            throw AuthorityStoreError.invalidInput(field: "rollover", reason: "a device-response key comes with its rollover statement")
        }
        try Self.checkLength(rollover, field: "rollover", max: 2048)
        guard !key.encryptedPrivateKey.isEmpty, key.encryptedPrivateKey.count <= 1024 else {
            throw AuthorityStoreError.invalidInput(field: "encryptedPrivateKey", reason: "must be 1…1024 bytes")
        }
        let dialect = database.dialect
        return try await transact(conflict: (.signingKey, key.keyID)) { tx, now in
            let active = try tx.query(
                "SELECT key_id FROM signing_keys WHERE algorithm = ? AND retired_at IS NULL ORDER BY created_at, key_id" + dialect.forUpdate,
                [.text(DeviceResponseKeyRing.algorithm)]
            ).map { try $0.text("key_id") }
            // The statement was signed by `current`: if another process rotated meanwhile, it leads from a retired key.
            guard active.last == current else { throw AuthorityStoreError.conflict(.signingKey, id: key.keyID) }
            // The old private half is erased, not kept: a later theft of the store finds only the statement it signed.
            try tx.execute("UPDATE signing_keys SET retired_at = ?, encrypted_private_key = ? WHERE algorithm = ? AND retired_at IS NULL",
                           [.date(now), .blob([0]), .text(DeviceResponseKeyRing.algorithm)])
            try tx.execute(
                """
                INSERT INTO signing_keys (key_id, algorithm, public_jwk, encrypted_private_key, created_at, retired_at, rollover, rollover_expires_at)
                VALUES (?, ?, ?, ?, ?, NULL, ?, ?)
                """,
                [.text(key.keyID), .text(key.algorithm), .text(key.publicJWK), .blob(key.encryptedPrivateKey), .date(now),
                 .text(rollover), .date(expiresAt)]
            )
            guard let row = try tx.queryOne("SELECT * FROM signing_keys WHERE key_id = ?", [.text(key.keyID)]) else {
                throw AuthorityStoreError.notFound(.signingKey, id: key.keyID)
            }
            return try Self.signingKey(from: row)
        }
    }
}
