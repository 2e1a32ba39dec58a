import FaceSealTestSupport
import FaceSealWire
import Foundation
import Testing
@testable import FaceSealAuthority

/// Migration 12 (docs/PERFORMANCE.md, "Session 7: the store"): the replay cache and the token downloads keyed by their
/// primary key alone, and indexes that hold only the rows their lookups ask for. An existing database keeps its rows,
/// and the lookups of a sign-in use the indexes meant for them.
@Suite("Storage: migration 12, fewer pages per sign-in")
struct PageCostMigrationTests {
    @Test("a version 11 database keeps its replay cache, downloads and audit through the migration", arguments: StoreBackend.underTest)
    func existingRowsSurvive(backend: StoreBackend) async throws {
        try await withScratch(backend) { scratch in
            let clock = ManualClock()
            let now = SQLTime.millis(clock.now())
            let raw = try await scratch.openRaw()
            try await SchemaMigrator.migrate(raw, clock: clock, migrations: SchemaMigrator.migrations.filter { $0.version <= 11 })
            try await raw.transaction { tx in
                try tx.execute("""
                    INSERT INTO tenants (id, name, key_algorithms, attempts_max, liveness_required, password_mode, password_min_length,
                        one_device_per_user, request_lifetime_seconds, created_at)
                    VALUES ('acme', 'Acme', 'ML-DSA-65', 3, 1, 'optional', 8, 0, 300, 0)
                    """, [])
                try tx.execute("INSERT INTO users (subject, tenant_id, email, created_at) VALUES ('user-1', 'acme', 'user-1@example.com', 0)", [])
                try tx.execute("""
                    INSERT INTO applications (client_id, tenant_id, label, secret_hash, branding_json, delivery_mode, id_token_alg, created_at)
                    VALUES ('app-1', 'acme', 'App', ?, '{}', 'poll', 'RS256', 0)
                    """, [.blob([1, 2, 3])])
                for (id, state) in [("req-1", "pending"), ("req-2", "completed")] {
                    try tx.execute("""
                        INSERT INTO ciba_requests (auth_req_id, tenant_id, client_id, subject, kind, scope, state, created_at, expires_at,
                            interval_seconds, attempts)
                        VALUES (?, 'acme', 'app-1', 'user-1', 'login', 'openid', ?, ?, ?, 5, 0)
                        """, [.text(id), .text(state), .integer(now), .integer(now + 300_000)])
                }
                try tx.execute("INSERT INTO token_downloads (auth_req_id, key_id, generation, downloaded_at) VALUES ('req-1', 'key-1', 4, ?)",
                               [.integer(now)])
                try tx.execute("INSERT INTO device_jtis (jti, expires_at) VALUES ('jti-live', ?), ('jti-old', ?)",
                               [.integer(now + 60_000), .integer(now - 1_000)])
                try tx.execute("""
                    INSERT INTO audit_events (tenant_id, at, kind, actor, target, detail_json)
                    VALUES ('acme', ?, 'user.created', NULL, 'user-1', '{"email":"user-1@example.com"}')
                    """, [.integer(now)])
            }
            await raw.close()

            let store = try await scratch.open(clock: clock)
            do {
                #expect(try await store.appliedSchemaVersions().last == SchemaMigrator.latestVersion)
                // The live jti is still refused; the expired one is taken over by its next registration.
                #expect(try await store.registerJTI("jti-live", expiresAt: clock.now().addingTimeInterval(60)) == false)
                #expect(try await store.registerJTI("jti-old", expiresAt: clock.now().addingTimeInterval(60)))
                #expect(try await store.tokenDownloads(authReqID: "req-1")
                    == [TokenDownloadRecord(authReqID: "req-1", keyID: "key-1", generation: 4, downloadedAt: SQLTime.date(now))])
                #expect(try await store.pendingRequestCount() == 1)
                // The deleted user's `user.created` event is still found and emptied.
                _ = try await store.deleteUser(subject: "user-1", actor: nil)
                let detail = try await store.database.transaction(readOnly: true) { tx in
                    try tx.query("SELECT detail_json FROM audit_events WHERE kind = 'user.created'", []).map { try $0.text("detail_json") }
                }
                #expect(detail == ["{}"])
            } catch {
                await store.close()
                throw error
            }
            await store.close()
        }
    }

    @Test("SQLite: the replay cache and the downloads are one b-tree each, and a sign-in's lookups use their indexes")
    func sqlitePlans() async throws {
        try await withStore(.sqlite) { store, _ in
            let plans = try await store.database.transaction(readOnly: true) { tx -> [String: String] in
                func plan(_ sql: String, _ parameters: [SQLValue]) throws -> String {
                    try tx.query("EXPLAIN QUERY PLAN " + sql, parameters).map { try $0.text("detail") }.joined(separator: "; ")
                }
                let schema = try tx.query("SELECT name, sql FROM sqlite_schema WHERE name IN ('device_jtis', 'token_downloads')", [])
                var plans: [String: String] = [:]
                for row in schema { plans[try row.text("name")] = try row.text("sql") }
                plans["pending limit"] = try plan("""
                    SELECT COUNT(*) AS pending, MIN(expires_at) AS first_expiry FROM ciba_requests
                    WHERE subject = ? AND client_id = ? AND state = 'pending' AND expires_at > ?
                    """, [.text("u"), .text("c"), .integer(0)])
                plans["pending gauge"] = try plan("SELECT COUNT(*) AS pending FROM ciba_requests WHERE state = 'pending' AND expires_at > ?",
                                                  [.integer(0)])
                plans["approvals"] = try plan("SELECT * FROM ciba_requests WHERE approves_enrolment = ? ORDER BY created_at, auth_req_id",
                                              [.text("e")])
                plans["user.created"] = try plan("UPDATE audit_events SET detail_json = '{}' WHERE target = ? AND kind = 'user.created'",
                                                 [.text("u")])
                plans["jti sweep"] = try plan(SQLAuthorityStore.jtiSweep(.sqlite), [.integer(0)])
                plans["retention"] = try plan(SQLAuthorityStore.finishedRequestsExpiredBefore, [.integer(0), .integer(500)])
                return plans
            }
            #expect(plans["device_jtis"]?.hasSuffix("WITHOUT ROWID") == true)
            #expect(plans["token_downloads"]?.hasSuffix("WITHOUT ROWID") == true)
            // Before, the pending limit walked every pending request of every user (the planner took the state index).
            #expect(plans["pending limit"]?.contains("USING COVERING INDEX ciba_requests_by_user") == true)
            #expect(plans["pending gauge"]?.contains("ciba_requests_pending_by_expiry") == true)
            #expect(plans["approvals"]?.contains("USING INDEX ciba_requests_by_enrolment") == true)
            #expect(plans["user.created"]?.contains("USING INDEX audit_events_user_created") == true)
            #expect(plans["jti sweep"]?.contains("device_jtis_by_expiry") == true)
            #expect(plans["jti sweep"]?.contains("TEMP B-TREE") == false)
            // The retention sweep walks its index in order (no sort) and stops at its limit.
            #expect(plans["retention"] == "SEARCH ciba_requests USING INDEX ciba_requests_finished_by_expiry (expires_at<?)")
        }
    }
}
