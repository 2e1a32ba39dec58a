public import FaceSealWire
public import Foundation

// Invitations, enrolment, devices, device keys and face tokens.
extension SQLAuthorityStore {
    static let deviceKeySelect = deviceKeySelect(failureWindows: 0)

    /// A device key with its enrolment's device, user and application; with `failureWindows` n, the rate counters of n
    /// keys beside it (`failures_i`, `window_ends_i`: NULL when the counter does not exist), bound before the key id.
    static func deviceKeySelect(failureWindows: Int) -> String {
        let windows = (0..<failureWindows)
        return """
            SELECT k.key_id, k.enrolment_id, k.role, k.public_key_jwk, k.status, k.superseded_by, k.overlap_until,
                k.created_at, k.status_changed_at, e.device_id, e.subject, e.client_id
            """ + windows.map { ", r\($0).count AS failures_\($0), r\($0).window_ends_at AS window_ends_\($0)" }.joined()
            + "\nFROM device_keys k JOIN enrolments e ON e.id = k.enrolment_id"
            + windows.map { " LEFT JOIN rate_counters r\($0) ON r\($0).key = ?" }.joined()
    }

    /// The edge's read: a key with its two failure windows (the usual count, so the text is built once).
    private static let deviceKeyWithTwoWindows = deviceKeySelect(failureWindows: 2) + " WHERE k.key_id = ?"
    private static let windowColumns = [("failures_0", "window_ends_0"), ("failures_1", "window_ends_1")]

    // MARK: Row decoding

    static func invitation(from row: SQLRow) throws -> InvitationRecord {
        guard let kind = InvitationKind(rawValue: try row.text("kind")) else { throw SQLError.typeMismatch(column: "kind") }
        var invitation = InvitationRecord(
            id: try row.text("id"), tenantID: try row.text("tenant_id"), subject: try row.text("subject"),
            clientID: try row.text("client_id"), secretHash: try row.blob("secret_hash"), expiresAt: try row.date("expires_at"),
            createdAt: try row.date("created_at"), consumedAt: try row.optionalDate("consumed_at"), kind: kind,
            enrolmentID: try row.optionalText("enrolment_id")
        )
        invitation.cancelledAt = try row.optionalDate("cancelled_at")
        return invitation
    }

    static func device(from row: SQLRow) throws -> DeviceRecord {
        DeviceRecord(id: try row.text("id"), label: try row.text("label"), createdAt: try row.date("created_at"))
    }

    static func status(_ row: SQLRow, _ column: String = "status") throws -> DeviceKeyStatus {
        guard let status = DeviceKeyStatus(rawValue: try row.text(column)) else { throw SQLError.typeMismatch(column: column) }
        return status
    }

    static func enrolment(from row: SQLRow) throws -> EnrolmentRecord {
        var approval: PendingApproval?
        if let method = try row.optionalText("approval") {
            guard let parsed = FurtherDeviceApproval(rawValue: method) else { throw SQLError.typeMismatch(column: "approval") }
            approval = PendingApproval(
                method: parsed, expiresAt: try row.date("approval_expires_at"), approvedAt: try row.optionalDate("approved_at"),
                releasedAt: try row.optionalDate("released_at"), passwordFailures: Int(try row.int("password_failures")))
        }
        return EnrolmentRecord(
            id: try row.text("id"), deviceID: try row.text("device_id"), tenantID: try row.text("tenant_id"),
            subject: try row.text("subject"), clientID: try row.text("client_id"), status: try status(row),
            createdAt: try row.date("created_at"), statusChangedAt: try row.date("status_changed_at"), approval: approval
        )
    }

    static func deviceKey(from row: SQLRow) throws -> DeviceKeyRecord {
        guard let role = DeviceKeyRole(rawValue: try row.text("role")) else { throw SQLError.typeMismatch(column: "role") }
        return DeviceKeyRecord(
            keyID: try row.text("key_id"), enrolmentID: try row.text("enrolment_id"), deviceID: try row.text("device_id"),
            subject: try row.text("subject"), clientID: try row.text("client_id"), role: role,
            publicKeyJWK: try row.text("public_key_jwk"), status: try status(row),
            supersededBy: try row.optionalText("superseded_by"), overlapUntil: try row.optionalDate("overlap_until"),
            createdAt: try row.date("created_at"), statusChangedAt: try row.date("status_changed_at")
        )
    }

    static func faceToken(from row: SQLRow) throws -> FaceTokenRecord {
        FaceTokenRecord(
            subject: try row.text("subject"), tokenID: try row.text("token_id"), generation: try row.int("generation"),
            headerJSON: try row.blob("header_json"), sealedBody: try row.blob("sealed_body"),
            encryptedServerShare: try row.blob("encrypted_server_share"), updatedAt: try row.date("updated_at"),
            encryptedPasswordVerifier: try row.optionalBlob("password_verifier")
        )
    }

    // MARK: Lookups inside a transaction

    static func loadEnrolment(_ tx: any SQLTransaction, id: String, lock: SQLDialect? = nil) throws -> EnrolmentRecord {
        guard let row = try tx.queryOne("SELECT * FROM enrolments WHERE id = ?" + (lock?.forUpdate ?? ""), [.text(id)]) else {
            throw AuthorityStoreError.notFound(.enrolment, id: id)
        }
        return try enrolment(from: row)
    }

    static func loadDeviceKeys(_ tx: any SQLTransaction, enrolmentID: String) throws -> [DeviceKeyRecord] {
        try tx.query(deviceKeySelect + " WHERE k.enrolment_id = ? ORDER BY k.created_at, k.role, k.key_id", [.text(enrolmentID)])
            .map(deviceKey(from:))
    }

    static func loadFaceToken(_ tx: any SQLTransaction, subject: String) throws -> FaceTokenRecord? {
        try tx.queryOne("SELECT * FROM face_tokens WHERE subject = ?", [.text(subject)]).map(faceToken(from:))
    }

    static func checkNewKey(_ key: NewDeviceKey, field: String) throws {
        try checkIdentifier(key.keyID, field: "\(field).keyID")
        guard !key.publicKeyJWK.isEmpty else { throw AuthorityStoreError.invalidInput(field: "\(field).publicKeyJWK", reason: "empty") }
        try checkLength(key.publicKeyJWK, field: "\(field).publicKeyJWK", max: 16 * 1024)
    }

    static func checkFaceToken(_ token: FaceTokenRecord) throws {
        try checkIdentifier(token.subject, field: "faceToken.subject")
        try checkIdentifier(token.tokenID, field: "faceToken.tokenID")
        guard token.generation >= 0 else { throw AuthorityStoreError.invalidInput(field: "faceToken.generation", reason: "negative") }
        guard !token.headerJSON.isEmpty, token.headerJSON.count <= 16 * 1024 else {
            throw AuthorityStoreError.invalidInput(field: "faceToken.headerJSON", reason: "must be 1 byte…16 KiB")
        }
        guard !token.sealedBody.isEmpty, token.sealedBody.count <= 1024 * 1024 else {
            throw AuthorityStoreError.invalidInput(field: "faceToken.sealedBody", reason: "must be 1 byte…1 MiB")
        }
        guard !token.encryptedServerShare.isEmpty, token.encryptedServerShare.count <= 1024 else {
            throw AuthorityStoreError.invalidInput(field: "faceToken.encryptedServerShare", reason: "must be 1…1024 bytes")
        }
        if let verifier = token.encryptedPasswordVerifier, verifier.isEmpty || verifier.count > 1024 {
            throw AuthorityStoreError.invalidInput(field: "faceToken.encryptedPasswordVerifier", reason: "must be 1…1024 bytes")
        }
    }

    static func insertKey(_ tx: any SQLTransaction, _ key: NewDeviceKey, role: DeviceKeyRole, enrolmentID: String, now: Date,
                          status: DeviceKeyStatus = .active) throws {
        if try tx.queryOne("SELECT key_id FROM device_keys WHERE key_id = ?", [.text(key.keyID)]) != nil {
            throw AuthorityStoreError.conflict(.deviceKey, id: key.keyID)
        }
        try tx.execute(
            """
            INSERT INTO device_keys (key_id, enrolment_id, role, public_key_jwk, status, superseded_by, overlap_until,
                created_at, status_changed_at)
            VALUES (?, ?, ?, ?, ?, NULL, NULL, ?, ?)
            """,
            [.text(key.keyID), .text(enrolmentID), .text(role.rawValue), .text(key.publicKeyJWK), .text(status.rawValue), .date(now), .date(now)]
        )
    }

    /// Sets an enrolment and its still-usable keys to an ending status.
    static func end(_ tx: any SQLTransaction, enrolmentID: String, status: DeviceKeyStatus, now: Date) throws {
        try tx.execute(
            "UPDATE enrolments SET status = ?, status_changed_at = ? WHERE id = ?",
            [.text(status.rawValue), .date(now), .text(enrolmentID)]
        )
        try tx.execute(
            "UPDATE device_keys SET status = ?, status_changed_at = ? WHERE enrolment_id = ? AND status IN ('active', 'superseded', 'pending')",
            [.text(status.rawValue), .date(now), .text(enrolmentID)]
        )
    }

    /// One device per user: the user's other active enrolments of `clientID` become `replaced`; answers their key ids.
    static func replaceOtherDevices(_ tx: any SQLTransaction, subject: String, clientID: String, deviceID: String, dialect: SQLDialect,
                                    now: Date) throws -> [String] {
        var replaced: [String] = []
        let others = try tx.query(
            "SELECT id FROM enrolments WHERE subject = ? AND client_id = ? AND device_id <> ? AND status = 'active' ORDER BY id" + dialect.forUpdate,
            [.text(subject), .text(clientID), .text(deviceID)]
        )
        for row in others {
            let enrolmentID = try row.text("id")
            replaced += try tx.query(
                "SELECT key_id FROM device_keys WHERE enrolment_id = ? AND status IN ('active', 'superseded') ORDER BY key_id",
                [.text(enrolmentID)]
            ).map { try $0.text("key_id") }
            try end(tx, enrolmentID: enrolmentID, status: .replaced, now: now)
        }
        return replaced
    }

    /// An approval request left `pending` by a denial: its pending enrolment ends (`revoked`) in the same transaction.
    static func endApprovedEnrolment(_ tx: any SQLTransaction, of request: CIBARequestRecord, now: Date) throws {
        guard let enrolmentID = request.approvesEnrolment else { return }
        guard let row = try tx.queryOne("SELECT status FROM enrolments WHERE id = ?", [.text(enrolmentID)]),
              try row.text("status") == DeviceKeyStatus.pending.rawValue else { return }
        try end(tx, enrolmentID: enrolmentID, status: .revoked, now: now)
    }

    // MARK: Invitations

    public func createInvitation(_ invitation: InvitationRecord) async throws -> InvitationRecord {
        try Self.checkIdentifier(invitation.id, field: "id")
        guard !invitation.secretHash.isEmpty, invitation.secretHash.count <= 128 else {
            throw AuthorityStoreError.invalidInput(field: "secretHash", reason: "must be 1…128 bytes")
        }
        return try await transact(conflict: (.invitation, invitation.id)) { tx, now in
            _ = try Self.loadTenant(tx, id: invitation.tenantID)
            let user = try Self.loadUser(tx, subject: invitation.subject)
            let application = try Self.loadApplication(tx, clientID: invitation.clientID)
            guard user.tenantID == invitation.tenantID else { throw AuthorityStoreError.notFound(.user, id: invitation.subject) }
            guard application.tenantID == invitation.tenantID else { throw AuthorityStoreError.notFound(.application, id: invitation.clientID) }
            guard invitation.expiresAt > now else {
                throw AuthorityStoreError.invalidInput(field: "expiresAt", reason: "already passed")
            }
            try tx.execute(
                """
                INSERT INTO invitations (id, tenant_id, subject, client_id, secret_hash, created_at, expires_at, consumed_at, kind)
                VALUES (?, ?, ?, ?, ?, ?, ?, NULL, ?)
                """,
                [.text(invitation.id), .text(invitation.tenantID), .text(invitation.subject), .text(invitation.clientID),
                 .blob(invitation.secretHash), .date(now), .date(invitation.expiresAt), .text(invitation.kind.rawValue)]
            )
            guard let row = try tx.queryOne("SELECT * FROM invitations WHERE id = ?", [.text(invitation.id)]) else {
                throw AuthorityStoreError.notFound(.invitation, id: invitation.id)
            }
            return try Self.invitation(from: row)
        }
    }

    public func invitation(id: String) async throws -> InvitationRecord {
        try await readStatement { tx, _ in
            guard let row = try tx.queryOne("SELECT * FROM invitations WHERE id = ?", [.text(id)]) else {
                throw AuthorityStoreError.notFound(.invitation, id: id)
            }
            return try Self.invitation(from: row)
        }
    }

    // MARK: Enrolment

    public func enrol(_ request: EnrolmentInsert) async throws -> EnrolmentOutcome {
        try Self.checkIdentifier(request.invitationID, field: "invitationID")
        try Self.checkIdentifier(request.enrolmentID, field: "enrolmentID")
        try Self.checkIdentifier(request.device.id, field: "device.id")
        try Self.checkLength(request.device.label, field: "device.label", max: 256)
        try Self.checkNewKey(request.ambientKey, field: "ambientKey")
        try Self.checkNewKey(request.userPresentKey, field: "userPresentKey")
        guard request.ambientKey.keyID != request.userPresentKey.keyID else {
            throw AuthorityStoreError.invalidInput(field: "userPresentKey.keyID", reason: "the two keys need different ids")
        }
        if let token = request.initialFaceToken { try Self.checkFaceToken(token) }

        return try await transact(conflict: (.enrolment, request.enrolmentID)) { tx, now in
            let dialect = self.database.dialect
            // The pending limit counts under the user row's lock, taken before the invitation's (deletions lock the user first).
            if request.pendingLimit != nil, let row = try tx.queryOne("SELECT subject FROM invitations WHERE id = ?", [.text(request.invitationID)]) {
                _ = try Self.loadUser(tx, subject: try row.text("subject"), lock: dialect)
            }
            guard let invitationRow = try tx.queryOne("SELECT * FROM invitations WHERE id = ?" + dialect.forUpdate, [.text(request.invitationID)]) else {
                throw AuthorityStoreError.notFound(.invitation, id: request.invitationID)
            }
            let invitation = try Self.invitation(from: invitationRow)
            guard invitation.consumedAt == nil else {
                throw AuthorityStoreError.invitationUnusable(id: invitation.id, reason: "already used")
            }
            guard invitation.cancelledAt == nil else {
                throw AuthorityStoreError.invitationUnusable(id: invitation.id, reason: "cancelled")
            }
            guard invitation.expiresAt > now else {
                throw AuthorityStoreError.invitationUnusable(id: invitation.id, reason: "expired")
            }
            let tenant = try Self.loadTenant(tx, id: invitation.tenantID)

            let existingToken = try Self.loadFaceToken(tx, subject: invitation.subject)
            if let token = request.initialFaceToken {
                guard token.subject == invitation.subject else {
                    throw AuthorityStoreError.invalidInput(field: "initialFaceToken.subject", reason: "not the invited user")
                }
                if request.replacesFaceToken {
                    // A recovery replaces the token only when no device of the user is left to approve a further one.
                    guard invitation.kind == .recovery else {
                        throw AuthorityStoreError.invalidInput(field: "replacesFaceToken", reason: "only a recovery invitation replaces a token")
                    }
                    if try tx.queryOne("SELECT id FROM enrolments WHERE subject = ? AND status = 'active'", [.text(invitation.subject)]) != nil {
                        throw AuthorityStoreError.invitationUnusable(id: invitation.id, reason: "the user still has an enrolled device")
                    }
                } else if existingToken != nil {
                    throw AuthorityStoreError.conflict(.faceToken, id: invitation.subject)
                }
                guard request.approval == nil else {
                    throw AuthorityStoreError.invalidInput(field: "approval", reason: "a first device's enrolment needs no approval")
                }
            } else if existingToken == nil {
                throw AuthorityStoreError.invalidInput(field: "initialFaceToken", reason: "the user's first device must create the face token")
            }

            if try tx.queryOne("SELECT id FROM enrolments WHERE id = ?", [.text(request.enrolmentID)]) != nil {
                throw AuthorityStoreError.conflict(.enrolment, id: request.enrolmentID)
            }
            try tx.execute(
                "INSERT INTO devices (id, label, created_at) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING",
                [.text(request.device.id), .text(request.device.label), .date(now)]
            )

            // A pending enrolment replaces nothing yet: one device per user takes effect when its token is released.
            var replaced: [String] = []
            if tenant.policy.oneDevicePerUser && request.approval == nil {
                replaced = try Self.replaceOtherDevices(tx, subject: invitation.subject, clientID: invitation.clientID,
                                                        deviceID: request.device.id, dialect: dialect, now: now)
            }

            let status: DeviceKeyStatus = request.approval == nil ? .active : .pending
            let approval = request.approval
            try tx.execute(
                """
                INSERT INTO enrolments (id, device_id, tenant_id, subject, client_id, status, created_at, status_changed_at,
                    approval, approval_expires_at, approved_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [.text(request.enrolmentID), .text(request.device.id), .text(invitation.tenantID), .text(invitation.subject),
                 .text(invitation.clientID), .text(status.rawValue), .date(now), .date(now),
                 .optionalText(approval?.method.rawValue), approval.map { .date($0.expiresAt) } ?? .null,
                 approval?.method == FurtherDeviceApproval.none ? .date(now) : .null]
            )
            try Self.insertKey(tx, request.ambientKey, role: .ambient, enrolmentID: request.enrolmentID, now: now, status: status)
            try Self.insertKey(tx, request.userPresentKey, role: .userPresent, enrolmentID: request.enrolmentID, now: now, status: status)
            try tx.execute("UPDATE invitations SET consumed_at = ?, enrolment_id = ? WHERE id = ?",
                           [.date(now), .text(request.enrolmentID), .text(invitation.id)])
            if request.approval != nil, let limit = request.pendingLimit {
                try Self.checkPendingEnrolmentLimit(tx, subject: invitation.subject, excluding: request.enrolmentID, limit: limit, now: now)
            }
            for approvalRequest in request.approvalRequests {
                try Self.checkRequest(approvalRequest)
                guard approvalRequest.approvesEnrolment == request.enrolmentID, approvalRequest.subject == invitation.subject else {
                    throw AuthorityStoreError.invalidInput(field: "approvalRequests", reason: "not for this enrolment")
                }
                if request.approval != nil, let limit = request.pendingLimit {
                    try Self.checkPendingLimit(tx, request: approvalRequest, limit: limit, now: now)
                }
                try Self.insertRequest(tx, approvalRequest, now: now)
            }

            if let token = request.initialFaceToken {
                if request.replacesFaceToken {
                    try tx.execute("DELETE FROM face_tokens WHERE subject = ?", [.text(token.subject)])
                }
                try tx.execute(
                    """
                    INSERT INTO face_tokens (subject, token_id, generation, header_json, sealed_body, encrypted_server_share, updated_at,
                        password_verifier)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                    [.text(token.subject), .text(token.tokenID), .integer(token.generation), .blob(token.headerJSON),
                     .blob(token.sealedBody), .blob(token.encryptedServerShare), .date(now), .optionalBlob(token.encryptedPasswordVerifier)]
                )
            }
            return EnrolmentOutcome(
                enrolment: try Self.loadEnrolment(tx, id: request.enrolmentID),
                keys: try Self.loadDeviceKeys(tx, enrolmentID: request.enrolmentID),
                replacedKeyIDs: replaced
            )
        }
    }

    // MARK: Devices, enrolments and keys

    public func device(id: String) async throws -> DeviceRecord {
        try await readStatement { tx, _ in
            guard let row = try tx.queryOne("SELECT * FROM devices WHERE id = ?", [.text(id)]) else {
                throw AuthorityStoreError.notFound(.device, id: id)
            }
            return try Self.device(from: row)
        }
    }

    public func enrolment(id: String) async throws -> EnrolmentRecord {
        try await readStatement { tx, _ in try Self.loadEnrolment(tx, id: id) }
    }

    public func enrolments(subject: String) async throws -> [EnrolmentRecord] {
        try await read { tx, _ in
            _ = try Self.loadUser(tx, subject: subject)
            return try tx.query("SELECT * FROM enrolments WHERE subject = ? ORDER BY created_at, id", [.text(subject)]).map(Self.enrolment(from:))
        }
    }

    public func enrolments(tenantID: String) async throws -> [EnrolmentRecord] {
        try await read { tx, _ in
            _ = try Self.loadTenant(tx, id: tenantID)
            return try tx.query("SELECT * FROM enrolments WHERE tenant_id = ? ORDER BY created_at, id", [.text(tenantID)]).map(Self.enrolment(from:))
        }
    }

    public func enrolments(deviceID: String) async throws -> [EnrolmentRecord] {
        try await read { tx, _ in
            guard try tx.queryOne("SELECT id FROM devices WHERE id = ?", [.text(deviceID)]) != nil else {
                throw AuthorityStoreError.notFound(.device, id: deviceID)
            }
            return try tx.query("SELECT * FROM enrolments WHERE device_id = ? ORDER BY created_at, id", [.text(deviceID)]).map(Self.enrolment(from:))
        }
    }

    public func deviceKey(keyID: String) async throws -> DeviceKeyRecord {
        try await readStatement { tx, _ in try Self.loadDeviceKey(tx, keyID: keyID) }
    }

    public func deviceKey(keyID: String, failureKeys: [String]) async throws -> (key: DeviceKeyRecord, windows: [String: FailureWindow]) {
        for key in failureKeys { try Self.checkIdentifier(key, field: "key") }
        // The key and its windows in one statement: one point lookup a window, as `loadFailureWindows` does them.
        let keys = Array(Set(failureKeys))
        let sql = keys.count == 2 ? Self.deviceKeyWithTwoWindows : Self.deviceKeySelect(failureWindows: keys.count) + " WHERE k.key_id = ?"
        return try await readStatement { tx, now in
            guard let row = try tx.queryOne(sql, keys.map { .text($0) } + [.text(keyID)]) else {
                throw AuthorityStoreError.notFound(.deviceKey, id: keyID)
            }
            var windows: [String: FailureWindow] = [:]
            for (index, key) in keys.enumerated() {
                let (failures, endsAtColumn) = index < 2 ? Self.windowColumns[index] : ("failures_\(index)", "window_ends_\(index)")
                guard let count = try row.optionalInt(failures), let endsAt = try row.optionalDate(endsAtColumn), endsAt > now else { continue }
                windows[key] = FailureWindow(count: Int(count), endsAt: endsAt)
            }
            return (try Self.deviceKey(from: row), windows)
        }
    }

    static func loadDeviceKey(_ tx: any SQLTransaction, keyID: String) throws -> DeviceKeyRecord {
        guard let row = try tx.queryOne(deviceKeySelect + " WHERE k.key_id = ?", [.text(keyID)]) else {
            throw AuthorityStoreError.notFound(.deviceKey, id: keyID)
        }
        return try deviceKey(from: row)
    }

    public func deviceKeys(enrolmentID: String) async throws -> [DeviceKeyRecord] {
        try await read { tx, _ in
            _ = try Self.loadEnrolment(tx, id: enrolmentID)
            return try Self.loadDeviceKeys(tx, enrolmentID: enrolmentID)
        }
    }

    public func rotateKeys(enrolmentID: String, replacing: String, ambient: NewDeviceKey, userPresent: NewDeviceKey, overlapUntil: Date) async throws -> [DeviceKeyRecord] {
        try Self.checkNewKey(ambient, field: "ambient")
        try Self.checkNewKey(userPresent, field: "userPresent")
        guard ambient.keyID != userPresent.keyID else {
            throw AuthorityStoreError.invalidInput(field: "userPresent.keyID", reason: "the two keys need different ids")
        }
        return try await transact { tx, now in
            let enrolment = try Self.loadEnrolment(tx, id: enrolmentID, lock: self.database.dialect)
            guard enrolment.status == .active else {
                throw AuthorityStoreError.enrolmentNotActive(id: enrolmentID, status: enrolment.status)
            }
            guard overlapUntil > now else {
                throw AuthorityStoreError.invalidInput(field: "overlapUntil", reason: "already passed")
            }
            // The enrolment row is locked: a concurrent rotation by the same key has either committed (the key is
            // superseded now) or waits for this one.
            let signer = try tx.queryOne("SELECT status FROM device_keys WHERE key_id = ? AND enrolment_id = ?",
                                         [.text(replacing), .text(enrolmentID)])
            guard let signer else { throw AuthorityStoreError.notFound(.deviceKey, id: replacing) }
            let status = try Self.status(signer)
            guard status == .active else { throw AuthorityStoreError.deviceKeyNotActive(keyID: replacing, status: status) }
            // Keys of an earlier rotation stop being accepted: only the newest predecessor overlaps.
            try tx.execute(
                "UPDATE device_keys SET overlap_until = ? WHERE enrolment_id = ? AND status = 'superseded' AND (overlap_until IS NULL OR overlap_until > ?)",
                [.date(now), .text(enrolmentID), .date(now)]
            )
            for (role, key) in [(DeviceKeyRole.ambient, ambient), (.userPresent, userPresent)] {
                try tx.execute(
                    """
                    UPDATE device_keys SET status = 'superseded', superseded_by = ?, overlap_until = ?, status_changed_at = ?
                    WHERE enrolment_id = ? AND role = ? AND status = 'active'
                    """,
                    [.text(key.keyID), .date(overlapUntil), .date(now), .text(enrolmentID), .text(role.rawValue)]
                )
                try Self.insertKey(tx, key, role: role, enrolmentID: enrolmentID, now: now)
            }
            return try Self.loadDeviceKeys(tx, enrolmentID: enrolmentID)
        }
    }

    public func endEnrolment(id: String, status: DeviceKeyStatus) async throws -> EnrolmentRecord {
        guard status == .revoked || status == .terminated || status == .replaced else {
            throw AuthorityStoreError.invalidInput(field: "status", reason: "an enrolment ends as revoked, terminated or replaced")
        }
        return try await transact { tx, now in
            let enrolment = try Self.loadEnrolment(tx, id: id, lock: self.database.dialect)
            if enrolment.status == status { return enrolment }
            guard enrolment.status == .active else {
                throw AuthorityStoreError.enrolmentNotActive(id: id, status: enrolment.status)
            }
            try Self.end(tx, enrolmentID: id, status: status, now: now)
            return try Self.loadEnrolment(tx, id: id)
        }
    }

    public func endDevice(id: String, status: DeviceKeyStatus) async throws -> [EnrolmentRecord] {
        guard status == .revoked || status == .terminated || status == .replaced else {
            throw AuthorityStoreError.invalidInput(field: "status", reason: "a device ends as revoked, terminated or replaced")
        }
        return try await transact { tx, now in
            guard try tx.queryOne("SELECT id FROM devices WHERE id = ?", [.text(id)]) != nil else {
                throw AuthorityStoreError.notFound(.device, id: id)
            }
            let active = try tx.query(
                "SELECT id FROM enrolments WHERE device_id = ? AND status = 'active' ORDER BY created_at, id" + self.database.dialect.forUpdate,
                [.text(id)]
            ).map { try $0.text("id") }
            return try active.map { enrolmentID in
                try Self.end(tx, enrolmentID: enrolmentID, status: status, now: now)
                return try Self.loadEnrolment(tx, id: enrolmentID)
            }
        }
    }

    // MARK: Further-device approval

    /// A pending enrolment that can still take an approval step; anything else reads as an unusable invitation.
    static func loadPendingEnrolment(_ tx: any SQLTransaction, id: String, dialect: SQLDialect, now: Date) throws -> (EnrolmentRecord, PendingApproval) {
        let enrolment = try loadEnrolment(tx, id: id, lock: dialect)
        guard enrolment.status == .pending, let approval = enrolment.approval, approval.releasedAt == nil, now < approval.expiresAt else {
            throw AuthorityStoreError.invitationUnusable(id: id, reason: "the enrolment's approval was denied, ran out or was released")
        }
        return (enrolment, approval)
    }

    public func releaseEnrolmentToken(enrolmentID: String) async throws -> EnrolmentRelease {
        try await transact { tx, now in
            let dialect = self.database.dialect
            let (enrolment, approval) = try Self.loadPendingEnrolment(tx, id: enrolmentID, dialect: dialect, now: now)
            guard approval.approvedAt != nil else { throw AuthorityStoreError.enrolmentNotActive(id: enrolmentID, status: .pending) }
            guard let token = try Self.loadFaceToken(tx, subject: enrolment.subject) else {
                throw AuthorityStoreError.notFound(.faceToken, id: enrolment.subject)
            }
            var replaced: [String] = []
            if try Self.loadTenant(tx, id: enrolment.tenantID).policy.oneDevicePerUser {
                replaced = try Self.replaceOtherDevices(tx, subject: enrolment.subject, clientID: enrolment.clientID,
                                                        deviceID: enrolment.deviceID, dialect: dialect, now: now)
            }
            try tx.execute("UPDATE enrolments SET status = 'active', status_changed_at = ?, released_at = ? WHERE id = ?",
                           [.date(now), .date(now), .text(enrolmentID)])
            try tx.execute("UPDATE device_keys SET status = 'active', status_changed_at = ? WHERE enrolment_id = ? AND status = 'pending'",
                           [.date(now), .text(enrolmentID)])
            // The other devices' approval requests have nothing left to approve.
            try tx.execute("UPDATE ciba_requests SET state = 'expired', finished_at = ? WHERE approves_enrolment = ? AND state = 'pending'",
                           [.date(now), .text(enrolmentID)])
            return EnrolmentRelease(token: token, enrolment: try Self.loadEnrolment(tx, id: enrolmentID), replacedKeyIDs: replaced)
        }
    }

    /// Inside `enrol`'s transaction, the user row locked (so concurrent registrations cannot overshoot): refuses a
    /// further-device enrolment while the user already has `limit` others waiting in their windows.
    static func checkPendingEnrolmentLimit(_ tx: any SQLTransaction, subject: String, excluding enrolmentID: String, limit: Int,
                                           now: Date) throws {
        let row = try tx.queryOne(
            """
            SELECT COUNT(*) AS pending, MIN(approval_expires_at) AS first_expiry FROM enrolments
            WHERE subject = ? AND id <> ? AND status = 'pending' AND released_at IS NULL AND approval_expires_at > ?
            """,
            [.text(subject), .text(enrolmentID), .date(now)]
        )
        guard let row, try row.int("pending") >= Int64(limit) else { return }
        throw PendingRequestLimitReached(retryAt: try row.optionalDate("first_expiry") ?? now)
    }

    public func reissueApprovalRequests(enrolmentID: String, intervalSeconds: Int, pendingLimit: Int?,
                                        newID: @escaping @Sendable () -> String) async throws -> [CIBARequestRecord] {
        try await transact { tx, now in
            let dialect = self.database.dialect
            // The user row first, as deletions lock it; then the enrolment's, so concurrent polls re-issue once.
            _ = try Self.loadUser(tx, subject: try Self.loadEnrolment(tx, id: enrolmentID).subject, lock: dialect)
            let enrolment = try Self.loadEnrolment(tx, id: enrolmentID, lock: dialect)
            guard enrolment.status == .pending, let approval = enrolment.approval, approval.method == .enrolledDevice,
                  approval.approvedAt == nil, approval.releasedAt == nil, now < approval.expiresAt else { return [] }
            let earlier = try tx.query("SELECT * FROM ciba_requests WHERE approves_enrolment = ? ORDER BY created_at, auth_req_id",
                                       [.text(enrolmentID)]).map(Self.request(from:))
            guard let message = earlier.last?.bindingMessage else { return [] }
            let waiting = Set(earlier.filter { $0.state == .pending && now < $0.expiresAt }.map(\.clientID))
            let clientIDs = try tx.query("SELECT DISTINCT client_id FROM enrolments WHERE subject = ? AND status = 'active' ORDER BY client_id",
                                         [.text(enrolment.subject)]).map { try $0.text("client_id") }
            var issued: [CIBARequestRecord] = []
            for clientID in clientIDs where !waiting.contains(clientID) {
                let request = CIBARequestRecord(
                    authReqID: newID(), tenantID: enrolment.tenantID, clientID: clientID, subject: enrolment.subject, kind: .login,
                    bindingMessage: message, expiresAt: approval.expiresAt, intervalSeconds: intervalSeconds, approvesEnrolment: enrolmentID)
                try Self.checkRequest(request)
                if let pendingLimit {
                    // A full application gets its request at a later poll, once the user's requests there leave room.
                    do { try Self.checkPendingLimit(tx, request: request, limit: pendingLimit, now: now) } catch is PendingRequestLimitReached { continue }
                }
                try Self.insertRequest(tx, request, now: now)
                issued.append(try Self.loadRequest(tx, authReqID: request.authReqID))
            }
            return issued
        }
    }

    public func recordPasswordProof(enrolmentID: String, accepted: Bool, budget: Int) async throws -> Int {
        guard (1...100).contains(budget) else { throw AuthorityStoreError.invalidInput(field: "budget", reason: "outside 1…100") }
        return try await transact { tx, now in
            let (_, approval) = try Self.loadPendingEnrolment(tx, id: enrolmentID, dialect: self.database.dialect, now: now)
            guard approval.method == .password, approval.approvedAt == nil else {
                throw AuthorityStoreError.invitationUnusable(id: enrolmentID, reason: "the enrolment does not wait for a password")
            }
            if accepted {
                try tx.execute("UPDATE enrolments SET approved_at = ? WHERE id = ?", [.date(now), .text(enrolmentID)])
                return max(0, budget - approval.passwordFailures)
            }
            let failures = approval.passwordFailures + 1
            try tx.execute("UPDATE enrolments SET password_failures = ? WHERE id = ?", [.int(failures), .text(enrolmentID)])
            if failures >= budget { try Self.end(tx, enrolmentID: enrolmentID, status: .revoked, now: now) }
            return max(0, budget - failures)
        }
    }

    // MARK: Face tokens

    public func faceToken(subject: String) async throws -> FaceTokenRecord {
        try await readStatement { tx, _ in
            guard let token = try Self.loadFaceToken(tx, subject: subject) else {
                throw AuthorityStoreError.notFound(.faceToken, id: subject)
            }
            return token
        }
    }
}
