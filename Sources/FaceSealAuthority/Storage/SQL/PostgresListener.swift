import CLibPQ
import FaceSealCrypto
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Hands the notifications of one PostgreSQL channel (`LISTEN`) to handlers, on a connection and a thread of its own:
/// how a link queued by one authority process wakes the long polls waiting in the others (SPEC §9, several processes
/// on one database). The thread sleeps in `poll` on the connection's socket and on a pipe that `stop()` writes to, so
/// it costs nothing while nothing is announced. A lost connection is opened again (at most once a second) and listens
/// again; a notification sent meanwhile is lost, which costs a long poll its wake-up, never a link: the poll answers at
/// its deadline and the device's next poll reads the store.
final class PostgresListener: Sendable {
    private struct State {
        var handlers: [@Sendable (String) -> Void] = []
        var started = false
        var stopping = false
        var listening = false
        var ready: [CheckedContinuation<Void, Never>] = []
    }

    /// The channel, a quoted identifier of `[a-z0-9_]` (at most 63 bytes).
    let channel: String
    private let url: String
    private let state = Mutex(State())
    private let wakeRead: Int32
    private let wakeWrite: Int32

    init(url: String, channel: String) {
        self.url = url
        self.channel = channel
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) == 0 {
            for descriptor in fds { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        }
        wakeRead = fds[0]
        wakeWrite = fds[1]
    }

    deinit {
        if wakeRead >= 0 { close(wakeRead) }
        if wakeWrite >= 0 { close(wakeWrite) }
    }

    /// The channel of a store in `schema`: one per schema, so stores in other schemas of the database are not woken.
    static func channel(schema: String?) -> String {
        guard let schema else { return "faceseal_outbox" }
        let plain = "faceseal_outbox_" + schema
        if plain.utf8.count <= 63 { return plain }
        return "faceseal_outbox_" + SHA256.hash(data: Array(schema.utf8)).bytes.prefix(16).map { String(format: "%02x", $0) }.joined()
    }

    /// Calls `handler` with the payload of every notification from now on; returns once the channel is listened to
    /// (or the listener stopped). The first handler starts the thread.
    func add(_ handler: @escaping @Sendable (String) -> Void) async {
        let start = state.withLock { state -> Bool in
            guard !state.stopping, wakeRead >= 0 else { return false }
            state.handlers.append(handler)
            defer { state.started = true }
            return !state.started
        }
        if start {
            let thread = Thread { [self] in run() }
            thread.name = "faceseal-store-listen"
            thread.start()
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if state.listening || state.stopping || !state.started { return true }
                state.ready.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Records whether the thread listens; answers the callers waiting for that.
    private func setListening(_ listening: Bool) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.listening = listening
            guard listening || state.stopping else { return [] }
            defer { state.ready = [] }
            return state.ready
        }
        waiters.forEach { $0.resume() }
    }

    /// Ends the thread and closes its connection; callers still waiting in `add` return.
    func stop() {
        let (running, waiters) = state.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
            state.stopping = true
            defer { state.ready = [] }
            return (state.started, state.ready)
        }
        waiters.forEach { $0.resume() }
        if running {
            var byte: UInt8 = 1
            _ = write(wakeWrite, &byte, 1)
        }
    }

    private var isStopping: Bool { state.withLock { $0.stopping } }

    private func run() {
        var connection: OpaquePointer?
        defer {
            if let connection { PQfinish(connection) }
            setListening(false)
        }
        while !isStopping {
            guard let open = connection, PQstatus(open) == CONNECTION_OK else {
                if let connection { PQfinish(connection) }
                setListening(false)
                connection = listeningConnection()
                if connection != nil {
                    setListening(true)
                } else if waitForStop(milliseconds: 1000) {
                    return
                }
                continue
            }
            var descriptors = [pollfd(fd: PQsocket(open), events: Int16(POLLIN), revents: 0),
                               pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
            guard poll(&descriptors, 2, -1) >= 0 || errno == EINTR else { return }
            if descriptors[1].revents != 0 { return }
            guard PQconsumeInput(open) == 1 else {
                PQfinish(open)
                connection = nil
                continue
            }
            while let notification = PQnotifies(open) {
                let payload = String(cString: notification.pointee.extra)
                PQfreemem(notification)
                for handler in state.withLock({ $0.handlers }) { handler(payload) }
            }
        }
    }

    /// True when `stop()` was called within `milliseconds`.
    private func waitForStop(milliseconds: Int32) -> Bool {
        var descriptor = pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, milliseconds) > 0 || isStopping
    }

    /// A new connection that listens on the channel, or nil when the server cannot be reached.
    private func listeningConnection() -> OpaquePointer? {
        guard let connection = PQconnectdb(url) else { return nil }
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
        guard PQstatus(connection) == CONNECTION_OK, let result = PQexec(connection, "LISTEN \"\(channel)\"") else {
            PQfinish(connection)
            return nil
        }
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_COMMAND_OK else {
            PQfinish(connection)
            return nil
        }
        return connection
    }
}
