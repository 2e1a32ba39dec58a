import FaceSealWire
import Foundation

/// One versioned schema change. Statements use `{INT}`, `{BLOB}` and `{SERIAL}` for the column types
/// that differ between SQLite and PostgreSQL, and `{WITHOUT_ROWID}` after a table whose primary key is its only
/// b-tree on SQLite (nothing on PostgreSQL); everything else is common SQL.
struct SchemaMigration: Sendable {
    let version: Int
    let name: String
    let statements: [String]

    func statements(for dialect: SQLDialect) -> [String] {
        statements.map { statement in
            switch dialect {
            case .sqlite:
                return statement
                    .replacingOccurrences(of: "{INT}", with: "INTEGER")
                    .replacingOccurrences(of: "{BLOB}", with: "BLOB")
                    .replacingOccurrences(of: "{SERIAL}", with: "INTEGER PRIMARY KEY AUTOINCREMENT")
                    .replacingOccurrences(of: "{WITHOUT_ROWID}", with: " WITHOUT ROWID")
            case .postgres:
                return statement
                    .replacingOccurrences(of: "{INT}", with: "BIGINT")
                    .replacingOccurrences(of: "{BLOB}", with: "BYTEA")
                    .replacingOccurrences(of: "{SERIAL}", with: "BIGSERIAL PRIMARY KEY")
                    .replacingOccurrences(of: "{WITHOUT_ROWID}", with: "")
            }
        }
    }
}

/// Applies migrations in version order and records each in `schema_migrations`, so a restart applies
/// nothing twice and several authority processes starting at once apply each migration exactly once.
enum SchemaMigrator {
    /// The schema of this build, oldest first. Append; never edit a released migration.
    static let migrations: [SchemaMigration] = [
        SchemaMigration(version: 1, name: "initial tables", statements: [
            """
            CREATE TABLE tenants (
                id TEXT PRIMARY KEY, name TEXT NOT NULL, key_algorithms TEXT NOT NULL,
                attempts_max {INT} NOT NULL, liveness_required {INT} NOT NULL,
                password_mode TEXT NOT NULL, password_min_length {INT} NOT NULL,
                one_device_per_user {INT} NOT NULL, request_lifetime_seconds {INT} NOT NULL,
                created_at {INT} NOT NULL)
            """,
            """
            CREATE TABLE api_keys (
                id TEXT PRIMARY KEY, tenant_id TEXT REFERENCES tenants(id), key_hash {BLOB} NOT NULL UNIQUE,
                label TEXT NOT NULL, created_at {INT} NOT NULL, revoked_at {INT})
            """,
            """
            CREATE TABLE applications (
                client_id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL REFERENCES tenants(id), label TEXT NOT NULL,
                secret_hash {BLOB}, jwks TEXT, branding_json TEXT NOT NULL, delivery_mode TEXT NOT NULL,
                notification_endpoint TEXT, delivery_endpoint TEXT, id_token_alg TEXT NOT NULL,
                created_at {INT} NOT NULL,
                CHECK ((secret_hash IS NULL AND jwks IS NOT NULL) OR (secret_hash IS NOT NULL AND jwks IS NULL)))
            """,
            """
            CREATE TABLE users (
                subject TEXT PRIMARY KEY, tenant_id TEXT NOT NULL REFERENCES tenants(id), email TEXT NOT NULL,
                created_at {INT} NOT NULL, UNIQUE (tenant_id, email))
            """,
            """
            CREATE TABLE invitations (
                id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL REFERENCES tenants(id),
                subject TEXT NOT NULL REFERENCES users(subject), client_id TEXT NOT NULL REFERENCES applications(client_id),
                secret_hash {BLOB} NOT NULL, created_at {INT} NOT NULL, expires_at {INT} NOT NULL, consumed_at {INT})
            """,
            """
            CREATE TABLE devices (id TEXT PRIMARY KEY, label TEXT NOT NULL, created_at {INT} NOT NULL)
            """,
            """
            CREATE TABLE enrolments (
                id TEXT PRIMARY KEY, device_id TEXT NOT NULL REFERENCES devices(id),
                tenant_id TEXT NOT NULL REFERENCES tenants(id), subject TEXT NOT NULL REFERENCES users(subject),
                client_id TEXT NOT NULL REFERENCES applications(client_id), status TEXT NOT NULL,
                created_at {INT} NOT NULL, status_changed_at {INT} NOT NULL)
            """,
            """
            CREATE TABLE device_keys (
                key_id TEXT PRIMARY KEY, enrolment_id TEXT NOT NULL REFERENCES enrolments(id), role TEXT NOT NULL,
                public_key_jwk TEXT NOT NULL, status TEXT NOT NULL, superseded_by TEXT, overlap_until {INT},
                created_at {INT} NOT NULL, status_changed_at {INT} NOT NULL)
            """,
            """
            CREATE TABLE face_tokens (
                subject TEXT PRIMARY KEY REFERENCES users(subject), token_id TEXT NOT NULL, generation {INT} NOT NULL,
                header_json {BLOB} NOT NULL, sealed_body {BLOB} NOT NULL, encrypted_server_share {BLOB} NOT NULL,
                updated_at {INT} NOT NULL)
            """,
            """
            CREATE TABLE ciba_requests (
                auth_req_id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL REFERENCES tenants(id),
                client_id TEXT NOT NULL REFERENCES applications(client_id), subject TEXT NOT NULL REFERENCES users(subject),
                kind TEXT NOT NULL, pki_kind TEXT, pki_context {BLOB}, pki_data {BLOB}, binding_message TEXT,
                client_notification_token TEXT, scope TEXT NOT NULL, state TEXT NOT NULL,
                created_at {INT} NOT NULL, expires_at {INT} NOT NULL, interval_seconds {INT} NOT NULL,
                last_polled_at {INT}, attempts {INT} NOT NULL, downloaded_generation {INT}, staged_generation {INT},
                receipt_sha256 {BLOB}, id_token TEXT, deny_reason TEXT, finished_at {INT})
            """,
            """
            CREATE TABLE device_jtis (jti TEXT PRIMARY KEY, expires_at {INT} NOT NULL)
            """,
            """
            CREATE TABLE link_outbox (
                sequence {SERIAL}, device_id TEXT NOT NULL REFERENCES devices(id), link TEXT NOT NULL,
                auth_req_id TEXT, created_at {INT} NOT NULL, expires_at {INT} NOT NULL)
            """,
            """
            CREATE TABLE audit_events (
                sequence {SERIAL}, tenant_id TEXT, at {INT} NOT NULL, kind TEXT NOT NULL, actor TEXT, target TEXT,
                detail_json TEXT NOT NULL)
            """,
            """
            CREATE TABLE signing_keys (
                key_id TEXT PRIMARY KEY, algorithm TEXT NOT NULL, public_jwk TEXT NOT NULL,
                encrypted_private_key {BLOB} NOT NULL, created_at {INT} NOT NULL, retired_at {INT})
            """,
        ]),
        SchemaMigration(version: 2, name: "lookup indexes", statements: [
            "CREATE INDEX enrolments_by_subject ON enrolments (subject, client_id)",
            "CREATE INDEX enrolments_by_device ON enrolments (device_id)",
            "CREATE INDEX device_keys_by_enrolment ON device_keys (enrolment_id)",
            "CREATE INDEX ciba_requests_by_state ON ciba_requests (state, expires_at)",
            "CREATE INDEX device_jtis_by_expiry ON device_jtis (expires_at)",
            "CREATE INDEX link_outbox_by_device ON link_outbox (device_id, sequence)",
            "CREATE INDEX audit_events_by_tenant ON audit_events (tenant_id, sequence)",
            "CREATE INDEX applications_by_tenant ON applications (tenant_id)",
            "CREATE INDEX users_by_tenant ON users (tenant_id)",
            "CREATE INDEX enrolments_by_tenant ON enrolments (tenant_id, created_at)",
            "CREATE INDEX api_keys_by_tenant ON api_keys (tenant_id)",
        ]),
        SchemaMigration(version: 3, name: "password used at completion", statements: [
            // The receipt column was nullable from the start: a sign-in completes without one.
            "ALTER TABLE ciba_requests ADD COLUMN password_used {INT} NOT NULL DEFAULT 0",
        ]),
        SchemaMigration(version: 4, name: "rate limits", statements: [
            // Failure counters shared by every process on the database (failed client authentications, failed
            // device signatures): one fixed window per key.
            "CREATE TABLE rate_counters (key TEXT PRIMARY KEY, window_ends_at {INT} NOT NULL, count {INT} NOT NULL)",
            "CREATE INDEX ciba_requests_by_user ON ciba_requests (subject, client_id, state)",
        ]),
        SchemaMigration(version: 5, name: "wrapping key versions", statements: [
            // Secrets at rest were wrapped under the raw master key (version 0); from here on under a key derived for
            // the purpose (version 1, the default of every new row). Rows already there are marked 0, and the
            // authority re-wraps them at start (`Authority.migrateWrappedSecrets`).
            "ALTER TABLE face_tokens ADD COLUMN wrap_version {INT} NOT NULL DEFAULT 1",
            "UPDATE face_tokens SET wrap_version = 0",
            "ALTER TABLE signing_keys ADD COLUMN wrap_version {INT} NOT NULL DEFAULT 1",
            "UPDATE signing_keys SET wrap_version = 0",
        ]),
        SchemaMigration(version: 6, name: "token downloads per request and key", statements: [
            // Every download, by the key that made it: a completion must come from a key that downloaded, at the
            // generation it downloaded (SPEC §4.2). It replaces the request's single, never-read column.
            """
            CREATE TABLE token_downloads (
                auth_req_id TEXT NOT NULL REFERENCES ciba_requests(auth_req_id), key_id TEXT NOT NULL,
                generation {INT} NOT NULL, downloaded_at {INT} NOT NULL, PRIMARY KEY (auth_req_id, key_id))
            """,
            "ALTER TABLE ciba_requests DROP COLUMN downloaded_generation",
        ]),
        SchemaMigration(version: 7, name: "match threshold and capture-retry budget", statements: [
            // The threshold in millionths (integers only cross the storage boundary); existing tenants get the defaults.
            "ALTER TABLE tenants ADD COLUMN match_threshold_micros {INT} NOT NULL DEFAULT 520000",
            "ALTER TABLE tenants ADD COLUMN capture_retries_max {INT} NOT NULL DEFAULT 10",
            "ALTER TABLE ciba_requests ADD COLUMN capture_retries {INT} NOT NULL DEFAULT 0",
        ]),
        SchemaMigration(version: 8, name: "custody: invitations bound to keys, further-device approval, recovery", statements: [
            // docs/PROTOCOL.md §8.1. An invitation names the enrolment that consumed it; a further device's enrolment
            // waits (status 'pending') for its approval, which releases the token once; approval requests point at it.
            "ALTER TABLE invitations ADD COLUMN kind TEXT NOT NULL DEFAULT 'enrolment'",
            "ALTER TABLE invitations ADD COLUMN enrolment_id TEXT",
            "ALTER TABLE enrolments ADD COLUMN approval TEXT",
            "ALTER TABLE enrolments ADD COLUMN approval_expires_at {INT}",
            "ALTER TABLE enrolments ADD COLUMN approved_at {INT}",
            "ALTER TABLE enrolments ADD COLUMN released_at {INT}",
            "ALTER TABLE enrolments ADD COLUMN password_failures {INT} NOT NULL DEFAULT 0",
            "ALTER TABLE ciba_requests ADD COLUMN approves_enrolment TEXT",
            "CREATE INDEX ciba_requests_by_enrolment ON ciba_requests (approves_enrolment)",
            "ALTER TABLE face_tokens ADD COLUMN password_verifier {BLOB}",
            "ALTER TABLE tenants ADD COLUMN further_device_approval TEXT NOT NULL DEFAULT 'enrolled_device'",
        ]),
        SchemaMigration(version: 9, name: "browser sign-in", statements: [
            // The authorization code flow: the redirect URIs an application registered, and each browser sign-in
            // with its one code (stored hashed). A sign-in's id is the auth_req_id of the request a device creates.
            "ALTER TABLE applications ADD COLUMN redirect_uris TEXT NOT NULL DEFAULT '[]'",
            """
            CREATE TABLE browser_sign_ins (
                id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL REFERENCES tenants(id),
                client_id TEXT NOT NULL REFERENCES applications(client_id), redirect_uri TEXT NOT NULL, state TEXT,
                nonce TEXT, code_challenge TEXT NOT NULL, scope TEXT NOT NULL, binding_message TEXT NOT NULL,
                browser_hash {BLOB} NOT NULL, created_at {INT} NOT NULL, expires_at {INT} NOT NULL,
                code_hash {BLOB} UNIQUE, code_expires_at {INT}, code_used_at {INT})
            """,
            "CREATE INDEX browser_sign_ins_by_client ON browser_sign_ins (client_id, expires_at)",
        ]),
        SchemaMigration(version: 10, name: "tenant webhooks", statements: [
            // One push endpoint per tenant; the signing secret sealed under the webhook-secret wrapping key.
            "CREATE TABLE tenant_webhooks (tenant_id TEXT PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE, "
                + "url TEXT NOT NULL, encrypted_secret {BLOB} NOT NULL, created_at {INT} NOT NULL)",
        ]),
        SchemaMigration(version: 11, name: "lifecycle: deletions, cancelled invitations, delivered requests", statements: [
            // A deleted user, application or tenant stays as a row without personal data (enrolments, requests and the
            // audit name it), hidden from every lookup; the tenant's unique email of a deleted user is freed.
            "ALTER TABLE users ADD COLUMN deleted_at {INT}",
            "ALTER TABLE applications ADD COLUMN deleted_at {INT}",
            "ALTER TABLE tenants ADD COLUMN deleted_at {INT}",
            "ALTER TABLE invitations ADD COLUMN cancelled_at {INT}",
            "ALTER TABLE ciba_requests ADD COLUMN delivered_at {INT}",
            "CREATE INDEX invitations_by_tenant ON invitations (tenant_id, created_at)",
            "CREATE INDEX audit_events_by_target ON audit_events (target)",
            // A device-response key carries the rollover statement its predecessor signed over it.
            "ALTER TABLE signing_keys ADD COLUMN rollover TEXT",
            "ALTER TABLE signing_keys ADD COLUMN rollover_expires_at {INT}",
        ]),
        SchemaMigration(version: 12, name: "fewer pages written per sign-in", statements: [
            // docs/PERFORMANCE.md, "Session 7: the store". The replay cache and the token downloads are looked up by
            // their primary key only: on SQLite one b-tree keyed by it instead of a rowid table beside the key's index.
            "CREATE TABLE device_jtis_keyed (jti TEXT PRIMARY KEY, expires_at {INT} NOT NULL){WITHOUT_ROWID}",
            "INSERT INTO device_jtis_keyed (jti, expires_at) SELECT jti, expires_at FROM device_jtis",
            "DROP TABLE device_jtis",
            "ALTER TABLE device_jtis_keyed RENAME TO device_jtis",
            "CREATE INDEX device_jtis_by_expiry ON device_jtis (expires_at)",
            """
            CREATE TABLE token_downloads_keyed (
                auth_req_id TEXT NOT NULL REFERENCES ciba_requests(auth_req_id), key_id TEXT NOT NULL,
                generation {INT} NOT NULL, downloaded_at {INT} NOT NULL, PRIMARY KEY (auth_req_id, key_id)){WITHOUT_ROWID}
            """,
            """
            INSERT INTO token_downloads_keyed (auth_req_id, key_id, generation, downloaded_at)
            SELECT auth_req_id, key_id, generation, downloaded_at FROM token_downloads
            """,
            "DROP TABLE token_downloads",
            "ALTER TABLE token_downloads_keyed RENAME TO token_downloads",
            // Only pending requests are looked up by expiry (the sweep, the pending gauge): a request leaves the index
            // when it finishes instead of moving within it, and the index holds the pending ones only.
            "DROP INDEX ciba_requests_by_state",
            "CREATE INDEX ciba_requests_pending_by_expiry ON ciba_requests (expires_at) WHERE state = 'pending'",
            // The pending limit counts a user's pending requests of a client and their first expiry from the index alone.
            "DROP INDEX ciba_requests_by_user",
            "CREATE INDEX ciba_requests_by_user ON ciba_requests (subject, client_id, state, expires_at)",
            // Approval requests only: a sign-in's request no longer adds an entry for its NULL.
            "DROP INDEX ciba_requests_by_enrolment",
            "CREATE INDEX ciba_requests_by_enrolment ON ciba_requests (approves_enrolment) WHERE approves_enrolment IS NOT NULL",
            // The one lookup by target is a deleted user's `user.created` event: the request events stay out of the index.
            "DROP INDEX audit_events_by_target",
            "CREATE INDEX audit_events_user_created ON audit_events (target) WHERE kind = 'user.created'",
        ]),
        SchemaMigration(version: 13, name: "finished requests by expiry, for the retention sweep", statements: [
            // A request enters it when it finishes, at its expiry, which grows with time: an append at the index's end. The
            // sweep's selection walks it in its order (`SQLAuthorityStore.finishedRequestsExpiredBefore`).
            "CREATE INDEX ciba_requests_finished_by_expiry ON ciba_requests (expires_at, auth_req_id) WHERE state <> 'pending'",
        ]),
    ]

    /// The newest version this build knows.
    static var latestVersion: Int { migrations.map(\.version).max() ?? 0 }

    /// Brings the database to the newest version, each migration in its own transaction.
    /// - Returns: the versions applied by this call (empty when the schema was current).
    @discardableResult
    static func migrate(_ database: any SQLDatabase, clock: any WallClock, migrations: [SchemaMigration] = migrations) async throws -> [Int] {
        let integer = database.dialect == .sqlite ? "INTEGER" : "BIGINT"
        do {
            try await database.executeStandalone(
                "CREATE TABLE IF NOT EXISTS schema_migrations (version \(integer) PRIMARY KEY, name TEXT NOT NULL, applied_at \(integer) NOT NULL)"
            )
        } catch SQLError.uniqueViolation, SQLError.alreadyExists {
            // PostgreSQL: another process created it between our existence check and our insert into its
            // catalogue. The table exists now, which is all this step needs.
        }
        let ordered = migrations.sorted { $0.version < $1.version }
        let known = ordered.last?.version ?? 0
        var applied: [Int] = []
        for migration in ordered {
            let didApply = try await database.transaction { tx -> Bool in
                if database.dialect == .postgres {
                    // Serialise concurrent starters; SQLite's BEGIN IMMEDIATE already does.
                    try tx.execute("LOCK TABLE schema_migrations IN EXCLUSIVE MODE", [])
                }
                let newest = try tx.queryOne("SELECT MAX(version) AS newest FROM schema_migrations", []).flatMap { try $0.optionalInt("newest") } ?? 0
                if newest > known {
                    throw AuthorityStoreError.schemaTooNew(found: Int(newest), known: known)
                }
                let present = try tx.queryOne("SELECT version FROM schema_migrations WHERE version = ?", [.int(migration.version)])
                if present != nil { return false }
                for statement in migration.statements(for: database.dialect) {
                    try tx.execute(statement, [])
                }
                try tx.execute(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                    [.int(migration.version), .text(migration.name), .date(clock.now())]
                )
                return true
            }
            if didApply { applied.append(migration.version) }
        }
        return applied
    }
}
