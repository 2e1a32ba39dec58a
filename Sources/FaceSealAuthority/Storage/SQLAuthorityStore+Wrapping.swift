import Foundation

// The one-time move of secrets at rest from the raw master key to the keys derived for their purpose.
extension SQLAuthorityStore {
    public func rewrapLegacySecrets(share: @escaping @Sendable (FaceTokenRecord) throws -> [UInt8],
                                    signingKey: @escaping @Sendable (SigningKeyRecord) throws -> [UInt8]) async throws -> Int {
        let dialect = database.dialect
        return try await transact { tx, _ in
            var count = 0
            for row in try tx.query("SELECT * FROM face_tokens WHERE wrap_version = 0" + dialect.forUpdate, []) {
                let token = try Self.faceToken(from: row)
                try tx.execute("UPDATE face_tokens SET encrypted_server_share = ?, wrap_version = 1 WHERE subject = ?",
                               [.blob(try share(token)), .text(token.subject)])
                count += 1
            }
            for row in try tx.query("SELECT * FROM signing_keys WHERE wrap_version = 0" + dialect.forUpdate, []) {
                let key = try Self.signingKey(from: row)
                try tx.execute("UPDATE signing_keys SET encrypted_private_key = ?, wrap_version = 1 WHERE key_id = ?",
                               [.blob(try signingKey(key)), .text(key.keyID)])
                count += 1
            }
            return count
        }
    }
}
