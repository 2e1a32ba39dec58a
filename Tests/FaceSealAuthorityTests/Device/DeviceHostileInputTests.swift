import FaceSealCrypto
import FaceSealHTTP
import FaceSealTestSupport
import FaceSealWire
import Foundation
import Testing
@testable import FaceSealAuthority

/// Issue 9 item 1 and the replay window of item 11: no integer from a device crashes the authority, an enrolment
/// for no usable invitation costs one lookup and writes nothing, and a `jti` outlives every `iat` that could
/// still be accepted.
@Suite("Device API: hostile integers, enrolment order, replay window")
struct DeviceHostileInputTests {
    @Test("an enrolment signed with iat Int64.min or Int64.max is refused, and the authority keeps serving",
          arguments: StoreBackend.underTest)
    func extremeIssuedAt(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            let invitation = try await TestDevice.invite(in: harness, subject: "user-1", clientID: "app-1")
            let device = TestDevice(harness: harness)
            for iat: Int64 in [.min, .max, -1] {
                let jti = DeviceRequestSignature.newJTI()
                let body = try await device.enrolmentRequest(invitation: invitation, jti: jti).encoded()
                let response = try await device.sendUnverified(.post, DevicePaths.enrolment(invitation), body: body, as: .userPresent,
                                                               jti: jti, iat: iat)
                #expect(response.status.code == 401)
                #expect(try DeviceErrorResponse.decode(response.body).error == .invalidSignature)
                let outbox = try await device.sendUnverified(.get, DevicePaths.outbox, jti: DeviceRequestSignature.newJTI(), iat: iat)
                #expect(outbox.status.code == 401)
            }
            // Far outside the skew but a valid time: clock_skew, signed for its jti.
            let jti = DeviceRequestSignature.newJTI()
            let body = try await device.enrolmentRequest(invitation: invitation, jti: jti).encoded()
            expectDeviceError(try await device.send(.post, DevicePaths.enrolment(invitation), body: body, as: .userPresent, jti: jti,
                                                    iat: device.now + 100_000), .clockSkew)
            #expect(try await device.enrol(invitation: invitation).status == 200)
        }
    }

    @Test("a completion whose base_generation is Int64.max is an invalid request", arguments: StoreBackend.underTest)
    func extremeGeneration(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            let (device, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            try await createPendingRequest(harness, "req-1", kind: .login)
            let download = try await downloadToken(device, "req-1")
            var completion = try TestDevice.completion(rid: "req-1", from: download, receipt: nil)
            for generation in [Int.max, Int.min, 0] {
                completion.baseGeneration = generation
                let response = try await device.send(.post, DevicePaths.completion("req-1"), body: completion.encoded(), as: .userPresent)
                expectDeviceError(response, .invalidRequest)
            }
            #expect(try await harness.store.request(authReqID: "req-1").state == .pending)
            #expect(try await harness.store.faceToken(subject: "user-1").generation == 1)
        }
    }

    @Test("integers at the ends of Int64 in a query or a management body are refused, and the authority keeps serving",
          arguments: StoreBackend.underTest)
    func extremeIntegersInQueriesAndManagementBodies(backend: StoreBackend) async throws {
        try await withManagement(backend) { admin in
            let harness = admin.harness
            try await seedDeviceWorld(harness)
            let (device, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            let extremes = ["9223372036854775807", "-9223372036854775808", "9223372036854775808", "-1"]
            for wait in extremes {
                expectDeviceError(try await device.send(.get, DevicePaths.outbox + "?wait=\(wait)"), .invalidRequest)
            }
            let policyBefore = try await harness.store.tenant(id: "acme").policy
            for body in [#"{"attempts_max":9223372036854775807}"#, #"{"capture_retries_max":-9223372036854775808}"#,
                         #"{"request_lifetime_seconds":9223372036854775808}"#, #"{"match_threshold":1e308}"#,
                         #"{"match_threshold":-1e308}"#, #"{"password_policy":{"minimum_length":9223372036854775807}}"#] {
                try await admin.expect(400, .patch, "/tenants/acme/policy", body: body)
            }
            #expect(try await harness.store.tenant(id: "acme").policy == policyBefore)
            for limit in extremes + ["0"] {
                try await admin.expect(400, .get, "/tenants/acme/audit?limit=\(limit)")
            }
            try await admin.expect(400, .get, "/tenants/acme/audit?before=9223372036854775808")
            // Still serving, on both APIs.
            #expect(try await device.send(.get, DevicePaths.outbox + "?wait=0").status == 200)
            try await admin.expect(200, .get, "/tenants/acme/audit?limit=1")
        }
    }

    @Test("an enrolment for an unknown invitation is answered before its signature is checked or its jti written",
          arguments: StoreBackend.underTest)
    func invitationFirst(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            let device = TestDevice(harness: harness)
            let unknown = "inv_" + Base64URL.encode(SecureRandom.bytes(count: 12))
            let jti = DeviceRequestSignature.newJTI()
            let body = try await device.enrolmentRequest(invitation: try await TestDevice.invite(in: harness, subject: "user-1",
                                                                                                 clientID: "app-1"), jti: jti).encoded()
            expectDeviceError(try await device.send(.post, DevicePaths.enrolment(unknown), body: body, as: .userPresent, jti: jti),
                              .invalidInvitation)
            // Signed by a key that is not the body's: still only the invitation decides.
            expectDeviceError(try await device.send(.post, DevicePaths.enrolment(unknown), body: body, as: .ambient),
                              .invalidInvitation)
            #expect(try await harness.store.registerJTI(jti, expiresAt: harness.clock.now().addingTimeInterval(60)))
        }
    }

    @Test("a jti signed at the edge of the skew is still refused when its iat is last acceptable", arguments: StoreBackend.underTest)
    func replayAtRetentionBoundary(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            let (device, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            let iat = device.now + DeviceSigning.clockSkew
            let jti = DeviceRequestSignature.newJTI()
            let path = DevicePaths.outbox + "?wait=0"
            #expect(try await device.send(.get, path, jti: jti, iat: iat).status == 200)
            // 240 s later the same request's iat is exactly 120 s old: still inside the window.
            harness.clock.advance(by: TimeInterval(2 * DeviceSigning.clockSkew))
            expectDeviceError(try await device.send(.get, path, jti: jti, iat: iat), .replayedRequest)
            harness.clock.advance(by: 1)
            expectDeviceError(try await device.send(.get, path, jti: jti, iat: iat), .clockSkew)
        }
    }
}
