import FaceSealCrypto
import FaceSealHTTP
import Foundation

/// A management handler: the request and the authenticated caller.
typealias ManagementHandler = @Sendable (HTTPRequest, ManagementCaller) async throws -> HTTPResponse

extension Authority {
    /// The path prefix of the management API.
    static let managementPrefix = "/manage/v1"

    /// Installs the management API of SPEC §4.5 (`/manage/v1/…`, documented in `docs/openapi.yaml`).
    func installManagementRoutes(into router: inout Router) {
        let p = Self.managementPrefix
        // Tenants and their policy.
        router.post("\(p)/tenants", use: managed(createTenant))
        router.get("\(p)/tenants", use: managed(listTenants))
        router.get("\(p)/tenants/:tenant", use: managed(showTenant))
        router.patch("\(p)/tenants/:tenant/policy", use: managed(updatePolicy))
        // API keys: administrator keys at the top, tenant keys under their tenant.
        router.post("\(p)/api-keys", use: managed(createAdministratorKey))
        router.get("\(p)/api-keys", use: managed(listAdministratorKeys))
        router.post("\(p)/api-keys/:key/revoke", use: managed(revokeAdministratorKey))
        router.post("\(p)/tenants/:tenant/api-keys", use: managed(createTenantKey))
        router.get("\(p)/tenants/:tenant/api-keys", use: managed(listTenantKeys))
        router.post("\(p)/tenants/:tenant/api-keys/:key/revoke", use: managed(revokeTenantKey))
        // Applications.
        router.post("\(p)/tenants/:tenant/applications", use: managed(createApplication))
        router.get("\(p)/tenants/:tenant/applications", use: managed(listApplications))
        router.get("\(p)/tenants/:tenant/applications/:client", use: managed(showApplication))
        router.patch("\(p)/tenants/:tenant/applications/:client", use: managed(updateApplication))
        router.post("\(p)/tenants/:tenant/applications/:client/secret", use: managed(rotateClientSecret))
        // Users and enrolment invitations.
        router.post("\(p)/tenants/:tenant/users", use: managed(createUser))
        router.get("\(p)/tenants/:tenant/users", use: managed(listUsers))
        router.get("\(p)/tenants/:tenant/users/:subject", use: managed(showUser))
        router.get("\(p)/tenants/:tenant/users/:subject/devices", use: managed(listUserDevices))
        router.post("\(p)/tenants/:tenant/invitations", use: managed(createInvitation))
        router.get("\(p)/tenants/:tenant/invitations/:invitation", use: managed(showInvitation))
        // Devices (enrolments) and their revocation.
        router.get("\(p)/tenants/:tenant/devices", use: managed(listTenantDevices))
        router.get("\(p)/tenants/:tenant/devices/:enrolment", use: managed(showDevice))
        router.post("\(p)/tenants/:tenant/devices/:enrolment/revoke", use: managed(revokeDevice))
        router.post("\(p)/tenants/:tenant/devices/:enrolment/terminate", use: managed(terminateDevice))
        // Audit events.
        router.get("\(p)/audit", use: managed(listOperatorAudit))
        router.get("\(p)/tenants/:tenant/audit", use: managed(listTenantAudit))
    }

    /// Authenticates, runs `handler`, and maps store failures: the edge of every management route.
    func managed(_ handler: @escaping ManagementHandler) -> HTTPHandler {
        { [self] request in
            do {
                let caller = try await authenticateManagement(request)
                return try await handler(request, caller)
            } catch let error as AuthorityStoreError {
                throw ManagementError(error)
            }
        }
    }

    /// The tenant named in the path, after checking the caller may act on it (403 before 404, so a tenant key
    /// learns nothing about other tenants).
    func pathTenant(_ request: HTTPRequest, _ caller: ManagementCaller) async throws -> TenantRecord {
        let id = request.pathParameter("tenant")
        try caller.authorize(tenant: id)
        return try await store.tenant(id: id)
    }

    /// Action endpoints (`…/revoke`) take no input: an empty body or `{}`.
    func refuseActionBody(_ request: HTTPRequest) throws(ManagementError) {
        guard !request.body.isEmpty else { return }
        _ = try JSONObjectReader.body(of: request, maxBytes: 1024, allowed: [])
    }

    /// Appends an audit event for a management action (never with secrets in `detail`).
    func audit(_ caller: ManagementCaller, tenant: String?, kind: String, target: String?, detail: [String: JSONValue] = [:]) async throws {
        _ = try await store.appendAudit(AuditEvent(tenantID: tenant, kind: kind, actor: caller.keyID, target: target,
                                                   detailJSON: JSONValue.object(detail).serializedString))
    }
}
