import FaceSealCrypto
import FaceSealHTTP
import FaceSealWire
import Foundation

// Enrolment (docs/PROTOCOL.md §8): the invitation id, from the enrolment link's `rid`, authorises the reads; the
// enrolment itself is signed with the new user-present key, whose public key travels in the body.
extension Authority {
    /// An invitation that can still be used: unconsumed, not cancelled and unexpired.
    func usableInvitation(_ id: String) async throws -> InvitationRecord {
        guard !id.isEmpty, id.utf8.count <= 256 else { throw DeviceFailure(.invalidInvitation, "the invitation is unknown, used or expired") }
        let invitation = try await store.invitation(id: id)
        guard invitation.consumedAt == nil, invitation.cancelledAt == nil, invitation.expiresAt > clock() else {
            throw DeviceFailure(.invalidInvitation, "the invitation is unknown, used or expired")
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

    /// `GET /device/v1/enrolments/{inv}` → `EnrolmentDetails`.
    func enrolmentDetails(invitationID: String) async throws -> EnrolmentDetails {
        let invitation = try await usableInvitation(invitationID)
        let user = try await store.user(subject: invitation.subject)
        let application = try await store.application(clientID: invitation.clientID)
        let policy = try await store.tenant(id: invitation.tenantID).policy
        let token = try await existingFaceToken(subject: invitation.subject)
        return EnrolmentDetails(
            invitation: invitation.id, email: user.email, subject: invitation.subject, tenant: invitation.tenantID,
            clientId: application.clientID, appLabel: application.label,
            branding: application.deviceBranding, tokenExists: token != nil,
            passwordRequired: policy.passwordPolicy.mode == .required, livenessRequired: policy.livenessRequired,
            keyPolicy: policy.wireKeyPolicy, expiresAt: Int64(invitation.expiresAt.timeIntervalSince1970))
    }

    /// `GET /device/v1/enrolments/{inv}/token` → `FaceTokenDownload`, for a further device's face match.
    func enrolmentToken(invitationID: String) async throws -> FaceTokenDownload {
        let invitation = try await usableInvitation(invitationID)
        guard let token = try await existingFaceToken(subject: invitation.subject) else {
            throw DeviceFailure(.invalidInvitation, "the user has no face token yet: this is a first enrolment")
        }
        return try FaceTokenCustody.download(token, wrappingKey: keys.shareWrappingKey)
    }

    /// `POST /device/v1/enrolments/{inv}`: the edge of the enrolment, whose key comes in the body. Every answer
    /// after the signature header parsed is signed for its `jti`.
    func enrolRoute(_ request: HTTPRequest) async -> HTTPResponse {
        var jti: String?
        do {
            let unverified = try DeviceRequestSignature.parse(request.headers[DeviceSigning.requestHeader])
            jti = unverified.claims.jti
            let response = try await enrol(invitationID: request.pathParameter("inv"), unverified: unverified, request: request)
            return signedDeviceResponse(.ok(response), jti: unverified.claims.jti, hint: false)
        } catch {
            return deviceErrorResponse(error, jti: jti, hint: false)
        }
    }

    /// Checks and stores an enrolment: both keys and (first device) the face token, all or nothing. The invitation
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
        try await registerDeviceJTI(claims)
        _ = try Self.announcedProtocol(request)
        try Self.verifyProof(body.ambientProof, key: ambient.public, claims: ["inv": invitationID, "jti": claims.jti],
                             name: "ambient_proof")

        let user = try await store.user(subject: invitation.subject)
        let application = try await store.application(clientID: invitation.clientID)
        let policy = try await store.tenant(id: invitation.tenantID).policy
        let existing = try await existingFaceToken(subject: invitation.subject)

        var initialToken: FaceTokenRecord?
        switch (body.token, body.serverShare, existing) {
        case (let envelope?, let share?, nil):
            let header = try FaceTokenCustody.uploadedHeader(of: envelope)
            guard header.gen == 1 else { throw DeviceFailure.invalidRequest("a new token starts at generation 1") }
            guard header.sub == invitation.subject, header.tenant == invitation.tenantID else {
                throw DeviceFailure.invalidRequest("the token is not the invited user's")
            }
            try Self.checkTokenPolicy(header, policy: policy)
            initialToken = try FaceTokenCustody.record(envelope: envelope, header: header, subject: invitation.subject,
                                                       serverShare: share.secret, wrappingKey: keys.shareWrappingKey)
        case (nil, nil, _?):
            initialToken = nil
        case (_, _, nil):
            throw DeviceFailure.invalidRequest("the user's first device sends the new token and its server_share")
        case (_, _, _?):
            throw DeviceFailure.invalidRequest("the user already has a face token: a further device sends none")
        }

        let outcome = try await store.enrol(EnrolmentInsert(
            invitationID: invitation.id, enrolmentID: "enr_" + Self.randomID(), device: DeviceRecord(id: "dev_" + Self.randomID(), label: body.deviceName),
            ambientKey: ambient.record, userPresentKey: userPresent.record, initialFaceToken: initialToken))
        await auditDeviceEvent("device.enrolled", tenantID: invitation.tenantID, key: userPresent.record.keyID, target: outcome.enrolment.id)
        return EnrolmentResponse(
            identityId: pairwiseSubject(userSubject: invitation.subject, clientID: application.clientID), email: user.email,
            clientId: application.clientID, appLabel: application.label, branding: application.deviceBranding,
            issuer: configuration.issuer, authorityKey: Array(keys.deviceKey.publicKey.rawRepresentation),
            replacedKeys: outcome.replacedKeyIDs)
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
