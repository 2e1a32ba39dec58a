import FaceSealTestSupport
import FaceSealWire
import Foundation
import Testing
@testable import FaceSealSDK

/// Promises of the reference documents that cross the network, against the real authority over loopback
/// (issue 11 items 2, 3, 5, 6).
@Suite(.serialized, .timeLimit(.minutes(1))) struct DocumentPromiseLiveTests {
    /// The management API's enrolment ids of `client`.
    func enrolments(_ e: Enrolled, client: LiveSystem.Client) async throws -> [String] {
        let listed = try await e.system.manage("GET", "/tenants/acme/devices")
        let devices = try #require(listed["devices"] as? [[String: Any]] ?? listed["items"] as? [[String: Any]])
        return devices.filter { $0["client_id"] as? String == client.clientId && $0["status"] as? String == "active" }
            .compactMap { $0["id"] as? String }
    }

    @Test("the rotation hint of a signed error answer and of the outbox poll is taken", arguments: StoreBackend.underTest)
    func theHintOfErrorsAndOutboxIsTaken(backend: StoreBackend) async throws {
        let e = try await Enrolled.make(backend: backend)
        defer { Task { await e.system.stop() } }
        let record = try await e.rotateBehindTheSDK().record
        _ = e.authn.takeKeyRotationHint()
        // An error answer: the details of a request that does not exist, signed by the previous ambient key.
        await #expect(throws: AuthorityFailure.self) {
            _ = try await e.device.client.requestDetails(requestId: "nope", signer: try e.device.vault.signer(deviceKeyId: record.ambient.deviceKeyId, presence: nil))
        }
        #expect(e.authn.takeKeyRotationHint(), "the hint of an error answer")
        #expect(!e.authn.takeKeyRotationHint())
        _ = try await e.authn.pendingLinks(from: e.device.client)
        #expect(e.authn.takeKeyRotationHint(), "the hint of the outbox poll")
    }

    @Test("the outbox read removes a revoked key and goes on with the others")
    func theOutboxGoesOnPastARevokedKey() async throws {
        let e = try await Enrolled.make()
        defer { Task { await e.system.stop() } }
        let payroll = try await e.system.createApplication(label: "Acme Payroll")
        let second = try await e.device.enrol(e.authn, link: try await e.system.invitation(email: e.email, client: payroll))
        let rid = try await e.system.backchannel(payroll, email: e.email)
        for id in try await enrolments(e, client: e.client) { try await e.system.manage("POST", "/tenants/acme/devices/\(id)/revoke") }
        let links = try await e.authn.pendingLinks(from: e.device.client)
        #expect(links.contains { (try? LinkSignature.parse($0))?.claims.rid == rid })
        #expect(e.authn.keys == [second])
        #expect(try await e.authn.syncBranding().replacedKeys == [RevokedKeyNotice(key: e.key, terminated: false, replaced: false)])
    }

    @Test("branding sync refreshes every identity's branding and reports a key moved to another device as replaced")
    func brandingSyncOfEveryIdentity() async throws {
        // The laptop is a further device with no approver in this test: `none` (custody has its own tests).
        var policy = LiveSystem.Policy()
        policy.oneDevicePerUser = true
        policy.furtherDeviceApproval = "none"
        let e = try await Enrolled.make(policy: policy)
        defer { Task { await e.system.stop() } }
        // A second identity on the same device.
        _ = try await e.system.createUser(email: "bob@example.com")
        let bob = try await e.device.enrol(e.authn, link: try await e.system.invitation(email: "bob@example.com", client: e.client))
        // Ada moves the application to her laptop.
        let laptop = try e.system.device(name: "laptop")
        _ = try await laptop.enrol(try await laptop.open(), link: try await e.system.invitation(email: e.email, client: e.client))
        try await e.system.manage("PATCH", "/tenants/acme/applications/\(e.client.clientId)", ["branding": ["name": "Acme Billing", "primary_color": "#112233"]])

        let summary = try await e.authn.syncBranding()
        #expect(summary.replacedKeys == [RevokedKeyNotice(key: e.key, terminated: false, replaced: true)])
        #expect(summary.updatedKeyIds == [bob.id])
        #expect(e.authn.brandingFor(keyId: bob.id)?.primaryColor == "#112233")
        #expect(e.authn.keys == [bob])
    }

    @Test("after a biometric change the key is listed as unusable, removed from this device, and the user enrols again")
    func theWayBackFromKeyInvalidated() async throws {
        // Enrolling again after the only key is gone is a further device with no approver: `none` here.
        var policy = LiveSystem.Policy()
        policy.furtherDeviceApproval = "none"
        let e = try await Enrolled.make(policy: policy)
        defer { Task { await e.system.stop() } }
        e.device.epoch.value.withLock { $0 = "epoch-2" }
        #expect(e.authn.keys.isEmpty && e.authn.unusableKeys == [e.key])
        let flow = try e.authn.startRevocationFlow(keyId: e.key.id)
        var states = Observed(flow.stateStream())
        flow.approve()
        #expect(await states.rest().last == .succeeded(key: e.key))
        #expect(e.authn.unusableKeys.isEmpty)

        let again = try await e.device.enrol(e.authn, link: try await e.system.invitation(email: e.email, client: e.client))
        #expect(e.authn.keys == [again])
        let request = try await e.request("public_keys")
        #expect(await e.runCeremony(request.link).last?.isSucceeded == true)
    }

    @Test("the audit log is a sealed file in the vault directory and survives a restart")
    func theAuditLogSurvivesARestart() async throws {
        let e = try await Enrolled.make()
        defer { Task { await e.system.stop() } }
        let request = try await e.request("public_keys")
        #expect(await e.runCeremony(request.link).last?.isSucceeded == true)
        let before = e.authn.auditLog()
        let file = e.device.directory.appendingPathComponent("vault/audit.sealed")
        let bytes = try Data(contentsOf: file)
        #expect(bytes.range(of: Data("Acme Billing".utf8)) == nil, "sealed, not plain text")
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int)
        #expect(mode & 0o077 == 0)
        let reopened = try await e.device.open()
        #expect(reopened.auditLog() == before)
    }
}
