import FaceSealCrypto
import FaceSealHTTP
import FaceSealTestSupport
import FaceSealWire
import Foundation
import Synchronization
import Testing
@testable import FaceSealAuthority

/// A tenant's webhook receiver on loopback: answers each POST with the next scripted status (the last one repeats)
/// and hands every request it got to the test.
final class WebhookReceiver: Sendable {
    private let statuses: Mutex<[Int]>
    private let received = Mutex<[HTTPRequest]>([])
    private let arrivals: AsyncStream<HTTPRequest>
    private let arrival: AsyncStream<HTTPRequest>.Continuation
    let server: HTTPServer

    init(answering statuses: [Int]) throws {
        self.statuses = Mutex(statuses)
        (arrivals, arrival) = AsyncStream.makeStream(of: HTTPRequest.self)
        let box = Mutex<(@Sendable (HTTPRequest) -> HTTPStatus)?>(nil)
        server = HTTPServer(logger: .disabled) { request in
            HTTPResponse(status: box.withLock { $0 }?(request) ?? .internalServerError)
        }
        box.withLock { $0 = { [self] request in answer(request) } }
        try server.start()
    }

    private func answer(_ request: HTTPRequest) -> HTTPStatus {
        received.withLock { $0.append(request) }
        arrival.yield(request)
        return HTTPStatus(integerLiteral: statuses.withLock { $0.count > 1 ? $0.removeFirst() : $0[0] })
    }

    var url: String { server.baseURL!.absoluteString + "/hooks/faceseal" }
    var requests: [HTTPRequest] { received.withLock { $0 } }

    /// The next POST that arrives (or one that arrived already).
    func next() async -> HTTPRequest? {
        for await request in arrivals { return request }
        return nil
    }

    func stop() async {
        arrival.finish()
        await server.stop()
    }
}

/// Records the waits between attempts instead of sleeping.
final class RecordedSleeps: Sendable {
    private let waits = Mutex<[Duration]>([])
    var all: [Duration] { waits.withLock { $0 } }
    var sleep: @Sendable (Duration) async throws -> Void { { [self] wait in waits.withLock { $0.append(wait) } } }
}

/// The receiver side of PROTOCOL.md's verification: HMAC-SHA256 over `<t>.<body>` with the secret's ASCII bytes,
/// compared in constant time, and a timestamp within five minutes.
func verifyWebhook(_ request: HTTPRequest, secret: String, now: Int64) -> Bool {
    guard let header = request.headers["FaceSeal-Signature"] else { return false }
    var timestamp: Int64?
    var signatures: [String] = []
    for part in header.split(separator: ",") {
        let pair = part.split(separator: "=", maxSplits: 1).map(String.init)
        guard pair.count == 2 else { return false }
        if pair[0] == "t" { timestamp = Int64(pair[1]) }
        if pair[0] == "v1" { signatures.append(pair[1]) }
    }
    guard let timestamp, abs(now - timestamp) <= 300 else { return false }
    let expected = HMAC<SHA256>.authenticationCode(for: Array("\(timestamp).".utf8) + request.body, using: SymmetricKey(data: Array(secret.utf8)))
    let hex = Array(expected.bytes.map { String(format: "%02x", $0) }.joined().utf8)
    return signatures.contains { constantTimeEquals(Array($0.utf8), hex) }
}

@Suite("Webhook push (SPEC §4.6): registered by the tenant, signed, retried, audited, counted")
struct WebhookPushTests {
    @Test("a registered webhook receives the link, signed; the device approves from the link it carried",
          arguments: StoreBackend.underTest)
    func deviceApprovesFromTheWebhookLink(backend: StoreBackend) async throws {
        let receiver = try WebhookReceiver(answering: [200])
        let lines = LogLines()
        try await withManagement(backend, configure: {
            $0.log = lines.log(format: .text)
        }) { admin in
            let harness = admin.harness
            try await seedDeviceWorld(harness)
            try await TestApplication.register(harness)
            let (device, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: TestApplication.clientID)
            let tenantKey = try await admin.createTenantKey("acme").key
            let tenant = admin.with(key: tenantKey)

            let registered = try await tenant.expect(200, .put, "/tenants/acme/webhook", body: #"{"url":"\#(receiver.url)"}"#)
            let secret = try #require(registered["secret"]?.stringValue)
            #expect(secret.hasPrefix("whsec_") && secret.utf8.count == 49)
            let shown = try await tenant.expect(200, .get, "/tenants/acme/webhook")
            #expect(shown["url"]?.stringValue == receiver.url)
            #expect(shown["secret"] == nil)
            #expect(!(try await tenant.send(.get, "/tenants/acme/webhook")).text.contains(secret))

            let rid = try await TestApplication.start(harness, ceremony: true)
            let pushed = try #require(await receiver.next())
            #expect(pushed.method == .post)
            #expect(verifyWebhook(pushed, secret: secret, now: device.now))
            #expect(!verifyWebhook(pushed, secret: "whsec_" + String(repeating: "A", count: 43), now: device.now))
            var tampered = pushed
            tampered.body[tampered.body.count - 2] ^= 1
            #expect(!verifyWebhook(tampered, secret: secret, now: device.now))
            #expect(!verifyWebhook(pushed, secret: secret, now: device.now + 301))

            let payload = try JSONValue.parse(pushed.body)
            #expect(payload["sub"]?.stringValue == "user-1")
            #expect(payload["client_id"]?.stringValue == TestApplication.clientID)
            #expect(payload["kind"]?.stringValue == "ceremony")
            let enrolled = try await harness.store.enrolments(subject: "user-1").map(\.deviceID)
            #expect(payload["device_ids"]?.arrayValue?.compactMap(\.stringValue) == enrolled)
            #expect(pushed.headers["FaceSeal-Delivery"] == payload["delivery_id"]?.stringValue)
            let carried = try #require(payload["link"]?.stringValue)
            #expect(payload["universal_link"]?.stringValue == harness.authority.issuer + "/l/" + carried)

            // The device acts on the pushed link alone: verify it, read the request, approve.
            let claims = try LinkSignature.parse(Array(carried.utf8)).verify(with: device.authorityKey, now: device.now)
            #expect(claims.rid == rid)
            let details = try await device.send(.get, DevicePaths.request(claims.rid)).decode(RequestDetails.self)
            #expect(details.nonce == claims.nonce)
            let completion = try TestDevice.completion(rid: claims.rid, from: try await downloadToken(device, claims.rid), receipt: receipt("x"))
            #expect(try await device.post(DevicePaths.completion(claims.rid), completion).status == 200)
            #expect(try await TestApplication.token(harness, rid).idToken != nil)

            await harness.authority.webhookSender.finishDeliveries()
            let audit = try await tenant.expect(200, .get, "/tenants/acme/audit")
            let kinds = audit["events"]?.arrayValue?.compactMap { $0["kind"]?.stringValue } ?? []
            #expect(kinds.contains("webhook.registered"))
            #expect(kinds.contains("webhook.delivered"))
            let metrics = harness.authority.metrics.exposition(AuthorityMetrics.Gauges(pendingRequests: nil, outboxWaiters: 0, databaseErrors: 0))
            #expect(sample(metrics, #"faceseal_webhook_deliveries_total{outcome="delivered"}"#) == 1)
            // The delivery's event carries the id of the backchannel request that caused it; no secret is logged.
            #expect(lines.all.contains { $0.contains(" info webhook.delivered rid=") && $0.contains("outcome=delivered attempts=1 status=200") })
            #expect(!lines.all.joined().contains(secret))
            #expect(!lines.all.joined().contains(carried))

            try await tenant.expect(204, .delete, "/tenants/acme/webhook")
            try await tenant.expectError(404, "not_found", .get, "/tenants/acme/webhook")
        }
        await receiver.stop()
    }

    @Test("failures are retried with doubling waits on the injected clock, then delivered; a spent budget is audited as failed",
          arguments: StoreBackend.underTest)
    func retriesWithBackoff(backend: StoreBackend) async throws {
        let flaky = try WebhookReceiver(answering: [503, 500, 200])
        let sleeps = RecordedSleeps()
        try await withManagement(backend, configure: {
            $0.webhooks = WebhookPolicy(maxAttempts: 3, sleep: sleeps.sleep)
        }) { admin in
            let harness = admin.harness
            try await seedDeviceWorld(harness)
            try await TestApplication.register(harness)
            _ = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: TestApplication.clientID)
            try await admin.expect(200, .put, "/tenants/acme/webhook", body: #"{"url":"\#(flaky.url)"}"#)
            _ = try await TestApplication.start(harness, ceremony: false)
            await harness.authority.webhookSender.finishDeliveries()
            #expect(flaky.requests.count == 3)
            #expect(Set(flaky.requests.map { $0.headers["FaceSeal-Delivery"] ?? "" }).count == 1)
            #expect(sleeps.all == [.seconds(1), .seconds(2)])

            // Now the endpoint always fails: three attempts, then `webhook.failed`.
            let down = try WebhookReceiver(answering: [500])
            try await admin.expect(200, .put, "/tenants/acme/webhook", body: #"{"url":"\#(down.url)"}"#)
            _ = try await TestApplication.start(harness, ceremony: false)
            await harness.authority.webhookSender.finishDeliveries()
            #expect(down.requests.count == 3)
            await down.stop()

            let metrics = harness.authority.metrics.exposition(AuthorityMetrics.Gauges(pendingRequests: nil, outboxWaiters: 0, databaseErrors: 0))
            #expect(sample(metrics, #"faceseal_webhook_deliveries_total{outcome="delivered"}"#) == 1)
            #expect(sample(metrics, #"faceseal_webhook_deliveries_total{outcome="retried"}"#) == 4)
            #expect(sample(metrics, #"faceseal_webhook_deliveries_total{outcome="failed"}"#) == 1)
            let events = try await harness.store.auditEvents(tenantID: "acme", beforeSequence: nil, limit: 50)
            let failed = try #require(events.first { $0.kind == "webhook.failed" })
            let detail = try JSONValue.parse(Array(failed.detailJSON.utf8))
            #expect(detail["outcome"]?.stringValue == "attempts_exhausted")
            #expect(detail["attempts"]?.doubleValue == 3)
            #expect(events.contains { $0.kind == "webhook.delivered" })
        }
        await flaky.stop()
    }

    @Test("under public-only callback destinations (the default) an endpoint on an internal address is never contacted, and that is audited",
          arguments: StoreBackend.underTest)
    func internalDestinationsAreNeverContacted(backend: StoreBackend) async throws {
        let receiver = try WebhookReceiver(answering: [200])
        try await withManagement(backend, configure: {
            $0.callbackDestinations = .publicOnly
        }) { admin in
            let harness = admin.harness
            #expect(harness.authority.notificationClient.configuration.destinations == .publicOnly)
            try await seedDeviceWorld(harness)
            try await TestApplication.register(harness)
            _ = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: TestApplication.clientID)
            // The management API refuses this endpoint under public-only destinations (below); one stored while
            // the authority ran with `any` is still never contacted once it runs with `public`.
            try await admin.expectError(400, "invalid_field", .put, "/tenants/acme/webhook", body: #"{"url":"\#(receiver.url)"}"#)
            let sealed = try WebhookSecretSeal.seal(SecretBytes(Array("whsec_test".utf8)), tenantID: "acme",
                                                    key: harness.authority.keys.webhookSecretWrappingKey)
            _ = try await harness.store.setWebhook(WebhookRecord(tenantID: "acme", url: receiver.url, encryptedSecret: sealed))
            _ = try await TestApplication.start(harness, ceremony: false)
            await harness.authority.webhookSender.finishDeliveries()
            #expect(receiver.requests.isEmpty)
            let events = try await harness.store.auditEvents(tenantID: "acme", beforeSequence: nil, limit: 50)
            let failed = try #require(events.first { $0.kind == "webhook.failed" })
            let detail = try JSONValue.parse(Array(failed.detailJSON.utf8))
            #expect(detail["outcome"]?.stringValue == "destination_not_public")
            #expect(detail["attempts"]?.doubleValue == 1)
        }
        await receiver.stop()
    }

    @Test("a webhook endpoint is https on a public host under public-only destinations; http only on loopback under any",
          arguments: StoreBackend.underTest)
    func endpointPolicy(backend: StoreBackend) async throws {
        try await withManagement(backend, configure: { $0.callbackDestinations = .any }) { admin in
            try await admin.createTenant("acme")
            for url in ["http://hooks.example/x", "http://10.0.0.1/x", "https://user:pw@hooks.example/x", "ftp://hooks.example/x",
                        "hooks.example/x", "https://hooks.example/x#f"] {
                try await admin.expectError(400, "invalid_field", .put, "/tenants/acme/webhook", body: #"{"url":"\#(url)"}"#)
            }
            for url in ["http://127.0.0.1:9/hook", "https://localhost/hook", "https://10.0.0.1/hook"] {
                try await admin.expect(200, .put, "/tenants/acme/webhook", body: #"{"url":"\#(url)"}"#)
            }
        }
        try await withManagement(backend, configure: { $0.callbackDestinations = .publicOnly }) { admin in
            try await admin.createTenant("acme")
            for url in ["http://127.0.0.1:9/hook", "https://127.0.0.1/hook", "https://127.1/hook", "https://localhost/hook",
                        "https://api.localhost/hook", "https://[::1]/hook", "https://10.0.0.1/hook", "https://169.254.169.254/latest",
                        "https://[fd00::1]/hook", "https://[::ffff:192.168.1.1]/hook", "http://hooks.example/x",
                        "https://user:pw@hooks.example/x", "ftp://hooks.example/x", "hooks.example/x", "https://hooks.example/x#f"] {
                try await admin.expectError(400, "invalid_field", .put, "/tenants/acme/webhook", body: #"{"url":"\#(url)"}"#)
            }
            try await admin.expectError(404, "not_found", .get, "/tenants/acme/webhook")
            let registered = try await admin.expect(200, .put, "/tenants/acme/webhook", body: #"{"url":"https://hooks.example/faceseal"}"#)
            #expect(registered["url"]?.stringValue == "https://hooks.example/faceseal")
            // Re-registering replaces the secret.
            let again = try await admin.expect(200, .put, "/tenants/acme/webhook", body: #"{"url":"https://hooks.example/faceseal"}"#)
            #expect(again["secret"]?.stringValue != registered["secret"]?.stringValue)
            // At rest the secret is sealed: its bytes are not in the row.
            let row = try #require(try await admin.harness.store.webhook(tenantID: "acme"))
            let secret = try #require(again["secret"]?.stringValue)
            #expect(!String(decoding: row.encryptedSecret, as: UTF8.self).contains(secret))
            // Another tenant's key cannot read or replace it.
            try await admin.createTenant("other")
            let otherKey = try await admin.createTenantKey("other").key
            try await admin.with(key: otherKey).expectError(403, "forbidden", .get, "/tenants/acme/webhook")
            try await admin.with(key: otherKey).expectError(403, "forbidden", .put, "/tenants/acme/webhook",
                                                          body: #"{"url":"https://evil.example/x"}"#)
        }
    }
}
