import Foundation
import Synchronization
import Testing
@testable import FaceSealHTTP

/// Collects log entries so tests can assert on what was (and was not) logged.
final class LogCollector: Sendable {
    let entries = Mutex<[RequestLogger.Entry]>([])
    var logger: RequestLogger { RequestLogger { entry in self.entries.withLock { $0.append(entry) } } }
    var all: [RequestLogger.Entry] { entries.withLock { $0 } }
}

/// Starts a server on an ephemeral loopback port, runs `body`, and always stops the server.
func withServer<T>(
    _ router: Router,
    configuration: HTTPServer.Configuration = HTTPServer.Configuration(),
    logs: LogCollector = LogCollector(),
    _ body: (HTTPServer, URL) async throws -> T
) async throws -> T {
    let server = HTTPServer(configuration: configuration, logger: logs.logger, router: router)
    try server.start()
    let url = try #require(server.baseURL)
    do {
        let result = try await body(server, url)
        await server.stop()
        return result
    } catch {
        await server.stop()
        throw error
    }
}

/// A one-shot gate: `wait()` suspends until `open()` is called (a clockless way to hold a handler).
actor Gate {
    private var isOpen = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func wait() async {
        if isOpen { return }
        await withCheckedContinuation { waiters.append($0) }
    }

    func open() {
        isOpen = true
        for waiter in waiters { waiter.resume() }
        waiters = []
    }
}

/// Counts arrivals and lets everyone through once `count` have arrived: proves handlers overlap.
actor Barrier {
    private let count: Int
    private var arrived = 0
    private var waiters: [CheckedContinuation<Void, Never>] = []

    init(count: Int) { self.count = count }

    func arriveAndWait() async {
        arrived += 1
        if arrived >= count {
            for waiter in waiters { waiter.resume() }
            waiters = []
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }
}

/// A flag one task sets and another reads.
final class Flag: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}

extension URL {
    func path(_ path: String) -> URL { URL(string: absoluteString + path)! }
}
