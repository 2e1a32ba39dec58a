import FaceSealCrypto
public import FaceSealWire
public import Foundation

// CIBA requests: creation, the completion compare-and-swap, poll bookkeeping, denial, expiry and the retention purge.
extension SQLAuthorityStore {
    static func request(from row: SQLRow) throws -> CIBARequestRecord {
        guard let kind = CIBARequestKind(rawValue: try row.text("kind")) else { throw SQLError.typeMismatch(column: "kind") }
        guard let state = CIBARequestState(rawValue: try row.text("state")) else { throw SQLError.typeMismatch(column: "state") }
        return CIBARequestRecord(
            authReqID: try row.text("auth_req_id"), tenantID: try row.text("tenant_id"), clientID: try row.text("client_id"),
            subject: try row.text("subject"), kind: kind, pkiKind: try row.optionalText("pki_kind"),
            pkiContext: try row.optionalBlob("pki_context"), pkiData: try row.optionalBlob("pki_data"),
            bindingMessage: try row.optionalText("binding_message"),
            clientNotificationToken: try row.optionalText("client_notification_token"), scope: try row.text("scope"),
            expiresAt: try row.date("expires_at"), intervalSeconds: Int(try row.int("interval_seconds")), state: state,
            createdAt: try row.date("created_at"), lastPolledAt: try row.optionalDate("last_polled_at"),
            attempts: Int(try row.int("attempts")), captureRetries: Int(try row.int("capture_retries")),
            stagedGeneration: try row.optionalInt("staged_generation"), receiptSHA256: try row.optionalBlob("receipt_sha256"),
            passwordUsed: try row.bool("password_used"),
            idToken: try row.optionalText("id_token"), denyReason: try row.optionalText("deny_reason"),
            finishedAt: try row.optionalDate("finished_at"), approvesEnrolment: try row.optionalText("approves_enrolment")
        )
    }

    static func loadRequest(_ tx: any SQLTransaction, authReqID: String, lock: SQLDialect? = nil) throws -> CIBARequestRecord {
        guard let row = try tx.queryOne("SELECT * FROM ciba_requests WHERE auth_req_id = ?" + (lock?.forUpdate ?? ""), [.text(authReqID)]) else {
            throw AuthorityStoreError.notFound(.cibaRequest, id: authReqID)
        }
        return try request(from: row)
    }

    /// The request's lifecycle decision on `event`, its refusal thrown.
    static func decide(_ event: RequestLifecycle.Event, _ request: CIBARequestRecord, now: Date) throws -> RequestLifecycle.Decision {
        let decision = RequestLifecycle.decide(event, request, now: now)
        if case .refuse(let error) = decision { throw error }
        return decision
    }

    /// Ends a pending request denied with `reason`, audited, with its approval's enrolment (the compare-and-swap on
    /// `state`); returns the row as written.
    static func writeDenial(_ tx: any SQLTransaction, _ request: CIBARequestRecord, reason: String, actor: String?,
                            now: Date) throws -> CIBARequestRecord {
        try tx.execute("UPDATE ciba_requests SET state = 'denied', deny_reason = ?, finished_at = ? WHERE auth_req_id = ? AND state = 'pending'",
                       [.text(reason), .date(now), .text(request.authReqID)])
        try auditRequest(tx, request, .denied, actor: actor, detail: ["reason": .string(reason)], now: now)
        var denied = request
        denied.state = .denied
        denied.denyReason = reason
        denied.finishedAt = SQLTime.date(SQLTime.millis(now))
        return denied
    }

    static func checkRequest(_ request: CIBARequestRecord) throws {
        try checkIdentifier(request.authReqID, field: "authReqID")
        try checkIdentifier(request.clientID, field: "clientID")
        try checkIdentifier(request.subject, field: "subject")
        switch request.kind {
        case .login:
            guard request.pkiKind == nil, request.pkiData == nil, request.pkiContext == nil else {
                throw AuthorityStoreError.invalidInput(field: "pkiKind", reason: "a sign-in carries no face-PKI parameters")
            }
        case .ceremony:
            guard let pkiKind = request.pkiKind else { throw AuthorityStoreError.invalidInput(field: "pkiKind", reason: "a ceremony needs one") }
            try checkIdentifier(pkiKind, field: "pkiKind")
        }
        if let context = request.pkiContext, context.count > 256 {
            throw AuthorityStoreError.invalidInput(field: "pkiContext", reason: "longer than 256 bytes")
        }
        if let data = request.pkiData, data.count > 64 * 1024 {
            throw AuthorityStoreError.invalidInput(field: "pkiData", reason: "longer than 64 KiB")
        }
        if let message = request.bindingMessage { try checkLength(message, field: "bindingMessage", max: 256) }
        if let token = request.clientNotificationToken { try checkLength(token, field: "clientNotificationToken", max: 1024) }
        try checkLength(request.scope, field: "scope", max: 2048)
        guard (1...3600).contains(request.intervalSeconds) else {
            throw AuthorityStoreError.invalidInput(field: "intervalSeconds", reason: "outside 1…3600")
        }
    }

    static func insertRequest(_ tx: any SQLTransaction, _ request: CIBARequestRecord, now: Date) throws {
        try tx.executeDeferred(
            """
            INSERT INTO ciba_requests (auth_req_id, tenant_id, client_id, subject, kind, pki_kind, pki_context, pki_data,
                binding_message, client_notification_token, scope, state, created_at, expires_at, interval_seconds,
                last_polled_at, attempts, staged_generation, receipt_sha256, id_token, deny_reason, finished_at, approves_enrolment)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, NULL, 0, NULL, NULL, NULL, NULL, NULL, ?)
            """,
            [
                .text(request.authReqID), .text(request.tenantID), .text(request.clientID), .text(request.subject),
                .text(request.kind.rawValue), .optionalText(request.pkiKind), .optionalBlob(request.pkiContext),
                .optionalBlob(request.pkiData), .optionalText(request.bindingMessage),
                .optionalText(request.clientNotificationToken), .text(request.scope), .date(now),
                .date(request.expiresAt), .int(request.intervalSeconds), .optionalText(request.approvesEnrolment),
            ]
        )
        var detail: [String: JSONValue] = ["kind": .string(request.kind.rawValue), "expires_at": .string(rfc3339(request.expiresAt))]
        if let pkiKind = request.pkiKind { detail["pki_kind"] = .string(pkiKind) }
        if let enrolment = request.approvesEnrolment { detail["approves_enrolment"] = .string(enrolment) }
        try auditRequest(tx, request, .created, actor: request.clientID, detail: detail, now: now)
    }

    // MARK: Operations

    public func createRequest(_ request: CIBARequestRecord, pendingLimit: Int?) async throws -> CIBARequestRecord {
        try Self.checkRequest(request)
        let dialect = database.dialect
        return try await transact(conflict: (.cibaRequest, request.authReqID)) { tx, now in
            try Self.storeNewRequest(tx, request, pendingLimit: pendingLimit, dialect: dialect, now: now)
        }
    }

    public func createRequest(_ request: CIBARequestRecord, pendingLimit: Int?, announcing link: String) async throws -> AnnouncedRequest {
        try Self.checkRequest(request)
        try Self.checkLink(link)
        let dialect = database.dialect
        let channel = database.outboxChannel
        return try await transact(conflict: (.cibaRequest, request.authReqID)) { tx, now in
            let stored = try Self.storeNewRequest(tx, request, pendingLimit: pendingLimit, dialect: dialect, now: now)
            // Distinct and in byte order, done here: in SQL they cost SQLite a sorter and a temporary b-tree at every request.
            let deviceIDs = Set(try tx.query(
                "SELECT device_id FROM enrolments WHERE subject = ? AND client_id = ? AND status = 'active'",
                [.text(request.subject), .text(request.clientID)]
            ).map { try $0.text("device_id") }).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            for deviceID in deviceIDs {
                _ = try Self.insertLink(tx, OutboxLink(deviceID: deviceID, link: link, authReqID: request.authReqID, expiresAt: request.expiresAt),
                                        channel: channel, now: now)
            }
            return AnnouncedRequest(request: stored, deviceIDs: deviceIDs)
        }
    }

    /// Inserts a checked new request (the user locked for the pending limit) and answers it as stored, built from what
    /// was written rather than read back.
    static func storeNewRequest(_ tx: any SQLTransaction, _ request: CIBARequestRecord, pendingLimit: Int?, dialect: SQLDialect,
                                now: Date) throws -> CIBARequestRecord {
        let application = try loadApplication(tx, clientID: request.clientID)
        let user = try loadUser(tx, subject: request.subject, lock: pendingLimit.map { _ in dialect })
        guard application.tenantID == request.tenantID else { throw AuthorityStoreError.notFound(.application, id: request.clientID) }
        guard user.tenantID == request.tenantID else { throw AuthorityStoreError.notFound(.user, id: request.subject) }
        guard request.expiresAt > now else { throw AuthorityStoreError.invalidInput(field: "expiresAt", reason: "already passed") }
        if let pendingLimit { try checkPendingLimit(tx, request: request, limit: pendingLimit, now: now) }
        try insertRequest(tx, request, now: now)
        var stored = request
        stored.state = .pending
        stored.createdAt = SQLTime.date(SQLTime.millis(now))
        stored.expiresAt = SQLTime.date(SQLTime.millis(request.expiresAt))
        stored.lastPolledAt = nil
        stored.attempts = 0
        stored.captureRetries = 0
        stored.stagedGeneration = nil
        stored.receiptSHA256 = nil
        stored.passwordUsed = false
        stored.idToken = nil
        stored.denyReason = nil
        stored.finishedAt = nil
        return stored
    }

    public func request(authReqID: String) async throws -> CIBARequestRecord {
        try await readStatement { tx, _ in try Self.loadRequest(tx, authReqID: authReqID) }
    }

    public func requestContext(authReqID: String, faceToken: Bool) async throws -> RequestContext {
        let sql = faceToken ? Self.requestContextWithTokenSelect : Self.requestContextSelect
        return try await readStatement { tx, _ in
            guard let row = try tx.queryOne(sql, [.text(authReqID)]) else { throw AuthorityStoreError.notFound(.cibaRequest, id: authReqID) }
            let request = try Self.request(from: row)
            // The joined rows' columns, from the end: the face token's, the tenant's, the application's (NULL: none, or deleted).
            var end = row.values.count
            func part(_ columns: SQLColumns) -> SQLRow? {
                end -= columns.names.count
                let values = Array(row.values[end..<(end + columns.names.count)])
                return values[0] == .null ? nil : SQLRow(columns: columns, values: values)
            }
            let token = faceToken ? try part(Self.faceTokenColumns).map(Self.faceToken(from:)) : nil
            guard let tenant = part(Self.tenantColumns) else { throw AuthorityStoreError.notFound(.tenant, id: request.tenantID) }
            guard let application = part(Self.applicationColumns) else { throw AuthorityStoreError.notFound(.application, id: request.clientID) }
            return RequestContext(request: request, application: try Self.application(from: application),
                                  tenant: try Self.tenant(from: tenant), faceToken: token)
        }
    }

    // The columns the record decoders read, in a fixed order for the joined read of a request's context (the key first).
    private static let applicationColumns = SQLColumns([
        "client_id", "tenant_id", "label", "secret_hash", "jwks", "branding_json", "delivery_mode", "notification_endpoint",
        "delivery_endpoint", "id_token_alg", "created_at", "redirect_uris",
    ])
    private static let tenantColumns = SQLColumns([
        "id", "name", "key_algorithms", "attempts_max", "liveness_required", "password_mode", "password_min_length",
        "one_device_per_user", "request_lifetime_seconds", "created_at", "match_threshold_micros", "capture_retries_max",
        "further_device_approval",
    ])
    private static let faceTokenColumns = SQLColumns([
        "subject", "token_id", "generation", "header_json", "sealed_body", "encrypted_server_share", "updated_at", "password_verifier",
    ])

    /// A request with its application and tenant (not deleted), and with `faceToken` its user's face token, in one
    /// statement: the request's own columns first, so a name the joined tables share reads the request's.
    private static func contextSelect(faceToken: Bool) -> String {
        func list(_ alias: String, _ columns: SQLColumns) -> String { columns.names.map { ", \(alias).\($0)" }.joined() }
        return "SELECT r.*" + list("a", applicationColumns) + list("t", tenantColumns) + (faceToken ? list("f", faceTokenColumns) : "")
            + """

            FROM ciba_requests r
            LEFT JOIN applications a ON a.client_id = r.client_id AND a.deleted_at IS NULL
            LEFT JOIN tenants t ON t.id = r.tenant_id AND t.deleted_at IS NULL
            """ + (faceToken ? "\nLEFT JOIN face_tokens f ON f.subject = r.subject" : "") + "\nWHERE r.auth_req_id = ?"
    }

    private static let requestContextSelect = contextSelect(faceToken: false)
    private static let requestContextWithTokenSelect = contextSelect(faceToken: true)

    public func requestAudience(_ hint: UserHint, clientID: String, tenantID: String) async throws -> RequestAudience {
        try await read { tx, _ in
            let subject: String
            switch hint {
            case .subject(let named):
                subject = try Self.loadUser(tx, subject: named).subject
            case .loginHint(let text):
                // An email first, then a subject, of the tenant's users.
                if let row = try Self.userRow(tx, tenantID: tenantID, email: text) {
                    subject = try row.text("subject")
                } else if let row = try Self.userRow(tx, subject: text), try row.text("tenant_id") == tenantID {
                    subject = text
                } else {
                    throw AuthorityStoreError.notFound(.user, id: text)
                }
            }
            // The tenant and its webhook (for the new request's link) in one statement: `t.*` first, so the names read the tenant's.
            guard let row = try tx.queryOne(
                """
                SELECT t.*, w.url AS webhook_url, w.encrypted_secret AS webhook_secret, w.created_at AS webhook_created_at
                FROM tenants t LEFT JOIN tenant_webhooks w ON w.tenant_id = t.id WHERE t.id = ? AND t.deleted_at IS NULL
                """, [.text(tenantID)]
            ) else {
                throw AuthorityStoreError.notFound(.tenant, id: tenantID)
            }
            let webhook = try row.optionalText("webhook_url").map { url in
                WebhookRecord(tenantID: tenantID, url: url, encryptedSecret: try row.blob("webhook_secret"),
                              createdAt: try row.date("webhook_created_at"))
            }
            let active = try tx.queryOne("SELECT 1 AS one FROM enrolments WHERE subject = ? AND client_id = ? AND status = 'active' LIMIT 1",
                                         [.text(subject), .text(clientID)])
            return RequestAudience(subject: subject, tenant: try Self.tenant(from: row), hasActiveDevice: active != nil, webhook: webhook)
        }
    }

    public func downloadFaceToken(authReqID: String, keyID: String, registering replay: JTIRegistration?) async throws -> FaceTokenRecord {
        try await transact(registering: replay) { tx, now in
            let request = try Self.loadRequest(tx, authReqID: authReqID, lock: self.database.dialect)
            guard case .proceed = try Self.decide(.downloadToken, request, now: now) else { preconditionFailure("a download proceeds or is refused") }
            guard let keyRow = try tx.queryOne(Self.deviceKeySelect + " WHERE k.key_id = ?", [.text(keyID)]) else {
                throw AuthorityStoreError.notFound(.deviceKey, id: keyID)
            }
            let key = try Self.deviceKey(from: keyRow)
            // A key of another user, or of another application of this user, learns nothing about this request.
            guard key.subject == request.subject, key.clientID == request.clientID else {
                throw AuthorityStoreError.notFound(.cibaRequest, id: authReqID)
            }
            switch key.acceptance(at: now) {
            case .accepted, .acceptedWithRotationHint:
                break
            case .overlapEnded, .revoked, .terminated, .replaced, .pending:
                throw AuthorityStoreError.deviceKeyNotActive(keyID: keyID, status: key.status)
            }
            guard let token = try Self.loadFaceToken(tx, subject: request.subject) else {
                throw AuthorityStoreError.notFound(.faceToken, id: request.subject)
            }
            try tx.executeDeferred(
                """
                INSERT INTO token_downloads (auth_req_id, key_id, generation, downloaded_at) VALUES (?, ?, ?, ?)
                ON CONFLICT (auth_req_id, key_id) DO UPDATE SET generation = excluded.generation, downloaded_at = excluded.downloaded_at
                """,
                [.text(authReqID), .text(keyID), .integer(token.generation), .date(now)]
            )
            return token
        }
    }

    public func tokenDownloads(authReqID: String) async throws -> [TokenDownloadRecord] {
        try await readStatement { tx, _ in
            try tx.query("SELECT * FROM token_downloads WHERE auth_req_id = ? ORDER BY key_id", [.text(authReqID)]).map { row in
                TokenDownloadRecord(authReqID: try row.text("auth_req_id"), keyID: try row.text("key_id"),
                                    generation: try row.int("generation"), downloadedAt: try row.date("downloaded_at"))
            }
        }
    }

    public func recordFaceCheckFailure(authReqID: String, keyID: String, _ failure: AttemptKind) async throws -> AttemptBudget {
        try await transact { tx, now in
            let request = try Self.loadRequest(tx, authReqID: authReqID, lock: self.database.dialect)
            // The download and the policy are read whatever the state (the lifecycle's refusals come in its order).
            let downloaded = try tx.queryOne("SELECT generation FROM token_downloads WHERE auth_req_id = ? AND key_id = ?",
                                             [.text(authReqID), .text(keyID)]) != nil
            let policy = try Self.loadTenant(tx, id: request.tenantID).policy
            guard case .count(let attempts, let captureRetries, let denyReason) =
                try Self.decide(.countFailure(failure, downloaded: downloaded, policy: policy), request, now: now) else {
                preconditionFailure("a failure is counted or refused")
            }
            try tx.execute("UPDATE ciba_requests SET attempts = ?, capture_retries = ? WHERE auth_req_id = ? AND state = 'pending'",
                           [.int(attempts), .int(captureRetries), .text(authReqID)])
            var counted = request
            counted.attempts = attempts
            counted.captureRetries = captureRetries
            if let denyReason {
                _ = try Self.writeDenial(tx, request, reason: denyReason, actor: keyID, now: now)
                try Self.endApprovedEnrolment(tx, of: request, now: now)
            }
            return AttemptBudget(counted, policy: policy)
        }
    }

    public func denyRequest(authReqID: String, reason: String) async throws -> CIBARequestRecord {
        try Self.checkIdentifier(reason, field: "reason")
        return try await transact { tx, now in
            let request = try Self.loadRequest(tx, authReqID: authReqID, lock: self.database.dialect)
            switch try Self.decide(.deny(reason: reason), request, now: now) {
            case .unchanged:
                return request
            case .deny(let reason):
                let denied = try Self.writeDenial(tx, request, reason: reason, actor: nil, now: now)
                try Self.endApprovedEnrolment(tx, of: request, now: now)
                return denied
            default:
                preconditionFailure("a denial is written, repeated or refused")
            }
        }
    }

    public func complete(_ completion: CompletionCommit) async throws -> CompletionOutcome {
        let token = completion.rotatedToken
        try Self.checkFaceToken(token)
        // Range first: `expectedGeneration + 1` must not overflow.
        guard (0..<Int64.max).contains(completion.expectedGeneration), token.generation == completion.expectedGeneration + 1 else {
            throw AuthorityStoreError.invalidInput(field: "rotatedToken.generation", reason: "must be the expected generation + 1")
        }
        if let receipt = completion.receiptSHA256, receipt.count != 32 {
            throw AuthorityStoreError.invalidInput(field: "receiptSHA256", reason: "must be 32 bytes")
        }
        return try await transact(registering: completion.replay) { tx, now -> CompletionOutcome in
            // The request row lock orders completions of one request; the token row's WHERE orders rotations.
            let request = try Self.loadRequest(tx, authReqID: completion.authReqID, lock: self.database.dialect)
            // Read whatever the state: the lifecycle's refusals come in its order.
            let downloaded = try tx.queryOne(
                "SELECT generation FROM token_downloads WHERE auth_req_id = ? AND key_id = ?",
                [.text(completion.authReqID), .text(completion.keyID)]
            ).map { try $0.int("generation") }
            let claim = RequestLifecycle.CompletionClaim(downloadedGeneration: downloaded, expectedGeneration: completion.expectedGeneration,
                                                         rotatedGeneration: token.generation, receiptSHA256: completion.receiptSHA256)
            switch try Self.decide(.complete(claim), request, now: now) {
            case .unchanged:
                return request.state == .completed ? .completed(request) : .stale(request)
            case .rotate:
                break
            default:
                preconditionFailure("a completion rotates, repeats or is refused")
            }
            guard token.subject == request.subject else {
                throw AuthorityStoreError.invalidInput(field: "rotatedToken.subject", reason: "not the request's user")
            }
            guard let current = try Self.loadFaceToken(tx, subject: request.subject) else {
                throw AuthorityStoreError.notFound(.faceToken, id: request.subject)
            }
            guard current.tokenID == token.tokenID else {
                throw AuthorityStoreError.invalidInput(field: "rotatedToken.tokenID", reason: "not the user's token")
            }
            let rotated = try tx.execute(
                """
                UPDATE face_tokens SET generation = ?, header_json = ?, sealed_body = ?, encrypted_server_share = ?, updated_at = ?,
                    password_verifier = COALESCE(?, password_verifier)
                WHERE subject = ? AND token_id = ? AND generation = ?
                """,
                [
                    .integer(token.generation), .blob(token.headerJSON), .blob(token.sealedBody),
                    .blob(token.encryptedServerShare), .date(now), .optionalBlob(token.encryptedPasswordVerifier),
                    .text(token.subject), .text(token.tokenID),
                    .integer(completion.expectedGeneration),
                ]
            )
            let state: CIBARequestState = rotated == 1 ? .completed : .stale
            // The row is locked and pending (its lifecycle decided on it): the update changes it, its count is not needed.
            try tx.executeDeferred(
                """
                UPDATE ciba_requests SET state = ?, staged_generation = ?, receipt_sha256 = ?, password_used = ?, finished_at = ?
                WHERE auth_req_id = ? AND state = 'pending'
                """,
                [.text(state.rawValue), .integer(token.generation), .optionalBlob(completion.receiptSHA256),
                 .bool(completion.passwordUsed), .date(now), .text(completion.authReqID)]
            )
            // An approval request's completion approves its pending further-device enrolment (docs/PROTOCOL.md §8.1).
            if rotated == 1, let enrolmentID = request.approvesEnrolment {
                try tx.execute("UPDATE enrolments SET approved_at = ? WHERE id = ? AND status = 'pending' AND approved_at IS NULL",
                               [.date(now), .text(enrolmentID)])
            }
            // The row as just written, without reading it back.
            var stored = request
            stored.state = state
            stored.stagedGeneration = token.generation
            stored.receiptSHA256 = completion.receiptSHA256
            stored.passwordUsed = completion.passwordUsed
            stored.finishedAt = SQLTime.date(SQLTime.millis(now))
            try Self.auditRequest(tx, stored, rotated == 1 ? .completed : .stale, actor: completion.keyID,
                                  detail: ["generation": .integer(token.generation)], now: now)
            return rotated == 1 ? .completed(stored) : .stale(stored)
        }
    }

    public func recordPoll(authReqID: String, clientID: String) async throws -> PollOutcome {
        // A finished request's poll changes nothing (a poll's time and the interval matter only while it is pending), so
        // it is answered from a read; a pending one is decided again in a write transaction.
        let finished = try await readStatement { tx, now -> PollOutcome? in
            let request = try Self.loadPolledRequest(tx, authReqID: authReqID, clientID: clientID, lock: nil)
            guard request.state != .pending else { return nil }
            var polled = request
            polled.lastPolledAt = SQLTime.date(SQLTime.millis(now))
            return .recorded(polled)
        }
        if let finished { return finished }
        return try await transact { tx, now -> PollOutcome in
            let request = try Self.loadPolledRequest(tx, authReqID: authReqID, clientID: clientID, lock: self.database.dialect)
            var polled = request
            polled.lastPolledAt = SQLTime.date(SQLTime.millis(now))
            switch try Self.decide(.poll, request, now: now) {
            case .slowDown(let raised):
                try tx.execute(
                    "UPDATE ciba_requests SET interval_seconds = ?, last_polled_at = ? WHERE auth_req_id = ? AND state = 'pending'",
                    [.int(raised), .date(now), .text(authReqID)]
                )
                return .slowDown(newIntervalSeconds: raised)
            case .expire:
                try tx.execute(
                    "UPDATE ciba_requests SET state = 'expired', finished_at = ?, last_polled_at = ? WHERE auth_req_id = ? AND state = 'pending'",
                    [.date(now), .date(now), .text(authReqID)]
                )
                try Self.auditRequest(tx, request, .expired, actor: nil, now: now)
                polled.state = .expired
                polled.finishedAt = polled.lastPolledAt
                return .expired(polled)
            case .recordPoll:
                try tx.execute("UPDATE ciba_requests SET last_polled_at = ? WHERE auth_req_id = ?", [.date(now), .text(authReqID)])
            default:
                preconditionFailure("a poll slows down, expires or is recorded")
            }
            return .recorded(polled)
        }
    }

    /// The request `clientID` polls for. Another client's request id is answered as unknown: it must learn nothing
    /// about it. An approval request is no application's (docs/PROTOCOL.md §8.1), and a browser sign-in's completed
    /// request is redeemed only with its code and verifier (the same statement tells): unknown until it was redeemed.
    static func loadPolledRequest(_ tx: any SQLTransaction, authReqID: String, clientID: String, lock: SQLDialect?) throws -> CIBARequestRecord {
        guard let row = try tx.queryOne(
            """
            SELECT *, EXISTS (SELECT 1 FROM browser_sign_ins b WHERE b.id = ciba_requests.auth_req_id) AS browser_sign_in
            FROM ciba_requests WHERE auth_req_id = ?
            """ + (lock?.forUpdate ?? ""), [.text(authReqID)]
        ) else {
            throw AuthorityStoreError.notFound(.cibaRequest, id: authReqID)
        }
        let request = try Self.request(from: row)
        let unredeemedSignIn = try request.state == .completed && request.idToken == nil && row.bool("browser_sign_in")
        guard request.clientID == clientID, request.approvesEnrolment == nil, !unredeemedSignIn else {
            throw AuthorityStoreError.notFound(.cibaRequest, id: authReqID)
        }
        return request
    }

    public func storeIDToken(authReqID: String, idToken: String) async throws -> CIBARequestRecord {
        guard !idToken.isEmpty else { throw AuthorityStoreError.invalidInput(field: "idToken", reason: "empty") }
        try Self.checkLength(idToken, field: "idToken", max: 64 * 1024)
        return try await transact { tx, now in
            let request = try Self.loadRequest(tx, authReqID: authReqID, lock: self.database.dialect)
            switch try Self.decide(.issueIDToken, request, now: now) {
            case .unchanged: return request
            case .storeIDToken: break
            default: preconditionFailure("an ID token is stored, kept or refused")
            }
            // Locked and decided on above: sent with the commit.
            try tx.executeDeferred("UPDATE ciba_requests SET id_token = ? WHERE auth_req_id = ? AND state = 'completed' AND id_token IS NULL",
                                   [.text(idToken), .text(authReqID)])
            var stored = request
            stored.idToken = idToken
            return stored
        }
    }

    public func expireOverdueRequests() async throws -> [CIBARequestRecord] {
        try await transact { tx, now in
            let overdue = try tx.query(
                "SELECT * FROM ciba_requests WHERE state = 'pending' AND expires_at <= ? ORDER BY expires_at, auth_req_id" + self.database.dialect.forUpdate,
                [.date(now)]
            ).map(Self.request(from:))
            var expired: [CIBARequestRecord] = []
            for request in overdue where RequestLifecycle.decide(.expire, request, now: now) == .expire {
                try tx.execute("UPDATE ciba_requests SET state = 'expired', finished_at = ? WHERE auth_req_id = ? AND state = 'pending'",
                               [.date(now), .text(request.authReqID)])
                try Self.auditRequest(tx, request, .expired, actor: nil, now: now)
                var stored = request
                stored.state = .expired
                stored.finishedAt = SQLTime.date(SQLTime.millis(now))
                expired.append(stored)
            }
            return expired
        }
    }

    public func purgeFinishedRequests(expiredFor retention: TimeInterval, limit: Int) async throws -> Int {
        try Self.checkPurge(retention: retention, limit: limit)
        let dialect = database.dialect
        return try await transact { tx, now in
            // Oldest expiry first, on the finished requests' own index; locked on PostgreSQL, so the rows deleted below
            // are the ones selected even when another process finishes or purges requests meanwhile.
            let ids = try tx.query(
                Self.finishedRequestsExpiredBefore + dialect.forUpdate,
                [.date(now.addingTimeInterval(-retention)), .integer(Int64(limit))]
            ).map { try $0.text("auth_req_id") }
            guard let last = ids.last else { return 0 }
            // `limit` values, the last id repeated: one statement text a limit, so both databases' statement caches
            // (unbounded, keyed by the text) keep one entry each, whatever a batch's size.
            let list = "(" + Array(repeating: "?", count: limit).joined(separator: ", ") + ")"
            let values = (ids + Array(repeating: last, count: limit - ids.count)).map { SQLValue.text($0) }
            // What refers to a request goes first (token downloads hold a foreign key); a browser sign-in's row goes with
            // its request, as one expired unclaimed would (`createBrowserSignIn`).
            try tx.execute("DELETE FROM token_downloads WHERE auth_req_id IN " + list, values)
            try tx.execute("DELETE FROM link_outbox WHERE auth_req_id IN " + list, values)
            try tx.execute("DELETE FROM browser_sign_ins WHERE id IN " + list, values)
            return try tx.execute("DELETE FROM ciba_requests WHERE state <> 'pending' AND auth_req_id IN " + list, values)
        }
    }

    /// The finished requests that expired at or before a time (the first value), oldest first, at most the second value.
    static let finishedRequestsExpiredBefore =
        "SELECT auth_req_id FROM ciba_requests WHERE state <> 'pending' AND expires_at <= ? ORDER BY expires_at, auth_req_id LIMIT ?"

    /// The most rows one `purgeFinishedRequests` or `purgeAuditEvents` call deletes (one statement's bound values stay
    /// well within both databases' limits).
    static let purgeBatchMax = 1_000

    /// A purge's arguments: a finite retention of 0 seconds or more, a limit of 1…`purgeBatchMax`.
    static func checkPurge(retention: TimeInterval, limit: Int) throws {
        guard retention >= 0, retention.isFinite, (1...purgeBatchMax).contains(limit) else {
            throw AuthorityStoreError.invalidInput(field: retention >= 0 && retention.isFinite ? "limit" : "retention",
                                                   reason: "retention ≥ 0 seconds, limit 1…\(purgeBatchMax)")
        }
    }
}
