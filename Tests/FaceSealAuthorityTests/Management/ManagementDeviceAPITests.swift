import FaceSealCrypto
import FaceSealHTTP
import FaceSealTestSupport
import FaceSealWire
import Foundation
import Testing
@testable import FaceSealAuthority

@Suite("Management API with the device API: invitation links enrol, revoke and terminate reach the device")
struct ManagementDeviceAPITests {
    /// Creates tenant `acme`, an application and a user through the management API; returns (clientID, subject).
    static func seed(_ admin: AdminSession) async throws -> (clientID: String, subject: String) {
        // Further devices are approved with `none` here: these tests are about revocation, not custody (CustodyTests).
        try await admin.createTenant("acme", policy: #"{"further_device_approval":"none"}"#)
        let app = try await admin.createApplication("acme", extra: ##","branding":{"name":"Acme Shop","primary_color":"#0a0b0c"}"##)
        let user = try await admin.createUser("acme", email: "alice@example.com")
        return (try #require(app["client_id"]?.stringValue), try #require(user["subject"]?.stringValue))
    }

    /// Invites the user through the management API and enrols a fresh test device with the link's `rid`.
    static func enrolThroughLink(_ admin: AdminSession, clientID: String, subject: String) async throws -> (TestDevice, EnrolmentResponse) {
        let invitation = try await admin.expect(201, .post, "/tenants/acme/invitations", body: #"{"subject":"\#(subject)","client_id":"\#(clientID)"}"#)
        let link = try #require(invitation["universal_link"]?.stringValue)
        let device = TestDevice(harness: admin.harness)
        let claims = try LinkSignature.parse(Array(link.utf8)).verify(with: device.authorityKey, now: device.now)
        let response = try await device.enrol(invitation: claims.rid)
        #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
        let enrolment = try response.decode(EnrolmentResponse.self)
        #expect(enrolment.authorityKey.bytes == claims.akey?.bytes)
        if enrolment.approval != nil { #expect(try await device.enrolmentToken(invitation: claims.rid).status == 200) }
        return (device, enrolment)
    }

    /// The enrolment id of a test device, from the management API's device listing.
    static func enrolmentID(of device: TestDevice, _ admin: AdminSession) async throws -> String {
        let list = try await admin.expect(200, .get, "/tenants/acme/devices")
        let entry = try #require(list["devices"]?.arrayValue?.first { entry in
            entry["keys"]?.arrayValue?.contains { $0["key_id"]?.stringValue == device.userPresentKID } == true
        })
        return try #require(entry["id"]?.stringValue)
    }

    @Test("an invitation link enrols through the device API with the application's branding", arguments: StoreBackend.underTest)
    func linkEnrols(backend: StoreBackend) async throws {
        try await withManagement(backend) { admin in
            let (clientID, subject) = try await Self.seed(admin)
            let (device, enrolment) = try await Self.enrolThroughLink(admin, clientID: clientID, subject: subject)
            #expect(enrolment.clientId == clientID)
            #expect(enrolment.email == "alice@example.com")
            #expect(enrolment.branding == BrandingInfo(name: "Acme Shop", primaryColor: "#0a0b0c"))
            let id = try await Self.enrolmentID(of: device, admin)
            let shown = try await admin.expect(200, .get, "/tenants/acme/devices/\(id)")
            #expect(shown["status"]?.stringValue == "active")
            #expect(Set(shown["keys"]?.arrayValue?.compactMap { $0["key_id"]?.stringValue } ?? []) == [device.ambientKID, device.userPresentKID])
            let invitations = try await admin.harness.store.auditEvents(tenantID: "acme", beforeSequence: nil, limit: 50)
            #expect(invitations.contains { $0.kind == "invitation.created" })
        }
    }

    @Test("after an admin revoke the device's next signed request gets deviceKeyRevoked", arguments: StoreBackend.underTest)
    func revokeReachesDevice(backend: StoreBackend) async throws {
        try await withManagement(backend) { admin in
            let (clientID, subject) = try await Self.seed(admin)
            let (device, _) = try await Self.enrolThroughLink(admin, clientID: clientID, subject: subject)
            let (other, _) = try await Self.enrolThroughLink(admin, clientID: clientID, subject: subject)
            #expect(try await device.send(.get, DevicePaths.outbox + "?wait=0").status == 200)

            let id = try await Self.enrolmentID(of: device, admin)
            try await admin.expect(200, .post, "/tenants/acme/devices/\(id)/revoke")
            expectDeviceError(try await device.send(.get, DevicePaths.outbox + "?wait=0"), .deviceKeyRevoked)
            expectDeviceError(try await device.send(.get, DevicePaths.outbox + "?wait=0", as: .userPresent), .deviceKeyRevoked)
            // The user's other device is untouched.
            #expect(try await other.send(.get, DevicePaths.outbox + "?wait=0").status == 200)
        }
    }

    @Test("the tenant policy names the further-device approval; a recovery invitation is refused while the user has a device",
          arguments: StoreBackend.underTest)
    func approvalPolicyAndRecovery(backend: StoreBackend) async throws {
        try await withManagement(backend) { admin in
            let (clientID, subject) = try await Self.seed(admin)
            #expect(try await admin.expect(200, .get, "/tenants/acme")["policy"]?["further_device_approval"]?.stringValue == "none")
            let patched = try await admin.expect(200, .patch, "/tenants/acme/policy", body: #"{"further_device_approval":"password"}"#)
            #expect(patched["policy"]?["further_device_approval"]?.stringValue == "password")
            try await admin.expect(400, .patch, "/tenants/acme/policy", body: #"{"further_device_approval":"anyone"}"#)
            let (device, _) = try await Self.enrolThroughLink(admin, clientID: clientID, subject: subject)
            let body = #"{"subject":"\#(subject)","client_id":"\#(clientID)","kind":"recovery"}"#
            try await admin.expect(409, .post, "/tenants/acme/invitations", body: body)
            let id = try await Self.enrolmentID(of: device, admin)
            try await admin.expect(200, .post, "/tenants/acme/devices/\(id)/revoke")
            let recovery = try await admin.expect(201, .post, "/tenants/acme/invitations", body: body)
            #expect(recovery["kind"]?.stringValue == "recovery")
            let kinds = try await admin.harness.store.auditEvents(tenantID: "acme", beforeSequence: nil, limit: 5).map(\.kind)
            #expect(kinds.contains("invitation.recovery_created"))
        }
    }

    @Test("after an admin terminate the device's next signed request gets deviceKeyTerminated", arguments: StoreBackend.underTest)
    func terminateReachesDevice(backend: StoreBackend) async throws {
        try await withManagement(backend) { admin in
            let (clientID, subject) = try await Self.seed(admin)
            let (device, _) = try await Self.enrolThroughLink(admin, clientID: clientID, subject: subject)
            let id = try await Self.enrolmentID(of: device, admin)
            try await admin.expect(200, .post, "/tenants/acme/devices/\(id)/terminate")
            expectDeviceError(try await device.send(.get, DevicePaths.outbox + "?wait=0"), .deviceKeyTerminated)
            expectDeviceError(try await device.send(.get, DevicePaths.branding), .deviceKeyTerminated)
        }
    }
}
