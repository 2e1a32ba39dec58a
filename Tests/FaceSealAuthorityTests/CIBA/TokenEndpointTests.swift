import FaceSealCrypto
import FaceSealHTTP
import FaceSealTestSupport
import FaceSealWire
import Foundation
import Testing
@testable import FaceSealAuthority

/// The token endpoint over real HTTP: each CIBA error code by its own test.
@Suite struct TokenEndpointTests {
    @Test(arguments: StoreBackend.underTest)
    func authorizationPending(_ backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await CIBAFixture.seed(harness)
            let ack = try await harness.startRequest()
            expectCIBAError(try await harness.token(ack.authReqId), .authorizationPending)
        }
    }

    @Test(arguments: StoreBackend.underTest)
    func slowDownRaisesTheInterval(_ backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await CIBAFixture.seed(harness)
            let ack = try await harness.startRequest()
            expectCIBAError(try await harness.token(ack.authReqId), .authorizationPending)
            harness.clock.advance(by: 2)
            expectCIBAError(try await harness.token(ack.authReqId), .slowDown)
            #expect(try await harness.store.request(authReqID: ack.authReqId).intervalSeconds == 10)
            // The raised interval is what counts now: 9 s later is still too soon.
            harness.clock.advance(by: 9)
            expectCIBAError(try await harness.token(ack.authReqId), .slowDown)
            #expect(try await harness.store.request(authReqID: ack.authReqId).intervalSeconds == 15)
            harness.clock.advance(by: 15)
            expectCIBAError(try await harness.token(ack.authReqId), .authorizationPending)
        }
    }

    @Test(arguments: StoreBackend.underTest)
    func expiredToken(_ backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await CIBAFixture.seed(harness)
            let ack = try await harness.startRequest([("requested_expiry", "60")])
            harness.clock.advance(by: 61)
            expectCIBAError(try await harness.token(ack.authReqId), .expiredToken)
            #expect(try await harness.store.request(authReqID: ack.authReqId).state == .expired)
            // And it stays expired.
            harness.clock.advance(by: 30)
            expectCIBAError(try await harness.token(ack.authReqId), .expiredToken)
        }
    }

    @Test(arguments: StoreBackend.underTest)
    func accessDeniedAtOnceAfterADenial(_ backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await CIBAFixture.seed(harness)
            let ack = try await harness.startRequest()
            expectCIBAError(try await harness.token(ack.authReqId), .authorizationPending)
            _ = try await harness.store.denyRequest(authReqID: ack.authReqId, reason: "user_cancelled")
            // No interval to wait: the denial is answered on the very next request.
            let response = try await harness.token(ack.authReqId)
            expectCIBAError(response, .accessDenied)
            #expect(response.status.code == 403)
        }
    }

    @Test(arguments: StoreBackend.underTest)
    func invalidGrant(_ backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await CIBAFixture.seed(harness)
            // Unknown id, also one no record could have (NUL, over-long).
            expectCIBAError(try await harness.token("no-such-request"), .invalidGrant)
            expectCIBAError(try await harness.token("abc\u{0}def"), .invalidGrant)
            expectCIBAError(try await harness.token(String(repeating: "x", count: 300)), .invalidGrant)
            // Another client's id.
            let ack = try await harness.startRequest()
            expectCIBAError(try await harness.token(ack.authReqId, auth: .basic(CIBAFixture.noDeliveryClient, CIBAFixture.secret)),
                            .invalidGrant)
            // Redeemed once: the second request gets invalid_grant.
            try await harness.complete(ack.authReqId)
            #expect(try await harness.token(ack.authReqId).status.code == 200)
            expectCIBAError(try await harness.token(ack.authReqId), .invalidGrant)
        }
    }

    @Test(arguments: StoreBackend.underTest)
    func concurrentRedemptionsIssueOneIDToken(_ backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await CIBAFixture.seed(harness)
            let ack = try await harness.startRequest()
            try await harness.complete(ack.authReqId)
            let statuses = try await withThrowingTaskGroup(of: (Int, [UInt8]).self) { group in
                for _ in 0..<6 {
                    group.addTask {
                        let response = try await harness.token(ack.authReqId, auth: .secretPost)
                        return (response.status.code, response.body)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let successes = statuses.filter { $0.0 == 200 }
            #expect(successes.count == 1)
            for (status, body) in statuses where status != 200 {
                #expect(status == 400)
                #expect(try OAuthErrorResponse.decode(body).error == .invalidGrant)
            }
            let issued = try TokenResponse.decode(try #require(successes.first).1)
            #expect(try await harness.store.request(authReqID: ack.authReqId).idToken == issued.idToken)
        }
    }

    @Test(arguments: StoreBackend.underTest)
    func staleToken(_ backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await CIBAFixture.seed(harness)
            let winner = try await harness.startRequest(AuthorityHarness.signCeremony)
            let loser = try await harness.startRequest(AuthorityHarness.signCeremony)
            // Both downloaded generation 1; the first completion rotates it, the second loses the race.
            let first = try await harness.download(winner.authReqId, marker: 1)
            let second = try await harness.download(loser.authReqId, marker: 2)
            _ = try await harness.store.complete(first)
            let outcome = try await harness.store.complete(second)
            guard case .stale = outcome else {
                Issue.record("expected a stale completion, got \(outcome)")
                return
            }
            expectCIBAError(try await harness.token(loser.authReqId), .staleToken)
            #expect(try await harness.token(winner.authReqId).status.code == 200)
        }
    }

    @Test(arguments: StoreBackend.underTest)
    func unsupportedGrantType(_ backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await CIBAFixture.seed(harness)
            let ack = try await harness.startRequest()
            expectCIBAError(try await harness.token(ack.authReqId, grantType: "password"), .unsupportedGrantType)
        }
    }

    @Test(arguments: StoreBackend.underTest)
    func invalidRequestAtTheTokenEndpoint(_ backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await CIBAFixture.seed(harness)
            expectCIBAError(try await harness.postForm(CIBAPaths.token, [("grant_type", CIBANames.grantType)], auth: .secretBasic),
                            .invalidRequest)
            expectCIBAError(try await harness.postForm(CIBAPaths.token, [("auth_req_id", "x")], auth: .secretBasic), .invalidRequest)
        }
    }

    @Test(arguments: StoreBackend.underTest)
    func successAnswersTokensWithNoStore(_ backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await CIBAFixture.seed(harness)
            let ack = try await harness.startRequest()
            try await harness.complete(ack.authReqId)
            let response = try await harness.token(ack.authReqId)
            #expect(response.status.code == 200)
            #expect(response.headers["Cache-Control"] == "no-store")
            let tokens = try TokenResponse.decode(response.body)
            #expect(tokens.tokenType == "Bearer")
            #expect(tokens.accessToken.count >= 40)
            #expect(try await harness.store.request(authReqID: ack.authReqId).idToken == tokens.idToken)
        }
    }
}
