import FaceSealCrypto
import FaceSealHTTP
import FaceSealWire
import Foundation

// Request details, face-token download, completion and abort (docs/PROTOCOL.md §4, §5, §7).
extension Authority {
    /// A request of the signing key's user and application (the edge already refused an ended key); any other (or
    /// unknown) request id is `unknown_request`, the same answer, so a key learns nothing about other users' requests
    /// or its user's requests at other applications.
    func ownRequest(_ rid: String, device: AuthenticatedDevice) async throws -> CIBARequestRecord {
        let record = try await lookUpRequest(rid) { try await store.request(authReqID: rid) }
        try Self.requireOwn(record, device: device)
        return record
    }

    /// `ownRequest` with the request's application and tenant (and the user's face token with `faceToken`), in one read.
    func ownRequestContext(_ rid: String, device: AuthenticatedDevice, faceToken: Bool = false) async throws -> RequestContext {
        let context = try await lookUpRequest(rid) { try await store.requestContext(authReqID: rid, faceToken: faceToken) }
        try Self.requireOwn(context.request, device: device)
        return context
    }

    private static var unknownRequest: DeviceFailure { DeviceFailure(.unknownRequest, "no such request for this key") }

    private func lookUpRequest<Found: Sendable>(_ rid: String, _ load: () async throws -> Found) async throws -> Found {
        guard !rid.isEmpty, rid.utf8.count <= 256 else { throw Self.unknownRequest }
        do {
            return try await load()
        } catch AuthorityStoreError.notFound {
            throw Self.unknownRequest
        }
    }

    private static func requireOwn(_ record: CIBARequestRecord, device: AuthenticatedDevice) throws {
        guard record.subject == device.key.subject, record.clientID == device.key.clientID else { throw unknownRequest }
    }

    /// Ceremonies need a device protocol ≥ 7 for the steps that act on them.
    static func requireCeremonyProtocol(_ record: CIBARequestRecord, device: AuthenticatedDevice) throws {
        if record.kind == .ceremony && device.protocolVersion < ProtocolVersion.ceremonyMinimum {
            throw DeviceFailure(.upgradeRequired, "a ceremony needs device protocol \(ProtocolVersion.ceremonyMinimum)")
        }
    }

    /// `GET /device/v1/requests/{rid}` → `RequestDetails`.
    /// A browser sign-in's id is claimed here by the first key of its application that asks.
    func requestDetails(rid: String, device: AuthenticatedDevice) async throws -> RequestDetails {
        let context: RequestContext
        do {
            context = try await ownRequestContext(rid, device: device)
        } catch let failure as DeviceFailure where failure.code == .unknownRequest {
            // Claiming writes: the jti is remembered before it.
            if let replay = device.replay?.claim() { try await registerDeviceJTI(replay) }
            guard let claimed = try await claimBrowserSignIn(rid, device: device),
                  claimed.subject == device.key.subject, claimed.clientID == device.key.clientID else { throw failure }
            context = try await store.requestContext(authReqID: claimed.authReqID, faceToken: false)
        }
        let record = context.request
        let application = context.application
        let policy = context.tenant.policy
        // The store's lifecycle refuses a request that is no longer pending (`request_expired`, `request_not_pending`).
        _ = try await store.markDelivered(authReqID: rid, deviceID: device.key.deviceID, registering: device.replay?.claim())
        let budget = AttemptBudget(record, policy: policy)
        let ceremony = record.kind == .ceremony
        return RequestDetails(
            rid: record.authReqID, kind: ceremony ? .ceremony : .login, pkiKind: record.pkiKind.flatMap(PKIKind.init(rawValue:)),
            bindingMessage: record.bindingMessage, clientId: application.clientID, rpLabel: application.label,
            branding: application.deviceBranding, expiresAt: Int64(record.expiresAt.timeIntervalSince1970),
            keyPolicy: policy.wireKeyPolicy, attemptsMax: policy.attemptsMax, attemptsLeft: budget.attemptsLeft,
            captureRetriesMax: policy.captureRetriesMax, captureRetriesLeft: budget.captureRetriesLeft,
            livenessRequired: policy.livenessRequired, matchThreshold: policy.matchThreshold,
            minProtocol: ceremony ? ProtocolVersion.ceremonyMinimum : ProtocolVersion.minimum,
            deliveryEndpoint: ceremony ? application.deliveryEndpoint : nil,
            clientNotificationToken: ceremony ? record.clientNotificationToken : nil,
            pkiContext: record.pkiContext, pkiData: record.pkiData, nonce: linkNonce(for: record.authReqID))
    }

    /// `GET /device/v1/requests/{rid}/token` → `FaceTokenDownload`: only to the user-present key of the request's
    /// user and application, only while the request is pending; the download is recorded against the request and
    /// the key.
    func requestToken(rid: String, device: AuthenticatedDevice) async throws -> FaceTokenDownload {
        let record = try await ownRequest(rid, device: device)
        // The store decides again in its transaction; asked first here so a finished request answers so before an old
        // device hears it needs an upgrade.
        if case .refuse(let refusal) = RequestLifecycle.decide(.downloadToken, record, now: clock.now()) { throw DeviceFailure.store(refusal) }
        try Self.requireCeremonyProtocol(record, device: device)
        let token = try await store.downloadFaceToken(authReqID: rid, keyID: device.key.keyID, registering: device.replay?.claim())
        return try FaceTokenCustody.download(token, wrappingKey: keys.shareWrappingKey)
    }

    /// `POST /device/v1/requests/{rid}/completion`: the rotated token's compare-and-swap with the request's
    /// completion (SPEC §5.3). A retry with the same receipt gets the same answer; a lost race is `stale_token`
    /// and leaves the request stale, so the application's token request answers `stale_token` too.
    func complete(rid: String, device: AuthenticatedDevice, request: HTTPRequest) async throws -> CompletionResponse {
        let body = try Self.decodeBody(CompletionRequest.self, request)
        guard body.rid == rid else { throw DeviceFailure.invalidRequest("rid does not match the path") }
        let context = try await ownRequestContext(rid, device: device, faceToken: true)
        let record = context.request
        try Self.requireCeremonyProtocol(record, device: device)

        var receipt: [UInt8]?
        switch (record.kind, body.resultSHA256) {
        case (.ceremony, let text?):
            guard let bytes = try? Base64URL.decode(text), bytes.count == 32 else {
                throw DeviceFailure.invalidRequest("result_sha256 must be base64url of 32 bytes")
            }
            receipt = bytes
        case (.ceremony, nil):
            throw DeviceFailure.invalidRequest("a ceremony's completion carries result_sha256")
        case (.login, nil):
            receipt = nil
        case (.login, _?):
            throw DeviceFailure.invalidRequest("a sign-in delivers nothing: result_sha256 must be absent")
        }
        // `base_generation` was range-checked at decode (`WireRange.generation`), so `+ 1` cannot overflow.
        let header = try FaceTokenCustody.uploadedHeader(of: body.token)
        guard header.gen == body.baseGeneration + 1 else {
            throw DeviceFailure.invalidRequest("the new token's generation must be base_generation + 1")
        }
        guard header.sub == record.subject, header.tenant == record.tenantID else {
            throw DeviceFailure.invalidRequest("the token is not this user's")
        }
        // `amr: pwd` is the stored header's word; password_required never changes across generations.
        let (storedGeneration, stored) = try Self.storedHeader(context.faceToken, subject: record.subject)
        guard body.passwordUsed == stored.passwordRequired else {
            throw DeviceFailure.invalidRequest("password_used must say whether the token needs a password")
        }
        // The rotation the compare-and-swap can store is the one from the stored generation: the store's WHERE on
        // generation and token id guarantees that row is still this header. Any other base is refused or stale there.
        if Int64(body.baseGeneration) == storedGeneration {
            try TokenRotationRule.check(stored: stored, rotated: header, policy: context.tenant.policy)
        }
        let rotated = try FaceTokenCustody.record(envelope: body.token, header: header, subject: record.subject,
                                                  serverShare: body.serverShare.secret, passwordVerifier: body.passwordVerifier?.bytes,
                                                  wrappingKey: keys.shareWrappingKey)
        var commit = CompletionCommit(authReqID: rid, keyID: device.key.keyID, expectedGeneration: Int64(body.baseGeneration),
                                      rotatedToken: rotated, receiptSHA256: receipt, passwordUsed: stored.passwordRequired)
        commit.replay = device.replay?.claim()
        let outcome = try await store.complete(commit)
        if record.state == .pending {
            requestFinished(outcome.request, application: context.application)
            if case .completed = outcome { await approvalDecided(record, approved: true) }
            if case .stale = outcome, let enrolmentID = record.approvesEnrolment { try? await reissueApprovalRequests(enrolmentID: enrolmentID) }
        }
        switch outcome {
        case .completed(let stored):
            return CompletionResponse(rid: rid, generation: Int(stored.stagedGeneration ?? rotated.generation),
                                      resultSHA256: stored.receiptSHA256.map(Base64URL.encode))
        case .stale:
            throw DeviceFailure(.staleToken, "the token was rotated by another completion; start a new request")
        }
    }

    /// The generation and header of the user's stored face token (the authority wrote it: a failure is the authority's).
    static func storedHeader(_ token: FaceTokenRecord?, subject: String) throws -> (generation: Int64, header: FaceTokenHeader) {
        guard let token else { throw AuthorityStoreError.notFound(.faceToken, id: subject) }
        guard let header = try? FaceTokenHeader.decode(token.headerJSON) else {
            throw DeviceFailure(.serverError, "stored token header unreadable")
        }
        return (token.generation, header)
    }

    /// `POST /device/v1/requests/{rid}/attempts`: a failed face check, counted against the request's budget; a spent
    /// budget denies the request at once. Only the user-present key that downloaded the token for the request reports.
    func reportAttempt(rid: String, device: AuthenticatedDevice, request: HTTPRequest) async throws -> AttemptsRemaining {
        let body = try Self.decodeBody(AttemptReport.self, request)
        guard body.rid == rid else { throw DeviceFailure.invalidRequest("rid does not match the path") }
        let record = try await ownRequest(rid, device: device)
        let budget = try await store.recordFaceCheckFailure(authReqID: rid, keyID: device.key.keyID, body.kind)
        if budget.isSpent {
            await requestFinished(authReqID: rid)
            await approvalDecided(record, approved: false)
        }
        return AttemptsRemaining(rid: rid, budget: budget)
    }

    /// `POST /device/v1/requests/{rid}/abort`: the request is denied at once (`access_denied` for the application).
    func abort(rid: String, device: AuthenticatedDevice, request: HTTPRequest) async throws {
        let body = try Self.decodeBody(AbortRequest.self, request)
        guard body.rid == rid else { throw DeviceFailure.invalidRequest("rid does not match the path") }
        let record = try await ownRequest(rid, device: device)
        _ = try await store.denyRequest(authReqID: rid, reason: DenialReason(body.reason).rawValue)
        if record.state == .pending {
            await requestFinished(authReqID: rid)
            await approvalDecided(record, approved: false)
        }
    }
}
