import FaceSealTestSupport
import FaceSealWire
import Foundation
import Testing
@testable import FaceSealAuthority

@Suite("Storage: CIBA requests, completion compare-and-swap, polling")
struct RequestStoreTests {
    @Test("a request is stored with every field and its references are checked", arguments: StoreBackend.underTest)
    func createAndRead(backend: StoreBackend) async throws {
        try await withStore(backend) { store, clock in
            try await StoreFixtures.seedEnrolled(store, clock: clock)
            let created = try await store.createRequest(StoreFixtures.pendingRequest("req-1", clock: clock))
            #expect(created.state == .pending)
            #expect(created.createdAt == clock.now())
            #expect(created.pkiKind == "sign")
            #expect(created.pkiContext == Array("ctx".utf8))
            #expect(created.pkiData == [1, 2, 3])
            #expect(created.bindingMessage == "Pay 12 EUR")
            #expect(created.clientNotificationToken == "bearer-req-1")
            #expect(created.intervalSeconds == 5)
            #expect(created.attempts == 0)
            #expect(try await store.request(authReqID: "req-1") == created)

            await expectStoreError(.conflict(.cibaRequest, id: "req-1")) { try await store.createRequest(StoreFixtures.pendingRequest("req-1", clock: clock)) }
            await expectStoreError(.notFound(.cibaRequest, id: "req-9")) { try await store.request(authReqID: "req-9") }

            var unknownUser = StoreFixtures.pendingRequest("req-2", clock: clock)
            unknownUser.subject = "ghost"
            await expectStoreError(.notFound(.user, id: "ghost")) { try await store.createRequest(unknownUser) }
            var unknownClient = StoreFixtures.pendingRequest("req-2", clock: clock)
            unknownClient.clientID = "ghost-app"
            await expectStoreError(.notFound(.application, id: "ghost-app")) { try await store.createRequest(unknownClient) }
            var loginWithData = StoreFixtures.pendingRequest("req-2", clock: clock, kind: .login)
            loginWithData.pkiData = [1]
            await expectStoreError(.invalidInput(field: "pkiKind", reason: "a sign-in carries no face-PKI parameters")) { try await store.createRequest(loginWithData) }
            var bigContext = StoreFixtures.pendingRequest("req-2", clock: clock)
            bigContext.pkiContext = Array(repeating: 1, count: 257)
            await expectStoreError(.invalidInput(field: "pkiContext", reason: "longer than 256 bytes")) { try await store.createRequest(bigContext) }
            await expectStoreError(.notFound(.cibaRequest, id: "req-2")) { try await store.request(authReqID: "req-2") }

            let login = try await store.createRequest(StoreFixtures.pendingRequest("req-login", clock: clock, kind: .login))
            #expect(login.kind == .login)
            #expect(login.pkiKind == nil)
        }
    }

    @Test("completion rotates the token and completes the request in one step", arguments: StoreBackend.underTest)
    func completionRotates(backend: StoreBackend) async throws {
        try await withStore(backend) { store, clock in
            try await StoreFixtures.seedEnrolled(store, clock: clock)
            try await StoreFixtures.createDownloaded(store, StoreFixtures.pendingRequest("req-1", clock: clock))
            #expect(try await store.tokenDownloads(authReqID: "req-1").map(\.generation) == [1])
            clock.advance(by: 20)

            let outcome = try await store.complete(StoreFixtures.completion("req-1", expected: 1, marker: 7))
            guard case .completed(let request) = outcome else {
                Issue.record("expected completed, got \(outcome)")
                return
            }
            #expect(request.state == .completed)
            #expect(request.receiptSHA256 == StoreFixtures.receipt(7))
            #expect(request.stagedGeneration == 2)
            #expect(request.finishedAt == clock.now())

            let token = try await store.faceToken(subject: "user-1")
            #expect(token.generation == 2)
            #expect(token.sealedBody == Array(repeating: 7, count: 48))
            #expect(token.encryptedServerShare == Array(repeating: 107, count: 60))
            #expect(token.updatedAt == clock.now())
        }
    }

    @Test("face-token download: only for a pending request, to an active key of that user", arguments: StoreBackend.underTest)
    func faceTokenDownload(backend: StoreBackend) async throws {
        try await withStore(backend) { store, clock in
            try await StoreFixtures.seedEnrolled(store, clock: clock)
            _ = try await store.createUser(StoreFixtures.user("user-2"))
            _ = try await store.createInvitation(StoreFixtures.invitation("inv-2", clock: clock, subject: "user-2"))
            _ = try await store.enrol(StoreFixtures.enrolmentRequest(invitationID: "inv-2", enrolmentID: "enr-2", deviceID: "device-2", keyPrefix: "k2", token: StoreFixtures.faceToken(subject: "user-2")))
            _ = try await store.createRequest(StoreFixtures.pendingRequest("req-1", clock: clock))

            let token = try await store.downloadFaceToken(authReqID: "req-1", keyID: "k1-ambient")
            #expect(token.subject == "user-1")
            #expect(token.generation == 1)
            #expect(token.encryptedServerShare == Array(repeating: 101, count: 60))
            let downloads = try await store.tokenDownloads(authReqID: "req-1")
            #expect(downloads == [TokenDownloadRecord(authReqID: "req-1", keyID: "k1-ambient", generation: 1, downloadedAt: clock.now())])

            await expectStoreError(.notFound(.cibaRequest, id: "req-1")) { try await store.downloadFaceToken(authReqID: "req-1", keyID: "k2-ambient") }
            // The same user's key for another application learns nothing either.
            _ = try await store.createApplication(StoreFixtures.application("app-2"))
            _ = try await store.createInvitation(StoreFixtures.invitation("inv-3", clock: clock, clientID: "app-2"))
            _ = try await store.enrol(StoreFixtures.enrolmentRequest(invitationID: "inv-3", enrolmentID: "enr-3", deviceID: "device-1", keyPrefix: "k3", token: nil))
            await expectStoreError(.notFound(.cibaRequest, id: "req-1")) { try await store.downloadFaceToken(authReqID: "req-1", keyID: "k3-present") }
            #expect(try await store.tokenDownloads(authReqID: "req-1") == downloads)
            await expectStoreError(.notFound(.deviceKey, id: "k9")) { try await store.downloadFaceToken(authReqID: "req-1", keyID: "k9") }
            _ = try await store.endEnrolment(id: "enr-1", status: .revoked)
            await expectStoreError(.deviceKeyNotActive(keyID: "k1-ambient", status: .revoked)) { try await store.downloadFaceToken(authReqID: "req-1", keyID: "k1-ambient") }
            _ = try await store.denyRequest(authReqID: "req-1", reason: "user_cancelled")
            await expectStoreError(.requestNotPending(authReqID: "req-1", state: .denied)) { try await store.downloadFaceToken(authReqID: "req-1", keyID: "k1-ambient") }
        }
    }

    @Test("a retried completion returns the stored outcome and rotates nothing twice", arguments: StoreBackend.underTest)
    func completionIsIdempotent(backend: StoreBackend) async throws {
        try await withStore(backend) { store, clock in
            try await StoreFixtures.seedEnrolled(store, clock: clock)
            try await StoreFixtures.createDownloaded(store, StoreFixtures.pendingRequest("req-1", clock: clock))
            let first = try await store.complete(StoreFixtures.completion("req-1", expected: 1, marker: 7))
            clock.advance(by: 5)
            let retry = try await store.complete(StoreFixtures.completion("req-1", expected: 1, marker: 7))
            #expect(retry == first)
            #expect(try await store.faceToken(subject: "user-1").generation == 2)

            // Same request, another body hash: not a retry.
            var other = StoreFixtures.completion("req-1", expected: 1, marker: 7)
            other.receiptSHA256 = StoreFixtures.receipt(8)
            await expectStoreError(.completionMismatch(authReqID: "req-1")) { try await store.complete(other) }
            let token = try await store.faceToken(subject: "user-1")
            #expect(token.generation == 2)
            #expect(token.sealedBody == Array(repeating: 7, count: 48))
        }
    }

    @Test("a completion from an old generation marks the request stale and stores nothing else", arguments: StoreBackend.underTest)
    func staleCompletion(backend: StoreBackend) async throws {
        try await withStore(backend) { store, clock in
            try await StoreFixtures.seedEnrolled(store, clock: clock)
            try await StoreFixtures.createDownloaded(store, StoreFixtures.pendingRequest("req-ceremony", clock: clock))
            try await StoreFixtures.createDownloaded(store, StoreFixtures.pendingRequest("req-login", clock: clock, kind: .login))
            _ = try await store.complete(StoreFixtures.completion("req-login", expected: 1, marker: 3))

            let outcome = try await store.complete(StoreFixtures.completion("req-ceremony", expected: 1, marker: 4))
            guard case .stale(let request) = outcome else {
                Issue.record("expected stale, got \(outcome)")
                return
            }
            #expect(request.state == .stale)
            #expect(try await store.request(authReqID: "req-ceremony").state == .stale)
            let token = try await store.faceToken(subject: "user-1")
            #expect(token.generation == 2)
            #expect(token.sealedBody == Array(repeating: 3, count: 48))

            // Its retry is stale again (cannot succeed), never a rotation.
            #expect(try await store.complete(StoreFixtures.completion("req-ceremony", expected: 1, marker: 4)) == outcome)
            #expect(try await store.faceToken(subject: "user-1").generation == 2)
        }
    }

    @Test("a sign-in completes without a receipt; a ceremony needs one; the password flag is kept", arguments: StoreBackend.underTest)
    func receiptOptionalForSignIn(backend: StoreBackend) async throws {
        try await withStore(backend) { store, clock in
            try await StoreFixtures.seedEnrolled(store, clock: clock)
            try await StoreFixtures.createDownloaded(store, StoreFixtures.pendingRequest("req-ceremony", clock: clock))
            try await StoreFixtures.createDownloaded(store, StoreFixtures.pendingRequest("req-login", clock: clock, kind: .login))
            #expect(try await store.request(authReqID: "req-login").passwordUsed == false)

            var noReceipt = StoreFixtures.completion("req-ceremony", expected: 1, marker: 4)
            noReceipt.receiptSHA256 = nil
            await expectStoreError(.invalidInput(field: "receiptSHA256", reason: "a ceremony's completion needs the receipt")) {
                try await store.complete(noReceipt)
            }
            #expect(try await store.request(authReqID: "req-ceremony").state == .pending)
            #expect(try await store.faceToken(subject: "user-1").generation == 1)

            var login = StoreFixtures.completion("req-login", expected: 1, marker: 5)
            login.receiptSHA256 = nil
            login.passwordUsed = true
            let outcome = try await store.complete(login)
            guard case .completed(let request) = outcome else {
                Issue.record("expected completed, got \(outcome)")
                return
            }
            #expect(request.receiptSHA256 == nil)
            #expect(request.passwordUsed)
            #expect(try await store.request(authReqID: "req-login").passwordUsed)
            #expect(try await store.faceToken(subject: "user-1").generation == 2)
            // The retry (no receipt again) answers the same outcome and rotates nothing.
            #expect(try await store.complete(login) == outcome)
            #expect(try await store.faceToken(subject: "user-1").generation == 2)
        }
    }

    @Test("bad completions are refused and change nothing", arguments: StoreBackend.underTest)
    func badCompletions(backend: StoreBackend) async throws {
        try await withStore(backend) { store, clock in
            try await StoreFixtures.seedEnrolled(store, clock: clock)
            try await StoreFixtures.createDownloaded(store, StoreFixtures.pendingRequest("req-1", clock: clock))
            let before = try await store.request(authReqID: "req-1")

            await expectStoreError(.notFound(.cibaRequest, id: "req-9")) { try await store.complete(StoreFixtures.completion("req-9", expected: 1, marker: 2)) }

            var skipping = StoreFixtures.completion("req-1", expected: 1, marker: 2)
            skipping.rotatedToken.generation = 3
            await expectStoreError(.invalidInput(field: "rotatedToken.generation", reason: "must be the expected generation + 1")) { try await store.complete(skipping) }

            var shortReceipt = StoreFixtures.completion("req-1", expected: 1, marker: 2)
            shortReceipt.receiptSHA256 = [1, 2, 3]
            await expectStoreError(.invalidInput(field: "receiptSHA256", reason: "must be 32 bytes")) { try await store.complete(shortReceipt) }

            var otherToken = StoreFixtures.completion("req-1", expected: 1, marker: 2)
            otherToken.rotatedToken.tokenID = "someone-else"
            await expectStoreError(.invalidInput(field: "rotatedToken.tokenID", reason: "not the user's token")) { try await store.complete(otherToken) }

            var otherUser = StoreFixtures.completion("req-1", expected: 1, marker: 2)
            otherUser.rotatedToken.subject = "user-2"
            await expectStoreError(.invalidInput(field: "rotatedToken.subject", reason: "not the request's user")) { try await store.complete(otherUser) }

            #expect(try await store.request(authReqID: "req-1") == before)
            #expect(try await store.faceToken(subject: "user-1").generation == 1)

            clock.advance(by: 301)
            await expectStoreError(.requestNotPending(authReqID: "req-1", state: .expired)) { try await store.complete(StoreFixtures.completion("req-1", expected: 1, marker: 2)) }
            #expect(try await store.faceToken(subject: "user-1").generation == 1)
        }
    }

    @Test("8 concurrent completions from one generation store exactly one rotation", arguments: StoreBackend.underTest)
    func concurrentCompletions(backend: StoreBackend) async throws {
        try await withStore(backend) { store, clock in
            try await StoreFixtures.seedEnrolled(store, clock: clock)
            let ids = (0..<8).map { "req-\($0)" }
            for id in ids { try await StoreFixtures.createDownloaded(store, StoreFixtures.pendingRequest(id, clock: clock)) }

            let outcomes = try await withThrowingTaskGroup(of: (Int, CompletionOutcome).self) { group in
                for (index, id) in ids.enumerated() {
                    group.addTask { (index, try await store.complete(StoreFixtures.completion(id, expected: 1, marker: UInt8(10 + index)))) }
                }
                var outcomes: [Int: CompletionOutcome] = [:]
                for try await (index, outcome) in group { outcomes[index] = outcome }
                return outcomes
            }
            try await Self.expectExactlyOneRotation(outcomes: outcomes, ids: ids, store: store)
        }
    }

    @Test("8 SQLite connections on one file completing at once store exactly one rotation")
    func concurrentCompletionsAcrossSQLiteConnections() async throws {
        try await withScratch(.sqlite) { scratch in
            let clock = ManualClock()
            let setup = try await scratch.open(clock: clock)
            try await StoreFixtures.seedEnrolled(setup, clock: clock)
            let ids = (0..<8).map { "req-\($0)" }
            for id in ids { try await StoreFixtures.createDownloaded(setup, StoreFixtures.pendingRequest(id, clock: clock)) }

            // Eight stores, as eight authority processes would have: SQLite's file locks serialise them.
            var stores: [SQLAuthorityStore] = []
            for _ in ids { stores.append(try await scratch.open(clock: clock)) }
            let connections = stores
            let outcomes = try await withThrowingTaskGroup(of: (Int, CompletionOutcome).self) { group in
                for (index, id) in ids.enumerated() {
                    group.addTask { (index, try await connections[index].complete(StoreFixtures.completion(id, expected: 1, marker: UInt8(10 + index)))) }
                }
                var outcomes: [Int: CompletionOutcome] = [:]
                for try await (index, outcome) in group { outcomes[index] = outcome }
                return outcomes
            }
            try await Self.expectExactlyOneRotation(outcomes: outcomes, ids: ids, store: setup)
            for store in stores { await store.close() }
            await setup.close()
        }
    }

    static func expectExactlyOneRotation(outcomes: [Int: CompletionOutcome], ids: [String], store: SQLAuthorityStore) async throws {
        let winners = outcomes.filter { if case .completed = $0.value { return true } else { return false } }
        #expect(outcomes.count == 8)
        #expect(winners.count == 1)
        #expect(outcomes.values.filter { if case .stale = $0 { return true } else { return false } }.count == 7)
        let token = try await store.faceToken(subject: "user-1")
        #expect(token.generation == 2)
        if let winner = winners.first {
            #expect(token.sealedBody == Array(repeating: UInt8(10 + winner.key), count: 48))
        }
        var states: [CIBARequestState: Int] = [:]
        for id in ids { states[try await store.request(authReqID: id).state, default: 0] += 1 }
        #expect(states == [.completed: 1, .stale: 7])
    }

    @Test("polling: slow_down when too fast raises the interval by 5 s; expiry; other clients see nothing", arguments: StoreBackend.underTest)
    func pollBookkeeping(backend: StoreBackend) async throws {
        try await withStore(backend) { store, clock in
            try await StoreFixtures.seedEnrolled(store, clock: clock)
            _ = try await store.createApplication(StoreFixtures.application("app-2"))
            _ = try await store.createRequest(StoreFixtures.pendingRequest("req-1", clock: clock, lifetime: 120))

            guard case .recorded(let first) = try await store.recordPoll(authReqID: "req-1", clientID: "app-1") else {
                Issue.record("the first poll must be recorded")
                return
            }
            #expect(first.state == .pending)
            #expect(first.lastPolledAt == clock.now())

            clock.advance(by: 2)
            #expect(try await store.recordPoll(authReqID: "req-1", clientID: "app-1") == .slowDown(newIntervalSeconds: 10))
            #expect(try await store.request(authReqID: "req-1").intervalSeconds == 10)

            clock.advance(by: 9)
            #expect(try await store.recordPoll(authReqID: "req-1", clientID: "app-1") == .slowDown(newIntervalSeconds: 15))

            clock.advance(by: 15)
            guard case .recorded(let patient) = try await store.recordPoll(authReqID: "req-1", clientID: "app-1") else {
                Issue.record("a poll after the interval must be recorded")
                return
            }
            #expect(patient.intervalSeconds == 15)
            #expect(patient.state == .pending)

            await expectStoreError(.notFound(.cibaRequest, id: "req-1")) { try await store.recordPoll(authReqID: "req-1", clientID: "app-2") }
            await expectStoreError(.notFound(.cibaRequest, id: "req-9")) { try await store.recordPoll(authReqID: "req-9", clientID: "app-1") }

            clock.advance(by: 200)
            guard case .expired(let expired) = try await store.recordPoll(authReqID: "req-1", clientID: "app-1") else {
                Issue.record("an overdue poll must expire the request")
                return
            }
            #expect(expired.state == .expired)
            #expect(expired.finishedAt == clock.now())
            // The next poll finds it expired (as another poll, or the sweep, would have left it): recorded, not expired again.
            clock.advance(by: 10)
            guard case .recorded(let again) = try await store.recordPoll(authReqID: "req-1", clientID: "app-1") else {
                Issue.record("a poll of an expired request is recorded")
                return
            }
            #expect(again.state == .expired)
            #expect(again.finishedAt == expired.finishedAt)
        }
    }

    @Test("a completed request answers at once even when polled quickly", arguments: StoreBackend.underTest)
    func completedRequestIsNotSlowedDown(backend: StoreBackend) async throws {
        try await withStore(backend) { store, clock in
            try await StoreFixtures.seedEnrolled(store, clock: clock)
            try await StoreFixtures.createDownloaded(store, StoreFixtures.pendingRequest("req-1", clock: clock))
            _ = try await store.recordPoll(authReqID: "req-1", clientID: "app-1")
            _ = try await store.complete(StoreFixtures.completion("req-1", expected: 1, marker: 5))
            clock.advance(by: 1)
            guard case .recorded(let request) = try await store.recordPoll(authReqID: "req-1", clientID: "app-1") else {
                Issue.record("expected the completed request")
                return
            }
            #expect(request.state == .completed)
        }
    }

    @Test("reported face-check failures spend their own budgets; the last one denies in the same step; only the downloading key reports",
          arguments: StoreBackend.underTest)
    func faceCheckBudgets(backend: StoreBackend) async throws {
        try await withStore(backend) { store, clock in
            try await StoreFixtures.seedEnrolled(store, clock: clock, policy: TenantPolicy(attemptsMax: 2, captureRetriesMax: 2))
            try await StoreFixtures.createDownloaded(store, StoreFixtures.pendingRequest("req-1", clock: clock))
            try await StoreFixtures.createDownloaded(store, StoreFixtures.pendingRequest("req-2", clock: clock))
            await expectStoreError(.invalidInput(field: "keyID", reason: "this key did not download the token for the request")) {
                try await store.recordFaceCheckFailure(authReqID: "req-1", keyID: "k1-ambient", .faceMismatch)
            }
            #expect(try await store.recordFaceCheckFailure(authReqID: "req-1", keyID: "k1-present", .captureRetry)
                    == AttemptBudget(attemptsLeft: 2, captureRetriesLeft: 1))
            #expect(try await store.recordFaceCheckFailure(authReqID: "req-1", keyID: "k1-present", .faceMismatch)
                    == AttemptBudget(attemptsLeft: 1, captureRetriesLeft: 1))
            #expect(try await store.request(authReqID: "req-1").state == .pending)
            #expect(try await store.recordFaceCheckFailure(authReqID: "req-1", keyID: "k1-present", .faceMismatch)
                    == AttemptBudget(attemptsLeft: 0, captureRetriesLeft: 1))
            let denied = try await store.request(authReqID: "req-1")
            #expect(denied.state == .denied)
            #expect(denied.denyReason == "attempts_exhausted")

            _ = try await store.recordFaceCheckFailure(authReqID: "req-2", keyID: "k1-present", .captureRetry)
            #expect(try await store.recordFaceCheckFailure(authReqID: "req-2", keyID: "k1-present", .captureRetry)
                    == AttemptBudget(attemptsLeft: 2, captureRetriesLeft: 0))
            #expect(try await store.request(authReqID: "req-2").denyReason == "capture_retries_exhausted")
        }
    }

    @Test("abort denies at once; a later completion is refused and rotates nothing", arguments: StoreBackend.underTest)
    func denial(backend: StoreBackend) async throws {
        try await withStore(backend) { store, clock in
            try await StoreFixtures.seedEnrolled(store, clock: clock)
            try await StoreFixtures.createDownloaded(store, StoreFixtures.pendingRequest("req-1", clock: clock))
            #expect(try await store.recordFaceCheckFailure(authReqID: "req-1", keyID: "k1-present", .faceMismatch)
                    == AttemptBudget(attemptsLeft: 2, captureRetriesLeft: 10))
            #expect(try await store.request(authReqID: "req-1").attempts == 1)
            let denied = try await store.denyRequest(authReqID: "req-1", reason: "attempts_exhausted")
            #expect(denied.state == .denied)
            #expect(denied.denyReason == "attempts_exhausted")
            #expect(try await store.denyRequest(authReqID: "req-1", reason: "attempts_exhausted") == denied)
            await expectStoreError(.requestNotPending(authReqID: "req-1", state: .denied)) { try await store.denyRequest(authReqID: "req-1", reason: "user_cancelled") }
            await expectStoreError(.requestNotPending(authReqID: "req-1", state: .denied)) { try await store.complete(StoreFixtures.completion("req-1", expected: 1, marker: 2)) }
            await expectStoreError(.requestNotPending(authReqID: "req-1", state: .denied)) {
                try await store.recordFaceCheckFailure(authReqID: "req-1", keyID: "k1-present", .faceMismatch)
            }
            #expect(try await store.faceToken(subject: "user-1").generation == 1)
        }
    }

    @Test("the ID token is stored once, only for a completed request", arguments: StoreBackend.underTest)
    func idToken(backend: StoreBackend) async throws {
        try await withStore(backend) { store, clock in
            try await StoreFixtures.seedEnrolled(store, clock: clock)
            try await StoreFixtures.createDownloaded(store, StoreFixtures.pendingRequest("req-1", clock: clock))
            await expectStoreError(.requestNotPending(authReqID: "req-1", state: .pending)) { try await store.storeIDToken(authReqID: "req-1", idToken: "a.b.c") }
            _ = try await store.complete(StoreFixtures.completion("req-1", expected: 1, marker: 5))
            #expect(try await store.storeIDToken(authReqID: "req-1", idToken: "a.b.c").idToken == "a.b.c")
            #expect(try await store.storeIDToken(authReqID: "req-1", idToken: "x.y.z").idToken == "a.b.c")
        }
    }

    @Test("the expiry sweep moves only overdue pending requests", arguments: StoreBackend.underTest)
    func expirySweep(backend: StoreBackend) async throws {
        try await withStore(backend) { store, clock in
            try await StoreFixtures.seedEnrolled(store, clock: clock)
            _ = try await store.createRequest(StoreFixtures.pendingRequest("short", clock: clock, lifetime: 60))
            _ = try await store.createRequest(StoreFixtures.pendingRequest("long", clock: clock, lifetime: 600))
            try await StoreFixtures.createDownloaded(store, StoreFixtures.pendingRequest("done", clock: clock, lifetime: 60))
            _ = try await store.complete(StoreFixtures.completion("done", expected: 1, marker: 5))
            clock.advance(by: 61)
            // Answered as stored.
            let expired = try await store.expireOverdueRequests()
            #expect(expired.map(\.authReqID) == ["short"])
            #expect(try await store.request(authReqID: "short").state == .expired)
            #expect(expired == [try await store.request(authReqID: "short")])
            #expect(try await store.request(authReqID: "long").state == .pending)
            #expect(try await store.request(authReqID: "done").state == .completed)
            #expect(try await store.expireOverdueRequests().isEmpty)
        }
    }

    @Test("the retention purge deletes finished requests long expired, with what refers to them, and keeps their audit",
          arguments: StoreBackend.underTest)
    func retentionPurge(backend: StoreBackend) async throws {
        try await withStore(backend) { store, clock in
            try await StoreFixtures.seedEnrolled(store, clock: clock)
            try await StoreFixtures.createDownloaded(store, StoreFixtures.pendingRequest("done", clock: clock, lifetime: 60))
            _ = try await store.enqueueLink(OutboxLink(deviceID: "device-1", link: "jws-done", authReqID: "done",
                                                       expiresAt: clock.now().addingTimeInterval(3_600)))
            _ = try await store.complete(StoreFixtures.completion("done", expected: 1, marker: 5))
            _ = try await store.createRequest(StoreFixtures.pendingRequest("denied", clock: clock, lifetime: 60))
            _ = try await store.denyRequest(authReqID: "denied", reason: "user_cancelled")
            _ = try await store.createRequest(StoreFixtures.pendingRequest("overdue", clock: clock, lifetime: 60))
            _ = try await store.createRequest(StoreFixtures.pendingRequest("later", clock: clock, lifetime: 600))
            clock.advance(by: 60 + 99)
            // Expired 99 s ago: kept under a retention of 100 s.
            #expect(try await store.purgeFinishedRequests(expiredFor: 100, limit: 10) == 0)
            clock.advance(by: 1)
            // Oldest expiry first, then by id; `limit` bounds one call.
            #expect(try await store.purgeFinishedRequests(expiredFor: 100, limit: 1) == 1)
            await expectStoreError(.notFound(.cibaRequest, id: "denied")) { try await store.request(authReqID: "denied") }
            #expect(try await store.request(authReqID: "done").state == .completed)
            #expect(try await store.purgeFinishedRequests(expiredFor: 100, limit: 10) == 1)
            await expectStoreError(.notFound(.cibaRequest, id: "done")) { try await store.request(authReqID: "done") }
            #expect(try await store.tokenDownloads(authReqID: "done").isEmpty)
            #expect(try await store.links(deviceID: "device-1", afterSequence: 0, limit: 10).isEmpty)
            // A pending request is never purged, overdue or not: the expiry sweep finishes it (and audits it) first.
            #expect(try await store.purgeFinishedRequests(expiredFor: 100, limit: 10) == 0)
            #expect(try await store.request(authReqID: "overdue").state == .pending)
            #expect(try await store.request(authReqID: "later").state == .pending)
            // The audit keeps every outcome.
            let targets = try await store.auditEvents(tenantID: "acme", beforeSequence: nil, limit: 100).map(\.target)
            #expect(targets.contains("done") && targets.contains("denied"))
            await expectStoreError(.invalidInput(field: "limit", reason: "retention ≥ 0 seconds, limit 1…1000")) {
                try await store.purgeFinishedRequests(expiredFor: 100, limit: 0)
            }
            await expectStoreError(.invalidInput(field: "retention", reason: "retention ≥ 0 seconds, limit 1…1000")) {
                try await store.purgeFinishedRequests(expiredFor: -1, limit: 10)
            }
        }
    }
}
