import FaceSealCrypto
import FaceSealHTTP
import FaceSealTestSupport
import FaceSealWire
import Foundation
import Synchronization
import Testing
@testable import FaceSealAuthority

/// The authority's side of a graceful restart (docs/PROTOCOL.md, "Restarts"): once draining begins, every long poll
/// answers at once with what it answers at its deadline — no links, `approval_pending` — so the device asks again (and
/// is turned away with 503 + Retry-After until an instance serves it); nothing queued is lost.
@Suite("Graceful shutdown: long polls end at once with a retryable answer")
struct GracefulShutdownTests {
    /// Yields until `count` polls wait for `deviceID` (the poll has registered), for at most 15 s.
    static func waitForWaiters(_ deviceID: String, count: Int = 1) async {
        let started = ContinuousClock.now
        while OutboxNotifier.shared.waiterCount(deviceID: deviceID) < count && ContinuousClock.now - started < .seconds(15) {
            await Task.yield()
        }
    }

    @Test("draining ends a waiting outbox poll and enrolment-token wait at once; polls after it do not wait; links stay queued",
          arguments: StoreBackend.underTest)
    func longPollsEndWhenDraining(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness, policy: TenantPolicy())
            let (phone, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            let phoneID = try await harness.store.deviceKey(keyID: phone.ambientKID).deviceID
            let (laptop, invitation, _) = try await CustodyTests.registerFurther(harness)
            let laptopID = try await harness.store.deviceKey(keyID: laptop.userPresentKID).deviceID
            // The approval request's link is queued for the phone: take it, so the phone's next poll has to wait.
            #expect(try await CustodyTests.approvalRequestIDs(phone).count == 1)

            let started = ContinuousClock.now
            let outboxPoll = Task { try await phone.send(.get, DevicePaths.outbox + "?wait=30") }
            let tokenWait = Task { try await laptop.enrolmentToken(invitation: invitation, wait: 30) }
            await Self.waitForWaiters(phoneID)
            await Self.waitForWaiters(laptopID)
            #expect(!harness.authority.lifecycle.isDraining)

            harness.authority.lifecycle.beginDraining()
            #expect(harness.authority.lifecycle.isDraining)
            let polled = try await outboxPoll.value
            #expect(polled.status == 200)
            #expect(try polled.decode(OutboxResponse.self).links.isEmpty)
            expectDeviceError(try await tokenWait.value, .approvalPending)
            #expect(ContinuousClock.now - started < .seconds(15), "the long polls ran on after the drain began")
            #expect(OutboxNotifier.shared.waiterCount(deviceID: phoneID) == 0)
            #expect(OutboxNotifier.shared.waiterCount(deviceID: laptopID) == 0)

            // A poll that arrives while draining answers at once too; a link queued meanwhile is there, not lost.
            #expect(try await phone.send(.get, DevicePaths.outbox + "?wait=30").decode(OutboxResponse.self).links.isEmpty)
            let request = try await createPendingRequest(harness, "req-after-drain")
            try await harness.authority.announce(link: "link-after-drain", for: request)
            #expect(try await phone.send(.get, DevicePaths.outbox + "?wait=30").decode(OutboxResponse.self).links == ["link-after-drain"])
            expectDeviceError(try await laptop.enrolmentToken(invitation: invitation, wait: 30), .approvalPending)
            #expect(ContinuousClock.now - started < .seconds(15))
        }
    }

    /// `AuthorityService` is what `faceseal serve` runs: it starts on a fresh data directory (master key, admin key,
    /// SQLite database), serves with the bound port as its issuer, and its shutdown drains, stops and closes.
    @Test("the service starts on a fresh data directory, serves, and shuts down: draining, then nothing listens")
    func serviceStartsAndShutsDown() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("faceseal-service-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: directory) }
        let lines = LineCollector()
        let service = try await AuthorityService.start(
            AuthorityService.Settings(dataDirectory: directory.path, server: HTTPServer.Configuration(port: 0), drainTime: .seconds(5)),
            announce: lines.append)
        let client = HTTPClient()
        let discovery = try await client.send(HTTPClientRequest(url: service.baseURL.appendingPathComponent(".well-known/openid-configuration")))
        #expect(discovery.status == .ok)
        #expect(service.authority.configuration.issuer == service.baseURL.absoluteString)
        #expect(lines.all.contains("faceseal: listening on \(service.baseURL.absoluteString)"))
        #expect(lines.all.contains { $0.hasPrefix("faceseal: created the first admin API key") })
        for file in ["master-key", "admin-api-key", "authority.sqlite"] {
            #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent(file).path), "\(file)")
        }

        await service.shutdown()
        #expect(service.authority.lifecycle.isDraining)
        await #expect(throws: HTTPClientError.self) {
            try await client.send(HTTPClientRequest(url: service.baseURL.appendingPathComponent("jwks"), timeout: .seconds(5)))
        }
    }
}

/// The lines a service announced.
final class LineCollector: Sendable {
    private let lines = Mutex<[String]>([])
    var all: [String] { lines.withLock { $0 } }
    @Sendable func append(_ line: String) { lines.withLock { $0.append(line) } }
}
