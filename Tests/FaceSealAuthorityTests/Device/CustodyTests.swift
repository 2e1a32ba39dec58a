import FaceSealCrypto
import FaceSealHTTP
import FaceSealTestSupport
import FaceSealWire
import Foundation
import Testing
@testable import FaceSealAuthority

/// docs/PROTOCOL.md §8.1 over HTTP on both databases: an invitation alone releases nothing; a further device's token
/// is released once, to its own pending user-present key, after the tenant's approval.
@Suite("Device API: custody of face tokens (further devices, approval, recovery)")
struct CustodyTests {
    /// The approval requests announced to `device`'s outbox, by request id.
    static func approvalRequestIDs(_ device: TestDevice) async throws -> [String] {
        let links = try await device.send(.get, DevicePaths.outbox).decode(OutboxResponse.self).links
        return try links.map { try LinkSignature.parse(Array($0.utf8)).claims.rid }
    }

    /// `device` approves request `rid` as an enrolled device's `LoginFlow` does: downloads the token with its
    /// user-present key and completes with the rotation.
    static func approve(_ device: TestDevice, rid: String) async throws -> DeviceResponse {
        let download = try await downloadToken(device, rid)
        return try await device.post(DevicePaths.completion(rid), try TestDevice.completion(rid: rid, from: download, receipt: nil))
    }

    /// A further device of `user-1` at `clientID`, registered (pending) through a new invitation.
    static func registerFurther(_ harness: AuthorityHarness, clientID: String = "app-2",
                                kind: InvitationKind = .enrolment) async throws -> (TestDevice, String, EnrolmentResponse) {
        let invitation = try await invite(harness, kind: kind, clientID: clientID)
        let device = TestDevice(harness: harness)
        let response = try await device.enrol(invitation: invitation)
        guard response.status == 200 else { throw TestDeviceError.refused(response.status, response.error) }
        return (device, invitation, try response.decode(EnrolmentResponse.self))
    }

    static func invite(_ harness: AuthorityHarness, kind: InvitationKind, clientID: String = "app-2") async throws -> String {
        try await harness.store.createInvitation(InvitationRecord(
            id: "inv_" + Base64URL.encode(SecureRandom.bytes(count: 12)), tenantID: "acme", subject: "user-1", clientID: clientID,
            secretHash: Array(repeating: 1, count: 32), expiresAt: harness.clock.now().addingTimeInterval(3600), kind: kind)).id
    }

    @Test("an unauthenticated, wrongly signed, early or second download gets nothing; the enrolled device's face scan releases the token once",
          arguments: StoreBackend.underTest)
    func enrolledDeviceApproval(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness, policy: TenantPolicy())
            let (phone, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            let invitation = try await Self.invite(harness, kind: .enrolment)
            let unsignedURL = harness.url(DevicePaths.enrolmentToken(invitation))

            // Before and after registration, the invitation link alone gets no token.
            let early = try await harness.client.send(HTTPClientRequest(url: unsignedURL))
            #expect(early.status.code == 401)
            #expect(try DeviceErrorResponse.decode(early.body).error == .invalidSignature)

            let laptop = TestDevice(harness: harness)
            let registered = try await laptop.enrol(invitation: invitation)
            #expect(registered.status == 200)
            let approval = try #require(try registered.decode(EnrolmentResponse.self).approval)
            #expect(approval.method == .enrolledDevice)
            #expect(approval.code == EnrolmentApproval.code(userPresentKey: Array(laptop.userPresentKey.publicKey.x963Representation)))
            #expect(approval.tokenHeader == nil)
            #expect(try await harness.store.deviceKey(keyID: laptop.userPresentKID).status == .pending)

            let unsigned = try await harness.client.send(HTTPClientRequest(url: unsignedURL))
            #expect(unsigned.status.code == 401 && !String(decoding: unsigned.body, as: UTF8.self).contains("server_share"))
            // Another key of the same user, the pending device's ambient key, and a replay of the invitation: nothing.
            expectDeviceError(try await phone.enrolmentToken(invitation: invitation), .invalidInvitation)
            expectDeviceError(try await laptop.enrolmentToken(invitation: invitation, as: .ambient), .userPresenceRequired)
            let intruder = TestDevice(harness: harness)
            let reused = try await harness.client.send(HTTPClientRequest(url: harness.url(DevicePaths.enrolment(invitation))))
            // Used (by the pending enrolment): said as such, 409, and still nothing released.
            #expect(try DeviceErrorResponse.decode(reused.body).error == .invitationUsed)
            #expect(reused.status.code == 409 && !String(decoding: reused.body, as: UTF8.self).contains("server_share"))
            expectDeviceError(try await intruder.enrolmentToken(invitation: invitation), .invalidSignature)
            // A forged signature for the pending key id: refused before anything else.
            let forged = try DeviceRequestSignature.make(method: "GET", path: DevicePaths.enrolmentToken(invitation), body: [],
                                                         kid: laptop.userPresentKID, signer: intruder.userPresentKey, now: laptop.now,
                                                         jti: DeviceRequestSignature.newJTI())
            let forgedAnswer = try await harness.client.send(HTTPClientRequest(
                url: unsignedURL, headers: [DeviceSigning.requestHeader: forged.header, DeviceSigning.protocolHeader: "7"]))
            #expect(forgedAnswer.status.code == 401)
            // Not approved yet: the bound key waits, and can use no other endpoint.
            expectDeviceError(try await laptop.enrolmentToken(invitation: invitation), .approvalPending)
            expectDeviceError(try await laptop.send(.get, DevicePaths.outbox, as: .userPresent), .approvalPending)

            // The phone got the approval request; it names the new device and the code, and no application can redeem it.
            let rids = try await Self.approvalRequestIDs(phone)
            #expect(rids.count == 1)
            let rid = try #require(rids.first)
            let details = try await phone.send(.get, DevicePaths.request(rid)).decode(RequestDetails.self)
            #expect(details.kind == .login)
            #expect(details.bindingMessage == "New device test-device (App app-2) code \(approval.code)")
            await expectStoreError(.notFound(.cibaRequest, id: rid)) { try await harness.store.recordPoll(authReqID: rid, clientID: "app-1") }

            // The face scan on the phone (download + completion with rotation) approves; the laptop's token comes once.
            #expect(try await Self.approve(phone, rid: rid).status == 200)
            let released = try await laptop.enrolmentToken(invitation: invitation)
            #expect(released.status == 200)
            let header = try TestDevice.open(try released.decode(FaceTokenDownload.self))
            #expect(header.gen == 2)
            expectDeviceError(try await laptop.enrolmentToken(invitation: invitation), .invalidInvitation)
            #expect(try await harness.store.deviceKey(keyID: laptop.userPresentKID).status == .active)
            #expect(try await laptop.send(.get, DevicePaths.outbox).status == 200)

            // The laptop then answers a request of its application on the same token.
            _ = try await createPendingRequest(harness, "req-laptop", clientID: "app-2")
            let download = try await downloadToken(laptop, "req-laptop")
            #expect(try TestDevice.open(download).tid == header.tid)

            let kinds = try await harness.store.auditEvents(tenantID: "acme", beforeSequence: nil, limit: 20).map(\.kind)
            #expect(kinds.contains("device.enrolment_pending") && kinds.contains("device.enrolment_approved") && kinds.contains("device.enrolled"))
        }
    }

    @Test("a denial on the enrolled device ends the pending enrolment; the approval window ends it too",
          arguments: StoreBackend.underTest)
    func denialAndWindow(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness, policy: TenantPolicy())
            let (phone, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            let (laptop, invitation, _) = try await Self.registerFurther(harness)
            let rid = try #require(try await Self.approvalRequestIDs(phone).first)
            #expect(try await phone.post(DevicePaths.abort(rid), AbortRequest(rid: rid, reason: .userCancelled)).status == 204)
            // The ended key is told to drop itself.
            expectDeviceError(try await laptop.enrolmentToken(invitation: invitation), .deviceKeyRevoked)
            #expect(try await harness.store.deviceKey(keyID: laptop.userPresentKID).status == .revoked)

            // Approved, but fetched after the window: nothing.
            let (late, lateInvitation, answer) = try await Self.registerFurther(harness)
            let lateRid = try #require(try await Self.approvalRequestIDs(phone).first)
            #expect(try await Self.approve(phone, rid: lateRid).status == 200)
            let window = try #require(answer.approval).expiresAt - Int64(harness.clock.now().timeIntervalSince1970)
            #expect(window == 600)
            harness.clock.advance(by: 601)
            expectDeviceError(try await late.enrolmentToken(invitation: lateInvitation), .invalidInvitation)
        }
    }

    @Test("under `none` the bound key downloads once; without an enrolled device an invitation cannot add one",
          arguments: StoreBackend.underTest)
    func noneAndNoApprover(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness, policy: TenantPolicy(furtherDeviceApproval: .none))
            let (phone, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            let (laptop, invitation, answer) = try await Self.registerFurther(harness)
            #expect(answer.approval?.method == FurtherDeviceApproval.none)
            #expect(try await Self.approvalRequestIDs(phone).isEmpty)
            #expect(try await laptop.enrolmentToken(invitation: invitation).status == 200)
            expectDeviceError(try await laptop.enrolmentToken(invitation: invitation), .invalidInvitation)

            _ = try await harness.store.updateTenantPolicy(tenantID: "acme", policy: TenantPolicy())
            for key in [phone.userPresentKID, laptop.userPresentKID] {
                _ = try await harness.store.endEnrolment(id: try await harness.store.deviceKey(keyID: key).enrolmentID, status: .revoked)
            }
            let orphan = try await Self.invite(harness, kind: .enrolment)
            expectDeviceError(try await TestDevice(harness: harness).enrol(invitation: orphan), .invalidInvitation)
        }
    }

    @Test("password approval: wrong proofs are counted and the budget ends the enrolment; the right one releases the token",
          arguments: StoreBackend.underTest)
    func passwordApproval(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness, policy: TenantPolicy(passwordPolicy: PasswordPolicy(mode: .required),
                                                                    furtherDeviceApproval: .password))
            let (phone, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1", tokenPassword: "pw")
            let (guesser, guessed, answer) = try await Self.registerFurther(harness)
            let approval = try #require(answer.approval)
            #expect(approval.method == .password)
            #expect(try FaceTokenHeader.decode(try #require(approval.tokenHeader).bytes).tid == "tok_test")
            #expect(try await Self.approvalRequestIDs(phone).isEmpty)
            for left in [2, 1, 0] {
                let result = try await guesser.provePassword(invitation: guessed, password: "guess-\(left)").decode(PasswordProofResult.self)
                #expect(result == PasswordProofResult(accepted: false, attemptsLeft: left))
                if left > 0 { expectDeviceError(try await guesser.enrolmentToken(invitation: guessed), .approvalPending) }
            }
            expectDeviceError(try await guesser.provePassword(invitation: guessed, password: "pw"), .deviceKeyRevoked)
            expectDeviceError(try await guesser.enrolmentToken(invitation: guessed), .deviceKeyRevoked)
            #expect(try await harness.store.deviceKey(keyID: guesser.userPresentKID).status == .revoked)

            let (owner, invitation, _) = try await Self.registerFurther(harness)
            #expect(try await owner.provePassword(invitation: invitation, password: "pw").decode(PasswordProofResult.self).accepted)
            let released = try await owner.enrolmentToken(invitation: invitation)
            #expect(released.status == 200)
            _ = try TestDevice.open(try released.decode(FaceTokenDownload.self), password: "pw")
        }
    }

    @Test("a password token without a verifier is approved by an enrolled device until a completion uploads one",
          arguments: StoreBackend.underTest)
    func verifierArrivesWithARotation(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness, policy: TenantPolicy(passwordPolicy: PasswordPolicy(mode: .required),
                                                                    furtherDeviceApproval: .password))
            var old = TestDevice(harness: harness)
            old.tokenPassword = "pw"
            old.uploadsVerifier = false
            #expect(try await old.enrol(invitation: try await Self.invite(harness, kind: .enrolment, clientID: "app-1")).status == 200)
            let (_, _, fallback) = try await Self.registerFurther(harness)
            #expect(fallback.approval?.method == .enrolledDevice)

            // A sign-in's completion uploads the verifier; the next further device proves the password.
            _ = try await createPendingRequest(harness, "req-1", kind: .login)
            let download = try await downloadToken(old, "req-1")
            var completion = try TestDevice.completion(rid: "req-1", from: download, receipt: nil, password: "pw")
            completion.passwordVerifier = Base64URLBytes(try TestDevice.verifier("pw"))
            #expect(try await old.post(DevicePaths.completion("req-1"), completion).status == 200)
            let (_, _, upgraded) = try await Self.registerFurther(harness)
            #expect(upgraded.approval?.method == .password)
        }
    }

    @Test("recovery keeps the keys by password, else starts a new token; not while a device is enrolled", arguments: StoreBackend.underTest)
    func recovery(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness, policy: TenantPolicy(passwordPolicy: PasswordPolicy(mode: .optional)))
            let (phone, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            let recovery = try await Self.invite(harness, kind: .recovery, clientID: "app-1")
            let details = try EnrolmentDetails.decode(try await harness.client.send(HTTPClientRequest(url: harness.url(DevicePaths.enrolment(recovery)))).body)
            #expect(details.recovery == true && details.tokenExists == false)
            var replacement = TestDevice(harness: harness)
            replacement.tokenID = "tok_recovered"
            // The phone is still enrolled: a recovery must not replace its token.
            expectDeviceError(try await replacement.enrol(invitation: recovery), .invalidInvitation)
            #expect(try await harness.store.faceToken(subject: "user-1").tokenID == "tok_test")

            _ = try await harness.store.endEnrolment(id: try await harness.store.deviceKey(keyID: phone.userPresentKID).enrolmentID, status: .revoked)
            let again = try await Self.invite(harness, kind: .recovery, clientID: "app-1")
            #expect(try await replacement.enrol(invitation: again).status == 200)
            let token = try await harness.store.faceToken(subject: "user-1")
            #expect(token.tokenID == "tok_recovered" && token.generation == 1)

            // With a password and its verifier, recovery keeps the token: a password approval.
            var keeper = TestDevice(harness: harness)
            keeper.tokenPassword = "pw"
            _ = try await harness.store.createUser(UserRecord(subject: "user-3", tenantID: "acme", email: "user-3@example.com"))
            let first = try await harness.store.createInvitation(InvitationRecord(
                id: "inv_keeper", tenantID: "acme", subject: "user-3", clientID: "app-1", secretHash: [1],
                expiresAt: harness.clock.now().addingTimeInterval(3600)))
            #expect(try await keeper.enrol(invitation: first.id).status == 200)
            _ = try await harness.store.endEnrolment(id: try await harness.store.deviceKey(keyID: keeper.userPresentKID).enrolmentID, status: .revoked)
            let kept = try await harness.store.createInvitation(InvitationRecord(
                id: "inv_kept", tenantID: "acme", subject: "user-3", clientID: "app-1", secretHash: [1],
                expiresAt: harness.clock.now().addingTimeInterval(3600), kind: .recovery))
            let lost = TestDevice(harness: harness)
            let answer = try await lost.enrol(invitation: kept.id).decode(EnrolmentResponse.self)
            #expect(answer.approval?.method == .password)
            #expect(try await lost.provePassword(invitation: kept.id, password: "pw").decode(PasswordProofResult.self).accepted)
            #expect(try TestDevice.open(try await lost.enrolmentToken(invitation: kept.id).decode(FaceTokenDownload.self), password: "pw").tid == "tok_test")
        }
    }
}
