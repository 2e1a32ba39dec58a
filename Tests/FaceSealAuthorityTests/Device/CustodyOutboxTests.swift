import FaceSealCrypto
import FaceSealHTTP
import FaceSealTestSupport
import FaceSealWire
import Foundation
import Testing
@testable import FaceSealAuthority

/// docs/PROTOCOL.md §8.1 over HTTP on both databases, what the user's other devices see: a signed notice under
/// `password` and `none`, an approval request re-issued when the last one went stale, and approval requests counted
/// toward the pending-request limit.
@Suite("Device API: custody seen from the user's other devices (notices, re-issued approvals, pending limit)")
struct CustodyOutboxTests {
    /// Everything in `device`'s outbox (links and notices), taken.
    static func outbox(_ device: TestDevice) async throws -> [String] {
        try await device.send(.get, DevicePaths.outbox).decode(OutboxResponse.self).links
    }

    /// The notices among `entries`, verified with the authority's key.
    static func notices(_ entries: [String], _ harness: AuthorityHarness) throws -> [DeviceNoticeClaims] {
        try entries.filter { NoticeSignature.isNotice(Array($0.utf8)) }.map {
            try NoticeSignature.parse(Array($0.utf8)).verify(with: harness.authority.keys.deviceKey.publicKey, now: 0)
        }
    }

    /// A further device of `user-1` at `clientID` through to its token: proves `password` when given, then downloads.
    static func addDevice(_ harness: AuthorityHarness, clientID: String, password: String?) async throws -> TestDevice {
        let (device, invitation, _) = try await CustodyTests.registerFurther(harness, clientID: clientID)
        if let password {
            #expect(try await device.provePassword(invitation: invitation, password: password).decode(PasswordProofResult.self).accepted)
        }
        #expect(try await device.enrolmentToken(invitation: invitation).status == 200)
        return device
    }

    @Test("under password and none every active device of the user gets a signed notice, never a link; the audit log has it",
          arguments: StoreBackend.underTest, [FurtherDeviceApproval.none, .password])
    func noticesWithoutAnApprover(backend: StoreBackend, method: FurtherDeviceApproval) async throws {
        let password: String? = method == .password ? "pw" : nil
        let policy = method == .password
            ? TenantPolicy(passwordPolicy: PasswordPolicy(mode: .required), furtherDeviceApproval: .password)
            : TenantPolicy(furtherDeviceApproval: .none)
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness, policy: policy)
            let (phone, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1", tokenPassword: password)
            let tablet = try await Self.addDevice(harness, clientID: "app-2", password: password)
            #expect(try Self.notices(try await Self.outbox(phone), harness).count == 1, "the phone was told of the tablet")

            let (laptop, invitation, answer) = try await CustodyTests.registerFurther(harness)
            let approval = try #require(answer.approval)
            #expect(approval.method == method)
            let enrolmentID = try await harness.store.deviceKey(keyID: laptop.userPresentKID).enrolmentID
            for device in [phone, tablet] {
                let entries = try await Self.outbox(device)
                #expect(entries.count == 1)
                // Not a link: a device that knows no notices refuses it as a malformed link, so nothing can approve it.
                #expect(throws: LinkError.malformed) { try LinkSignature.parse(Array(entries[0].utf8)) }
                let notice = try #require(try Self.notices(entries, harness).first)
                #expect(notice == DeviceNoticeClaims(
                    iss: harness.authority.configuration.issuer, enrolment: enrolmentID, device: "test-device", app: "App app-2", code: approval.code,
                    method: method, iat: phone.now, exp: phone.now + 86_400))
                // Signed by the authority's key: another key does not verify it.
                #expect(throws: LinkError.badSignature) {
                    try NoticeSignature.parse(Array(entries[0].utf8)).verify(with: Curve25519.Signing.PrivateKey().publicKey, now: 0)
                }
            }
            let audit = try await harness.store.auditEvents(tenantID: "acme", beforeSequence: nil, limit: 50)
            let sent = try #require(audit.first { $0.kind == "device.enrolment_notice_sent" && $0.target == enrolmentID })
            #expect(sent.detailJSON.contains(#""devices":2"#) && sent.detailJSON.contains(#""method":"\#(method.rawValue)""#), "\(sent.detailJSON)")
            #expect(audit.contains { $0.kind == "device.enrolment_pending" && $0.target == enrolmentID })

            // The new device itself reads nothing while pending, and its release sends nothing more.
            expectDeviceError(try await laptop.send(.get, DevicePaths.outbox), .approvalPending)
            if let password {
                #expect(try await laptop.provePassword(invitation: invitation, password: password).decode(PasswordProofResult.self).accepted)
            }
            #expect(try await laptop.enrolmentToken(invitation: invitation).status == 200)
            #expect(try await Self.outbox(phone).isEmpty)
        }
    }

    @Test("a notice goes through the push senders like a link: the tenant's webhook gets it as kind notice, without a universal link",
          arguments: StoreBackend.underTest)
    func noticeThroughTheWebhook(backend: StoreBackend) async throws {
        let receiver = try WebhookReceiver(answering: [200])
        try await withManagement(backend) { admin in
            let harness = admin.harness
            try await seedDeviceWorld(harness, policy: TenantPolicy(furtherDeviceApproval: .none))
            let (phone, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            let registered = try await admin.expect(200, .put, "/tenants/acme/webhook", body: #"{"url":"\#(receiver.url)"}"#)
            let secret = try #require(registered["secret"]?.stringValue)
            _ = try await CustodyTests.registerFurther(harness)

            let pushed = try #require(await receiver.next())
            #expect(verifyWebhook(pushed, secret: secret, now: phone.now))
            let payload = try JSONValue.parse(pushed.body)
            #expect(payload["kind"]?.stringValue == "notice")
            #expect(payload["client_id"]?.stringValue == "app-1" && payload["sub"]?.stringValue == "user-1")
            let phoneDevice = try await harness.store.deviceKey(keyID: phone.ambientKID).deviceID
            #expect(payload["device_ids"]?.arrayValue?.compactMap(\.stringValue) == [phoneDevice])
            #expect(payload["universal_link"] == nil)
            let carried = try #require(payload["link"]?.stringValue)
            #expect(try await Self.outbox(phone) == [carried], "the outbox holds the same notice")
            #expect(try NoticeSignature.parse(Array(carried.utf8)).verify(with: phone.authorityKey, now: phone.now).method == FurtherDeviceApproval.none)
            await harness.authority.webhookSender.finishDeliveries()
        }
        await receiver.stop()
    }

    @Test("under enrolled_device the devices get the approval request and no notice", arguments: StoreBackend.underTest)
    func approvalRequestNotNotice(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness, policy: TenantPolicy())
            let (phone, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            _ = try await CustodyTests.registerFurther(harness)
            let entries = try await Self.outbox(phone)
            #expect(entries.count == 1)
            #expect(try LinkSignature.parse(Array(entries[0].utf8)).claims.kind == .login)
            #expect(!NoticeSignature.isNotice(Array(entries[0].utf8)))
        }
    }

    /// Makes the token's generation move under the phone's download of `rid`: a sign-in of the phone's application
    /// completes first, so the approval's completion loses the compare-and-swap.
    static func completeStale(_ phone: TestDevice, rid: String, harness: AuthorityHarness) async throws -> DeviceResponse {
        let download = try await downloadToken(phone, rid)
        _ = try await createPendingRequest(harness, "req-other-\(rid.prefix(6))", kind: .login)
        #expect(try await CustodyTests.approve(phone, rid: "req-other-\(rid.prefix(6))").status == 200)
        return try await phone.post(DevicePaths.completion(rid), try TestDevice.completion(rid: rid, from: download, receipt: nil))
    }

    @Test("an approval that went stale is re-issued at once, with the same message; the fresh one approves",
          arguments: StoreBackend.underTest)
    func staleApprovalReissued(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness, policy: TenantPolicy())
            let (phone, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            let (laptop, invitation, answer) = try await CustodyTests.registerFurther(harness)
            let first = try #require(try await CustodyTests.approvalRequestIDs(phone).first)
            expectDeviceError(try await Self.completeStale(phone, rid: first, harness: harness), .staleToken)
            #expect(try await harness.store.request(authReqID: first).state == .stale)

            // A fresh request, announced again, naming the same device and code, ending with the window.
            let fresh = try await CustodyTests.approvalRequestIDs(phone)
            #expect(fresh.count == 1 && fresh.first != first)
            let rid = try #require(fresh.first)
            let record = try await harness.store.request(authReqID: rid)
            #expect(record.approvesEnrolment == (try await harness.store.deviceKey(keyID: laptop.userPresentKID).enrolmentID))
            #expect(record.bindingMessage == "New device test-device (App app-2) code \(try #require(answer.approval).code)")
            #expect(Int64(record.expiresAt.timeIntervalSince1970) == answer.approval?.expiresAt)
            // The waiting device's polls add none while one is pending.
            expectDeviceError(try await laptop.enrolmentToken(invitation: invitation), .approvalPending)
            #expect(try await CustodyTests.approvalRequestIDs(phone).isEmpty)
            let audit = try await harness.store.auditEvents(tenantID: "acme", beforeSequence: nil, limit: 50).map(\.kind)
            #expect(audit.contains("device.enrolment_approval_reissued"))

            #expect(try await CustodyTests.approve(phone, rid: rid).status == 200)
            #expect(try await laptop.enrolmentToken(invitation: invitation).status == 200)
        }
    }

    @Test("the waiting device's poll asks for a fresh request when none is pending (a stale one whose re-issue was lost)",
          arguments: StoreBackend.underTest)
    func waitingDeviceAsksAgain(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness, policy: TenantPolicy())
            let (phone, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            let (laptop, invitation, _) = try await CustodyTests.registerFurther(harness)
            let first = try #require(try await CustodyTests.approvalRequestIDs(phone).first)
            // Stale in the store itself, as if the process died between the completion and the re-issue: a sign-in of the
            // phone rotates the token between the approval's download and its completion.
            let downloaded = try await harness.store.faceToken(subject: "user-1")
            _ = try await downloadToken(phone, first)
            _ = try await createPendingRequest(harness, "req-other", kind: .login)
            #expect(try await CustodyTests.approve(phone, rid: "req-other").status == 200)
            let outcome = try await harness.store.complete(CompletionCommit(
                authReqID: first, keyID: phone.userPresentKID, expectedGeneration: downloaded.generation,
                rotatedToken: FaceTokenRecord(subject: "user-1", tokenID: downloaded.tokenID, generation: downloaded.generation + 1,
                                              headerJSON: downloaded.headerJSON, sealedBody: downloaded.sealedBody,
                                              encryptedServerShare: downloaded.encryptedServerShare),
                receiptSHA256: nil, passwordUsed: false))
            guard case .stale = outcome else { Issue.record("expected a stale completion, got \(outcome)"); return }
            #expect(try await CustodyTests.approvalRequestIDs(phone).isEmpty)

            expectDeviceError(try await laptop.enrolmentToken(invitation: invitation), .approvalPending)
            let rid = try #require(try await CustodyTests.approvalRequestIDs(phone).first)
            #expect(rid != first)
            #expect(try await CustodyTests.approve(phone, rid: rid).status == 200)
            #expect(try await laptop.enrolmentToken(invitation: invitation).status == 200)
            // Released: nothing is re-issued any more.
            #expect(try await harness.store.reissueApprovalRequests(
                enrolmentID: try await harness.store.deviceKey(keyID: laptop.userPresentKID).enrolmentID, intervalSeconds: 5,
                pendingLimit: nil, newID: { "never" }).isEmpty)
        }
    }

    /// Posts `device`'s enrolment for `invitation`, returning the raw answer (with its headers).
    static func enrolRaw(_ device: TestDevice, invitation: String) async throws -> HTTPClientResponse {
        let jti = DeviceRequestSignature.newJTI()
        let body = try await device.enrolmentRequest(invitation: invitation, jti: jti)
        return try await device.sendUnverified(.post, DevicePaths.enrolment(invitation), body: body.encoded(), as: .userPresent, jti: jti)
    }

    @Test("approval requests count toward the pending-request limit: a full application refuses the enrolment, clearly, and stores nothing",
          arguments: StoreBackend.underTest)
    func approvalRequestsCount(backend: StoreBackend) async throws {
        try await withAuthority(backend, configure: { $0.rateLimits.pendingRequestsPerUser = 2 }) { harness in
            try await seedDeviceWorld(harness, policy: TenantPolicy())
            let (phone, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            _ = try await createPendingRequest(harness, "req-a", kind: .login)
            _ = try await createPendingRequest(harness, "req-b", kind: .login)

            let invitation = try await CustodyTests.invite(harness, kind: .enrolment)
            let refused = try await Self.enrolRaw(TestDevice(harness: harness), invitation: invitation)
            #expect(refused.status.code == 429)
            #expect(refused.headers["Retry-After"] == "300")
            let error = try DeviceErrorResponse.decode(refused.body)
            #expect(error.error == .rateLimited)
            #expect(error.errorDescription?.contains("approval requests count toward the pending-request limit") == true, "\(error)")
            // Nothing stored: the invitation is still usable, no enrolment waits, no request was added.
            #expect(try await harness.store.invitation(id: invitation).consumedAt == nil)
            #expect(try await harness.store.enrolments(subject: "user-1").count == 1)
            #expect(try await CustodyTests.approvalRequestIDs(phone).count == 0)

            // Room again: the same invitation works, and its approval request takes the slot from sign-ins.
            _ = try await harness.store.denyRequest(authReqID: "req-a", reason: "user_cancelled")
            let laptop = TestDevice(harness: harness)
            #expect(try await laptop.enrol(invitation: invitation).status == 200)
            #expect(try await CustodyTests.approvalRequestIDs(phone).count == 1)
            await expectPendingLimit { _ = try await harness.store.createRequest(StoreFixtures.pendingRequest("req-c", clock: harness.clock), pendingLimit: 2) }
        }
    }

    @Test("a flood of further devices stops at the limit under every method, the pending enrolments themselves counted",
          arguments: StoreBackend.underTest)
    func pendingEnrolmentsCount(backend: StoreBackend) async throws {
        try await withAuthority(backend, configure: { $0.rateLimits.pendingRequestsPerUser = 2 }) { harness in
            try await seedDeviceWorld(harness, policy: TenantPolicy(furtherDeviceApproval: .none))
            let (phone, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            for _ in 0..<2 { _ = try await CustodyTests.registerFurther(harness) }
            let refused = try await Self.enrolRaw(TestDevice(harness: harness), invitation: try await CustodyTests.invite(harness, kind: .enrolment))
            #expect(refused.status.code == 429)
            #expect(refused.headers["Retry-After"] == "600")
            #expect(try DeviceErrorResponse.decode(refused.body).error == .rateLimited)
            // The phone was told of the two that registered, and of nothing else.
            #expect(try Self.notices(try await Self.outbox(phone), harness).count == 2)
            // Once their windows end, new devices register again.
            harness.clock.advance(by: 601)
            #expect(try await TestDevice(harness: harness).enrol(invitation: try await CustodyTests.invite(harness, kind: .enrolment)).status == 200)
        }
    }
}

/// Expects `body` to throw `PendingRequestLimitReached`.
func expectPendingLimit(_ body: () async throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) async {
    do {
        try await body()
        Issue.record("expected the pending-request limit", sourceLocation: sourceLocation)
    } catch is PendingRequestLimitReached {
    } catch {
        Issue.record("expected the pending-request limit, got \(error)", sourceLocation: sourceLocation)
    }
}
