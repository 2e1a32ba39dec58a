import CMicroHTTPD
import Synchronization

/// The state of one request, shared by libmicrohttpd's polling thread (callbacks) and the task that
/// runs its handler. Created by the URI-log callback, released by the completion callback.
final class RequestContext: Sendable {
    enum Phase {
        /// Request line seen; the access handler has not been called yet.
        case headers
        /// Body chunks arriving.
        case receiving
        /// Handler running on the polling thread, inside the access handler, until its first suspension: the
        /// connection is not suspended, so a response that arrives now is queued by that same call.
        case starting
        /// Handler running after a suspension point; the connection is suspended. Its address (an
        /// `MHD_Connection *`) is kept to resume it from the handler's task.
        case handling(connection: UInt)
        /// Handler finished and the connection was resumed: queue this response on the next call.
        case responded(HTTPResponse, errorType: String?)
        /// A forced shutdown took the request over; answer 503.
        case abandoned
        /// A response was queued; nothing more to do.
        case done
    }

    struct State {
        var phase = Phase.headers
        var method = ""
        var body: [UInt8] = []
        /// The task running the handler, so a stop that cancels handlers can reach it.
        var handlerTask: Task<Void, Never>?
        /// Cancellation asked for before the task was recorded.
        var cancelRequested = false
    }

    let id = RequestID.make()
    /// The request target exactly as received (path and query, still percent-encoded).
    let target: String
    let started = ContinuousClock.now
    let state = Mutex(State())

    init(target: String) { self.target = target }

    /// The path for the log: the target without its query.
    var logPath: String {
        guard let query = target.utf8.firstIndex(of: UInt8(ascii: "?")) else { return target }
        return String(target[..<query])
    }

    /// Records the handler's response and, if the connection is suspended, resumes it so the polling thread queues
    /// the response (a handler that finished before its first suspension leaves it to the access handler that started
    /// it). Does nothing if a forced shutdown already answered the request. The caller counts itself in
    /// `ServerCore.finishing` around this call.
    func finish(_ response: HTTPResponse, errorType: String?) {
        let suspended = state.withLock { state -> UInt? in
            state.handlerTask = nil
            switch state.phase {
            case .starting:
                state.phase = .responded(response, errorType: errorType)
                return nil
            case .handling(let connection):
                state.phase = .responded(response, errorType: errorType)
                return connection
            case .headers, .receiving, .responded, .abandoned, .done:
                return nil
            }
        }
        // After the lock: the polling thread this wakes takes it at once to queue the response. The phase, changed
        // under the lock, keeps a forced shutdown from resuming the connection again, and the shutdown waits for
        // every finish under way before it stops the daemon (`ServerCore.abandonAll`).
        if let suspended { MHD_resume_connection(OpaquePointer(bitPattern: suspended)) }
    }

    /// Records the handler's task, cancelling it at once if cancellation was already requested.
    func attach(_ task: Task<Void, Never>) {
        state.withLock { state in
            if state.cancelRequested { task.cancel() } else { state.handlerTask = task }
        }
    }

    /// Cancels the handler's task (now, or as soon as it is attached).
    func cancelHandler() {
        state.withLock { state in
            state.cancelRequested = true
            state.handlerTask?.cancel()
            state.handlerTask = nil
        }
    }

    /// Forced shutdown: answer 503 instead of the handler and resume a suspended connection, so
    /// `MHD_stop_daemon` finds no suspended connection (it aborts the process if it does).
    func abandon() {
        state.withLock { state in
            switch state.phase {
            case .handling(let connection):
                state.phase = .abandoned
                MHD_resume_connection(OpaquePointer(bitPattern: connection))
            case .headers, .receiving, .starting:
                state.phase = .abandoned
            case .responded, .abandoned, .done:
                break
            }
        }
    }
}
