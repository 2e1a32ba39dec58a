import FaceSealTestSupport
import Foundation
import Testing
@testable import FaceSealAuthority

/// The operations that do in one transaction what a ceremony step did in several (docs/PERFORMANCE.md).
@Suite("Storage: a ceremony step's reads and writes in one transaction")
struct FoldedStoreTests {
    @Test("a request is stored with its link queued for each device enrolled for it, or neither", arguments: StoreBackend.underTest)
    func requestWithLinks(backend: StoreBackend) async throws {
        try await withStore(backend) { store, clock in
            try await StoreFixtures.seedEnrolled(store, clock: clock)
            let announced = try await store.createRequest(StoreFixtures.pendingRequest("req-1", clock: clock), pendingLimit: 1, announcing: "jws-1")
            #expect(announced.deviceIDs == ["device-1"])
            #expect(try await store.request(authReqID: "req-1") == announced.request)
            let queued = try await store.links(deviceID: "device-1", afterSequence: 0, limit: 10)
            #expect(queued.map(\.link) == ["jws-1"])
            #expect(queued.map(\.authReqID) == ["req-1"])
            #expect(queued.map(\.expiresAt) == [announced.request.expiresAt])

            // Over the pending limit: no request and no link.
            await #expect(throws: PendingRequestLimitReached.self) {
                try await store.createRequest(StoreFixtures.pendingRequest("req-2", clock: clock), pendingLimit: 1, announcing: "jws-2")
            }
            await expectStoreError(.notFound(.cibaRequest, id: "req-2")) { try await store.request(authReqID: "req-2") }
            #expect(try await store.links(deviceID: "device-1", afterSequence: 0, limit: 10).map(\.link) == ["jws-1"])

            let audience = try await store.requestAudience(.subject("user-1"), clientID: "app-1", tenantID: "acme")
            #expect(audience.subject == "user-1")
            #expect(audience.tenant == (try await store.tenant(id: "acme")))
            #expect(audience.hasActiveDevice)
            #expect(audience.webhook == nil)
            #expect(try await store.requestAudience(.subject("user-1"), clientID: "app-2", tenantID: "acme").hasActiveDevice == false)
            // The tenant's webhook, read with the tenant, is the one `webhook(tenantID:)` reads.
            _ = try await store.setWebhook(WebhookRecord(tenantID: "acme", url: "https://hooks.example/acme", encryptedSecret: [1, 2, 3],
                                                         createdAt: clock.now()))
            let withWebhook = try await store.requestAudience(.subject("user-1"), clientID: "app-1", tenantID: "acme")
            #expect(withWebhook.webhook == (try await store.webhook(tenantID: "acme")))
            #expect(withWebhook.webhook?.url == "https://hooks.example/acme")
            #expect(withWebhook.tenant == audience.tenant)
            _ = try await store.deleteWebhook(tenantID: "acme")
            await expectStoreError(.notFound(.user, id: "ghost")) { try await store.requestAudience(.subject("ghost"), clientID: "app-1", tenantID: "acme") }
            // A login hint is an email of the tenant's users, else a subject of one.
            let email = try await store.user(subject: "user-1").email
            #expect(try await store.requestAudience(.loginHint(email), clientID: "app-1", tenantID: "acme") == audience)
            #expect(try await store.requestAudience(.loginHint("user-1"), clientID: "app-1", tenantID: "acme") == audience)
            await expectStoreError(.notFound(.user, id: "user-1")) {
                try await store.requestAudience(.loginHint("user-1"), clientID: "app-1", tenantID: "other")
            }
            await expectStoreError(.notFound(.user, id: "nobody@example.com")) {
                try await store.requestAudience(.loginHint("nobody@example.com"), clientID: "app-1", tenantID: "acme")
            }
        }
    }

    @Test("a poll takes its links and acknowledges them at once; a replayed jti takes nothing", arguments: StoreBackend.underTest)
    func takeLinks(backend: StoreBackend) async throws {
        try await withStore(backend) { store, clock in
            try await StoreFixtures.seedEnrolled(store, clock: clock)
            for index in 0..<3 {
                _ = try await store.enqueueLink(OutboxLink(deviceID: "device-1", link: "jws-\(index)", authReqID: nil, expiresAt: clock.now().addingTimeInterval(300)))
            }
            let replay = JTIRegistration(jti: "jti-1", expiresAt: clock.now().addingTimeInterval(240))
            #expect(try await store.takeLinks(deviceID: "device-1", limit: 2, registering: replay).map(\.link) == ["jws-0", "jws-1"])
            #expect(try await store.links(deviceID: "device-1", afterSequence: 0, limit: 10).map(\.link) == ["jws-2"])
            await #expect(throws: ReplayedRequest(jti: "jti-1")) { try await store.takeLinks(deviceID: "device-1", limit: 2, registering: replay) }
            #expect(try await store.links(deviceID: "device-1", afterSequence: 0, limit: 10).map(\.link) == ["jws-2"])
            #expect(try await store.takeLinks(deviceID: "device-1", limit: 2, registering: nil).map(\.link) == ["jws-2"])
            #expect(try await store.takeLinks(deviceID: "device-1", limit: 2, registering: nil).isEmpty)
        }
    }

    @Test("a request's context and a device key's failure windows read as the separate reads do", arguments: StoreBackend.underTest)
    func combinedReads(backend: StoreBackend) async throws {
        try await withStore(backend) { store, clock in
            try await StoreFixtures.seedEnrolled(store, clock: clock)
            let request = try await store.createRequest(StoreFixtures.pendingRequest("req-1", clock: clock))
            let context = try await store.requestContext(authReqID: "req-1", faceToken: true)
            #expect(context.request == request)
            #expect(context.application == (try await store.application(clientID: "app-1")))
            #expect(context.tenant == (try await store.tenant(id: "acme")))
            #expect(context.faceToken == (try await store.faceToken(subject: "user-1")))
            #expect(try await store.requestContext(authReqID: "req-1", faceToken: false).faceToken == nil)
            await expectStoreError(.notFound(.cibaRequest, id: "req-9")) { try await store.requestContext(authReqID: "req-9", faceToken: false) }
            // A user without a token reads nil.
            _ = try await store.createUser(UserRecord(subject: "user-2", tenantID: "acme", email: "two@example.com", createdAt: clock.now()))
            var another = StoreFixtures.pendingRequest("req-2", clock: clock)
            another.subject = "user-2"
            _ = try await store.createRequest(another)
            #expect(try await store.requestContext(authReqID: "req-2", faceToken: true).faceToken == nil)

            _ = try await store.countFailures(keys: ["source", "total"], window: 60)
            let read = try await store.deviceKey(keyID: "k1-present", failureKeys: ["source", "total", "other"])
            #expect(read.key == (try await store.deviceKey(keyID: "k1-present")))
            #expect(read.windows == (try await store.failureWindows(keys: ["source", "total", "other"])))
            #expect(read.windows["source"]?.count == 1)
            // The edge's usual two keys (one statement of its own), a key twice, none; then windows that ran out.
            #expect(try await store.deviceKey(keyID: "k1-present", failureKeys: ["source", "total"]).windows == read.windows)
            #expect(try await store.deviceKey(keyID: "k1-present", failureKeys: ["source", "source"]).windows.keys.sorted() == ["source"])
            #expect(try await store.deviceKey(keyID: "k1-present", failureKeys: []).windows.isEmpty)
            clock.advance(by: 61)
            #expect(try await store.deviceKey(keyID: "k1-present", failureKeys: ["source", "total"]).windows.isEmpty)
            await expectStoreError(.notFound(.deviceKey, id: "k9")) { try await store.deviceKey(keyID: "k9", failureKeys: []) }
            await expectStoreError(.notFound(.deviceKey, id: "k9")) { try await store.deviceKey(keyID: "k9", failureKeys: ["source", "total"]) }

            // A deleted application is not found, as `application(clientID:)` says.
            _ = try await store.deleteApplication(clientID: "app-1", actor: nil)
            await expectStoreError(.notFound(.application, id: "app-1")) { try await store.requestContext(authReqID: "req-1", faceToken: true) }
        }
    }

    @Test("a step's jti is remembered in the step's transaction: a replay is refused and changes nothing", arguments: StoreBackend.underTest)
    func replayInsideTheStep(backend: StoreBackend) async throws {
        try await withStore(backend) { store, clock in
            try await StoreFixtures.seedEnrolled(store, clock: clock)
            _ = try await store.createRequest(StoreFixtures.pendingRequest("req-1", clock: clock))
            _ = try await store.createRequest(StoreFixtures.pendingRequest("req-2", clock: clock))
            let replay = JTIRegistration(jti: "jti-download", expiresAt: clock.now().addingTimeInterval(240))
            _ = try await store.downloadFaceToken(authReqID: "req-1", keyID: "k1-present", registering: replay)
            #expect(try await store.registerJTI("jti-download", expiresAt: replay.expiresAt) == false)
            await #expect(throws: ReplayedRequest(jti: "jti-download")) {
                try await store.downloadFaceToken(authReqID: "req-2", keyID: "k1-present", registering: replay)
            }
            #expect(try await store.tokenDownloads(authReqID: "req-2").isEmpty)

            var completion = StoreFixtures.completion("req-1", expected: 1, marker: 7)
            completion.replay = JTIRegistration(jti: "jti-complete", expiresAt: replay.expiresAt)
            guard case .completed(let completed) = try await store.complete(completion) else {
                Issue.record("expected the completion to be stored")
                return
            }
            #expect(try await store.request(authReqID: "req-1") == completed)
            _ = try await store.downloadFaceToken(authReqID: "req-2", keyID: "k1-present")
            var replayed = StoreFixtures.completion("req-2", expected: 2, marker: 8)
            replayed.replay = completion.replay
            await #expect(throws: ReplayedRequest(jti: "jti-complete")) { try await store.complete(replayed) }
            #expect(try await store.request(authReqID: "req-2").state == .pending)
            #expect(try await store.faceToken(subject: "user-1").generation == 2)

            let delivered = JTIRegistration(jti: "jti-details", expiresAt: replay.expiresAt)
            #expect(try await store.markDelivered(authReqID: "req-2", deviceID: "device-1", registering: delivered))
            await #expect(throws: ReplayedRequest(jti: "jti-details")) {
                try await store.markDelivered(authReqID: "req-2", deviceID: "device-1", registering: delivered)
            }
        }
    }
}
