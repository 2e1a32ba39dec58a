import FaceSealCrypto
import FaceSealHTTP
import FaceSealWire
import Foundation

// Management API keys. The secret is returned once, at creation; only its SHA-256 is stored.
extension Authority {
    /// `POST /api-keys` (administrator): a new administrator key.
    @Sendable func createAdministratorKey(_ request: HTTPRequest, _ caller: ManagementCaller) async throws -> HTTPResponse {
        try caller.requireAdministrator()
        return try await createAPIKey(request, caller, tenantID: nil)
    }

    /// `GET /api-keys` (administrator): the administrator keys, without secrets.
    @Sendable func listAdministratorKeys(_ request: HTTPRequest, _ caller: ManagementCaller) async throws -> HTTPResponse {
        try caller.requireAdministrator()
        return try ManagementJSON.response(ManagedList(try await store.apiKeys(tenantID: nil).map { ManagedAPIKey($0) }))
    }

    /// `POST /api-keys/{key}/revoke` (administrator). The last active administrator key cannot be revoked
    /// (it would lock everyone out).
    @Sendable func revokeAdministratorKey(_ request: HTTPRequest, _ caller: ManagementCaller) async throws -> HTTPResponse {
        try caller.requireAdministrator()
        try refuseActionBody(request)
        let keys = try await store.apiKeys(tenantID: nil)
        let id = request.pathParameter("key")
        guard let key = keys.first(where: { $0.id == id }) else { throw ManagementError.notFound("API key") }
        if key.revokedAt == nil, !keys.contains(where: { $0.id != id && $0.revokedAt == nil }) {
            throw ManagementError.conflict("the last active administrator key cannot be revoked; create another first")
        }
        return try await revokeAPIKey(key, caller)
    }

    /// `POST /tenants/{tenant}/api-keys`: a key for one tenant.
    @Sendable func createTenantKey(_ request: HTTPRequest, _ caller: ManagementCaller) async throws -> HTTPResponse {
        let tenant = try await pathTenant(request, caller)
        return try await createAPIKey(request, caller, tenantID: tenant.id)
    }

    /// `GET /tenants/{tenant}/api-keys`.
    @Sendable func listTenantKeys(_ request: HTTPRequest, _ caller: ManagementCaller) async throws -> HTTPResponse {
        let tenant = try await pathTenant(request, caller)
        return try ManagementJSON.response(ManagedList(try await store.apiKeys(tenantID: tenant.id).map { ManagedAPIKey($0) }))
    }

    /// `POST /tenants/{tenant}/api-keys/{key}/revoke`.
    @Sendable func revokeTenantKey(_ request: HTTPRequest, _ caller: ManagementCaller) async throws -> HTTPResponse {
        let tenant = try await pathTenant(request, caller)
        try refuseActionBody(request)
        let id = request.pathParameter("key")
        guard let key = try await store.apiKeys(tenantID: tenant.id).first(where: { $0.id == id }) else {
            throw ManagementError.notFound("API key")
        }
        return try await revokeAPIKey(key, caller)
    }

    private func createAPIKey(_ request: HTTPRequest, _ caller: ManagementCaller, tenantID: String?) async throws -> HTTPResponse {
        let body = try request.managementBody(APIKeyCreation.self)
        let label = try ManagementValidation.text(body.label, field: "label")
        let secret = ManagementCredentials.makeAPIKey()
        let record = try await store.createAPIKey(APIKeyRecord(
            id: ManagementCredentials.identifier("key"), tenantID: tenantID, keyHash: ManagementCredentials.hash(secret), label: label))
        try await audit(caller, tenant: tenantID, kind: "api_key.created", target: record.id,
                        detail: ["label": .string(label), "administrator": .bool(tenantID == nil)])
        return try ManagementJSON.response(ManagedAPIKey(record, key: secret), status: .created)
    }

    private func revokeAPIKey(_ key: APIKeyRecord, _ caller: ManagementCaller) async throws -> HTTPResponse {
        let revoked = try await store.revokeAPIKey(id: key.id)
        if key.revokedAt == nil {
            try await audit(caller, tenant: key.tenantID, kind: "api_key.revoked", target: key.id)
        }
        return try ManagementJSON.response(ManagedAPIKey(revoked))
    }
}
