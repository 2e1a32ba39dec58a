import CCurl
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A libcurl multi handle and the thread that drives it. The thread sleeps in `epoll_wait` on the sockets libcurl
/// reports (`curl_multi_socket_action`), its next timer and an eventfd that callers poke, so waiting on a silent server
/// costs no CPU and never occupies a thread of the Swift concurrency pool, and a wake-up costs only the sockets that
/// are ready (libcurl 7.88's `curl_multi_perform` and `curl_multi_poll` visit every running transfer each time).
/// Callers only queue tickets and wake the thread; every libcurl handle is created, used and freed on that thread.
final class CurlTransferLoop: Sendable {
    private struct Shared {
        /// Tickets submitted since the thread last looked.
        var queued: [TransferTicket] = []
        /// A caller gave up since the thread last looked: it must check its transfers.
        var cancellations = false
        /// The thread is about to sleep, or sleeps, in `epoll_wait` with nothing left to do: the next caller pokes the
        /// eventfd (and clears this). While the thread is awake nobody pokes: it looks again before it sleeps.
        var asleep = false
        var started = false
        var stopping = false
    }

    private let shared = Mutex(Shared())
    private let maxConnectionsPerHost: Int
    /// Whether the client may connect to public addresses only (`Destinations.publicOnly`): an option of every easy handle.
    private let publicAddressesOnly: Bool
    /// What callers poke to wake the thread: created with the loop and closed with it, so it is valid whenever a
    /// caller holds the loop (-1 when the kernel refused one: the loop then fails every request).
    private let wakeDescriptor: Int32
    private let opened = Atomic<Int>(0)

    /// Whether libcurl's process-wide state is set up; done once, before the first handle.
    private static let libraryReady = fs_curl_global_init() == CURLE_OK

    init(maxConnectionsPerHost: Int, publicAddressesOnly: Bool) {
        self.maxConnectionsPerHost = min(max(1, maxConnectionsPerHost), 1 << 16)
        self.publicAddressesOnly = publicAddressesOnly
        wakeDescriptor = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
    }

    deinit {
        if wakeDescriptor >= 0 { close(wakeDescriptor) }
    }

    /// Queues `ticket` and wakes the thread, starting it on first use.
    func submit(_ ticket: TransferTicket) {
        let (start, poke) = shared.withLock { shared -> (Bool, Bool) in
            shared.queued.append(ticket)
            defer { shared.started = true }
            return (!shared.started, Self.takePoke(&shared))
        }
        if poke { self.poke() }
        guard start else { return }
        let thread = Thread { [self] in run() }
        thread.name = "faceseal-http-client"
        thread.start()
    }

    /// Makes the thread look at its tickets again (one was cancelled).
    func wake() {
        if shared.withLock({ shared in
            shared.cancellations = true
            return Self.takePoke(&shared)
        }) { poke() }
    }

    /// Ends the thread once its current round is done; transfers still running fail with `.cancelled`.
    func stop() {
        if shared.withLock({ shared in
            shared.stopping = true
            return Self.takePoke(&shared)
        }) { poke() }
    }

    /// New connections opened by finished transfers.
    var connectionsOpened: Int { opened.load(ordering: .relaxed) }

    /// Whether this caller must poke the eventfd: only the first since the thread went to sleep (the write happens
    /// outside the lock, which callers otherwise contend for).
    private static func takePoke(_ shared: inout Shared) -> Bool {
        defer { shared.asleep = false }
        return shared.asleep
    }

    private func poke() {
        if wakeDescriptor >= 0 { _ = eventfd_write(wakeDescriptor, 1) }
    }

    /// The thread's body: take new tickets, drop cancelled and expired ones, let libcurl act on what is due, finish
    /// what is done, sleep until a socket, a libcurl timer, a waiting ticket's deadline or a wake-up needs the thread.
    private func run() {
        let epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        defer { if epoll >= 0 { close(epoll) } }
        guard Self.libraryReady, wakeDescriptor >= 0, epoll >= 0, fs_epoll_add_readable(epoll, wakeDescriptor) == 0,
              let multi = curl_multi_init() else {
            return drain(failure: .transport("libcurl could not be initialised"), restartable: true)
        }
        let sockets = UnsafeMutablePointer<fs_curl_socket_set>.allocate(capacity: 1)
        sockets.initialize(to: fs_curl_socket_set(multi: multi, epoll: epoll, idle: nil, idle_capacity: 0))
        defer {
            fs_curl_socket_set_free(sockets)
            sockets.deallocate()
        }
        // libcurl keeps 4 idle connections per transfer it runs at that moment, so when a burst ended it closed the
        // connections the next burst then opened anew: keep as many as may run to one host.
        guard fs_curl_multi_use_socket_set(multi, sockets) == CURLM_OK,
              fs_curl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, maxConnectionsPerHost) == CURLM_OK else {
            curl_multi_cleanup(multi)
            return drain(failure: .transport("libcurl could not be initialised"), restartable: true)
        }
        var transfers = Transfers(multi: multi, publicAddressesOnly: publicAddressesOnly, admission: HostAdmission(limit: maxConnectionsPerHost))
        let capacity = 64
        var ready = [Int32](repeating: 0, count: capacity), events = [Int32](repeating: 0, count: capacity)
        var running: Int32 = 0
        while true {
            let (incoming, cancellations, stopping) = shared.withLock { shared in
                defer {
                    shared.queued = []
                    shared.cancellations = false
                    shared.asleep = false
                }
                return (shared.queued, shared.cancellations, shared.stopping)
            }
            var now = ContinuousClock.now
            for ticket in incoming { transfers.offer(ticket, now: now) }
            if transfers.admission.hasWaiting || stopping {
                for ticket in transfers.admission.removeWaiting(where: { stopping || $0.isCancelled || $0.deadline <= now }) {
                    ticket.finish(.failure(stopping || ticket.isCancelled ? .cancelled : .timeout))
                }
            }
            if cancellations || stopping {
                for (handle, transfer) in transfers.active where stopping || transfer.ticket?.isCancelled != false {
                    transfers.end(handle, now: now) { _, _ in .failure(.cancelled) }
                }
            }
            if stopping { break }

            // libcurl's timers (a new transfer's start among them) first, then sleep until a socket, the next timer,
            // a waiting ticket's deadline or a poke. The timer is read after the finished transfers handed their slots
            // on: a transfer started there is due at once, so the thread must not sleep past it.
            var timer = -1
            if curl_multi_timeout(multi, &timer) == CURLM_OK, timer == 0 {
                _ = curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &running)
            }
            now = ContinuousClock.now
            finishDone(&transfers, now: now)
            if curl_multi_timeout(multi, &timer) != CURLM_OK { timer = -1 }
            // Sleep only when nothing came in meanwhile; from here on a caller pokes.
            let idle = shared.withLock { shared in
                guard shared.queued.isEmpty, !shared.cancellations, !shared.stopping else { return false }
                shared.asleep = true
                return true
            }
            let wait = idle ? Self.earlier(timer, transfers.waitMilliseconds(now: now)) : 0
            let count = fs_curl_socket_set_wait(sockets, wait, &ready, &events, Int32(capacity))
            for index in 0..<Int(max(0, count)) {
                if ready[index] == wakeDescriptor {
                    var value: eventfd_t = 0
                    _ = eventfd_read(wakeDescriptor, &value)
                } else {
                    _ = curl_multi_socket_action(multi, ready[index], events[index], &running)
                }
            }
            finishDone(&transfers, now: ContinuousClock.now)
        }
        transfers.spare = []
        curl_multi_cleanup(multi)
        drain(failure: .cancelled, restartable: false)
    }

    /// Ends every transfer libcurl reports done.
    private func finishDone(_ transfers: inout Transfers, now: ContinuousClock.Instant) {
        var left: Int32 = 0
        while let message = curl_multi_info_read(transfers.multi, &left) {
            guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle,
                  let transfer = transfers.active[handle] else { continue }
            opened.add(transfer.connectionsOpened, ordering: .relaxed)
            let code = message.pointee.data.result
            transfers.end(handle, now: now) { $0.outcome(code, of: $1) }
        }
    }

    /// The shorter of two waits in milliseconds, libcurl's timer (-1: none) and a waiting ticket's deadline
    /// (`Int32.max`: none); -1 (sleep until woken) when neither.
    static func earlier(_ curlTimer: Int, _ deadline: Int32) -> Int32 {
        let timer = curlTimer < 0 ? nil : Int32(clamping: curlTimer)
        let waiting = deadline == Int32.max ? nil : deadline
        guard let timer else { return waiting ?? -1 }
        return min(timer, waiting ?? timer)
    }

    /// The loop thread's own state: the transfers libcurl runs, and the tickets waiting for a connection to their host.
    private struct Transfers {
        let multi: UnsafeMutableRawPointer
        let publicAddressesOnly: Bool
        var active: [UnsafeMutableRawPointer: CurlTransfer] = [:]
        /// Easy handles of finished transfers, for the next ones (at most `maxSpare`).
        var spare: [CurlTransfer] = []
        static let maxSpare = 256
        var admission: HostAdmission<TransferTicket>

        /// Starts `ticket`, or queues it behind its host's running transfers.
        mutating func offer(_ ticket: TransferTicket, now: ContinuousClock.Instant) {
            guard admission.offer(ticket, to: ticket.request.address) else { return }
            if !start(ticket, now: now) { release(ticket.request.address, now: now) }
        }

        /// Removes a running transfer, resumes its caller with what `result` makes of the transfer and its request,
        /// and gives its slot to the next ticket waiting.
        mutating func end(_ handle: UnsafeMutableRawPointer, now: ContinuousClock.Instant,
                          _ result: (CurlTransfer, CurlRequest) -> Result<HTTPClientResponse, HTTPClientError>) {
            guard let transfer = active.removeValue(forKey: handle) else { return }
            curl_multi_remove_handle(multi, handle)
            guard let ticket = transfer.ticket else { return }
            ticket.finish(result(transfer, ticket.request))
            keep(transfer)
            release(ticket.request.address, now: now)
        }

        /// Takes a handle back once its request is over: emptied of it, for the next one.
        private mutating func keep(_ transfer: CurlTransfer) {
            transfer.finish()
            if spare.count < Self.maxSpare { spare.append(transfer) }
        }

        /// How long the thread may sleep: until the earliest deadline of a waiting ticket, else until woken.
        func waitMilliseconds(now: ContinuousClock.Instant) -> Int32 {
            guard admission.hasWaiting, let earliest = admission.waiting.map(\.deadline).min() else { return Int32.max }
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
            guard let transfer = spare.popLast() ?? CurlTransfer.make(publicAddressesOnly: publicAddressesOnly) else {
                ticket.finish(.failure(.transport("libcurl could not create a transfer")))
                return false
            }
            var failure = transfer.start(ticket, timeoutMilliseconds: CurlRequest.milliseconds(ticket.deadline - now))
            if failure == nil, curl_multi_add_handle(multi, transfer.handle) != CURLM_OK {
                failure = .transport("libcurl could not start the transfer")
            }
            if let failure {
                keep(transfer)
                ticket.finish(.failure(failure))
                return false
            }
            active[transfer.handle] = transfer
            return true
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
