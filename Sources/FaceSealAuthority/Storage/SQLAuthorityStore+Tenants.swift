import FaceSealWire
import Foundation

// Tenants, management API keys, applications and users.
extension SQLAuthorityStore {
    // MARK: Row decoding

    static func tenant(from row: SQLRow) throws -> TenantRecord {
        guard let mode = PasswordMode(rawValue: try row.text("password_mode")) else { throw SQLError.typeMismatch(column: "password_mode") }
        guard let approval = FurtherDeviceApproval(rawValue: try row.text("further_device_approval")) else {
            throw SQLError.typeMismatch(column: "further_device_approval")
        }
        let policy = TenantPolicy(
            keyAlgorithms: try row.text("key_algorithms").split(separator: ",").map(String.init),
            attemptsMax: Int(try row.int("attempts_max")),
            captureRetriesMax: Int(try row.int("capture_retries_max")),
            livenessRequired: try row.bool("liveness_required"),
            matchThreshold: Double(try row.int("match_threshold_micros")) / thresholdScale,
            passwordPolicy: PasswordPolicy(mode: mode, minimumLength: Int(try row.int("password_min_length"))),
            oneDevicePerUser: try row.bool("one_device_per_user"),
            requestLifetimeSeconds: Int(try row.int("request_lifetime_seconds")),
            furtherDeviceApproval: approval
        )
        return TenantRecord(id: try row.text("id"), name: try row.text("name"), policy: policy, createdAt: try row.date("created_at"))
    }

    static func apiKey(from row: SQLRow) throws -> APIKeyRecord {
        APIKeyRecord(
            id: try row.text("id"), tenantID: try row.optionalText("tenant_id"), keyHash: try row.blob("key_hash"),
            label: try row.text("label"), createdAt: try row.date("created_at"), revokedAt: try row.optionalDate("revoked_at")
        )
    }

    static func application(from row: SQLRow) throws -> ApplicationRecord {
        let credential: ClientCredential
        if let hash = try row.optionalBlob("secret_hash") {
            credential = .secretHash(hash)
        } else if let jwks = try row.optionalText("jwks") {
            credential = .jwks(jwks)
        } else {
            throw SQLError.typeMismatch(column: "secret_hash")
        }
        guard let mode = DeliveryMode(rawValue: try row.text("delivery_mode")) else { throw SQLError.typeMismatch(column: "delivery_mode") }
        return ApplicationRecord(
            clientID: try row.text("client_id"), tenantID: try row.text("tenant_id"), label: try row.text("label"),
            credential: credential, brandingJSON: try row.text("branding_json"), deliveryMode: mode,
            notificationEndpoint: try row.optionalText("notification_endpoint"),
            deliveryEndpoint: try row.optionalText("delivery_endpoint"),
            idTokenSignedResponseAlg: try row.text("id_token_alg"),
            redirectURIs: try redirectURIs(fromColumn: try row.text("redirect_uris")), createdAt: try row.date("created_at")
        )
    }

    /// `redirect_uris` is a JSON array of strings.
    static func redirectURIs(fromColumn text: String) throws -> [String] {
        // Most applications register none (CIBA only): no decoder for them at every lookup of the application.
        if text == "[]" { return [] }
        guard let uris = try? JSONDecoder().decode([String].self, from: Data(text.utf8)) else {
            throw SQLError.typeMismatch(column: "redirect_uris")
        }
        return uris
    }

    static func redirectURIsColumn(_ uris: [String]) -> SQLValue {
        .text(String(decoding: (try? JSONEncoder().encode(uris)) ?? Data("[]".utf8), as: UTF8.self))
    }

    static func user(from row: SQLRow) throws -> UserRecord {
        UserRecord(subject: try row.text("subject"), tenantID: try row.text("tenant_id"), email: try row.text("email"), createdAt: try row.date("created_at"))
    }

    // MARK: Lookups inside a transaction

    /// A tenant, application or user that was deleted is not found by any lookup (its row stays for the records naming it).
    static func loadTenant(_ tx: any SQLTransaction, id: String, lock: SQLDialect? = nil) throws -> TenantRecord {
        guard let row = try tx.queryOne("SELECT * FROM tenants WHERE id = ? AND deleted_at IS NULL" + (lock?.forUpdate ?? ""), [.text(id)]) else {
            throw AuthorityStoreError.notFound(.tenant, id: id)
        }
        return try tenant(from: row)
    }

    static func loadApplication(_ tx: any SQLTransaction, clientID: String, lock: SQLDialect? = nil) throws -> ApplicationRecord {
        guard let row = try tx.queryOne("SELECT * FROM applications WHERE client_id = ? AND deleted_at IS NULL" + (lock?.forUpdate ?? ""),
                                        [.text(clientID)]) else {
            throw AuthorityStoreError.notFound(.application, id: clientID)
        }
        return try application(from: row)
    }

    static func loadUser(_ tx: any SQLTransaction, subject: String, lock: SQLDialect? = nil) throws -> UserRecord {
        guard let row = try userRow(tx, subject: subject, lock: lock) else { throw AuthorityStoreError.notFound(.user, id: subject) }
        return try user(from: row)
    }

    /// The row of the live (not deleted) user `subject`, if any.
    static func userRow(_ tx: any SQLTransaction, subject: String, lock: SQLDialect? = nil) throws -> SQLRow? {
        try tx.queryOne("SELECT * FROM users WHERE subject = ? AND deleted_at IS NULL" + (lock?.forUpdate ?? ""), [.text(subject)])
    }

    /// The row of the tenant's live user with `email`, if any.
    static func userRow(_ tx: any SQLTransaction, tenantID: String, email: String) throws -> SQLRow? {
        try tx.queryOne("SELECT * FROM users WHERE tenant_id = ? AND email = ? AND deleted_at IS NULL", [.text(tenantID), .text(email)])
    }

    static func checkApplication(_ application: ApplicationRecord) throws {
        try checkIdentifier(application.clientID, field: "clientID")
        try checkIdentifier(application.tenantID, field: "tenantID")
        try checkLength(application.label, field: "label", max: 256)
        try checkLength(application.brandingJSON, field: "brandingJSON", max: 64 * 1024)
        try checkIdentifier(application.idTokenSignedResponseAlg, field: "idTokenSignedResponseAlg")
        switch application.credential {
        case .secretHash(let hash):
            guard !hash.isEmpty, hash.count <= 128 else { throw AuthorityStoreError.invalidInput(field: "credential", reason: "secret hash must be 1…128 bytes") }
        case .jwks(let jwks):
            guard !jwks.isEmpty else { throw AuthorityStoreError.invalidInput(field: "credential", reason: "empty JWKS") }
            try checkLength(jwks, field: "credential", max: 64 * 1024)
        }
        if application.deliveryMode == .ping && application.notificationEndpoint == nil {
            throw AuthorityStoreError.invalidInput(field: "notificationEndpoint", reason: "required for ping delivery")
        }
        for (field, endpoint) in [("notificationEndpoint", application.notificationEndpoint), ("deliveryEndpoint", application.deliveryEndpoint)] {
            if let endpoint { try checkLength(endpoint, field: field, max: 2048) }
        }
        guard application.redirectURIs.count <= 16 else {
            throw AuthorityStoreError.invalidInput(field: "redirectURIs", reason: "more than 16")
        }
        for uri in application.redirectURIs { try checkLength(uri, field: "redirectURIs", max: 2048) }
    }

    static func credentialColumns(_ credential: ClientCredential) -> (SQLValue, SQLValue) {
        switch credential {
        case .secretHash(let hash): return (.blob(hash), .null)
        case .jwks(let jwks): return (.null, .text(jwks))
        }
    }

    // MARK: Tenants

    public func createTenant(_ tenant: TenantRecord) async throws -> TenantRecord {
        try Self.checkIdentifier(tenant.id, field: "id")
        try Self.checkLength(tenant.name, field: "name", max: 256)
        try Self.checkPolicy(tenant.policy)
        return try await transact(conflict: (.tenant, tenant.id)) { tx, now in
            let policy = tenant.policy
            try tx.execute(
                """
                INSERT INTO tenants (id, name, key_algorithms, attempts_max, liveness_required, password_mode,
                    password_min_length, one_device_per_user, request_lifetime_seconds, created_at, match_threshold_micros,
                    capture_retries_max, further_device_approval)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    .text(tenant.id), .text(tenant.name), .text(policy.keyAlgorithms.joined(separator: ",")),
                    .int(policy.attemptsMax), .bool(policy.livenessRequired), .text(policy.passwordPolicy.mode.rawValue),
                    .int(policy.passwordPolicy.minimumLength), .bool(policy.oneDevicePerUser),
                    .int(policy.requestLifetimeSeconds), .date(now), .integer(Self.thresholdMicros(policy.matchThreshold)),
                    .int(policy.captureRetriesMax), .text(policy.furtherDeviceApproval.rawValue),
                ]
            )
            return try Self.loadTenant(tx, id: tenant.id)
        }
    }

    public func tenant(id: String) async throws -> TenantRecord {
        try await readStatement { tx, _ in try Self.loadTenant(tx, id: id) }
    }

    public func tenants() async throws -> [TenantRecord] {
        try await readStatement { tx, _ in try tx.query("SELECT * FROM tenants WHERE deleted_at IS NULL ORDER BY id", []).map(Self.tenant(from:)) }
    }

    public func updateTenantPolicy(tenantID: String, policy: TenantPolicy) async throws -> TenantRecord {
        try Self.checkPolicy(policy)
        return try await transact { tx, _ in
            let changed = try tx.execute(
                """
                UPDATE tenants SET key_algorithms = ?, attempts_max = ?, liveness_required = ?, password_mode = ?,
                    password_min_length = ?, one_device_per_user = ?, request_lifetime_seconds = ?, match_threshold_micros = ?,
                    capture_retries_max = ?, further_device_approval = ?
                WHERE id = ?
                """,
                [
                    .text(policy.keyAlgorithms.joined(separator: ",")), .int(policy.attemptsMax), .bool(policy.livenessRequired),
                    .text(policy.passwordPolicy.mode.rawValue), .int(policy.passwordPolicy.minimumLength),
                    .bool(policy.oneDevicePerUser), .int(policy.requestLifetimeSeconds),
                    .integer(Self.thresholdMicros(policy.matchThreshold)), .int(policy.captureRetriesMax),
                    .text(policy.furtherDeviceApproval.rawValue), .text(tenantID),
                ]
            )
            guard changed == 1 else { throw AuthorityStoreError.notFound(.tenant, id: tenantID) }
            return try Self.loadTenant(tx, id: tenantID)
        }
    }

    // MARK: API keys

    public func createAPIKey(_ key: APIKeyRecord) async throws -> APIKeyRecord {
        try Self.checkIdentifier(key.id, field: "id")
        try Self.checkLength(key.label, field: "label", max: 256)
        guard !key.keyHash.isEmpty, key.keyHash.count <= 128 else {
            throw AuthorityStoreError.invalidInput(field: "keyHash", reason: "must be 1…128 bytes")
        }
        return try await transact(conflict: (.apiKey, key.id)) { tx, now in
            if let tenantID = key.tenantID { _ = try Self.loadTenant(tx, id: tenantID) }
            try tx.execute(
                "INSERT INTO api_keys (id, tenant_id, key_hash, label, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, NULL)",
                [.text(key.id), .optionalText(key.tenantID), .blob(key.keyHash), .text(key.label), .date(now)]
            )
            guard let row = try tx.queryOne("SELECT * FROM api_keys WHERE id = ?", [.text(key.id)]) else {
                throw AuthorityStoreError.notFound(.apiKey, id: key.id)
            }
            return try Self.apiKey(from: row)
        }
    }

    public func apiKey(hash keyHash: [UInt8]) async throws -> APIKeyRecord? {
        try await readStatement { tx, _ in
            try tx.queryOne("SELECT * FROM api_keys WHERE key_hash = ?", [.blob(keyHash)]).map(Self.apiKey(from:))
        }
    }

    public func apiKeys(tenantID: String?) async throws -> [APIKeyRecord] {
        try await read { tx, _ in
            if let tenantID {
                _ = try Self.loadTenant(tx, id: tenantID)
                return try tx.query("SELECT * FROM api_keys WHERE tenant_id = ? ORDER BY created_at, id", [.text(tenantID)]).map(Self.apiKey(from:))
            }
            return try tx.query("SELECT * FROM api_keys WHERE tenant_id IS NULL ORDER BY created_at, id", []).map(Self.apiKey(from:))
        }
    }

    public func revokeAPIKey(id: String) async throws -> APIKeyRecord {
        try await transact { tx, now in
            try tx.execute("UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", [.date(now), .text(id)])
            guard let row = try tx.queryOne("SELECT * FROM api_keys WHERE id = ?", [.text(id)]) else {
                throw AuthorityStoreError.notFound(.apiKey, id: id)
            }
            return try Self.apiKey(from: row)
        }
    }

    // MARK: Applications

    public func createApplication(_ application: ApplicationRecord) async throws -> ApplicationRecord {
        try Self.checkApplication(application)
        return try await transact(conflict: (.application, application.clientID)) { tx, now in
            _ = try Self.loadTenant(tx, id: application.tenantID)
            let (secretHash, jwks) = Self.credentialColumns(application.credential)
            try tx.execute(
                """
                INSERT INTO applications (client_id, tenant_id, label, secret_hash, jwks, branding_json, delivery_mode,
                    notification_endpoint, delivery_endpoint, id_token_alg, redirect_uris, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    .text(application.clientID), .text(application.tenantID), .text(application.label), secretHash, jwks,
                    .text(application.brandingJSON), .text(application.deliveryMode.rawValue),
                    .optionalText(application.notificationEndpoint), .optionalText(application.deliveryEndpoint),
                    .text(application.idTokenSignedResponseAlg), Self.redirectURIsColumn(application.redirectURIs), .date(now),
                ]
            )
            return try Self.loadApplication(tx, clientID: application.clientID)
        }
    }

    public func application(clientID: String) async throws -> ApplicationRecord {
        try await readStatement { tx, _ in try Self.loadApplication(tx, clientID: clientID) }
    }

    public func applications(tenantID: String) async throws -> [ApplicationRecord] {
        try await read { tx, _ in
            _ = try Self.loadTenant(tx, id: tenantID)
            return try tx.query("SELECT * FROM applications WHERE tenant_id = ? AND deleted_at IS NULL ORDER BY client_id", [.text(tenantID)]).map(Self.application(from:))
        }
    }

    public func updateApplication(_ application: ApplicationRecord) async throws -> ApplicationRecord {
        try Self.checkApplication(application)
        return try await transact { tx, _ in
            let existing = try Self.loadApplication(tx, clientID: application.clientID)
            guard existing.tenantID == application.tenantID else {
                throw AuthorityStoreError.invalidInput(field: "tenantID", reason: "an application cannot move to another tenant")
            }
            let (secretHash, jwks) = Self.credentialColumns(application.credential)
            try tx.execute(
                """
                UPDATE applications SET label = ?, secret_hash = ?, jwks = ?, branding_json = ?, delivery_mode = ?,
                    notification_endpoint = ?, delivery_endpoint = ?, id_token_alg = ?, redirect_uris = ?
                WHERE client_id = ?
                """,
                [
                    .text(application.label), secretHash, jwks, .text(application.brandingJSON),
                    .text(application.deliveryMode.rawValue), .optionalText(application.notificationEndpoint),
                    .optionalText(application.deliveryEndpoint), .text(application.idTokenSignedResponseAlg),
                    Self.redirectURIsColumn(application.redirectURIs), .text(application.clientID),
                ]
            )
            return try Self.loadApplication(tx, clientID: application.clientID)
        }
    }

    // MARK: Users

    public func createUser(_ user: UserRecord) async throws -> UserRecord {
        try Self.checkIdentifier(user.subject, field: "subject")
        try Self.checkIdentifier(user.email, field: "email")
        return try await transact(conflict: (.user, user.subject)) { tx, now in
            _ = try Self.loadTenant(tx, id: user.tenantID)
            try tx.execute(
                "INSERT INTO users (subject, tenant_id, email, created_at) VALUES (?, ?, ?, ?)",
                [.text(user.subject), .text(user.tenantID), .text(user.email), .date(now)]
            )
            return try Self.loadUser(tx, subject: user.subject)
        }
    }

    public func user(subject: String) async throws -> UserRecord {
        try await readStatement { tx, _ in try Self.loadUser(tx, subject: subject) }
    }

    public func user(tenantID: String, email: String) async throws -> UserRecord {
        try await readStatement { tx, _ in
            guard let row = try Self.userRow(tx, tenantID: tenantID, email: email) else { throw AuthorityStoreError.notFound(.user, id: email) }
            return try Self.user(from: row)
        }
    }

    public func users(tenantID: String) async throws -> [UserRecord] {
        try await read { tx, _ in
            _ = try Self.loadTenant(tx, id: tenantID)
            return try tx.query("SELECT * FROM users WHERE tenant_id = ? AND deleted_at IS NULL ORDER BY email", [.text(tenantID)]).map(Self.user(from:))
        }
    }
}
