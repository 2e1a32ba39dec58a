import FaceSealCrypto
import FaceSealHTTP
import FaceSealWire
import Foundation

// Request details, face-token download, completion and abort (docs/PROTOCOL.md §4, §5, §7).
extension Authority {
    /// A request of the signing key's user; any other (or unknown) request id is `unknown_request`, so a key
    /// learns nothing about other users' requests.
    func ownRequest(_ rid: String, device: AuthenticatedDevice) async throws -> CIBARequestRecord {
        guard !rid.isEmpty, rid.utf8.count <= 256 else { throw DeviceFailure(.unknownRequest, "no such request for this key") }
        let record: CIBARequestRecord
        do {
            record = try await store.request(authReqID: rid)
        } catch AuthorityStoreError.notFound {
            throw DeviceFailure(.unknownRequest, "no such request for this key")
        }
        guard record.subject == device.key.subject else { throw DeviceFailure(.unknownRequest, "no such request for this key") }
        return record
    }

    /// A request that can still be acted on.
    func requirePending(_ record: CIBARequestRecord) throws {
        if record.state == .pending && clock() >= record.expiresAt || record.state == .expired {
            throw DeviceFailure(.requestExpired, "the request expired")
        }
        guard record.state == .pending else { throw DeviceFailure(.requestNotPending, "the request is \(record.state.rawValue)") }
    }

    /// Ceremonies need a device protocol ≥ 7 for the steps that act on them.
    static func requireCeremonyProtocol(_ record: CIBARequestRecord, device: AuthenticatedDevice) throws {
        if record.kind == .ceremony && device.protocolVersion < ProtocolVersion.ceremonyMinimum {
            throw DeviceFailure(.upgradeRequired, "a ceremony needs device protocol \(ProtocolVersion.ceremonyMinimum)")
        }
    }

    /// `GET /device/v1/requests/{rid}` → `RequestDetails`.
    func requestDetails(rid: String, device: AuthenticatedDevice) async throws -> RequestDetails {
        let record = try await ownRequest(rid, device: device)
        try requirePending(record)
        let application = try await store.application(clientID: record.clientID)
        let policy = try await store.tenant(id: record.tenantID).policy
        let ceremony = record.kind == .ceremony
        return RequestDetails(
            rid: record.authReqID, kind: ceremony ? .ceremony : .login, pkiKind: record.pkiKind.flatMap(PKIKind.init(rawValue:)),
            bindingMessage: record.bindingMessage, clientId: application.clientID, rpLabel: application.label,
            branding: application.deviceBranding, expiresAt: Int64(record.expiresAt.timeIntervalSince1970),
            keyPolicy: policy.wireKeyPolicy, attemptsMax: policy.attemptsMax, livenessRequired: policy.livenessRequired,
            minProtocol: ceremony ? ProtocolVersion.ceremonyMinimum : ProtocolVersion.minimum,
            deliveryEndpoint: ceremony ? application.deliveryEndpoint : nil,
            clientNotificationToken: ceremony ? record.clientNotificationToken : nil,
            pkiContext: record.pkiContext, pkiData: record.pkiData, nonce: linkNonce(for: record.authReqID))
    }

    /// `GET /device/v1/requests/{rid}/token` → `FaceTokenDownload`: only to an active key of the request's user,
    /// only while the request is pending; the downloaded generation is recorded on the request.
    func requestToken(rid: String, device: AuthenticatedDevice) async throws -> FaceTokenDownload {
        let record = try await ownRequest(rid, device: device)
        try requirePending(record)
        try Self.requireCeremonyProtocol(record, device: device)
        let token = try await store.downloadFaceToken(authReqID: rid, keyID: device.key.keyID)
        return try FaceTokenCustody.download(token, wrappingKey: keys.shareWrappingKey)
    }

    /// `POST /device/v1/requests/{rid}/completion`: the rotated token's compare-and-swap with the request's
    /// completion (SPEC §5.3). A retry with the same receipt gets the same answer; a lost race is `stale_token`
    /// and leaves the request stale, so the application's token request answers `stale_token` too.
    func complete(rid: String, device: AuthenticatedDevice, request: HTTPRequest) async throws -> CompletionResponse {
        let body = try Self.decodeBody(CompletionRequest.self, request)
        guard body.rid == rid else { throw DeviceFailure.invalidRequest("rid does not match the path") }
        let record = try await ownRequest(rid, device: device)
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
        guard body.baseGeneration >= 1 else { throw DeviceFailure.invalidRequest("base_generation must be at least 1") }
        let header = try FaceTokenCustody.uploadedHeader(of: body.token)
        guard header.gen == body.baseGeneration + 1 else {
            throw DeviceFailure.invalidRequest("the new token's generation must be base_generation + 1")
        }
        guard header.sub == record.subject, header.tenant == record.tenantID else {
            throw DeviceFailure.invalidRequest("the token is not this user's")
        }
        let rotated = try FaceTokenCustody.record(envelope: body.token, header: header, subject: record.subject,
                                                  serverShare: body.serverShare.secret, wrappingKey: keys.shareWrappingKey)
        let outcome = try await store.complete(CompletionCommit(
            authReqID: rid, expectedGeneration: Int64(body.baseGeneration), rotatedToken: rotated, receiptSHA256: receipt,
            passwordUsed: body.passwordUsed))
        if record.state == .pending { await requestFinished(authReqID: rid) }
        switch outcome {
        case .completed(let stored):
            return CompletionResponse(rid: rid, generation: Int(stored.stagedGeneration ?? rotated.generation),
                                      resultSHA256: stored.receiptSHA256.map(Base64URL.encode))
        case .stale:
            throw DeviceFailure(.staleToken, "the token was rotated by another completion; start a new request")
        }
    }

    /// `POST /device/v1/requests/{rid}/abort`: the request is denied at once (`access_denied` for the application).
    func abort(rid: String, device: AuthenticatedDevice, request: HTTPRequest) async throws {
        let body = try Self.decodeBody(AbortRequest.self, request)
        guard body.rid == rid else { throw DeviceFailure.invalidRequest("rid does not match the path") }
        let record = try await ownRequest(rid, device: device)
        _ = try await store.denyRequest(authReqID: rid, reason: body.reason.rawValue)
        if record.state == .pending { await requestFinished(authReqID: rid) }
    }
}
