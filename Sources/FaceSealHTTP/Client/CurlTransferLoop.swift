internal import CCurl
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
            shared.queued.append(ticket)
            Self.wake(shared)
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

    /// The thread's body: take new tickets, drop cancelled transfers, let libcurl work, finish what is done, sleep.
    private func run() {
        guard Self.libraryReady, let multi = curl_multi_init() else {
            return drain(failure: .transport("libcurl could not be initialised"), restartable: true)
        }
        _ = fs_curl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, maxConnectionsPerHost)
        var active: [UnsafeMutableRawPointer: CurlTransfer] = [:]
        while true {
            let (incoming, stopping) = shared.withLock { shared in
                shared.multi = UInt(bitPattern: multi)
                defer { shared.queued = [] }
                return (shared.queued, shared.stopping)
            }
            for ticket in incoming {
                guard !ticket.isCancelled else {
                    ticket.finish(.failure(.cancelled))
                    continue
                }
                switch CurlTransfer.make(ticket) {
                case .success(let transfer):
                    guard curl_multi_add_handle(multi, transfer.handle) == CURLM_OK else {
                        ticket.finish(.failure(.transport("libcurl could not start the transfer")))
                        continue
                    }
                    active[transfer.handle] = transfer
                case .failure(let error):
                    ticket.finish(.failure(error))
                }
            }
            for (handle, transfer) in active where stopping || transfer.ticket.isCancelled {
                active[handle] = nil
                curl_multi_remove_handle(multi, handle)
                transfer.ticket.finish(.failure(.cancelled))
            }
            if stopping { break }

            var running: Int32 = 0
            _ = curl_multi_perform(multi, &running)
            var left: Int32 = 0
            while let message = curl_multi_info_read(multi, &left) {
                guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle,
                      let transfer = active.removeValue(forKey: handle) else { continue }
                let code = message.pointee.data.result
                let opened = transfer.connectionsOpened
                curl_multi_remove_handle(multi, handle)
                shared.withLock { $0.connectionsOpened += opened }
                transfer.ticket.finish(transfer.outcome(code))
            }
            // libcurl shortens the wait to its own next timer; an idle client sleeps until it is woken.
            _ = curl_multi_poll(multi, nil, 0, Int32.max, nil)
        }
        shared.withLock { $0.multi = 0 }
        curl_multi_cleanup(multi)
        drain(failure: .cancelled, restartable: false)
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
