import FaceSealAuthority
import FaceSealCrypto
import FaceSealWire
import Foundation
import Testing
@testable import FaceSealSDK

/// docs/PROTOCOL.md §8.1 through the SDK's flows and its HTTP client against a live authority.
@Suite(.serialized, .timeLimit(.minutes(2))) struct CustodyScenarioTests {
    /// The public keys a `public_keys` ceremony of `device` delivers to the application.
    static func publicKeys(_ system: LiveSystem, _ client: LiveSystem.Client, email: String, device: Device,
                           authn: Authenticator, password: String? = nil) async throws -> [String: Base64URLBytes]? {
        let rid = try await system.backchannel(client, email: email, pkiKind: "public_keys")
        let flow = authn.startPkiCeremonyFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: try await device.link(authn, rid: rid))
        if let password {
            _ = await states.until { $0 == .downloadingFaceToken(passwordRequired: true, lastPasswordError: nil) }
            flow.submitPassword(password: password)
        }
        _ = await states.until(\.isAwaitingFaceCapture)
        flow.submitFaceCapture(captureSession: capture("ada"))
        #expect(await states.until(\.isTerminal)?.isSucceeded == true, "\(states.seen)")
        return try DeliveryBody.decode(try #require(system.application.accepted(rid))).publicKeys
    }

    @Test func passwordApprovalCountsAWrongPasswordAndTheRightOneReleasesTheSameKeys() async throws {
        var policy = LiveSystem.Policy()
        policy.passwordMode = "required"
        policy.furtherDeviceApproval = "password"
        let e = try await Enrolled.make(policy: policy, password: "correct horse")
        defer { Task { await e.system.stop() } }
        let phoneKeys = try await Self.publicKeys(e.system, e.client, email: e.email, device: e.device, authn: e.authn,
                                                  password: "correct horse")

        let laptop = try e.system.device(name: "laptop")
        let laptopAuthn = try await laptop.open()
        let flow = laptopAuthn.startRegistrationFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: try await e.system.invitation(email: e.email, client: e.client))
        #expect(await states.until { $0 == .downloadingFaceToken(passwordRequired: true, lastPasswordError: nil) } != nil)
        flow.submitPassword(password: "wrong horse")
        #expect(await states.until { $0 == .downloadingFaceToken(passwordRequired: true, lastPasswordError: .incorrect) } != nil)
        flow.submitPassword(password: "correct horse")
        _ = await states.until(\.isAwaitingFaceCapture)
        flow.submitFaceCapture(captureSession: capture("ada"))
        guard case .succeeded = await states.until(\.isTerminal) else { Issue.record("\(states.seen)"); return }
        let events = try await e.system.manage("GET", "/tenants/acme/audit?limit=50")
        #expect("\(events)".contains("device.enrolment_password_failed"))
        #expect(try await Self.publicKeys(e.system, e.client, email: e.email, device: laptop, authn: laptopAuthn,
                                                 password: "correct horse") == phoneKeys)
    }

    @Test func underNoneTheEnrolledDeviceIsToldWithANoticeItShowsAndAuditsButCannotApprove() async throws {
        var policy = LiveSystem.Policy()
        policy.furtherDeviceApproval = "none"
        let e = try await Enrolled.make(policy: policy)
        defer { Task { await e.system.stop() } }
        let laptop = try e.system.device(name: "laptop")
        let laptopAuthn = try await laptop.open()
        _ = try await laptop.enrol(laptopAuthn, link: try await e.system.invitation(email: e.email, client: e.client))

        let outbox = try await e.authn.pendingOutbox(from: e.device.client, wait: 5)
        #expect(outbox.links.isEmpty)
        try #require(outbox.notices.count == 1, "\(outbox)")
        let notice = outbox.notices[0]
        #expect(notice.deviceName == "laptop" && notice.appLabel == "Acme Billing" && notice.method == FurtherDeviceApproval.none)
        #expect(notice.code.count == 6 && notice.code.allSatisfy(\.isNumber))
        #expect(notice.summary == "new device \"laptop\" (Acme Billing) code \(notice.code), released without approval")
        #expect(e.authn.auditLog(limit: 5).contains { $0.kind == .newDeviceNotice && $0.note == notice.summary })
        // Kept, it verifies again; a notice signed by another key, or an expired one, does not.
        #expect(await e.device.client.verifyNotice(notice.payload) == notice)
        let claims = try NoticeSignature.parse(notice.payload).claims
        let forged = try NoticeSignature.make(claims, key: Curve25519.Signing.PrivateKey())
        #expect(await e.device.client.verifyNotice(Array(forged.utf8)) == nil)
        var stale = claims
        stale.exp = stale.iat
        #expect(await e.device.client.verifyNotice(Array(try NoticeSignature.make(stale, key: e.system.authority.keys.deviceKey).utf8)) == nil)
        // Submitted to a flow by mistake, it is no link: nothing can approve it.
        let flow = e.authn.startLoginFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: notice.payload)
        #expect(await states.until { $0 == .awaitingLink(refusal: .malformed) } != nil, "\(states.seen)")
        flow.cancel()
    }

    @Test func recoveryWithoutAPasswordStartsANewTokenWithNewKeys() async throws {
        let e = try await Enrolled.make()
        defer { Task { await e.system.stop() } }
        let before = try await Self.publicKeys(e.system, e.client, email: e.email, device: e.device, authn: e.authn)
        let listed = try await e.system.manage("GET", "/tenants/acme/devices")
        let devices = try #require(listed["devices"] as? [[String: Any]])
        let id = try #require(devices.first?["id"] as? String)
        try await e.system.manage("POST", "/tenants/acme/devices/\(id)/revoke")

        let replacement = try e.system.device(name: "replacement")
        let authn = try await replacement.open()
        _ = try await replacement.enrol(authn, link: try await e.system.invitation(email: e.email, client: e.client, kind: "recovery"))
        let after = try await Self.publicKeys(e.system, e.client, email: e.email, device: replacement, authn: authn)
        #expect(before != nil && after != nil && after != before)
    }
}
