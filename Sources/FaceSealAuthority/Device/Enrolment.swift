import FaceSealCrypto
import FaceSealHTTP
import FaceSealWire
import Foundation

// Enrolment (docs/PROTOCOL.md §8): the invitation id, from the enrolment link's `rid`, authorises the reads; the
// enrolment itself is signed with the new user-present key, whose public key travels in the body.
extension Authority {
    /// An invitation that can still be used: unconsumed, not cancelled and unexpired. A used one is `invitation_used`, so
    /// its holder learns that the link was spent (by them or by whoever else had it); unknown, expired and cancelled
    /// ones stay one answer.
    func usableInvitation(_ id: String) async throws -> InvitationRecord {
        guard !id.isEmpty, id.utf8.count <= 256 else { throw DeviceFailure(.invalidInvitation, "the invitation is unknown, expired or cancelled") }
        let invitation = try await store.invitation(id: id)
        guard invitation.consumedAt == nil else { throw DeviceFailure(.invitationUsed, "the invitation was already used") }
        guard invitation.cancelledAt == nil, invitation.expiresAt > clock.now() else {
            throw DeviceFailure(.invalidInvitation, "the invitation is unknown, expired or cancelled")
        }
        return invitation
    }

    /// The user's face token, or nil when they have none yet.
    func existingFaceToken(subject: String) async throws -> FaceTokenRecord? {
        do {
            return try await store.faceToken(subject: subject)
        } catch AuthorityStoreError.notFound(.faceToken, _) {
            return nil
        }
    }

    /// How an invitation's enrolment proceeds (docs/PROTOCOL.md §8.1).
    enum EnrolmentPath: Equatable {
        /// The device creates the token; a recovery's replaces the user's old one (new keys).
        case firstDevice(replacingToken: Bool)
        /// The device waits for this approval before the token is released to it.
        case furtherDevice(FurtherDeviceApproval)

        /// The user keeps their token: the device matches against it once it is released.
        var isFurtherDevice: Bool {
            if case .furtherDevice = self { return true }
            return false
        }
    }

    /// The path for `invitation`: first device without a token; a recovery keeps the keys only by password (a token
    /// with a password verifier), else starts a new token; `password` approval without a verifier falls back to
    /// `enrolled_device`, never to something weaker.
    static func enrolmentPath(_ invitation: InvitationRecord, policy: TenantPolicy, token: FaceTokenRecord?) -> EnrolmentPath {
        guard let token else { return .firstDevice(replacingToken: false) }
        let hasVerifier = token.encryptedPasswordVerifier != nil
        switch invitation.kind {
        case .recovery:
            return hasVerifier ? .furtherDevice(.password) : .firstDevice(replacingToken: true)
        case .enrolment:
            let method = policy.furtherDeviceApproval
            return .furtherDevice(method == .password && !hasVerifier ? .enrolledDevice : method)
        }
    }

    /// `GET /device/v1/enrolments/{inv}` → `EnrolmentDetails`.
    func enrolmentDetails(invitationID: String) async throws -> EnrolmentDetails {
        let invitation = try await usableInvitation(invitationID)
        let user = try await store.user(subject: invitation.subject)
        let application = try await store.application(clientID: invitation.clientID)
        let policy = try await store.tenant(id: invitation.tenantID).policy
        let token = try await existingFaceToken(subject: invitation.subject)
        let path = Self.enrolmentPath(invitation, policy: policy, token: token)
        return EnrolmentDetails(
            invitation: invitation.id, email: user.email, subject: invitation.subject, tenant: invitation.tenantID,
            clientId: application.clientID, appLabel: application.label,
            branding: application.deviceBranding, tokenExists: path.isFurtherDevice,
            passwordRequired: policy.passwordPolicy.mode == .required, livenessRequired: policy.livenessRequired,
            keyPolicy: policy.wireKeyPolicy, expiresAt: Int64(invitation.expiresAt.timeIntervalSince1970),
            recovery: invitation.kind == .recovery ? true : nil)
    }

    /// `POST /device/v1/enrolments/{inv}`: the edge of the enrolment, whose key comes in the body. Every answer
    /// after the signature header parsed is signed for its `jti`.
    func enrolRoute(_ request: HTTPRequest) async -> HTTPResponse {
        var jti: String?
        try? await refreshDeviceResponseKey()
        do {
            let unverified = try DeviceRequestSignature.parse(request.headers[DeviceSigning.requestHeader])
            jti = unverified.claims.jti
            let response = try await enrol(invitationID: request.pathParameter("inv"), unverified: unverified, request: request)
            return signedDeviceResponse(.ok(response), jti: unverified.claims.jti, hint: false)
        } catch {
            return deviceErrorResponse(error, jti: jti, hint: false)
        }
    }

    /// Checks and stores an enrolment: both keys and (first device) the face token, all or nothing; a further device's
    /// enrolment is stored pending, bound to the invitation, with its approval (docs/PROTOCOL.md §8.1). The invitation
    /// is looked up first: without a usable one nothing is verified and no `jti` is written, so the unauthenticated
    /// caller costs one lookup.
    func enrol(invitationID: String, unverified: UnverifiedDeviceRequest, request: HTTPRequest) async throws -> EnrolmentResponse {
        let invitation = try await usableInvitation(invitationID)
        let body = try Self.decodeBody(EnrolmentRequest.self, request)
        guard unverified.claims.kid == body.userPresentKey.kid else {
            throw DeviceFailure(.invalidSignature, "an enrolment is signed with its new user-present key")
        }
        let userPresent = try Self.newDeviceKey(body.userPresentKey, field: "user_present_key")
        let ambient = try Self.newDeviceKey(body.ambientKey, field: "ambient_key")
        guard ambient.record.keyID != userPresent.record.keyID else {
            throw DeviceFailure.invalidRequest("the two keys need different ids")
        }
        let claims = try unverified.verify(with: userPresent.public, method: request.method.rawValue,
                                           path: Self.signedPath(of: request), body: request.body, now: now)
        try await registerDeviceJTI(Self.jtiRegistration(claims, now: now))
        _ = try Self.announcedProtocol(request)
        try Self.verifyProof(body.ambientProof, key: ambient.public, claims: ["inv": invitationID, "jti": claims.jti],
                             name: "ambient_proof")

        let user = try await store.user(subject: invitation.subject)
        let application = try await store.application(clientID: invitation.clientID)
        let policy = try await store.tenant(id: invitation.tenantID).policy
        let existing = try await existingFaceToken(subject: invitation.subject)
        let enrolmentID = "enr_" + Self.randomID()
        let device = DeviceRecord(id: "dev_" + Self.randomID(), label: body.deviceName)

        var insert = EnrolmentInsert(invitationID: invitation.id, enrolmentID: enrolmentID, device: device,
                                     ambientKey: ambient.record, userPresentKey: userPresent.record)
        var approval: EnrolmentApproval?
        switch (Self.enrolmentPath(invitation, policy: policy, token: existing), body.token, body.serverShare) {
        case (.firstDevice(let replacing), let envelope?, let share?):
            let header = try FaceTokenCustody.uploadedHeader(of: envelope)
            guard header.gen == 1 else { throw DeviceFailure.invalidRequest("a new token starts at generation 1") }
            guard header.sub == invitation.subject, header.tenant == invitation.tenantID else {
                throw DeviceFailure.invalidRequest("the token is not the invited user's")
            }
            guard !replacing || header.tid != existing?.tokenID else {
                throw DeviceFailure.invalidRequest("a recovery's new token needs a new token id")
            }
            try Self.checkTokenPolicy(header, policy: policy)
            insert.initialFaceToken = try FaceTokenCustody.record(
                envelope: envelope, header: header, subject: invitation.subject, serverShare: share.secret,
                passwordVerifier: body.passwordVerifier?.bytes, wrappingKey: keys.shareWrappingKey)
            insert.replacesFaceToken = replacing
        case (.firstDevice, _, _):
            throw DeviceFailure.invalidRequest("the user's first device sends the new token and its server_share")
        case (.furtherDevice(let method), nil, nil):
            guard body.passwordVerifier == nil, let existing else {
                throw DeviceFailure.invalidRequest("a further device sends no password_verifier")
            }
            let expiresAt = clock.now().addingTimeInterval(TimeInterval(configuration.enrolmentApprovalWindow))
            let code = EnrolmentApproval.code(userPresentKey: body.userPresentKey.x963.bytes)
            insert.approval = PendingApproval(method: method, expiresAt: expiresAt)
            insert.pendingLimit = pendingLimit
            if method == .enrolledDevice {
                insert.approvalRequests = try await approvalRequests(
                    for: invitation, enrolmentID: enrolmentID, message: Self.approvalMessage(deviceName: body.deviceName,
                                                                                            appLabel: application.label, code: code),
                    expiresAt: expiresAt)
            }
            approval = EnrolmentApproval(method: method, expiresAt: Int64(expiresAt.timeIntervalSince1970), code: code,
                                         tokenHeader: method == .password ? existing.headerJSON : nil)
        case (.furtherDevice, _, _):
            throw DeviceFailure.invalidRequest("the user already has a face token: a further device sends none")
        }

        let outcome: EnrolmentOutcome
        do {
            outcome = try await store.enrol(insert)
        } catch let full as PendingRequestLimitReached {
            metrics.rateLimitHit(.pendingRequests)
            let limited = RateLimited(until: full.retryAt, now: clock.now())
            var failure = DeviceFailure(.rateLimited, "the user already has \(pendingLimit ?? 0) pending requests or further devices waiting "
                                        + "(approval requests count toward the pending-request limit); retry after \(limited.retryAfter) s")
            failure.headers = limited.headers
            throw failure
        }
        try await announceApprovalRequests(insert.approvalRequests)
        await auditDeviceEvent(approval == nil ? "device.enrolled" : "device.enrolment_pending", tenantID: invitation.tenantID,
                               key: userPresent.record.keyID, target: outcome.enrolment.id)
        if let approval, approval.method != .enrolledDevice {
            try await sendNewDeviceNotices(DeviceNoticeClaims(
                iss: configuration.issuer, enrolment: outcome.enrolment.id, device: Self.printable(body.deviceName, 20),
                app: Self.printable(application.label, 16), code: approval.code, method: approval.method,
                iat: Int64(outcome.enrolment.createdAt.timeIntervalSince1970),
                exp: Int64(outcome.enrolment.createdAt.timeIntervalSince1970) + Int64(Self.noticeLifetime)), subject: invitation.subject,
                tenantID: invitation.tenantID)
        }
        return EnrolmentResponse(
            identityId: pairwiseSubject(userSubject: invitation.subject, clientID: application.clientID), email: user.email,
            clientId: application.clientID, appLabel: application.label, branding: application.deviceBranding,
            issuer: configuration.issuer, authorityKey: Array(deviceKey.publicKey.rawRepresentation),
            replacedKeys: outcome.replacedKeyIDs, approval: approval)
    }

    /// One sign-in-kind approval request per application the user has an active enrolment for, so that every enrolled
    /// device of the user is asked; none left means no device can approve (that is what a recovery invitation is for).
    func approvalRequests(for invitation: InvitationRecord, enrolmentID: String, message: String,
                          expiresAt: Date) async throws -> [CIBARequestRecord] {
        let clientIDs = Set(try await store.enrolments(subject: invitation.subject).filter { $0.status == .active }.map(\.clientID))
        guard !clientIDs.isEmpty else {
            throw DeviceFailure(.invalidInvitation, "no enrolled device of the user can approve this one; ask for a recovery invitation")
        }
        return clientIDs.sorted().map { clientID in
            CIBARequestRecord(authReqID: Self.randomID(), tenantID: invitation.tenantID, clientID: clientID, subject: invitation.subject,
                              kind: .login, bindingMessage: message, expiresAt: expiresAt, intervalSeconds: configuration.pollInterval,
                              approvesEnrolment: enrolmentID)
        }
    }

    /// The pending-request limit per user (`RateLimits.pendingRequestsPerUser`; 0 is none).
    var pendingLimit: Int? {
        let limit = configuration.rateLimits.pendingRequestsPerUser
        return limit > 0 ? limit : nil
    }

    /// Signs and announces approval requests as sign-in links to the devices of their applications.
    func announceApprovalRequests(_ requests: [CIBARequestRecord]) async throws {
        for approvalRequest in requests {
            let claims = LinkClaims(iss: configuration.issuer, rid: approvalRequest.authReqID, kind: .login,
                                    exp: Int64(approvalRequest.expiresAt.timeIntervalSince1970), nonce: linkNonce(for: approvalRequest.authReqID))
            try await announce(link: try LinkSignature.make(claims, key: deviceKey), for: approvalRequest)
        }
    }

    /// A fresh approval request for every application whose earlier one of `enrolmentID` went stale or expired while the
    /// new device still waits (docs/PROTOCOL.md §8.1), announced at once.
    func reissueApprovalRequests(enrolmentID: String) async throws {
        let issued = try await store.reissueApprovalRequests(enrolmentID: enrolmentID, intervalSeconds: configuration.pollInterval,
                                                             pendingLimit: pendingLimit, newID: { Self.randomID() })
        guard !issued.isEmpty else { return }
        try await announceApprovalRequests(issued)
        _ = try? await store.appendAudit(AuditEvent(tenantID: issued[0].tenantID, kind: "device.enrolment_approval_reissued", target: enrolmentID,
                                                    detailJSON: JSONValue.object(["requests": .integer(Int64(issued.count))]).serializedString))
    }

    /// How long a notice waits in a device's outbox: a day, so a device that was off for the approval window still
    /// sees it (the tenant's audit log keeps it for good).
    static let noticeLifetime = 86_400

    /// Under `password` and `none` nobody is asked: every active device of the user is told instead, with a signed
    /// notice handed to the push senders like a link (the outbox, the tenant's webhook; docs/PROTOCOL.md §8.1), once
    /// per device, grouped by application; the audit log records how many were told.
    func sendNewDeviceNotices(_ claims: DeviceNoticeClaims, subject: String, tenantID: String) async throws {
        let notice = try NoticeSignature.make(claims, key: deviceKey)
        let active = try await store.enrolments(subject: subject).filter { $0.status == .active }
        var devices: Set<String> = []
        for clientID in Set(active.map(\.clientID)).sorted() {
            let recipients = Set(active.filter { $0.clientID == clientID }.map(\.deviceID)).subtracting(devices).sorted()
            guard !recipients.isEmpty else { continue }
            devices.formUnion(recipients)
            let push = LinkPush(link: notice, kind: .notice, tenantID: tenantID, clientID: clientID, subject: subject, authReqID: nil,
                                expiresAt: Date(timeIntervalSince1970: TimeInterval(claims.exp)), deviceIDs: recipients)
            for sender in pushSenders { try await sender.push(push, from: self) }
        }
        _ = try? await store.appendAudit(AuditEvent(tenantID: tenantID, kind: "device.enrolment_notice_sent", actor: nil, target: claims.enrolment,
                                                    detailJSON: JSONValue.object(["devices": .integer(Int64(devices.count)),
                                                                                  "method": .string(claims.method.rawValue)]).serializedString))
    }

    /// The approval request's binding message: `New device <name> (<app label>) code <code>`, printable ASCII, at most
    /// 64 characters (the name cut to 20, the label to 16).
    static func approvalMessage(deviceName: String, appLabel: String, code: String) -> String {
        let name = printable(deviceName, 20)
        return "New device \(name.isEmpty ? "?" : name) (\(printable(appLabel, 16))) code \(code)"
    }

    /// `text` reduced to printable ASCII, trimmed, cut to `limit` characters.
    static func printable(_ text: String, _ limit: Int) -> String {
        let kept = String(String.UnicodeScalarView(text.unicodeScalars.filter { (0x20...0x7E).contains($0.value) }))
        return String(kept.trimmingCharacters(in: .whitespaces).prefix(limit))
    }

    /// The enrolment the signing key's invitation is bound to; any other key, or an invitation of another enrolment, is
    /// `invalid_invitation` (the same answer as for an unknown one).
    func boundEnrolment(_ invitationID: String, device: AuthenticatedDevice) async throws -> EnrolmentRecord {
        let invalid = DeviceFailure(.invalidInvitation, "the invitation is unknown, used or expired")
        guard !invitationID.isEmpty, invitationID.utf8.count <= 256 else { throw invalid }
        let invitation: InvitationRecord
        do {
            invitation = try await store.invitation(id: invitationID)
        } catch AuthorityStoreError.notFound {
            throw invalid
        }
        guard invitation.enrolmentID == device.key.enrolmentID else { throw invalid }
        return try await store.enrolment(id: device.key.enrolmentID)
    }

    /// `GET /device/v1/enrolments/{inv}/token?wait=N` (the bound pending user-present key) → `FaceTokenDownload`, once,
    /// after the approval and within its window; the enrolment becomes active in the same transaction. Before the
    /// approval it waits up to N seconds for it, then answers `approval_pending` (at once while the process drains).
    func enrolmentToken(invitationID: String, device: AuthenticatedDevice, request: HTTPRequest) async throws -> FaceTokenDownload {
        let wait = try waitSeconds(request)
        let enrolment = try await boundEnrolment(invitationID, device: device)
        let subscription = outbox.subscribe(deviceID: enrolment.deviceID, lifecycle: lifecycle)
        defer { subscription.cancel() }
        let deadline = ContinuousClock.now + .seconds(wait)
        while true {
            do {
                let released = try await store.releaseEnrolmentToken(enrolmentID: enrolment.id)
                await auditDeviceEvent("device.enrolled", tenantID: enrolment.tenantID, key: device.key.keyID, target: enrolment.id)
                return try FaceTokenCustody.download(released.token, wrappingKey: keys.shareWrappingKey)
            } catch AuthorityStoreError.enrolmentNotActive(_, .pending) {
                // The waiting device asks for a fresh approval request wherever the last one went stale or expired.
                if enrolment.approval?.method == .enrolledDevice { try? await reissueApprovalRequests(enrolmentID: enrolment.id) }
                let remaining = deadline - ContinuousClock.now
                guard remaining > .zero, await subscription.wait(upTo: remaining), !lifecycle.isDraining else {
                    throw DeviceFailure(.approvalPending, "the enrolment waits for its approval")
                }
            }
        }
    }

    /// `POST /device/v1/enrolments/{inv}/password` (the bound pending user-present key): one counted check of the
    /// token's password, by a proof with the verifier key; a right one approves, the budget's last wrong one ends the
    /// enrolment.
    func provePassword(invitationID: String, device: AuthenticatedDevice, request: HTTPRequest) async throws -> PasswordProofResult {
        let body = try Self.decodeBody(PasswordProof.self, request)
        let enrolment = try await boundEnrolment(invitationID, device: device)
        guard enrolment.status == .pending, enrolment.approval?.method == .password else {
            throw DeviceFailure(.invalidInvitation, "the enrolment does not wait for a password")
        }
        let token = try await store.faceToken(subject: enrolment.subject)
        guard let verifier = try FaceTokenCustody.verifier(of: token, wrappingKey: keys.shareWrappingKey) else {
            throw DeviceFailure(.invalidInvitation, "the token has no password verifier")
        }
        let accepted = Self.proofVerifies(body.proof, verifier: verifier, algorithm: .edDSA,
                                          claims: ["inv": invitationID, "jti": device.claims.jti])
        let policy = try await store.tenant(id: enrolment.tenantID).policy
        let left = try await store.recordPasswordProof(enrolmentID: enrolment.id, accepted: accepted, budget: policy.attemptsMax)
        let kind = accepted ? "device.enrolment_approved" : (left == 0 ? "device.enrolment_denied" : "device.enrolment_password_failed")
        await auditDeviceEvent(kind, tenantID: enrolment.tenantID, key: device.key.keyID, target: enrolment.id)
        return PasswordProofResult(accepted: accepted, attemptsLeft: left)
    }

    /// After an approval request left `pending`: the audit line, and a wake for the new device's long poll.
    func approvalDecided(_ record: CIBARequestRecord, approved: Bool) async {
        guard let enrolmentID = record.approvesEnrolment, let enrolment = try? await store.enrolment(id: enrolmentID) else { return }
        await auditDeviceEvent(approved ? "device.enrolment_approved" : "device.enrolment_denied", tenantID: enrolment.tenantID,
                               key: record.authReqID, target: enrolmentID)
        outbox.wake(deviceID: enrolment.deviceID)
    }

    /// A new token must follow the tenant's policy: a password where one is required (with bounded scrypt
    /// parameters), liveness where it is required.
    static func checkTokenPolicy(_ header: FaceTokenHeader, policy: TenantPolicy) throws {
        if policy.passwordPolicy.mode == .required && !header.passwordRequired {
            throw DeviceFailure.invalidRequest("the tenant requires a password on face tokens")
        }
        if policy.passwordPolicy.mode == PasswordMode.none && header.passwordRequired {
            throw DeviceFailure.invalidRequest("the tenant does not use token passwords")
        }
        if header.passwordRequired && !(header.scrypt?.isWithinLimits ?? false) {
            throw DeviceFailure.invalidRequest("a password-protected token needs scrypt parameters within limits")
        }
        if policy.livenessRequired && !header.livenessRequired {
            throw DeviceFailure.invalidRequest("the tenant requires liveness")
        }
        guard header.threshold.isFinite, header.threshold > 0, header.threshold < 2 else {
            throw DeviceFailure.invalidRequest("the match threshold is out of range")
        }
    }

    /// 128 random bits, base64url: ids the authority chooses (enrolments, devices).
    static func randomID() -> String { Base64URL.encode(SecureRandom.bytes(count: 16)) }
}
