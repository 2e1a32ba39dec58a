public import Foundation

/// A tenant's push endpoint (SPEC §4.6, docs/PROTOCOL.md "Webhook push"): where each new request's link is POSTed,
/// and the signing secret, sealed (`WebhookSecretSeal`); the store never sees it in the clear.
public struct WebhookRecord: Sendable, Hashable {
    /// The tenant.
    public var tenantID: String
    /// The endpoint URL (checked by the management API before it is stored).
    public var url: String
    /// The signing secret, sealed under the webhook-secret wrapping key.
    public var encryptedSecret: [UInt8]
    /// When it was registered (set by the store).
    public var createdAt: Date

    /// Creates a record; `createdAt` is set by the store.
    public init(tenantID: String, url: String, encryptedSecret: [UInt8], createdAt: Date = Date(timeIntervalSince1970: 0)) {
        self.tenantID = tenantID
        self.url = url
        self.encryptedSecret = encryptedSecret
        self.createdAt = createdAt
    }
}

extension SQLAuthorityStore {
    static func webhook(from row: SQLRow) throws -> WebhookRecord {
        WebhookRecord(tenantID: try row.text("tenant_id"), url: try row.text("url"),
                      encryptedSecret: try row.blob("encrypted_secret"), createdAt: try row.date("created_at"))
    }

    public func setWebhook(_ webhook: WebhookRecord) async throws -> WebhookRecord {
        try Self.checkIdentifier(webhook.tenantID, field: "tenantID")
        try Self.checkLength(webhook.url, field: "url", max: 2048)
        guard !webhook.encryptedSecret.isEmpty, webhook.encryptedSecret.count <= 1024 else {
            throw AuthorityStoreError.invalidInput(field: "encryptedSecret", reason: "must be 1…1024 bytes")
        }
        return try await transact { tx, now in
            _ = try Self.loadTenant(tx, id: webhook.tenantID)
            try tx.execute(
                """
                INSERT INTO tenant_webhooks (tenant_id, url, encrypted_secret, created_at) VALUES (?, ?, ?, ?)
                ON CONFLICT (tenant_id) DO UPDATE SET url = excluded.url, encrypted_secret = excluded.encrypted_secret,
                created_at = excluded.created_at
                """,
                [.text(webhook.tenantID), .text(webhook.url), .blob(webhook.encryptedSecret), .date(now)]
            )
            guard let row = try tx.queryOne("SELECT * FROM tenant_webhooks WHERE tenant_id = ?", [.text(webhook.tenantID)]) else {
                throw AuthorityStoreError.notFound(.tenant, id: webhook.tenantID)
            }
            return try Self.webhook(from: row)
        }
    }

    public func webhook(tenantID: String) async throws -> WebhookRecord? {
        try await readStatement { tx, _ in
            try tx.queryOne("SELECT * FROM tenant_webhooks WHERE tenant_id = ?", [.text(tenantID)]).map(Self.webhook(from:))
        }
    }

    public func deleteWebhook(tenantID: String) async throws -> Bool {
        try await transact { tx, _ in
            try tx.execute("DELETE FROM tenant_webhooks WHERE tenant_id = ?", [.text(tenantID)]) > 0
        }
    }
}
