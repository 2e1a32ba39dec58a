import FaceSealCrypto
import FaceSealHTTP
import FaceSealTestSupport
import FaceSealWire
import Foundation
import Testing
@testable import FaceSealAuthority

/// Issue 14 item 7: what the application learns — why a request was denied, and at once that a user cannot approve.
@Suite("CIBA: what the application learns")
struct ApplicationLearnsTests {
    static func backchannel(_ harness: AuthorityHarness, hint: String) async throws -> HTTPClientResponse {
        try await harness.client.send(.form(url: harness.url(CIBAPaths.backchannel), form: TestApplication.form([
            ("scope", "openid"), ("login_hint", hint),
        ])))
    }

    @Test("a user without an active enrolment for the client is unknown_user_id at once, word for word as nobody",
          arguments: StoreBackend.underTest)
    func noEnrolmentIsUnknownUserAtOnce(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            _ = try await ManagementLifecycleTests.enrolledDevice(harness)
            // user-2 is enrolled, but for another application of the tenant.
            _ = try await TestDevice.enrolled(in: harness, subject: "user-2", clientID: "app-1")
            let nobody = try await Self.backchannel(harness, hint: "nobody@example.com")
            expectCIBAError(nobody, .unknownUserId)
            #expect(try OAuthErrorResponse.decode(nobody.body).errorDescription == Authority.noSuchUser)

            #expect(try await Self.backchannel(harness, hint: "user-1@example.com").status.code == 200)
            for hint in ["user-2@example.com", "user-2"] {
                let answer = try await Self.backchannel(harness, hint: hint)
                #expect(answer.status.code == 400 && answer.body == nobody.body, "\(hint)")
            }
            let enrolment = try #require(try await harness.store.enrolments(subject: "user-1").first)
            _ = try await harness.store.endEnrolment(id: enrolment.id, status: .revoked)
            let revoked = try await Self.backchannel(harness, hint: "user-1@example.com")
            #expect(revoked.status.code == 400 && revoked.body == nobody.body)
            // Nothing was stored for the refused hints: only the one accepted request exists.
            let stored = try await harness.store.read { tx, _ in try tx.query("SELECT auth_req_id FROM ciba_requests", []).count }
            #expect(stored == 1)
        }
    }

    @Test("access_denied names why in error_description: every abort reason, a refusal as policy",
          arguments: StoreBackend.underTest, AbortReason.allCases)
    func accessDeniedCarriesTheReason(backend: StoreBackend, reason: AbortReason) async throws {
        try await withAuthority(backend) { harness in
            let device = try await ManagementLifecycleTests.enrolledDevice(harness)
            let rid = try await TestApplication.start(harness, ceremony: true)
            #expect(try await device.post(DevicePaths.abort(rid), AbortRequest(rid: rid, reason: reason)).status == 204)
            let denied = try #require(try await TestApplication.tokenError(harness, rid))
            #expect(denied.error == .accessDenied)
            let expected = reason == .refused ? "policy" : reason.rawValue
            #expect(denied.errorDescription == expected)
            #expect(DenialReason(rawValue: expected) != nil)
        }
    }
}
