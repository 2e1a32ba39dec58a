import FaceSealCrypto
import FaceSealHTTP
import FaceSealTestSupport
import FaceSealWire
import Foundation
import Synchronization
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

    @Test("the retention sweep expires what nobody polled, and deletes finished requests once their retention passed",
          arguments: StoreBackend.underTest)
    func retentionSweep(_ backend: StoreBackend) async throws {
        try await withAuthority(backend, configure: { $0.requestRetention = 3_600 }) { harness in
            try await CIBAFixture.seed(harness)
            let redeemed = try await harness.startRequest([("requested_expiry", "60")])
            try await harness.complete(redeemed.authReqId)
            #expect(try await harness.token(redeemed.authReqId).status.code == 200)
            let unpolled = try await harness.startRequest([("requested_expiry", "60")])
            let later = try await harness.startRequest([("requested_expiry", "600")])
            harness.clock.advance(by: 61)
            // Expired by the sweep (and audited then), kept: the application still learns `expired_token`.
            #expect(try await harness.authority.sweepRequests() == 0)
            #expect(try await harness.store.request(authReqID: unpolled.authReqId).state == .expired)
            let tenantID = try await harness.store.request(authReqID: unpolled.authReqId).tenantID
            let events = try await harness.store.auditEvents(tenantID: tenantID, beforeSequence: nil, limit: 200)
            #expect(events.contains { $0.kind == "request.expired" && $0.target == unpolled.authReqId })
            // Polled in the sweep's very instant, and later: answered expired, never counted again.
            expectCIBAError(try await harness.token(unpolled.authReqId), .expiredToken)
            harness.clock.advance(by: 1)
            expectCIBAError(try await harness.token(unpolled.authReqId), .expiredToken)
            // Created at 0, expired at 60: kept until 3,660.
            harness.clock.advance(by: 3_597)
            #expect(try await harness.authority.sweepRequests() == 0)
            harness.clock.advance(by: 1)
            // An hour after their expiry both are gone: an unknown `auth_req_id` to the token endpoint.
            #expect(try await harness.authority.sweepRequests() == 2)
            expectCIBAError(try await harness.token(unpolled.authReqId), .invalidGrant)
            expectCIBAError(try await harness.token(redeemed.authReqId), .invalidGrant)
            #expect(try await harness.store.request(authReqID: later.authReqId).state == .expired)
            // Counted once each: the two the sweep expired as finished (not again at the poll that learnt it), the two
            // it deleted as purged.
            let metrics = harness.authority.metrics.exposition(AuthorityMetrics.Gauges(pendingRequests: nil, outboxWaiters: 0, databaseErrors: 0))
            #expect(sample(metrics, #"faceseal_requests_finished_total{kind="login",outcome="expired",reason=""}"#) == 2)
            #expect(sample(metrics, "faceseal_requests_purged_total") == 2)
        }
    }

    @Test("without a retention period the sweep only expires; it runs after every interval until cancelled",
          arguments: StoreBackend.underTest)
    func retentionOff(_ backend: StoreBackend) async throws {
        try await withAuthority(backend, configure: { $0.requestRetention = nil }) { harness in
            try await CIBAFixture.seed(harness)
            let ack = try await harness.startRequest([("requested_expiry", "60")])
            // Two sleeps end, the third is cancelled: two sweeps, the first one a year after the expiry.
            #expect(await Self.sweep(harness.authority, rounds: 2) { harness.clock.advance(by: 366 * 86_400) } == 3)
            #expect(try await harness.store.request(authReqID: ack.authReqId).state == .expired)
            #expect(try await harness.authority.sweepRequests() == 0)
            // Without an audit retention (the default) the log is kept whole.
            #expect(try await harness.authority.sweepAuditEvents() == 0)
            let tenantID = try await harness.store.request(authReqID: ack.authReqId).tenantID
            let kinds = try await harness.store.auditEvents(tenantID: tenantID, beforeSequence: nil, limit: 200)
                .filter { $0.target == ack.authReqId }.map(\.kind)
            #expect(kinds.contains("request.created") && kinds.contains("request.expired"))
        }
    }

    @Test("with an audit retention the periodic sweep deletes the events recorded that long ago, and counts them",
          arguments: StoreBackend.underTest)
    func auditRetention(_ backend: StoreBackend) async throws {
        try await withAuthority(backend, configure: { $0.auditRetention = 3_600 }) { harness in
            try await CIBAFixture.seed(harness)
            let old = try await harness.startRequest()
            let tenantID = try await harness.store.request(authReqID: old.authReqId).tenantID
            func events() async throws -> [AuditEvent] {
                try await harness.store.auditEvents(tenantID: tenantID, beforeSequence: nil, limit: 1_000)
            }
            let before = try await events()
            #expect(before.contains { $0.target == old.authReqId })
            harness.clock.advance(by: 3_599)
            #expect(try await harness.authority.sweepAuditEvents() == 0)
            let recent = try await harness.startRequest()
            harness.clock.advance(by: 1)
            // One sweep of the loop: everything recorded an hour ago or more goes, the later request's events stay.
            #expect(await Self.sweep(harness.authority, rounds: 1) == 2)
            // (The sweep first expired the old request: that event is new.)
            let after = try await events()
            #expect(after.filter { $0.target == old.authReqId }.map(\.kind) == ["request.expired"])
            #expect(after.contains { $0.target == recent.authReqId && $0.kind == "request.created" })
            #expect(after.allSatisfy { $0.at > harness.clock.now().addingTimeInterval(-3_600) })
            let deleted = before.count
            let metrics = harness.authority.metrics.exposition(AuthorityMetrics.Gauges(pendingRequests: nil, outboxWaiters: 0, databaseErrors: 0))
            #expect((sample(metrics, "faceseal_audit_events_purged_total") ?? 0) >= Double(deleted))
        }
    }

    @Test("a failing request sweep does not keep the audit sweep from its round, nor the next round from running",
          arguments: StoreBackend.underTest)
    func sweepsFailApart(_ backend: StoreBackend) async throws {
        try await withAuthority(backend, configure: { $0.auditRetention = 3_600 }) { harness in
            try await CIBAFixture.seed(harness)
            let old = try await harness.startRequest([("requested_expiry", "60")])
            let tenantID = try await harness.store.request(authReqID: old.authReqId).tenantID
            harness.clock.advance(by: 3_600)
            // Every update of a request refused: every request sweep fails (expiring overdue requests is its first step).
            let refusal = backend == .sqlite
                ? ["CREATE TRIGGER refuse_updates BEFORE UPDATE ON ciba_requests BEGIN SELECT RAISE(ABORT, 'refused'); END"]
                : ["CREATE FUNCTION refuse_updates() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$",
                   "CREATE TRIGGER refuse_updates BEFORE UPDATE ON ciba_requests FOR EACH ROW EXECUTE FUNCTION refuse_updates()"]
            for statement in refusal {
                _ = try await harness.store.database.transaction(readOnly: false) { try $0.execute(statement, []) }
            }
            await #expect(throws: (any Error).self) { try await harness.authority.sweepRequests() }
            #expect(await Self.sweep(harness.authority, rounds: 2) == 3)
            // Both rounds' audit sweeps ran: the hour-old request's events are gone.
            let events = try await harness.store.auditEvents(tenantID: tenantID, beforeSequence: nil, limit: 1_000)
            #expect(!events.contains { $0.target == old.authReqId })
            let drop = backend == .sqlite ? "DROP TRIGGER refuse_updates" : "DROP TRIGGER refuse_updates ON ciba_requests"
            _ = try await harness.store.database.transaction(readOnly: false) { try $0.execute(drop, []) }
            // Updates allowed again, the next round expires the request.
            #expect(await Self.sweep(harness.authority, rounds: 1) == 2)
            #expect(try await harness.store.request(authReqID: old.authReqId).state == .expired)
        }
    }

    /// Runs `authority`'s periodic sweep for `rounds` rounds: its sleep ends `rounds` times, calling `afterEach` as it
    /// ends, then throws as a cancelled task's sleep would. Returns how many sleeps began.
    static func sweep(_ authority: Authority, rounds: Int, afterEach: @escaping @Sendable () -> Void = {}) async -> Int {
        let sleeps = Mutex(0)
        await authority.sweepRequestsPeriodically(every: .seconds(60)) { _ in
            let count = sleeps.withLock { count -> Int in
                count += 1
                return count
            }
            if count > rounds { throw CancellationError() }
            afterEach()
        }
        return sleeps.withLock { $0 }
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
