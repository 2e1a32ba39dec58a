import FaceSealCrypto
import FaceSealHTTP
import FaceSealTestSupport
import Foundation
import Testing
@testable import FaceSealAuthority

@Suite("Management API: devices and audit")
struct ManagementDeviceTests {
    /// A tenant `acme` with an application, a user and two enrolments of that user (`enr-1`, `enr-2`) on two devices.
    struct Enrolled {
        let admin: AdminSession
        let subject: String
        let clientID: String
    }

    static func enrolTwo(_ admin: AdminSession) async throws -> Enrolled {
        try await admin.createTenant("acme")
        let clientID = try #require(try await admin.createApplication("acme")["client_id"]?.stringValue)
        let subject = try #require(try await admin.createUser("acme", email: "alice@example.com")["subject"]?.stringValue)
        for (index, device) in ["device-1", "device-2"].enumerated() {
            let invitation = try await admin.expect(201, .post, "/tenants/acme/invitations", body: #"{"subject":"\#(subject)","client_id":"\#(clientID)"}"#)
            let id = try #require(invitation["id"]?.stringValue)
            _ = try await admin.harness.store.enrol(StoreFixtures.enrolmentRequest(
                invitationID: id, enrolmentID: "enr-\(index + 1)", deviceID: device, keyPrefix: "k\(index + 1)",
                token: index == 0 ? StoreFixtures.faceToken(subject: subject) : nil))
        }
        return Enrolled(admin: admin, subject: subject, clientID: clientID)
    }

    @Test("devices list the tenant's and a user's enrolments with key ids and statuses", arguments: StoreBackend.underTest)
    func listDevices(backend: StoreBackend) async throws {
        try await withManagement(backend) { admin in
            let enrolled = try await Self.enrolTwo(admin)
            let list = try await admin.expect(200, .get, "/tenants/acme/devices")
            let devices = try #require(list["devices"]?.arrayValue)
            #expect(devices.compactMap { $0["id"]?.stringValue } == ["enr-1", "enr-2"])
            #expect(devices[0]["device_id"]?.stringValue == "device-1")
            #expect(devices[0]["device_label"]?.stringValue == "Phone device-1")
            #expect(devices[0]["subject"]?.stringValue == enrolled.subject)
            #expect(devices[0]["client_id"]?.stringValue == enrolled.clientID)
            #expect(devices[0]["status"]?.stringValue == "active")
            #expect(devices[0]["keys"]?.arrayValue?.compactMap { $0["key_id"]?.stringValue } == ["k1-ambient", "k1-present"])
            #expect(devices[0]["keys"]?.arrayValue?.compactMap { $0["role"]?.stringValue } == ["ambient", "user_present"])

            let byUser = try await admin.expect(200, .get, "/tenants/acme/users/\(enrolled.subject)/devices")
            #expect(byUser["devices"]?.arrayValue?.count == 2)
            let filtered = try await admin.expect(200, .get, "/tenants/acme/devices?subject=\(enrolled.subject)&status=active")
            #expect(filtered["devices"]?.arrayValue?.count == 2)
            let none = try await admin.expect(200, .get, "/tenants/acme/devices?status=revoked")
            #expect(none["devices"]?.arrayValue?.isEmpty == true)
            try await admin.expectError(400, "invalid_field", .get, "/tenants/acme/devices?status=gone")
            let shown = try await admin.expect(200, .get, "/tenants/acme/devices/enr-2")
            #expect(shown["device_id"]?.stringValue == "device-2")
            try await admin.createTenant("beta")
            try await admin.expectError(404, "not_found", .get, "/tenants/beta/devices/enr-2")
            try await admin.expectError(404, "not_found", .get, "/tenants/acme/devices/enr-9")
        }
    }

    @Test("revoke sets revoked, terminate sets terminated, on the enrolment and both keys; repeats are idempotent", arguments: StoreBackend.underTest)
    func revokeAndTerminate(backend: StoreBackend) async throws {
        try await withManagement(backend) { admin in
            _ = try await Self.enrolTwo(admin)
            let store = admin.harness.store
            let now = admin.harness.clock.now()

            let revoked = try await admin.expect(200, .post, "/tenants/acme/devices/enr-1/revoke")
            #expect(revoked["status"]?.stringValue == "revoked")
            #expect(revoked["keys"]?.arrayValue?.compactMap { $0["status"]?.stringValue } == ["revoked", "revoked"])
            #expect(try await store.enrolment(id: "enr-1").status == .revoked)
            #expect(try await store.deviceKey(keyID: "k1-present").acceptance(at: now) == .revoked)
            #expect(try await store.deviceKey(keyID: "k1-ambient").acceptance(at: now) == .revoked)
            #expect(try await store.deviceKey(keyID: "k2-present").acceptance(at: now) == .accepted)

            let terminated = try await admin.expect(200, .post, "/tenants/acme/devices/enr-2/terminate", body: "{}")
            #expect(terminated["status"]?.stringValue == "terminated")
            #expect(try await store.deviceKey(keyID: "k2-present").acceptance(at: now) == .terminated)
            #expect(try await store.deviceKey(keyID: "k2-ambient").acceptance(at: now) == .terminated)

            try await admin.expect(200, .post, "/tenants/acme/devices/enr-1/revoke")
            try await admin.expectError(409, "conflict", .post, "/tenants/acme/devices/enr-1/terminate")
            try await admin.expectError(400, "unknown_field", .post, "/tenants/acme/devices/enr-2/revoke", body: #"{"reason":"lost"}"#)
            try await admin.expectError(404, "not_found", .post, "/tenants/acme/devices/enr-9/revoke")
            #expect(try await store.enrolment(id: "enr-1").status == .revoked)
            #expect(try await store.enrolment(id: "enr-2").status == .terminated)

            let kinds = try await store.auditEvents(tenantID: "acme", beforeSequence: nil, limit: 3).map(\.kind)
            #expect(kinds == ["device.terminated", "device.revoked", "invitation.created"])
        }
    }

    @Test("a tenant key cannot revoke another tenant's device", arguments: StoreBackend.underTest)
    func crossTenantRevocation(backend: StoreBackend) async throws {
        try await withManagement(backend) { admin in
            _ = try await Self.enrolTwo(admin)
            try await admin.createTenant("beta")
            let (_, betaKey) = try await admin.createTenantKey("beta")
            let beta = admin.with(key: betaKey)
            try await beta.expectError(403, "forbidden", .post, "/tenants/acme/devices/enr-1/revoke")
            try await beta.expectError(404, "not_found", .post, "/tenants/beta/devices/enr-1/revoke")
            try await beta.expectError(403, "forbidden", .get, "/tenants/acme/devices")
            #expect(try await admin.harness.store.enrolment(id: "enr-1").status == .active)
        }
    }

    @Test("audit: every mutation appends an event, newest first, paged with before/limit", arguments: StoreBackend.underTest)
    func audit(backend: StoreBackend) async throws {
        try await withManagement(backend) { admin in
            try await admin.createTenant("acme")
            let app = try await admin.createApplication("acme")
            let clientID = try #require(app["client_id"]?.stringValue)
            try await admin.createUser("acme", email: "a@example.com")
            try await admin.expect(200, .patch, "/tenants/acme/policy", body: #"{"attempts_max":4}"#)
            try await admin.expect(200, .patch, "/tenants/acme/applications/\(clientID)", body: #"{"label":"Shop 2"}"#)
            let (keyID, _) = try await admin.createTenantKey("acme")
            try await admin.expect(200, .post, "/tenants/acme/api-keys/\(keyID)/revoke")

            let first = try await admin.expect(200, .get, "/tenants/acme/audit?limit=3")
            let kinds = first["events"]?.arrayValue?.compactMap { $0["kind"]?.stringValue }
            #expect(kinds == ["api_key.revoked", "api_key.created", "application.updated"])
            let next = try #require(first["next_before"]?.integerValue)
            let second = try await admin.expect(200, .get, "/tenants/acme/audit?limit=3&before=\(next)")
            #expect(second["events"]?.arrayValue?.compactMap { $0["kind"]?.stringValue } == ["tenant.policy_updated", "user.created", "application.created"])
            let third = try await admin.expect(200, .get, "/tenants/acme/audit?limit=3&before=\(try #require(second["next_before"]?.integerValue))")
            #expect(third["events"]?.arrayValue?.compactMap { $0["kind"]?.stringValue } == ["tenant.created"])
            #expect(third["next_before"] == nil)
            let event = try #require(first["events"]?[0])
            #expect(event["target"]?.stringValue == keyID)
            #expect(event["actor"]?.stringValue != nil)
            #expect(event["at"]?.stringValue == "2027-01-15T08:00:00Z")
            // No secret ever reaches the log.
            #expect(!first.serializedString.contains("fsk_") && !second.serializedString.contains("client_secret\":\""))

            let operator_ = try await admin.expect(200, .get, "/audit")
            #expect(operator_["events"]?.arrayValue?.compactMap { $0["kind"]?.stringValue } == ["api_key.created"])
            try await admin.expectError(400, "invalid_field", .get, "/tenants/acme/audit?limit=0")
            try await admin.expectError(400, "invalid_field", .get, "/tenants/acme/audit?limit=201")
            try await admin.expectError(400, "invalid_field", .get, "/tenants/acme/audit?before=x")
            try await admin.expectError(400, "unknown_field", .get, "/tenants/acme/audit?after=1")
        }
    }
}
