import FaceSealCrypto
import FaceSealHTTP
import FaceSealTestSupport
import FaceSealWire
import Foundation
import Testing
@testable import FaceSealAuthority

/// Issue 14 item 4: deleting users, applications and tenants, listing and cancelling invitations, every request's life
/// in the audit — over HTTP, on both databases.
@Suite("Management API: deletion, invitations, request audit")
struct ManagementLifecycleTests {
    /// The device world (tenant `acme`, users `user-1`, `user-2`) with application `rp` and `user-1` enrolled through the
    /// device API on one device; answers the admin session and the device.
    static func world(_ harness: AuthorityHarness) async throws -> (AdminSession, TestDevice) {
        let device = try await enrolledDevice(harness)
        let key = try #require(try await harness.authority.bootstrapAdminKey())
        return (AdminSession(harness: harness, key: key), device)
    }

    /// The device world with application `rp` and `user-1` enrolled for it through the device API.
    static func enrolledDevice(_ harness: AuthorityHarness) async throws -> TestDevice {
        try await seedDeviceWorld(harness)
        try await TestApplication.register(harness)
        return try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: TestApplication.clientID).0
    }

    static func auditEvents(_ admin: AdminSession, tenant: String? = "acme") async throws -> [JSONValue] {
        let path = (tenant.map { "/tenants/\($0)" } ?? "") + "/audit?limit=200"
        return try #require(try await admin.expect(200, .get, path)["events"]?.arrayValue)
    }

    @Test("deleting a user erases the token, revokes the device, ends the request, cancels invitations, keeps a tombstone",
          arguments: StoreBackend.underTest)
    func deleteUser(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            let (admin, device) = try await Self.world(harness)
            let rid = try await TestApplication.start(harness, ceremony: true)
            let invitation = try await admin.expect(201, .post, "/tenants/acme/invitations",
                                                    body: #"{"subject":"user-1","client_id":"\#(TestApplication.clientID)"}"#)
            let invitationID = try #require(invitation["id"]?.stringValue)
            let created = try await admin.createUser("acme", email: "bob@example.com")
            let bob = try #require(created["subject"]?.stringValue)

            let deletion = try await admin.expect(200, .delete, "/tenants/acme/users/user-1")
            #expect(deletion["deleted"]?.stringValue == "user" && deletion["id"]?.stringValue == "user-1")
            #expect(deletion["enrolments_ended"]?.integerValue == 1)
            #expect(deletion["requests_ended"]?.integerValue == 1)
            #expect(deletion["invitations_cancelled"]?.integerValue == 1)
            #expect(deletion["face_tokens_erased"]?.integerValue == 1)

            // Erased, not flagged: no row; the device's keys are revoked; the request is denied with the reason.
            let rows = try await harness.store.read { tx, _ in try tx.query("SELECT subject FROM face_tokens", []).count }
            #expect(rows == 0)
            expectDeviceError(try await device.send(.get, DevicePaths.outbox), .deviceKeyRevoked)
            let denied = try #require(try await TestApplication.tokenError(harness, rid))
            #expect(denied.error == .accessDenied && denied.errorDescription == "user_deleted")
            #expect(try await admin.expect(200, .get, "/tenants/acme/invitations/\(invitationID)")["status"]?.stringValue == "cancelled")
            let request = try await harness.store.request(authReqID: rid)
            #expect(request.bindingMessage == nil && request.pkiData == nil)

            // Gone from every lookup; the CIBA endpoint cannot tell it from nobody; the email is free again.
            try await admin.expectError(404, "not_found", .get, "/tenants/acme/users/user-1")
            try await admin.expectError(404, "not_found", .delete, "/tenants/acme/users/user-1")
            #expect(try await admin.expect(200, .get, "/tenants/acme/users?email=user-1@example.com")["users"]?.arrayValue?.isEmpty == true)
            let again = try await harness.client.send(.form(url: harness.url(CIBAPaths.backchannel), form: TestApplication.form([
                ("scope", "openid"), ("login_hint", "user-1@example.com"),
            ])))
            let nobody = try await harness.client.send(.form(url: harness.url(CIBAPaths.backchannel), form: TestApplication.form([
                ("scope", "openid"), ("login_hint", "nobody@example.com"),
            ])))
            #expect(again.status.code == 400 && again.body == nobody.body)
            try await admin.createUser("acme", email: "user-1@example.com")

            // The tombstone names the subject only; a deleted user's email leaves the log.
            try await admin.expect(200, .delete, "/tenants/acme/users/\(bob)")
            let events = try await Self.auditEvents(admin)
            let tombstone = try #require(events.first { $0["kind"]?.stringValue == "user.deleted" && $0["target"]?.stringValue == "user-1" })
            #expect(tombstone["detail"]?["face_tokens_erased"]?.integerValue == 1)
            #expect(!JSONValue.array(events).serializedString.contains("bob@example.com"))
            #expect(events.contains { $0["kind"]?.stringValue == "request.denied" && $0["detail"]?["reason"]?.stringValue == "user_deleted" })
        }
    }

    @Test("the deleted user's token bytes are gone from the SQLite file, WAL included")
    func deletedTokenLeavesTheFile() async throws {
        try await withScratch(.sqlite) { scratch in
            let clock = ManualStoreClock()
            let store = try await scratch.open(clock: clock)
            try await StoreFixtures.seedBasics(store)
            _ = try await store.createInvitation(StoreFixtures.invitation("inv-1", clock: clock))
            let share = SecureRandom.bytes(count: 60)
            let body = SecureRandom.bytes(count: 48)
            let token = FaceTokenRecord(subject: "user-1", tokenID: "token-user-1", generation: 1, headerJSON: Array(#"{"v":1}"#.utf8),
                                        sealedBody: body, encryptedServerShare: share)
            _ = try await store.enrol(StoreFixtures.enrolmentRequest(invitationID: "inv-1", enrolmentID: "enr-1", deviceID: "device-1",
                                                                     keyPrefix: "k1", token: token))
            guard case .sqlite(let path, _, _) = scratch.location else { Issue.record("not SQLite"); return }
            func fileContains(_ needle: [UInt8]) -> Bool {
                ["", "-wal"].contains { suffix in
                    guard let data = FileManager.default.contents(atPath: path + suffix) else { return false }
                    return Data(data).range(of: Data(needle)) != nil
                }
            }
            #expect(fileContains(share) && fileContains(body))
            _ = try await store.deleteUser(subject: "user-1", actor: "test")
            #expect(!fileContains(share) && !fileContains(body))
            await store.close()
        }
    }

    @Test("deleting an application terminates its enrolments, ends its requests, and its client id stops authenticating",
          arguments: StoreBackend.underTest)
    func deleteApplication(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            let (admin, device) = try await Self.world(harness)
            let (other, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            let rid = try await TestApplication.start(harness, ceremony: false)

            let deletion = try await admin.expect(200, .delete, "/tenants/acme/applications/\(TestApplication.clientID)")
            #expect(deletion["enrolments_ended"]?.integerValue == 1 && deletion["requests_ended"]?.integerValue == 1)
            #expect(deletion["face_tokens_erased"]?.integerValue == 0)
            expectDeviceError(try await device.send(.get, DevicePaths.outbox), .deviceKeyTerminated)
            #expect(try await other.send(.get, DevicePaths.outbox).status == 200)
            #expect(try await TestApplication.tokenError(harness, rid)?.error == .invalidClient)
            #expect(try await harness.store.request(authReqID: rid).state == .denied)
            try await admin.expectError(404, "not_found", .get, "/tenants/acme/applications/\(TestApplication.clientID)")
            let listed = try await admin.expect(200, .get, "/tenants/acme/applications")["applications"]?.arrayValue ?? []
            #expect(listed.compactMap { $0["client_id"]?.stringValue } == ["app-1", "app-2"])
            let events = try await Self.auditEvents(admin)
            #expect(events.contains { $0["kind"]?.stringValue == "application.deleted" && $0["target"]?.stringValue == TestApplication.clientID })
        }
    }

    @Test("a tenant is deleted only when empty, by an administrator; its keys die and its id is not reused",
          arguments: StoreBackend.underTest)
    func deleteTenant(backend: StoreBackend) async throws {
        try await withManagement(backend) { admin in
            try await admin.createTenant("beta")
            let client = try #require(try await admin.createApplication("beta")["client_id"]?.stringValue)
            let user = try #require(try await admin.createUser("beta", email: "carol@example.com")["subject"]?.stringValue)
            let tenantKey = try await admin.createTenantKey("beta")
            let scoped = admin.with(key: tenantKey.key)

            try await scoped.expectError(403, "forbidden", .delete, "/tenants/beta")
            let refusal = try await admin.expectError(409, "conflict", .delete, "/tenants/beta")
            #expect(refusal.contains("1 users and 1 applications"))
            try await scoped.expect(200, .delete, "/tenants/beta/applications/\(client)")
            try await scoped.expect(200, .delete, "/tenants/beta/users/\(user)")

            let deletion = try await admin.expect(200, .delete, "/tenants/beta")
            #expect(deletion["api_keys_revoked"]?.integerValue == 1)
            try await scoped.expectError(401, "invalid_token", .get, "/tenants/beta")
            try await admin.expectError(404, "not_found", .get, "/tenants/beta")
            try await admin.expectError(404, "not_found", .delete, "/tenants/beta")
            #expect(try await admin.expect(200, .get, "/tenants")["tenants"]?.arrayValue?.isEmpty == true)
            try await admin.expectError(409, "conflict", .post, "/tenants", body: #"{"id":"beta","name":"Again"}"#)
            let operatorLog = try await Self.auditEvents(admin, tenant: nil)
            #expect(operatorLog.contains { $0["kind"]?.stringValue == "tenant.deleted" && $0["target"]?.stringValue == "beta" })
        }
    }

    @Test("invitations are listed newest first with filters, cancelled once, and a cancelled link stops working",
          arguments: StoreBackend.underTest)
    func invitations(backend: StoreBackend) async throws {
        try await withManagement(backend) { admin in
            try await admin.createTenant("acme")
            try await admin.createTenant("beta")
            let client = try #require(try await admin.createApplication("acme")["client_id"]?.stringValue)
            let alice = try #require(try await admin.createUser("acme", email: "alice@example.com")["subject"]?.stringValue)
            try await admin.createUser("acme", email: "dave@example.com")
            var ids: [String] = []
            for email in ["alice@example.com", "dave@example.com", "alice@example.com"] {
                admin.harness.clock.advance(by: 1)
                let invitation = try await admin.expect(201, .post, "/tenants/acme/invitations", body: #"{"email":"\#(email)","client_id":"\#(client)"}"#)
                ids.append(try #require(invitation["id"]?.stringValue))
            }
            let all = try await admin.expect(200, .get, "/tenants/acme/invitations")["invitations"]?.arrayValue ?? []
            #expect(all.compactMap { $0["id"]?.stringValue } == ids.reversed())
            #expect(all.allSatisfy { $0["status"]?.stringValue == "pending" && $0["link"]?.stringValue != nil })
            let hers = try await admin.expect(200, .get, "/tenants/acme/invitations?subject=\(alice)&limit=1")["invitations"]?.arrayValue ?? []
            #expect(hers.compactMap { $0["id"]?.stringValue } == [ids[2]])

            let cancelled = try await admin.expect(200, .post, "/tenants/acme/invitations/\(ids[0])/cancel")
            #expect(cancelled["status"]?.stringValue == "cancelled" && cancelled["cancelled_at"]?.stringValue != nil)
            try await admin.expect(200, .post, "/tenants/acme/invitations/\(ids[0])/cancel", body: "{}")
            let details = try await admin.harness.client.send(HTTPClientRequest(url: admin.harness.url(DevicePaths.enrolment(ids[0]))))
            #expect(details.status.code == DeviceErrorCode.invalidInvitation.httpStatus)
            #expect(try await admin.expect(200, .get, "/tenants/acme/invitations?status=cancelled")["invitations"]?.arrayValue?.count == 1)
            #expect(try await admin.expect(200, .get, "/tenants/acme/invitations?status=pending&client_id=\(client)")["invitations"]?
                .arrayValue?.count == 2)
            admin.harness.clock.advance(by: 8 * 24 * 3600)
            #expect(try await admin.expect(200, .get, "/tenants/acme/invitations?status=expired")["invitations"]?.arrayValue?.count == 2)

            try await admin.expectError(400, "invalid_field", .get, "/tenants/acme/invitations?status=gone")
            try await admin.expectError(400, "unknown_field", .get, "/tenants/acme/invitations?email=alice@example.com")
            try await admin.expectError(400, "unknown_field", .post, "/tenants/acme/invitations/\(ids[1])/cancel", body: #"{"why":"x"}"#)
            try await admin.expectError(404, "not_found", .post, "/tenants/beta/invitations/\(ids[1])/cancel")
            try await admin.expectError(404, "not_found", .get, "/tenants/beta/invitations/\(ids[1])")
            #expect(try await admin.expect(200, .get, "/tenants/beta/invitations")["invitations"]?.arrayValue?.isEmpty == true)
            let events = try await Self.auditEvents(admin)
            let cancellations = events.filter { $0["kind"]?.stringValue == "invitation.cancelled" }
            #expect(cancellations.count == 1 && !cancellations[0].serializedString.contains(ids[0]))
        }
    }

    @Test("a used invitation cannot be cancelled", arguments: StoreBackend.underTest)
    func usedInvitationIsNotCancelled(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            let (admin, _) = try await Self.world(harness)
            let used = try #require(try await admin.expect(200, .get, "/tenants/acme/invitations?status=consumed")["invitations"]?[0]?["id"]?.stringValue)
            let reason = try await admin.expectError(409, "conflict", .post, "/tenants/acme/invitations/\(used)/cancel")
            #expect(reason.contains("already used"))
        }
    }

    @Test("every request's life is in the audit: created, delivered, completed, denied with reason, expired, stale",
          arguments: StoreBackend.underTest)
    func requestLifeInTheAudit(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            let (admin, device) = try await Self.world(harness)
            let completed = try await TestApplication.start(harness, ceremony: true)
            let stale = try await TestApplication.start(harness, ceremony: true)
            let denied = try await TestApplication.start(harness, ceremony: false)
            let expired = try await TestApplication.start(harness, ceremony: false)

            #expect(try await device.send(.get, DevicePaths.request(completed)).status == 200)
            #expect(try await device.send(.get, DevicePaths.request(completed)).status == 200)
            let staleCompletion = try TestDevice.completion(rid: stale, from: try await downloadToken(device, stale), receipt: receipt("s"))
            let completion = try TestDevice.completion(rid: completed, from: try await downloadToken(device, completed), receipt: receipt("c"))
            #expect(try await device.post(DevicePaths.completion(completed), completion).status == 200)
            expectDeviceError(try await device.post(DevicePaths.completion(stale), staleCompletion), .staleToken)
            #expect(try await device.post(DevicePaths.abort(denied), AbortRequest(rid: denied, reason: .refused)).status == 204)
            harness.clock.advance(by: 3600)

            let events = try await Self.auditEvents(admin).filter { $0["kind"]?.stringValue?.hasPrefix("request.") == true }
            func kinds(_ rid: String) -> [String] { events.filter { $0["target"]?.stringValue == rid }.compactMap { $0["kind"]?.stringValue }.reversed() }
            #expect(kinds(completed) == ["request.created", "request.delivered", "request.completed"])
            #expect(kinds(stale) == ["request.created", "request.stale"])
            #expect(kinds(denied) == ["request.created", "request.denied"])
            #expect(kinds(expired) == ["request.created", "request.expired"])
            let creation = try #require(events.first { $0["target"]?.stringValue == completed && $0["kind"]?.stringValue == "request.created" })
            #expect(creation["actor"]?.stringValue == TestApplication.clientID)
            #expect(creation["detail"]?["subject"]?.stringValue == "user-1" && creation["detail"]?["pki_kind"]?.stringValue == "sign")
            // Times inside the detail are RFC 3339, like the event's own.
            let expiry = try #require(creation["detail"]?["expires_at"]?.stringValue)
            #expect(ISO8601DateFormatter().date(from: expiry) != nil)
            #expect(ISO8601DateFormatter().date(from: creation["at"]?.stringValue ?? "") != nil)
            let denial = try #require(events.first { $0["target"]?.stringValue == denied && $0["kind"]?.stringValue == "request.denied" })
            #expect(denial["detail"]?["reason"]?.stringValue == "policy")
            let delivery = try #require(events.first { $0["kind"]?.stringValue == "request.delivered" })
            #expect(delivery["detail"]?["device_id"]?.stringValue != nil)
        }
    }
}
