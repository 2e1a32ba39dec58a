import FaceSealTestSupport
import Foundation
import Testing
@testable import FaceSealAuthority

/// Several authority processes on one PostgreSQL database (SPEC §9): what one queues, the others hear. (Two stores on
/// one database are two processes' worth of connections; the whole path across real processes is in
/// `BenchAuthorityCommandTests`.)
@Suite("Stores sharing one database: queued links are announced to every listener")
struct SharedDatabaseTests {
    /// PostgreSQL when configured, and always under CI (where a missing server must fail, not skip).
    static var shared: [StoreBackend] { StoreBackend.underTest.filter { $0 == .postgres } }

    @Test("a link queued through one store wakes the observer of another; a refused one says nothing",
          arguments: shared)
    func queuedLinkIsHeardElsewhere(backend: StoreBackend) async throws {
        let clock = ManualStoreClock()
        let scratch = try await backend.makeScratch()
        let writer = try await scratch.open(clock: clock)
        let listener = try await scratch.open(clock: clock)
        defer { Task { await writer.close(); await listener.close(); await scratch.destroy() } }
        try await StoreFixtures.seedEnrolled(writer, clock: clock)

        let (heard, heardOne) = AsyncStream.makeStream(of: String.self)
        await listener.observeQueuedLinks { heardOne.yield($0) }
        // A failure guard, not a timing: without a notification the stream would wait forever.
        let guardTask = Task {
            try await Task.sleep(for: .seconds(20))
            heardOne.finish()
        }
        defer { guardTask.cancel() }

        // Refused (no such device): rolled back, so nothing is announced; then a real one.
        await expectStoreError(.notFound(.device, id: "device-9")) {
            try await writer.enqueueLink(OutboxLink(deviceID: "device-9", link: "jws", authReqID: nil, expiresAt: clock.now().addingTimeInterval(60)))
        }
        _ = try await writer.enqueueLink(OutboxLink(deviceID: "device-1", link: "jws-1", authReqID: nil, expiresAt: clock.now().addingTimeInterval(60)))
        var iterator = heard.makeAsyncIterator()
        #expect(await iterator.next() == "device-1")
    }

    @Test("stores in other schemas of the database listen on channels of their own")
    func channelPerSchema() {
        #expect(PostgresListener.channel(schema: nil) == "faceseal_outbox")
        #expect(PostgresListener.channel(schema: "t_1") == "faceseal_outbox_t_1")
        let long = String(repeating: "a", count: 63)
        #expect(PostgresListener.channel(schema: long).utf8.count <= 63)
        #expect(PostgresListener.channel(schema: long) != PostgresListener.channel(schema: String(repeating: "b", count: 63)))
    }
}
