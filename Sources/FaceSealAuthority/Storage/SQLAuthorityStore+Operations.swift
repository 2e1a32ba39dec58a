import Foundation

// What `/readyz` and `/metrics` read from the database.
extension SQLAuthorityStore {
    public func schemaVersion() async throws -> Int {
        try await readStatement { tx, _ in
            Int(try tx.queryOne("SELECT MAX(version) AS newest FROM schema_migrations", []).flatMap { try $0.optionalInt("newest") } ?? 0)
        }
    }

    public func pendingRequestCount() async throws -> Int {
        try await readStatement { tx, now in
            Int(try tx.queryOne("SELECT COUNT(*) AS pending FROM ciba_requests WHERE state = 'pending' AND expires_at > ?",
                                [.date(now)]).map { try $0.int("pending") } ?? 0)
        }
    }
}
