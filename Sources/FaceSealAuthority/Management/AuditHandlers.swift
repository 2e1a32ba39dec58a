import FaceSealHTTP
import FaceSealWire
import Foundation

// Audit events, newest first, paged by sequence number.
extension Authority {
    /// Default and largest page size.
    static let auditPage = (default: 50, max: 200)

    /// `GET /audit[?before=&limit=]` (administrator): operator events (administrator keys, bootstrap).
    @Sendable func listOperatorAudit(_ request: HTTPRequest, _ caller: ManagementCaller) async throws -> HTTPResponse {
        try caller.requireAdministrator()
        return try await auditPage(request, tenantID: nil)
    }

    /// `GET /tenants/{tenant}/audit[?before=&limit=]`.
    @Sendable func listTenantAudit(_ request: HTTPRequest, _ caller: ManagementCaller) async throws -> HTTPResponse {
        let tenant = try await pathTenant(request, caller)
        return try await auditPage(request, tenantID: tenant.id)
    }

    private func auditPage(_ request: HTTPRequest, tenantID: String?) async throws -> HTTPResponse {
        // Requests nobody polled expire here at the latest, so the log read is current (each one `request.expired`).
        try await expireOverdueRequests()
        let before = try request.queryInteger("before", in: 1...Int64.max)
        let limit = Int(try request.queryInteger("limit", in: 1...Int64(Self.auditPage.max)) ?? Int64(Self.auditPage.default))
        // One more than asked tells whether an older page exists.
        let events = try await store.auditEvents(tenantID: tenantID, beforeSequence: before, limit: limit + 1)
        let page = events.prefix(limit)
        let next = events.count > limit ? page.last?.sequence : nil
        return try ManagementJSON.response(ManagedAuditPage(events: page.map(ManagedAuditEvent.init), nextBefore: next))
    }
}
