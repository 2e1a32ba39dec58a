import FaceSealCrypto
import FaceSealHTTP
public import FaceSealWire
import Foundation

// Deletions, invitation listing and cancellation, and the audit of every CIBA request's life (docs/PROTOCOL.md §11).
extension SQLAuthorityStore {
    // MARK: Audit inside a transaction

    /// An RFC 3339 time in UTC to the second, as every time in the management API (`gmtime_r` digits: a new
    /// `ISO8601DateFormatter` per call cost more than the audit row it went into).
    static func rfc3339(_ date: Date) -> String {
        RequestLogger.timestamp(date)
    }

    /// Appends an audit event in the caller's transaction, so it is stored exactly when the change it records is.
    static func insertAudit(_ tx: any SQLTransaction, tenantID: String?, kind: String, actor: String?, target: String?,
                            detail: [String: JSONValue], now: Date) throws {
        try tx.executeDeferred(
            "INSERT INTO audit_events (tenant_id, at, kind, actor, target, detail_json) VALUES (?, ?, ?, ?, ?, ?)",
            [.optionalText(tenantID), .date(now), .text(kind), .optionalText(actor), .optionalText(target),
             .text(JSONValue.object(detail).serializedString)]
        )
    }

    /// One step of a request's life: `request.<event>`, target its `auth_req_id`, with its client and user.
    static func auditRequest(_ tx: any SQLTransaction, _ request: CIBARequestRecord, _ event: RequestAuditEvent, actor: String?,
                             detail: [String: JSONValue] = [:], now: Date) throws {
        var members = detail
        members["client_id"] = .string(request.clientID)
        members["subject"] = .string(request.subject)
        try insertAudit(tx, tenantID: request.tenantID, kind: event.kind, actor: actor, target: request.authReqID, detail: members, now: now)
    }

    /// Denies the pending requests `whereClause` selects (bound to `value`) with `reason`, each audited; returns their ids.
    static func denyPending(_ tx: any SQLTransaction, where column: String, equals value: String, reason: String, actor: String?,
                            dialect: SQLDialect, now: Date) throws -> [String] {
        let pending = try tx.query(
            "SELECT * FROM ciba_requests WHERE \(column) = ? AND state = 'pending' ORDER BY auth_req_id" + dialect.forUpdate, [.text(value)]
        ).map(request(from:))
        for request in pending where RequestLifecycle.decide(.withdraw(reason: reason), request, now: now) == .deny(reason: reason) {
            _ = try writeDenial(tx, request, reason: reason, actor: actor, now: now)
        }
        try tx.execute(
            "DELETE FROM link_outbox WHERE auth_req_id IN (SELECT auth_req_id FROM ciba_requests WHERE \(column) = ?)", [.text(value)]
        )
        return pending.map(\.authReqID)
    }

    /// Ends the enrolments `column` selects that can still be used (active, or waiting for an approval) with `status`.
    static func endEnrolments(_ tx: any SQLTransaction, where column: String, equals value: String, status: DeviceKeyStatus,
                              dialect: SQLDialect, now: Date) throws -> Int {
        let ids = try tx.query(
            "SELECT id FROM enrolments WHERE \(column) = ? AND status IN ('active', 'pending') ORDER BY id" + dialect.forUpdate, [.text(value)]
        ).map { try $0.text("id") }
        for id in ids { try end(tx, enrolmentID: id, status: status, now: now) }
        return ids.count
    }

    static func cancelInvitations(_ tx: any SQLTransaction, where column: String, equals value: String, now: Date) throws -> Int {
        try tx.execute("UPDATE invitations SET cancelled_at = ? WHERE \(column) = ? AND consumed_at IS NULL AND cancelled_at IS NULL",
                       [.date(now), .text(value)])
    }

    static func summaryDetail(_ summary: DeletionSummary) -> [String: JSONValue] {
        [
            "enrolments_ended": .integer(Int64(summary.enrolmentsEnded)), "requests_ended": .integer(Int64(summary.requestsEnded)),
            "invitations_cancelled": .integer(Int64(summary.invitationsCancelled)),
            "face_tokens_erased": .integer(Int64(summary.faceTokensErased)), "api_keys_revoked": .integer(Int64(summary.apiKeysRevoked)),
        ]
    }

    // MARK: Deletions

    public func deleteUser(subject: String, actor: String?) async throws -> DeletionSummary {
        let dialect = database.dialect
        let summary = try await transact { tx, now -> DeletionSummary in
            let user = try Self.loadUser(tx, subject: subject, lock: dialect)
            var summary = DeletionSummary()
            summary.enrolmentsEnded = try Self.endEnrolments(tx, where: "subject", equals: subject, status: .revoked, dialect: dialect, now: now)
            summary.endedRequestIDs = try Self.denyPending(tx, where: "subject", equals: subject, reason: "user_deleted", actor: actor,
                                                           dialect: dialect, now: now)
            summary.requestsEnded = summary.endedRequestIDs.count
            // What the user asked for and what was issued about them goes with them; the ids stay for the audit.
            try tx.execute(
                """
                UPDATE ciba_requests SET binding_message = NULL, pki_data = NULL, pki_context = NULL, id_token = NULL,
                    client_notification_token = NULL WHERE subject = ?
                """, [.text(subject)])
            summary.invitationsCancelled = try Self.cancelInvitations(tx, where: "subject", equals: subject, now: now)
            summary.faceTokensErased = try tx.execute("DELETE FROM face_tokens WHERE subject = ?", [.text(subject)])
            try tx.execute("UPDATE users SET email = ?, deleted_at = ? WHERE subject = ?",
                           [.text("deleted:" + subject), .date(now), .text(subject)])
            try tx.execute("UPDATE audit_events SET detail_json = '{}' WHERE target = ? AND kind = 'user.created'", [.text(subject)])
            try Self.insertAudit(tx, tenantID: user.tenantID, kind: "user.deleted", actor: actor, target: subject,
                                 detail: Self.summaryDetail(summary), now: now)
            return summary
        }
        // SQLite overwrites deleted content (`secure_delete`); the checkpoint takes the old pages out of the WAL file too.
        try? await database.truncateJournal()
        return summary
    }

    public func deleteApplication(clientID: String, actor: String?) async throws -> DeletionSummary {
        let dialect = database.dialect
        return try await transact { tx, now -> DeletionSummary in
            let application = try Self.loadApplication(tx, clientID: clientID, lock: dialect)
            var summary = DeletionSummary()
            summary.enrolmentsEnded = try Self.endEnrolments(tx, where: "client_id", equals: clientID, status: .terminated,
                                                             dialect: dialect, now: now)
            summary.endedRequestIDs = try Self.denyPending(tx, where: "client_id", equals: clientID, reason: "application_deleted",
                                                           actor: actor, dialect: dialect, now: now)
            summary.requestsEnded = summary.endedRequestIDs.count
            summary.invitationsCancelled = try Self.cancelInvitations(tx, where: "client_id", equals: clientID, now: now)
            try tx.execute("UPDATE applications SET deleted_at = ? WHERE client_id = ?", [.date(now), .text(clientID)])
            try Self.insertAudit(tx, tenantID: application.tenantID, kind: "application.deleted", actor: actor, target: clientID,
                                 detail: Self.summaryDetail(summary), now: now)
            return summary
        }
    }

    public func deleteTenant(id: String, actor: String?) async throws -> DeletionSummary {
        let dialect = database.dialect
        return try await transact { tx, now -> DeletionSummary in
            let tenant = try Self.loadTenant(tx, id: id, lock: dialect)
            let users = try tx.queryOne("SELECT COUNT(*) AS n FROM users WHERE tenant_id = ? AND deleted_at IS NULL", [.text(id)])?.int("n") ?? 0
            let applications = try tx.queryOne("SELECT COUNT(*) AS n FROM applications WHERE tenant_id = ? AND deleted_at IS NULL",
                                               [.text(id)])?.int("n") ?? 0
            guard users == 0, applications == 0 else {
                throw AuthorityStoreError.inUse(.tenant, id: id,
                                                reason: "the tenant still has \(users) users and \(applications) applications: delete them first")
            }
            var summary = DeletionSummary()
            summary.apiKeysRevoked = try tx.execute("UPDATE api_keys SET revoked_at = ? WHERE tenant_id = ? AND revoked_at IS NULL",
                                                    [.date(now), .text(id)])
            try tx.execute("UPDATE tenants SET deleted_at = ? WHERE id = ?", [.date(now), .text(tenant.id)])
            // Its webhook and the sealed secret go with it.
            try tx.execute("DELETE FROM tenant_webhooks WHERE tenant_id = ?", [.text(tenant.id)])
            // The operator's log: nobody can read a deleted tenant's own.
            try Self.insertAudit(tx, tenantID: nil, kind: "tenant.deleted", actor: actor, target: id, detail: Self.summaryDetail(summary), now: now)
            return summary
        }
    }

    // MARK: Invitations

    public func invitations(tenantID: String, subject: String?, clientID: String?, status: InvitationStatus?, limit: Int) async throws -> [InvitationRecord] {
        guard (1...1000).contains(limit) else { throw AuthorityStoreError.invalidInput(field: "limit", reason: "outside 1…1000") }
        return try await read { tx, now in
            _ = try Self.loadTenant(tx, id: tenantID)
            var sql = "SELECT * FROM invitations WHERE tenant_id = ?"
            var parameters: [SQLValue] = [.text(tenantID)]
            if let subject {
                sql += " AND subject = ?"
                parameters.append(.text(subject))
            }
            if let clientID {
                sql += " AND client_id = ?"
                parameters.append(.text(clientID))
            }
            switch status {
            case nil: break
            case .consumed: sql += " AND consumed_at IS NOT NULL"
            case .cancelled: sql += " AND consumed_at IS NULL AND cancelled_at IS NOT NULL"
            case .pending, .expired:
                sql += " AND consumed_at IS NULL AND cancelled_at IS NULL AND expires_at " + (status == .pending ? "> ?" : "<= ?")
                parameters.append(.date(now))
            }
            parameters.append(.int(limit))
            return try tx.query(sql + " ORDER BY created_at DESC, id LIMIT ?", parameters).map(Self.invitation(from:))
        }
    }

    public func cancelInvitation(id: String) async throws -> InvitationRecord {
        try await transact { tx, now in
            guard let row = try tx.queryOne("SELECT * FROM invitations WHERE id = ?" + self.database.dialect.forUpdate, [.text(id)]) else {
                throw AuthorityStoreError.notFound(.invitation, id: id)
            }
            let invitation = try Self.invitation(from: row)
            guard invitation.consumedAt == nil else { throw AuthorityStoreError.invitationUnusable(id: id, reason: "already used") }
            if invitation.cancelledAt == nil {
                try tx.execute("UPDATE invitations SET cancelled_at = ? WHERE id = ?", [.date(now), .text(id)])
            }
            guard let updated = try tx.queryOne("SELECT * FROM invitations WHERE id = ?", [.text(id)]) else {
                throw AuthorityStoreError.notFound(.invitation, id: id)
            }
            return try Self.invitation(from: updated)
        }
    }

    // MARK: Request delivery

    public func markDelivered(authReqID: String, deviceID: String, registering replay: JTIRegistration?) async throws -> Bool {
        try Self.checkIdentifier(deviceID, field: "deviceID")
        return try await transact(registering: replay) { tx, now in
            let request = try Self.loadRequest(tx, authReqID: authReqID, lock: self.database.dialect)
            guard case .proceed = try Self.decide(.deliver, request, now: now) else { preconditionFailure("a delivery proceeds or is refused") }
            guard try tx.execute("UPDATE ciba_requests SET delivered_at = ? WHERE auth_req_id = ? AND state = 'pending' AND delivered_at IS NULL",
                                 [.date(now), .text(authReqID)]) == 1 else { return false }
            try Self.auditRequest(tx, request, .delivered, actor: deviceID, detail: ["device_id": .string(deviceID)], now: now)
            return true
        }
    }
}
