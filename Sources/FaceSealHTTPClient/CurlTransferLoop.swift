import CCurl
import Foundation
import Synchronization

/// A libcurl multi handle and the thread that drives it. The thread sleeps in `curl_multi_poll` until a socket,
/// one of libcurl's timers or `curl_multi_wakeup` needs it, so waiting on a silent server costs no CPU and never
/// occupies a thread of the Swift concurrency pool. Callers only queue tickets and wake the thread; every libcurl
/// handle is created, used and freed on that thread.
final class CurlTransferLoop: Sendable {
    private struct Shared {
        /// Tickets submitted since the thread last looked.
        var queued: [TransferTicket] = []
        /// The multi handle's address while the thread runs (0 before and after): what `wake()` pokes.
        var multi: UInt = 0
        var started = false
        var stopping = false
        var connectionsOpened = 0
    }

    private let shared = Mutex(Shared())
    private let maxConnectionsPerHost: Int

    /// Whether libcurl's process-wide state is set up; done once, before the first handle.
    private static let libraryReady = fs_curl_global_init() == CURLE_OK

    init(maxConnectionsPerHost: Int) {
        self.maxConnectionsPerHost = min(max(1, maxConnectionsPerHost), 1 << 16)
    }

    /// Queues `ticket` and wakes the thread, starting it on first use.
    func submit(_ ticket: TransferTicket) {
        let start = shared.withLock { shared -> Bool in
            // A non-empty queue has a wake-up pending already: the thread takes the whole queue when it next looks.
            if shared.queued.isEmpty { Self.wake(shared) }
            shared.queued.append(ticket)
            defer { shared.started = true }
            return !shared.started
        }
        guard start else { return }
        let thread = Thread { [self] in run() }
        thread.name = "faceseal-http-client"
        thread.start()
    }

    /// Makes the thread look at its tickets again (one was cancelled).
    func wake() {
        shared.withLock { Self.wake($0) }
    }

    /// Ends the thread once its current round is done; transfers still running fail with `.cancelled`.
    func stop() {
        shared.withLock { shared in
            shared.stopping = true
            Self.wake(shared)
        }
    }

    /// New connections opened by finished transfers.
    var connectionsOpened: Int { shared.withLock { $0.connectionsOpened } }

    /// Under the lock, so the multi handle cannot be freed meanwhile. `curl_multi_wakeup` is documented as
    /// callable from any thread.
    private static func wake(_ shared: borrowing Shared) {
        if let multi = UnsafeMutableRawPointer(bitPattern: shared.multi) { curl_multi_wakeup(multi) }
    }

    /// The thread's body: take new tickets, drop cancelled and expired ones, let libcurl work, finish what is done,
    /// sleep until a socket, a libcurl timer, a waiting ticket's deadline or a wake-up needs the thread.
    private func run() {
        guard Self.libraryReady, let multi = curl_multi_init() else {
            return drain(failure: .transport("libcurl could not be initialised"), restartable: true)
        }
        var transfers = Transfers(multi: multi, admission: HostAdmission(limit: maxConnectionsPerHost))
        while true {
            let (incoming, stopping) = shared.withLock { shared in
                shared.multi = UInt(bitPattern: multi)
                defer { shared.queued = [] }
                return (shared.queued, shared.stopping)
            }
            var now = ContinuousClock.now
            for ticket in incoming { transfers.offer(ticket, now: now) }
            for ticket in transfers.admission.removeWaiting(where: { stopping || $0.isCancelled || $0.deadline <= now }) {
                ticket.finish(.failure(stopping || ticket.isCancelled ? .cancelled : .timeout))
            }
            for (handle, transfer) in transfers.active where stopping || transfer.ticket.isCancelled {
                transfers.end(handle, .failure(.cancelled), now: now)
            }
            if stopping { break }

            var running: Int32 = 0
            _ = curl_multi_perform(multi, &running)
            now = ContinuousClock.now
            var left: Int32 = 0
            while let message = curl_multi_info_read(multi, &left) {
                guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle,
                      let transfer = transfers.active[handle] else { continue }
                let opened = transfer.connectionsOpened
                shared.withLock { $0.connectionsOpened += opened }
                transfers.end(handle, transfer.outcome(message.pointee.data.result), now: now)
            }
            // libcurl shortens the wait to its own next timer; an idle client sleeps until it is woken.
            _ = curl_multi_poll(multi, nil, 0, transfers.waitMilliseconds(now: now), nil)
        }
        shared.withLock { $0.multi = 0 }
        transfers.spare.forEach { curl_easy_cleanup($0) }
        curl_multi_cleanup(multi)
        drain(failure: .cancelled, restartable: false)
    }

    /// The loop thread's own state: the transfers libcurl runs, and the tickets waiting for a connection to their host.
    private struct Transfers {
        let multi: UnsafeMutableRawPointer
        var active: [UnsafeMutableRawPointer: CurlTransfer] = [:]
        /// Easy handles of finished transfers, reset, for the next ones (at most `maxSpare`).
        var spare: [UnsafeMutableRawPointer] = []
        static let maxSpare = 256
        var admission: HostAdmission<TransferTicket>

        /// Starts `ticket`, or queues it behind its host's running transfers.
        mutating func offer(_ ticket: TransferTicket, now: ContinuousClock.Instant) {
            guard admission.offer(ticket, to: ticket.request.address) else { return }
            if !start(ticket, now: now) { release(ticket.request.address, now: now) }
        }

        /// Removes a running transfer, resumes its caller with `result` and gives its slot to the next ticket waiting.
        mutating func end(_ handle: UnsafeMutableRawPointer, _ result: Result<HTTPClientResponse, HTTPClientError>,
                          now: ContinuousClock.Instant) {
            guard let transfer = active.removeValue(forKey: handle) else { return }
            curl_multi_remove_handle(multi, handle)
            transfer.ticket.finish(result)
            if spare.count < Self.maxSpare { spare.append(transfer.recycle()) }
            release(transfer.ticket.request.address, now: now)
        }

        /// How long the thread may sleep: until the earliest deadline of a waiting ticket, else until woken.
        func waitMilliseconds(now: ContinuousClock.Instant) -> Int32 {
            guard let earliest = admission.waiting.map(\.deadline).min() else { return Int32.max }
            return earliest <= now ? 0 : Int32(CurlRequest.milliseconds(earliest - now))
        }

        /// Hands `address`'s freed slot on, past tickets that cannot start (those are finished on the way).
        private mutating func release(_ address: String, now: ContinuousClock.Instant) {
            while let next = admission.release(address), !start(next, now: now) {}
        }

        /// Hands `ticket`, which holds a slot, to libcurl with what is left of its deadline; false (the ticket then
        /// finished) when the deadline passed or libcurl refused it.
        private mutating func start(_ ticket: TransferTicket, now: ContinuousClock.Instant) -> Bool {
            guard !ticket.isCancelled else {
                ticket.finish(.failure(.cancelled))
                return false
            }
            guard ticket.deadline > now else {
                ticket.finish(.failure(.timeout))
                return false
            }
            switch CurlTransfer.make(ticket, timeoutMilliseconds: CurlRequest.milliseconds(ticket.deadline - now), spare: spare.popLast()) {
            case .success(let transfer):
                guard curl_multi_add_handle(multi, transfer.handle) == CURLM_OK else {
                    ticket.finish(.failure(.transport("libcurl could not start the transfer")))
                    return false
                }
                active[transfer.handle] = transfer
                return true
            case .failure(let error):
                ticket.finish(.failure(error))
                return false
            }
        }
    }

    /// Fails every ticket still queued (the loop is gone or never came up); a later submission starts a new
    /// thread when `restartable`.
    private func drain(failure: HTTPClientError, restartable: Bool) {
        let queued = shared.withLock { shared in
            defer {
                shared.queued = []
                if restartable { shared.started = false }
            }
            return shared.queued
        }
        for ticket in queued { ticket.finish(.failure(failure)) }
    }
}
