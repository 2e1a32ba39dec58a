import Foundation

extension Authority {
    /// On a store with no management API key, creates the first (administrator) key and returns it once in
    /// clear; nil when keys exist.
    public func bootstrapAdminKey() async throws -> String? {
        if !(try await store.apiKeys(tenantID: nil)).isEmpty { return nil }
        for tenant in try await store.tenants() where !(try await store.apiKeys(tenantID: tenant.id)).isEmpty {
            return nil
        }
        let secret = ManagementCredentials.makeAPIKey()
        let record = try await store.createAPIKey(APIKeyRecord(
            id: ManagementCredentials.identifier("key"), tenantID: nil,
            keyHash: ManagementCredentials.hash(secret), label: "bootstrap administrator key"))
        _ = try await store.appendAudit(AuditEvent(tenantID: nil, kind: "api_key.created", actor: "bootstrap", target: record.id,
                                                   detailJSON: #"{"administrator":true}"#))
        return secret
    }
}
