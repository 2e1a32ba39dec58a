import FaceSealCrypto
import FaceSealHTTP
import FaceSealWire
import Foundation

// Users and enrolment invitations.
extension Authority {

    /// `POST /tenants/{tenant}/users`: `{email}`; the subject is generated; the email is lower-cased.
    @Sendable func createUser(_ request: HTTPRequest, _ caller: ManagementCaller) async throws -> HTTPResponse {
        let tenant = try await pathTenant(request, caller)
        let email = try ManagementValidation.email(request.managementBody(UserCreation.self).email)
        // The store's uniqueness check answers for the subject; look the email up first to name the conflict.
        if (try? await store.user(tenantID: tenant.id, email: email)) != nil {
            throw ManagementError.conflict("a user with this email exists in the tenant")
        }
        let user = try await store.createUser(UserRecord(subject: ManagementCredentials.identifier("usr", byteCount: 16),
                                                         tenantID: tenant.id, email: email))
        try await audit(caller, tenant: tenant.id, kind: "user.created", target: user.subject, detail: ["email": .string(email)])
        return try ManagementJSON.response(ManagedUser(user), status: .created)
    }

    /// `GET /tenants/{tenant}/users[?email=]`.
    @Sendable func listUsers(_ request: HTTPRequest, _ caller: ManagementCaller) async throws -> HTTPResponse {
        let tenant = try await pathTenant(request, caller)
        let users: [UserRecord]
        if let email = try request.queryValue("email", maxBytes: 1024) {
            let normalised = try ManagementValidation.email(email)
            do {
                users = [try await store.user(tenantID: tenant.id, email: normalised)]
            } catch AuthorityStoreError.notFound {
                users = []
            }
        } else {
            users = try await store.users(tenantID: tenant.id)
        }
        return try ManagementJSON.response(ManagedList(users.map(ManagedUser.init)))
    }

    /// `GET /tenants/{tenant}/users/{subject}`.
    @Sendable func showUser(_ request: HTTPRequest, _ caller: ManagementCaller) async throws -> HTTPResponse {
        try ManagementJSON.response(ManagedUser(try await pathUser(request, caller)))
    }

    /// The user named in the path, which must belong to the path's tenant (else 404).
    func pathUser(_ request: HTTPRequest, _ caller: ManagementCaller) async throws -> UserRecord {
        let tenant = try await pathTenant(request, caller)
        let user = try await store.user(subject: request.pathParameter("subject"))
        guard user.tenantID == tenant.id else { throw ManagementError.notFound("user") }
        return user
    }

    /// `POST /tenants/{tenant}/invitations`: `{subject | email, client_id, expires_in?}` → the invitation with
    /// its enrolment link. The invitation id is the secret of the link (256 random bits); the store keeps its
    /// SHA-256 as `secretHash`.
    @Sendable func createInvitation(_ request: HTTPRequest, _ caller: ManagementCaller) async throws -> HTTPResponse {
        let tenant = try await pathTenant(request, caller)
        let body = try request.managementBody(InvitationCreation.self)
        let kind = body.kind ?? .enrolment
        let (subject, email, clientID) = (body.subject, body.email, body.clientID)
        guard (subject == nil) != (email == nil) else {
            throw ManagementError.invalidRequest(status: 400, "give exactly one of 'subject' and 'email'")
        }
        let range = configuration.invitationLifetime.range
        var lifetime = configuration.invitationLifetime.default
        if let expiresIn = body.expiresIn {
            guard let value = expiresIn.within(range) else {
                throw ManagementError.invalidField(field: "expires_in", reason: "must be within \(range.lowerBound)…\(range.upperBound)")
            }
            lifetime = value
        }

        let user: UserRecord
        if let subject {
            user = try await store.user(subject: subject)
            guard user.tenantID == tenant.id else { throw ManagementError.notFound("user") }
        } else {
            user = try await store.user(tenantID: tenant.id, email: try ManagementValidation.email(email ?? ""))
        }
        let application: ApplicationRecord
        do {
            application = try await store.application(clientID: clientID)
        } catch AuthorityStoreError.notFound {
            throw ManagementError.notFound("application")
        }
        guard application.tenantID == tenant.id else { throw ManagementError.notFound("application") }
        // A recovery is for a user with no device left: it must not take over one that could approve (or object).
        if kind == .recovery, try await store.enrolments(subject: user.subject).contains(where: { $0.status == .active }) {
            throw ManagementError.conflict("the user still has an enrolled device: revoke or terminate it before a recovery")
        }

        let id = ManagementCredentials.identifier("inv", byteCount: 32)
        let expiresAt = Date(timeIntervalSince1970: TimeInterval(now + Int64(lifetime)))
        let invitation = try await store.createInvitation(InvitationRecord(
            id: id, tenantID: tenant.id, subject: user.subject, clientID: application.clientID,
            secretHash: ManagementCredentials.hash(id), expiresAt: expiresAt, kind: kind))
        try await audit(caller, tenant: tenant.id, kind: kind == .recovery ? "invitation.recovery_created" : "invitation.created", target: user.subject,
                        detail: ["client_id": .string(application.clientID), "expires_at": .string(SQLAuthorityStore.rfc3339(expiresAt))])
        return try ManagementJSON.response(try managedInvitation(invitation), status: .created)
    }

    /// `GET /tenants/{tenant}/invitations/{invitation}`: its state and (again) its link.
    @Sendable func showInvitation(_ request: HTTPRequest, _ caller: ManagementCaller) async throws -> HTTPResponse {
        let tenant = try await pathTenant(request, caller)
        let invitation = try await store.invitation(id: request.pathParameter("invitation"))
        guard invitation.tenantID == tenant.id else { throw ManagementError.notFound("invitation") }
        return try ManagementJSON.response(try managedInvitation(invitation))
    }

    /// The invitation with its enrolment link: `LinkClaims` of kind `enrolment` whose `rid` is the invitation,
    /// `exp` its expiry, and `akey` the authority's Ed25519 public key, signed with that key. Deterministic
    /// (Ed25519 and the derived nonce), so showing an invitation again gives the same link.
    func managedInvitation(_ invitation: InvitationRecord) throws -> ManagedInvitation {
        let expiry = Int64(invitation.expiresAt.timeIntervalSince1970)
        let claims = LinkClaims(iss: configuration.issuer, rid: invitation.id, kind: .enrolment, exp: expiry,
                                nonce: linkNonce(for: invitation.id), akey: Array(deviceKey.publicKey.rawRepresentation))
        let link = try LinkSignature.make(claims, key: deviceKey)
        var issuer = configuration.issuer
        while issuer.hasSuffix("/") { issuer.removeLast() }
        return ManagedInvitation(
            id: invitation.id, tenantID: invitation.tenantID, subject: invitation.subject, clientID: invitation.clientID,
            createdAt: invitation.createdAt, expiresAt: invitation.expiresAt, consumedAt: invitation.consumedAt,
            cancelledAt: invitation.cancelledAt, status: invitation.status(at: clock.now()),
            link: link, universalLink: issuer + LinkLimits.universalLinkPath + link, kind: invitation.kind)
    }
}
