import FaceSealCrypto
import FaceSealHTTP
import FaceSealWire
import Foundation

/// A management handler: the request and the authenticated caller.
typealias ManagementHandler = @Sendable (HTTPRequest, ManagementCaller) async throws -> HTTPResponse

/// One route of the management API: method, path pattern, the query parameters it accepts, and its handler.
struct ManagementRoute: Sendable {
    let method: HTTPMethod
    let pattern: String
    let query: Set<String>
    let handler: @Sendable (Authority) -> ManagementHandler

    init(_ method: HTTPMethod, _ pattern: String, query: Set<String> = [], handler: @escaping @Sendable (Authority) -> ManagementHandler) {
        self.method = method
        self.pattern = pattern
        self.query = query
        self.handler = handler
    }
}

extension Authority {
    /// The path prefix of the management API.
    static let managementPrefix = "/manage/v1"

    /// Every route of the management API (patterns below `managementPrefix`), in the order of `docs/openapi.yaml`.
    static let managementRoutes: [ManagementRoute] = [
        ManagementRoute(.post, "/tenants") { $0.createTenant },
        ManagementRoute(.get, "/tenants") { $0.listTenants },
        ManagementRoute(.get, "/tenants/:tenant") { $0.showTenant },
        ManagementRoute(.delete, "/tenants/:tenant") { $0.deleteTenant },
        ManagementRoute(.patch, "/tenants/:tenant/policy") { $0.updatePolicy },
        ManagementRoute(.post, "/api-keys") { $0.createAdministratorKey },
        ManagementRoute(.get, "/api-keys") { $0.listAdministratorKeys },
        ManagementRoute(.post, "/api-keys/:key/revoke") { $0.revokeAdministratorKey },
        ManagementRoute(.post, "/tenants/:tenant/api-keys") { $0.createTenantKey },
        ManagementRoute(.get, "/tenants/:tenant/api-keys") { $0.listTenantKeys },
        ManagementRoute(.post, "/tenants/:tenant/api-keys/:key/revoke") { $0.revokeTenantKey },
        ManagementRoute(.post, "/tenants/:tenant/applications") { $0.createApplication },
        ManagementRoute(.get, "/tenants/:tenant/applications") { $0.listApplications },
        ManagementRoute(.get, "/tenants/:tenant/applications/:client") { $0.showApplication },
        ManagementRoute(.patch, "/tenants/:tenant/applications/:client") { $0.updateApplication },
        ManagementRoute(.delete, "/tenants/:tenant/applications/:client") { $0.deleteApplication },
        ManagementRoute(.post, "/tenants/:tenant/applications/:client/secret") { $0.rotateClientSecret },
        ManagementRoute(.post, "/tenants/:tenant/users") { $0.createUser },
        ManagementRoute(.get, "/tenants/:tenant/users", query: ["email"]) { $0.listUsers },
        ManagementRoute(.get, "/tenants/:tenant/users/:subject") { $0.showUser },
        ManagementRoute(.delete, "/tenants/:tenant/users/:subject") { $0.deleteUser },
        ManagementRoute(.get, "/tenants/:tenant/users/:subject/devices") { $0.listUserDevices },
        ManagementRoute(.post, "/tenants/:tenant/invitations") { $0.createInvitation },
        ManagementRoute(.get, "/tenants/:tenant/invitations", query: ["subject", "client_id", "status", "limit"]) { $0.listInvitations },
        ManagementRoute(.get, "/tenants/:tenant/invitations/:invitation") { $0.showInvitation },
        ManagementRoute(.post, "/tenants/:tenant/invitations/:invitation/cancel") { $0.cancelInvitation },
        ManagementRoute(.get, "/tenants/:tenant/devices", query: ["subject", "client_id", "status"]) { $0.listTenantDevices },
        ManagementRoute(.get, "/tenants/:tenant/devices/:enrolment") { $0.showDevice },
        ManagementRoute(.post, "/tenants/:tenant/devices/:enrolment/revoke") { $0.revokeDevice },
        ManagementRoute(.post, "/tenants/:tenant/devices/:enrolment/terminate") { $0.terminateDevice },
        ManagementRoute(.get, "/keys") { $0.listAuthorityKeys },
        ManagementRoute(.post, "/keys/rotate") { $0.rotateAuthorityKeys },
        ManagementRoute(.put, "/tenants/:tenant/webhook") { $0.registerWebhook },
        ManagementRoute(.get, "/tenants/:tenant/webhook") { $0.showWebhook },
        ManagementRoute(.delete, "/tenants/:tenant/webhook") { $0.removeWebhook },
        ManagementRoute(.get, "/audit", query: ["before", "limit"]) { $0.listOperatorAudit },
        ManagementRoute(.get, "/tenants/:tenant/audit", query: ["before", "limit"]) { $0.listTenantAudit },
    ]

    /// Installs the management API of SPEC §4.5 (`/manage/v1/…`, documented in `docs/openapi.yaml`).
    func installManagementRoutes(into router: inout Router) {
        for route in Self.managementRoutes {
            router.on(route.method, Self.managementPrefix + route.pattern, use: managed(route.handler(self), query: route.query))
        }
    }

    /// Authenticates, refuses query parameters other than `query`, runs `handler`, and maps store failures:
    /// the edge of every management route.
    func managed(_ handler: @escaping ManagementHandler, query: Set<String> = []) -> HTTPHandler {
        { [self] request in
            do {
                let caller = try await authenticateManagement(request)
                // Invitation links are signed with the current device key.
                try? await refreshDeviceResponseKey()
                try request.allowQuery(query)
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
        _ = try request.managementBody(EmptyBody.self)
    }

    /// Appends an audit event for a management action (never with secrets in `detail`).
    func audit(_ caller: ManagementCaller, tenant: String?, kind: String, target: String?, detail: [String: JSONValue] = [:]) async throws {
        _ = try await store.appendAudit(AuditEvent(tenantID: tenant, kind: kind, actor: caller.keyID, target: target,
                                                   detailJSON: JSONValue.object(detail).serializedString))
    }
}
