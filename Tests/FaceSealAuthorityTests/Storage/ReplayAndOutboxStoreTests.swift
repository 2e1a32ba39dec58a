import FaceSealTestSupport
import Foundation
import Testing
@testable import FaceSealAuthority

@Suite("Storage: jti replay cache and link outbox")
struct ReplayAndOutboxStoreTests {
    @Test("a jti is accepted once until it ages out, then purged", arguments: StoreBackend.underTest)
    func jtiReplayCache(backend: StoreBackend) async throws {
        try await withStore(backend) { store, clock in
            let expiry = clock.now().addingTimeInterval(240)
            #expect(try await store.registerJTI("jti-1", expiresAt: expiry))
            #expect(try await store.registerJTI("jti-1", expiresAt: expiry) == false)
            #expect(try await store.registerJTI("jti-2", expiresAt: expiry))

            clock.advance(by: 240)
            #expect(try await store.registerJTI("jti-3", expiresAt: clock.now().addingTimeInterval(240)))
            let remaining = try await store.database.transaction { tx in
                try tx.query("SELECT jti FROM device_jtis ORDER BY jti", []).map { try $0.text("jti") }
            }
            #expect(remaining == ["jti-3"])
            // An aged-out jti is forgotten; the ±120 s iat window is what refuses its replay then.
            #expect(try await store.registerJTI("jti-1", expiresAt: clock.now().addingTimeInterval(240)))

            await expectStoreError(.invalidInput(field: "expiresAt", reason: "already passed")) { try await store.registerJTI("jti-4", expiresAt: clock.now()) }
            await expectStoreError(.invalidInput(field: "jti", reason: "empty")) { try await store.registerJTI("", expiresAt: expiry) }
        }
    }

    @Test("the replay cache's sweep deletes the oldest expired entries, at most 500 each tenth of a second",
          arguments: StoreBackend.underTest)
    func jtiSweepIsBounded(backend: StoreBackend) async throws {
        try await withStore(backend) { store, clock in
            let start = clock.now()
            // 700 entries expiring one millisecond apart from start + 10 s, and one live much longer.
            try await store.database.transaction { tx in
                for index in 0..<700 {
                    try tx.execute("INSERT INTO device_jtis (jti, expires_at) VALUES (?, ?)",
                                   [.text("old-\(index)"), .date(start.addingTimeInterval(10 + Double(index) / 1_000))])
                }
            }
            func left() async throws -> [String] {
                try await store.database.transaction(readOnly: true) { tx in
                    try tx.query("SELECT jti FROM device_jtis WHERE jti LIKE 'old-%'", []).map { try $0.text("jti") }
                }
            }
            clock.advance(by: 20)
            #expect(try await store.registerJTI("new-1", expiresAt: clock.now().addingTimeInterval(240)))
            // The 500 that expired first went; the next registration within the tenth of a second sweeps nothing.
            #expect(Set(try await left()) == Set((500..<700).map { "old-\($0)" }))
            clock.advance(by: 0.05)
            #expect(try await store.registerJTI("new-2", expiresAt: clock.now().addingTimeInterval(240)))
            #expect(try await left().count == 200)
            clock.advance(by: 0.05)
            #expect(try await store.registerJTI("new-3", expiresAt: clock.now().addingTimeInterval(240)))
            #expect(try await left().isEmpty)
            #expect(try await store.registerJTI("new-1", expiresAt: clock.now().addingTimeInterval(240)) == false)
        }
    }

    @Test("concurrent registrations of one jti: exactly one wins", arguments: StoreBackend.underTest)
    func concurrentJTI(backend: StoreBackend) async throws {
        try await withStore(backend) { store, clock in
            let expiry = clock.now().addingTimeInterval(240)
            let results = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<8 { group.addTask { try await store.registerJTI("same", expiresAt: expiry) } }
                var results: [Bool] = []
                for try await result in group { results.append(result) }
                return results
            }
            #expect(results.filter { $0 }.count == 1)
        }
    }

    @Test("the outbox hands out unexpired links in order and forgets acknowledged ones", arguments: StoreBackend.underTest)
    func outbox(backend: StoreBackend) async throws {
        try await withStore(backend) { store, clock in
            try await StoreFixtures.seedEnrolled(store, clock: clock)
            var queued: [OutboxLink] = []
            for index in 0..<3 {
                queued.append(try await store.enqueueLink(OutboxLink(deviceID: "device-1", link: "jws-\(index)", authReqID: "req-\(index)", expiresAt: clock.now().addingTimeInterval(index == 2 ? 30 : 300))))
            }
            #expect(queued.map(\.sequence) == queued.map(\.sequence).sorted())
            #expect(Set(queued.map(\.sequence)).count == 3)
            #expect(try await store.links(deviceID: "device-1", afterSequence: 0, limit: 10) == queued)
            #expect(try await store.links(deviceID: "device-1", afterSequence: queued[0].sequence, limit: 1).map(\.link) == ["jws-1"])

            #expect(try await store.acknowledgeLinks(deviceID: "device-1", throughSequence: queued[0].sequence) == 1)
            clock.advance(by: 31)
            #expect(try await store.links(deviceID: "device-1", afterSequence: 0, limit: 10).map(\.link) == ["jws-1"])
            #expect(try await store.acknowledgeLinks(deviceID: "device-1", throughSequence: 0) == 1)
            #expect(try await store.links(deviceID: "device-2", afterSequence: 0, limit: 10).isEmpty)

            await expectStoreError(.notFound(.device, id: "device-9")) {
                try await store.enqueueLink(OutboxLink(deviceID: "device-9", link: "jws", authReqID: nil, expiresAt: clock.now().addingTimeInterval(60)))
            }
            await expectStoreError(.invalidInput(field: "link", reason: "empty")) {
                try await store.enqueueLink(OutboxLink(deviceID: "device-1", link: "", authReqID: nil, expiresAt: clock.now().addingTimeInterval(60)))
            }
        }
    }
}
