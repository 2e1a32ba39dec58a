import FaceSealCrypto
import FaceSealHTTP
import FaceSealTestSupport
import FaceSealWire
import Foundation
import Testing
@testable import FaceSealAuthority

@Suite("Operations: /healthz, /readyz and /metrics over loopback")
struct HealthAndMetricsTests {
    @Test("/healthz answers 200; /readyz 200 with every check, 503 naming the failed one once draining or the database is gone",
          arguments: StoreBackend.underTest)
    func healthAndReadiness(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            let health = try await harness.get(OperationsPaths.health)
            #expect(health.status.code == 200)
            #expect(health.text == "ok\n")

            let ready = try await harness.get(OperationsPaths.readiness)
            #expect(ready.status.code == 200)
            let json = try JSONValue.parse(ready.body)
            #expect(json["status"]?.stringValue == "ready")
            #expect(json["checks"]?["database"]?.stringValue == "ok")
            #expect(json["checks"]?["migrations"]?.stringValue == "ok")
            #expect(json["checks"]?["keys"]?.stringValue == "ok")
            #expect(json["checks"]?["serving"]?.stringValue == "ok")

            harness.authority.lifecycle.beginDraining()
            let draining = try await harness.get(OperationsPaths.readiness)
            #expect(draining.status.code == 503)
            #expect(try JSONValue.parse(draining.body)["checks"]?["serving"]?.stringValue == "failed")

            await harness.store.close()
            let down = try await harness.get(OperationsPaths.readiness)
            #expect(down.status.code == 503)
            let failed = try JSONValue.parse(down.body)
            #expect(failed["status"]?.stringValue == "not_ready")
            #expect(failed["checks"]?["database"]?.stringValue == "failed")
            #expect(failed["checks"]?["keys"]?.stringValue == "ok")
            #expect(try await harness.get(OperationsPaths.health).status.code == 200)
        }
    }

    @Test("after ceremonies, /metrics counts them by kind and outcome, routes by pattern, and only for an administrator",
          arguments: StoreBackend.underTest)
    func metricsAfterCeremonies(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            try await TestApplication.register(harness)
            let (device, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: TestApplication.clientID)

            // Succeeded: a signing ceremony completed and redeemed.
            let signed = try await TestApplication.start(harness, ceremony: true)
            let completion = try TestDevice.completion(rid: signed, from: try await downloadToken(device, signed), receipt: receipt("body"))
            #expect(try await device.post(DevicePaths.completion(signed), completion).status == 200)
            #expect(try await TestApplication.token(harness, signed).idToken != nil)
            // Denied: a sign-in the user cancelled.
            let cancelled = try await TestApplication.start(harness, ceremony: false)
            #expect(try await device.post(DevicePaths.abort(cancelled), AbortRequest(rid: cancelled, reason: .userCancelled)).status == 204)
            // Stale: a ceremony whose token was rotated by a sign-in completed first.
            let ceremony = try await TestApplication.start(harness, ceremony: true)
            let login = try await TestApplication.start(harness, ceremony: false)
            let ceremonyCompletion = try TestDevice.completion(rid: ceremony, from: try await downloadToken(device, ceremony), receipt: receipt("d"))
            let loginCompletion = try TestDevice.completion(rid: login, from: try await downloadToken(device, login), receipt: nil)
            #expect(try await device.post(DevicePaths.completion(login), loginCompletion).status == 200)
            expectDeviceError(try await device.post(DevicePaths.completion(ceremony), ceremonyCompletion), .staleToken)
            // Expired: a sign-in nobody answered, polled after its lifetime; polled again, it is counted once.
            let unanswered = try await TestApplication.start(harness, ceremony: false)
            harness.clock.advance(by: 3600)
            #expect(try await TestApplication.token(harness, unanswered).error == "expired_token")
            harness.clock.advance(by: 10)
            #expect(try await TestApplication.token(harness, unanswered).error == "expired_token")
            #expect(try await harness.get("/no-such-path").status.code == 404)

            #expect(try await harness.get(OperationsPaths.metrics).status.code == 401)
            let adminKey = try #require(try await harness.authority.bootstrapAdminKey())
            let response = try await harness.get(OperationsPaths.metrics, bearer: adminKey)
            #expect(response.status.code == 200)
            #expect(response.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8")
            let text = response.text

            let finished = "faceseal_requests_finished_total"
            #expect(sample(text, #"\#(finished){kind="sign",outcome="succeeded",reason=""}"#) == 1)
            #expect(sample(text, #"\#(finished){kind="login",outcome="succeeded",reason=""}"#) == 1)
            #expect(sample(text, #"\#(finished){kind="login",outcome="denied",reason="user_cancelled"}"#) == 1)
            #expect(sample(text, #"\#(finished){kind="sign",outcome="stale",reason=""}"#) == 1)
            #expect(sample(text, #"\#(finished){kind="login",outcome="expired",reason=""}"#) == 1)
            #expect(sample(text, #"faceseal_requests_created_total{kind="sign"}"#) == 2)
            #expect(sample(text, #"faceseal_requests_created_total{kind="login"}"#) == 3)
            #expect(sample(text, "faceseal_requests_pending") == 0)
            #expect(sample(text, "faceseal_outbox_waiters") == 0)
            #expect(sample(text, "faceseal_database_errors_total") == 0)

            // Routes by pattern, never by raw path: no request id appears anywhere.
            let completions = #"faceseal_http_requests_total{method="POST",route="/device/v1/requests/:rid/completion",status="200"}"#
            #expect(sample(text, completions) == 2)
            #expect(sample(text, #"faceseal_http_requests_total{method="POST",route="/device/v1/requests/:rid/completion",status="409"}"#) == 1)
            #expect(sample(text, #"faceseal_http_requests_total{method="",route="unmatched",status="404"}"#) == 1)
            #expect(sample(text, #"faceseal_http_requests_total{method="GET",route="/metrics",status="401"}"#) == 1)
            for rid in [signed, cancelled, ceremony, login, unanswered] { #expect(!text.contains(rid)) }
            let bucket = #"faceseal_http_request_duration_seconds_bucket{method="POST",route="/device/v1/requests/:rid/completion",le="+Inf"}"#
            #expect(sample(text, bucket) == 3)
            #expect(sample(text, #"faceseal_http_request_duration_seconds_count{method="POST",route="/backchannel"}"#) == 5)
            #expect(text.contains("# TYPE faceseal_http_request_duration_seconds histogram\n"))
        }
    }

    @Test("the admin listener serves health, readiness and metrics without credentials, and nothing else",
          arguments: StoreBackend.underTest)
    func adminListener(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            let admin = HTTPServer(logger: .disabled, router: harness.authority.makeAdminRouter())
            try admin.start()
            let base = try #require(admin.baseURL).absoluteString
            do {
                let metrics = try await harness.client.send(HTTPClientRequest(url: URL(string: base + OperationsPaths.metrics)!))
                #expect(metrics.status.code == 200)
                #expect(metrics.text.contains("# TYPE faceseal_requests_finished_total counter"))
                #expect(try await harness.client.send(HTTPClientRequest(url: URL(string: base + OperationsPaths.readiness)!)).status.code == 200)
                #expect(try await harness.client.send(HTTPClientRequest(url: URL(string: base + OperationsPaths.health)!)).status.code == 200)
                #expect(try await harness.client.send(HTTPClientRequest(url: URL(string: base + "/manage/v1/tenants")!)).status.code == 404)
                #expect(try await harness.client.send(HTTPClientRequest(url: URL(string: base + CIBAPaths.token)!)).status.code == 404)
            } catch {
                await admin.stop()
                throw error
            }
            await admin.stop()
        }
    }

    @Test("a rate-limit refusal is counted under its limit", arguments: StoreBackend.underTest)
    func rateLimitCounted(backend: StoreBackend) async throws {
        try await withAuthority(backend, configure: { $0.rateLimits.pendingRequestsPerUser = 1 }) { harness in
            try await seedDeviceWorld(harness)
            try await TestApplication.register(harness)
            _ = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: TestApplication.clientID)
            _ = try await TestApplication.start(harness, ceremony: false)
            await #expect(throws: TestDeviceError.self) { _ = try await TestApplication.start(harness, ceremony: false) }
            let text = harness.authority.metrics.exposition(AuthorityMetrics.Gauges(pendingRequests: nil, outboxWaiters: 0, databaseErrors: 0))
            #expect(sample(text, #"faceseal_rate_limited_total{limit="pending_requests"}"#) == 1)
            #expect(sample(text, #"faceseal_rate_limited_total{limit="client_authentication"}"#) == 0)
        }
    }
}
