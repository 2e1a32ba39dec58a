public import Foundation

// The jti replay cache, the link outbox, audit events and the authority's signing keys.
extension SQLAuthorityStore {
    // MARK: Replay cache

    public func registerJTI(_ jti: String, expiresAt: Date) async throws -> Bool {
        do {
            return try await transact(registering: JTIRegistration(jti: jti, expiresAt: expiresAt)) { _, _ in true }
        } catch is ReplayedRequest {
            return false
        }
    }

    /// Remembers `replay` inside a transaction (its `jti` checked by the caller); a replay, that is a `jti` held by an
    /// entry that has not expired, throws `ReplayedRequest` before anything commits. An expired entry of the same `jti`
    /// is taken over, so the answer does not depend on when expired entries are deleted: at most ten times a second per
    /// process, by the first registration after each tenth of a second began, the oldest `jtiSweepLimit` (a statement
    /// at every registration cost more than the rows it deleted; a second's worth at once held every write behind it
    /// for milliseconds). The statements go with the transaction's next statement or its commit
    /// (`SQLTransaction.executeDeferred`, one round trip on PostgreSQL), whose call then throws the `ReplayedRequest`;
    /// on SQLite this call does.
    func insertJTI(_ tx: any SQLTransaction, _ replay: JTIRegistration, now: Date) throws {
        guard replay.expiresAt > now else {
            throw AuthorityStoreError.invalidInput(field: "expiresAt", reason: "already passed")
        }
        if takeJTISweep(at: now) { try tx.executeDeferred(Self.jtiSweep(database.dialect), [.date(now)]) }
        let insert = """
            INSERT INTO device_jtis (jti, expires_at) VALUES (?, ?)
            ON CONFLICT (jti) DO UPDATE SET expires_at = excluded.expires_at WHERE device_jtis.expires_at <= ?
            """
        let jti = replay.jti
        try tx.executeDeferred(insert, [.text(jti), .date(replay.expiresAt), .date(now)]) { stored in
            if stored != 1 { throw ReplayedRequest(jti: jti) }
        }
    }

    /// Most expired replay-cache entries one sweep deletes: ten sweeps a second keep up with 5,000 device requests a
    /// second; a backlog (after a restart) goes over the next sweeps instead of in one long transaction.
    static let jtiSweepLimit = 500
    /// Milliseconds between two sweeps of the replay cache in one process.
    static let jtiSweepInterval: Int64 = 100

    /// Deletes the oldest expired replay-cache entries, at most `jtiSweepLimit` (found through `device_jtis_by_expiry`).
    /// On PostgreSQL rows another process's sweep holds are skipped rather than waited for.
    static func jtiSweep(_ dialect: SQLDialect) -> String {
        "DELETE FROM device_jtis WHERE jti IN (SELECT jti FROM device_jtis WHERE expires_at <= ? ORDER BY expires_at LIMIT \(jtiSweepLimit)"
            + (dialect == .postgres ? " FOR UPDATE SKIP LOCKED)" : ")")
    }

    /// Whether the registration at `now` sweeps the expired entries: the first one `jtiSweepInterval` or more after the
    /// last sweep (or after the clock went back). A sweep rolled back with its transaction is made up by the next.
    private func takeJTISweep(at now: Date) -> Bool {
        let millis = SQLTime.millis(now)
        let due = nextJTISweep.load(ordering: .relaxed)
        // Wrapping arithmetic: the clock's instants are far from the bounds, and a wrapped bound only sweeps once more.
        guard millis >= due || millis < due &- Self.jtiSweepInterval else { return false }
        return nextJTISweep.compareExchange(expected: due, desired: millis &+ Self.jtiSweepInterval, ordering: .relaxed).exchanged
    }

    // MARK: Link outbox

    static func outboxLink(from row: SQLRow) throws -> OutboxLink {
        OutboxLink(
            deviceID: try row.text("device_id"), link: try row.text("link"), authReqID: try row.optionalText("auth_req_id"),
            expiresAt: try row.date("expires_at"), sequence: try row.int("sequence"), createdAt: try row.date("created_at")
        )
    }

    public func enqueueLink(_ link: OutboxLink) async throws -> OutboxLink {
        try Self.checkLink(link.link)
        let channel = database.outboxChannel
        return try await transact { tx, now in
            guard try tx.queryOne("SELECT id FROM devices WHERE id = ?", [.text(link.deviceID)]) != nil else {
                throw AuthorityStoreError.notFound(.device, id: link.deviceID)
            }
            return try Self.insertLink(tx, link, channel: channel, now: now)
        }
    }

    static func checkLink(_ link: String) throws {
        guard !link.isEmpty else { throw AuthorityStoreError.invalidInput(field: "link", reason: "empty") }
        try checkLength(link, field: "link", max: 16 * 1024)
    }

    /// Queues `link` inside a transaction (its device is known to exist); announced on `channel` at commit.
    static func insertLink(_ tx: any SQLTransaction, _ link: OutboxLink, channel: String?, now: Date) throws -> OutboxLink {
        guard link.expiresAt > now else { throw AuthorityStoreError.invalidInput(field: "expiresAt", reason: "already passed") }
        guard let row = try tx.queryOne(
            "INSERT INTO link_outbox (device_id, link, auth_req_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?) RETURNING sequence",
            [.text(link.deviceID), .text(link.link), .optionalText(link.authReqID), .date(now), .date(link.expiresAt)]
        ) else {
            throw AuthorityStoreError.database("INSERT … RETURNING gave no row")
        }
        // Delivered to every listening process when (and only if) this transaction commits.
        if let channel { try tx.executeDeferred("SELECT pg_notify(?, ?)", [.text(channel), .text(link.deviceID)]) }
        var stored = link
        stored.sequence = try row.int("sequence")
        stored.createdAt = SQLTime.date(SQLTime.millis(now))
        return stored
    }

    public func observeQueuedLinks(_ handler: @escaping @Sendable (_ deviceID: String) -> Void) async {
        await database.observeOutbox(handler)
    }

    public func links(deviceID: String, afterSequence: Int64, limit: Int) async throws -> [OutboxLink] {
        guard (1...1000).contains(limit) else { throw AuthorityStoreError.invalidInput(field: "limit", reason: "outside 1…1000") }
        return try await readStatement { tx, now in
            try tx.query(
                "SELECT * FROM link_outbox WHERE device_id = ? AND sequence > ? AND expires_at > ? ORDER BY sequence LIMIT ?",
                [.text(deviceID), .integer(afterSequence), .date(now), .int(limit)]
            ).map(Self.outboxLink(from:))
        }
    }

    public func acknowledgeLinks(deviceID: String, throughSequence: Int64) async throws -> Int {
        try await transact { tx, now in
            try tx.execute(
                "DELETE FROM link_outbox WHERE device_id = ? AND (sequence <= ? OR expires_at <= ?)",
                [.text(deviceID), .integer(throughSequence), .date(now)]
            )
        }
    }

    public func takeLinks(deviceID: String, limit: Int, registering replay: JTIRegistration?) async throws -> [OutboxLink] {
        guard (1...1000).contains(limit) else { throw AuthorityStoreError.invalidInput(field: "limit", reason: "outside 1…1000") }
        return try await transact(registering: replay) { tx, now in
            let links = try tx.query(
                "SELECT * FROM link_outbox WHERE device_id = ? AND expires_at > ? ORDER BY sequence LIMIT ?",
                [.text(deviceID), .date(now), .int(limit)]
            ).map(Self.outboxLink(from:))
            if let last = links.last {
                try tx.executeDeferred(
                    "DELETE FROM link_outbox WHERE device_id = ? AND (sequence <= ? OR expires_at <= ?)",
                    [.text(deviceID), .integer(last.sequence), .date(now)]
                )
            }
            return links
        }
    }

    // MARK: Audit

    static func auditEvent(from row: SQLRow) throws -> AuditEvent {
        AuditEvent(
            tenantID: try row.optionalText("tenant_id"), kind: try row.text("kind"), actor: try row.optionalText("actor"),
            target: try row.optionalText("target"), detailJSON: try row.text("detail_json"), sequence: try row.int("sequence"),
            at: try row.date("at")
        )
    }

    public func appendAudit(_ event: AuditEvent) async throws -> AuditEvent {
        try Self.checkIdentifier(event.kind, field: "kind")
        try Self.checkLength(event.detailJSON, field: "detailJSON", max: 64 * 1024)
        if let actor = event.actor { try Self.checkLength(actor, field: "actor", max: 512) }
        if let target = event.target { try Self.checkLength(target, field: "target", max: 512) }
        return try await transact { tx, now in
            guard let row = try tx.queryOne(
                "INSERT INTO audit_events (tenant_id, at, kind, actor, target, detail_json) VALUES (?, ?, ?, ?, ?, ?) RETURNING sequence",
                [.optionalText(event.tenantID), .date(now), .text(event.kind), .optionalText(event.actor),
                 .optionalText(event.target), .text(event.detailJSON)]
            ) else {
                throw AuthorityStoreError.database("INSERT … RETURNING gave no row")
            }
            var stored = event
            stored.sequence = try row.int("sequence")
            stored.at = SQLTime.date(SQLTime.millis(now))
            return stored
        }
    }

    public func auditEvents(tenantID: String?, beforeSequence: Int64?, limit: Int) async throws -> [AuditEvent] {
        guard (1...1000).contains(limit) else { throw AuthorityStoreError.invalidInput(field: "limit", reason: "outside 1…1000") }
        return try await readStatement { tx, _ in
            let before = beforeSequence ?? Int64.max
            if let tenantID {
                return try tx.query(
                    "SELECT * FROM audit_events WHERE tenant_id = ? AND sequence < ? ORDER BY sequence DESC LIMIT ?",
                    [.text(tenantID), .integer(before), .int(limit)]
                ).map(Self.auditEvent(from:))
            }
            return try tx.query(
                "SELECT * FROM audit_events WHERE tenant_id IS NULL AND sequence < ? ORDER BY sequence DESC LIMIT ?",
                [.integer(before), .int(limit)]
            ).map(Self.auditEvent(from:))
        }
    }

    public func purgeAuditEvents(olderThan retention: TimeInterval, limit: Int) async throws -> Int {
        try Self.checkPurge(retention: retention, limit: limit)
        return try await transact { tx, now in
            // The oldest events by their key, cut at the first one too young: events are numbered as they are recorded, so
            // the old ones are a prefix, deleted as one range of the key. (One recorded out of order waits for a later sweep.)
            let cutoff = SQLTime.millis(now.addingTimeInterval(-retention))
            var last: Int64?
            for row in try tx.query("SELECT sequence, at FROM audit_events ORDER BY sequence LIMIT ?", [.int(limit)]) {
                guard try row.int("at") <= cutoff else { break }
                last = try row.int("sequence")
            }
            guard let last else { return 0 }
            return try tx.execute("DELETE FROM audit_events WHERE sequence <= ? AND at <= ?", [.integer(last), .integer(cutoff)])
        }
    }

    // MARK: Signing keys

    static func signingKey(from row: SQLRow) throws -> SigningKeyRecord {
        var key = SigningKeyRecord(
            keyID: try row.text("key_id"), algorithm: try row.text("algorithm"), publicJWK: try row.text("public_jwk"),
            encryptedPrivateKey: try row.blob("encrypted_private_key"), createdAt: try row.date("created_at"),
            retiredAt: try row.optionalDate("retired_at")
        )
        key.rollover = try row.optionalText("rollover")
        key.rolloverExpiresAt = try row.optionalDate("rollover_expires_at")
        return key
    }

    public func addSigningKey(_ key: SigningKeyRecord) async throws -> SigningKeyRecord {
        try Self.checkIdentifier(key.keyID, field: "keyID")
        try Self.checkIdentifier(key.algorithm, field: "algorithm")
        guard !key.publicJWK.isEmpty else { throw AuthorityStoreError.invalidInput(field: "publicJWK", reason: "empty") }
        try Self.checkLength(key.publicJWK, field: "publicJWK", max: 64 * 1024)
        guard !key.encryptedPrivateKey.isEmpty, key.encryptedPrivateKey.count <= 64 * 1024 else {
            throw AuthorityStoreError.invalidInput(field: "encryptedPrivateKey", reason: "must be 1 byte…64 KiB")
        }
        return try await transact(conflict: (.signingKey, key.keyID)) { tx, now in
            try tx.execute(
                "INSERT INTO signing_keys (key_id, algorithm, public_jwk, encrypted_private_key, created_at, retired_at) VALUES (?, ?, ?, ?, ?, NULL)",
                [.text(key.keyID), .text(key.algorithm), .text(key.publicJWK), .blob(key.encryptedPrivateKey), .date(now)]
            )
            guard let row = try tx.queryOne("SELECT * FROM signing_keys WHERE key_id = ?", [.text(key.keyID)]) else {
                throw AuthorityStoreError.notFound(.signingKey, id: key.keyID)
            }
            return try Self.signingKey(from: row)
        }
    }

    public func signingKeys() async throws -> [SigningKeyRecord] {
        try await readStatement { tx, _ in
            try tx.query("SELECT * FROM signing_keys ORDER BY created_at, key_id", []).map(Self.signingKey(from:))
        }
    }

    public func retireSigningKey(keyID: String) async throws -> SigningKeyRecord {
        try await transact { tx, now in
            try tx.execute("UPDATE signing_keys SET retired_at = ? WHERE key_id = ? AND retired_at IS NULL", [.date(now), .text(keyID)])
            guard let row = try tx.queryOne("SELECT * FROM signing_keys WHERE key_id = ?", [.text(keyID)]) else {
                throw AuthorityStoreError.notFound(.signingKey, id: keyID)
            }
            return try Self.signingKey(from: row)
        }
    }
}
