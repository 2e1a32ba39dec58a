public import Foundation

/// A fixed window of counted failures.
public struct FailureWindow: Sendable, Equatable {
    /// Failures counted in the window so far.
    public let count: Int
    /// When the window ends (the count starts over with the next failure after it).
    public let endsAt: Date

    /// Builds a window.
    public init(count: Int, endsAt: Date) {
        self.count = count
        self.endsAt = endsAt
    }
}

/// A new request was refused: the user already has as many pending requests of this client as allowed.
public struct PendingRequestLimitReached: Error, Sendable, Equatable {
    /// When the oldest of them expires, so a slot frees at the latest.
    public let retryAt: Date
}

// Rate limits kept in the database, so every authority process on one PostgreSQL sees the same counts.
extension SQLAuthorityStore {
    public func countFailures(keys: [String], window: TimeInterval) async throws -> [String: FailureWindow] {
        for key in keys { try Self.checkIdentifier(key, field: "key") }
        guard window > 0, window <= 86_400 else { throw AuthorityStoreError.invalidInput(field: "window", reason: "outside 0…86400 s") }
        guard !keys.isEmpty else { return [:] }
        let dialect = database.dialect
        return try await transact { tx, now in
            var counted: [String: FailureWindow] = [:]
            for key in Set(keys) {
                if let row = try tx.queryOne("SELECT * FROM rate_counters WHERE key = ?" + dialect.forUpdate, [.text(key)]) {
                    let endsAt = try row.date("window_ends_at")
                    if endsAt > now {
                        let count = try row.int("count") + 1
                        try tx.execute("UPDATE rate_counters SET count = ? WHERE key = ?", [.integer(count), .text(key)])
                        counted[key] = FailureWindow(count: Int(count), endsAt: endsAt)
                        continue
                    }
                }
                let endsAt = now.addingTimeInterval(window)
                try tx.execute(
                    """
                    INSERT INTO rate_counters (key, window_ends_at, count) VALUES (?, ?, 1)
                    ON CONFLICT (key) DO UPDATE SET window_ends_at = excluded.window_ends_at, count = 1
                    """,
                    [.text(key), .date(endsAt)]
                )
                counted[key] = FailureWindow(count: 1, endsAt: SQLTime.date(SQLTime.millis(endsAt)))
            }
            return counted
        }
    }

    public func failureWindows(keys: [String]) async throws -> [String: FailureWindow] {
        for key in keys { try Self.checkIdentifier(key, field: "key") }
        guard !keys.isEmpty else { return [:] }
        return try await read { tx, now in try Self.loadFailureWindows(tx, keys: keys, now: now) }
    }

    /// The running windows of `keys` (checked by the caller), inside a transaction.
    static func loadFailureWindows(_ tx: any SQLTransaction, keys: [String], now: Date) throws -> [String: FailureWindow] {
        var windows: [String: FailureWindow] = [:]
        // One lookup a key: an `IN (…)` list would cost SQLite a temporary b-tree at every call.
        for key in Set(keys) {
            guard let row = try tx.queryOne("SELECT * FROM rate_counters WHERE key = ?", [.text(key)]) else { continue }
            let window = FailureWindow(count: Int(try row.int("count")), endsAt: try row.date("window_ends_at"))
            if window.endsAt > now { windows[key] = window }
        }
        return windows
    }

    /// Inside `createRequest`'s transaction, after the user row was locked.
    static func checkPendingLimit(_ tx: any SQLTransaction, request: CIBARequestRecord, limit: Int, now: Date) throws {
        let row = try tx.queryOne(
            """
            SELECT COUNT(*) AS pending, MIN(expires_at) AS first_expiry FROM ciba_requests
            WHERE subject = ? AND client_id = ? AND state = 'pending' AND expires_at > ?
            """,
            [.text(request.subject), .text(request.clientID), .date(now)]
        )
        guard let row, try row.int("pending") >= Int64(limit) else { return }
        throw PendingRequestLimitReached(retryAt: try row.optionalDate("first_expiry") ?? now)
    }
}
