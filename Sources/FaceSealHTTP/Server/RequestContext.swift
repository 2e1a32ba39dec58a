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
        /// Handler running; the connection is suspended. Its address (an `MHD_Connection *`) is
        /// kept to resume it from the handler's task.
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
    var logPath: String { String(target.prefix { $0 != "?" }) }

    /// Records the handler's response and resumes the connection so the polling thread queues it.
    /// Does nothing if a forced shutdown already answered the request.
    func finish(_ response: HTTPResponse, errorType: String?) {
        state.withLock { state in
            state.handlerTask = nil
            guard case .handling(let connection) = state.phase else { return }
            state.phase = .responded(response, errorType: errorType)
            // Inside the lock so a forced shutdown cannot resume the same connection twice.
            MHD_resume_connection(OpaquePointer(bitPattern: connection))
        }
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
            case .headers, .receiving:
                state.phase = .abandoned
            case .responded, .abandoned, .done:
                break
            }
        }
    }
}
