import FaceSealCrypto
import FaceSealHTTP
import FaceSealWire
import Foundation

// Deleting users, applications and tenants; listing and cancelling invitations (docs/PROTOCOL.md §11). A deletion is one
// store transaction that also writes its audit tombstone; what cascades and what is refused is the store's.
extension Authority {
    /// `DELETE /tenants/{tenant}/users/{subject}`: erases the user's face token and server share, revokes every
    /// enrolment, denies their pending requests (`user_deleted`) and cancels their invitations.
    @Sendable func deleteUser(_ request: HTTPRequest, _ caller: ManagementCaller) async throws -> HTTPResponse {
        let user = try await pathUser(request, caller)
        try refuseActionBody(request)
        let summary = try await store.deleteUser(subject: user.subject, actor: caller.keyID)
        // Ping-mode applications hear of their ended requests as of any other failure.
        for authReqID in summary.endedRequestIDs { await requestFinished(authReqID: authReqID) }
        return try ManagementJSON.response(ManagedDeletion(kind: "user", id: user.subject, summary))
    }

    /// `DELETE /tenants/{tenant}/applications/{client}`: terminates its enrolments, denies its pending requests
    /// (`application_deleted`), cancels its invitations; the client id never authenticates again.
    @Sendable func deleteApplication(_ request: HTTPRequest, _ caller: ManagementCaller) async throws -> HTTPResponse {
        let application = try await pathApplication(request, caller)
        try refuseActionBody(request)
        let summary = try await store.deleteApplication(clientID: application.clientID, actor: caller.keyID)
        return try ManagementJSON.response(ManagedDeletion(kind: "application", id: application.clientID, summary))
    }

    /// `DELETE /tenants/{tenant}` (administrator): refused (409) while the tenant has users or applications; revokes
    /// its API keys.
    @Sendable func deleteTenant(_ request: HTTPRequest, _ caller: ManagementCaller) async throws -> HTTPResponse {
        try caller.requireAdministrator()
        let tenant = try await pathTenant(request, caller)
        try refuseActionBody(request)
        let summary = try await store.deleteTenant(id: tenant.id, actor: caller.keyID)
        return try ManagementJSON.response(ManagedDeletion(kind: "tenant", id: tenant.id, summary))
    }

    /// Default and largest page of an invitation listing.
    static let invitationPage = (default: 50, max: 200)

    /// `GET /tenants/{tenant}/invitations[?subject=&client_id=&status=&limit=]`: newest first.
    @Sendable func listInvitations(_ request: HTTPRequest, _ caller: ManagementCaller) async throws -> HTTPResponse {
        let tenant = try await pathTenant(request, caller)
        let status = try request.queryValue("status", maxBytes: 32).map { value throws(ManagementError) in
            guard let status = InvitationStatus(rawValue: value) else {
                throw ManagementError.invalidField(field: "status", reason: "must be pending, consumed, cancelled or expired")
            }
            return status
        }
        let limit = Int(try request.queryInteger("limit", in: 1...Int64(Self.invitationPage.max)) ?? Int64(Self.invitationPage.default))
        let invitations = try await store.invitations(tenantID: tenant.id, subject: try request.queryValue("subject"),
                                                      clientID: try request.queryValue("client_id"), status: status, limit: limit)
        return try ManagementJSON.response(ManagedList(try invitations.map(managedInvitation)))
    }

    /// `POST /tenants/{tenant}/invitations/{invitation}/cancel`: an unused invitation stops working (repeating is a no-op;
    /// a used one is 409 — revoke the device instead).
    @Sendable func cancelInvitation(_ request: HTTPRequest, _ caller: ManagementCaller) async throws -> HTTPResponse {
        let tenant = try await pathTenant(request, caller)
        try refuseActionBody(request)
        let invitation = try await store.invitation(id: request.pathParameter("invitation"))
        guard invitation.tenantID == tenant.id else { throw ManagementError.notFound("invitation") }
        let cancelled = try await store.cancelInvitation(id: invitation.id)
        if invitation.cancelledAt == nil {
            // The invitation id is the link's secret: the audit names the user and application, never the id.
            try await audit(caller, tenant: tenant.id, kind: "invitation.cancelled", target: invitation.subject,
                            detail: ["client_id": .string(invitation.clientID),
                                     "created_at": .string(SQLAuthorityStore.rfc3339(invitation.createdAt))])
        }
        return try ManagementJSON.response(try managedInvitation(cancelled))
    }
}
