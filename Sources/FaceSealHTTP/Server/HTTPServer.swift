import CMicroHTTPD
import CMicroHTTPDShims
public import Foundation
import Synchronization

/// An HTTP/1.1 server on libmicrohttpd that runs async Swift handlers.
///
/// libmicrohttpd does the HTTP work (parsing, keep-alive, chunked bodies, `100-continue`, timeouts,
/// connection limits) on its own epoll threads. When a request's body is complete its handler's task
/// starts on that thread (`Task.immediate`): a handler that answers without suspending is answered
/// by the same callback; one that suspends has the connection suspended until its task, on any
/// thread, resumes it to send the response. Every response carries `X-Request-Id`; every request is
/// logged as one line.
///
/// ```swift
/// var router = Router()
/// router.get("/devices/:id") { request in try .json(Device(id: request.pathParameter("id"))) }
/// let server = HTTPServer(router: router)
/// try server.start()
/// // … server.port
/// await server.stop()
/// ```
/// A server is single-use: `start()` once, `stop()` once. Call `stop()` before releasing it: a
/// server released while running answers its in-flight requests with 503 and closes at once.
public final class HTTPServer: Sendable {
    private enum Lifecycle {
        case idle
        case running(daemon: OpaquePointer, headWatch: OpaquePointer?, port: Int)
        case stopping(port: Int)
        case stopped
    }

    /// The configuration the server was created with.
    public let configuration: Configuration
    private let core: ServerCore
    private let lifecycle = Mutex(Lifecycle.idle)

    /// A server that sends every request to `handler`.
    public init(configuration: Configuration = Configuration(), logger: RequestLogger = .standardError, handler: @escaping HTTPHandler) {
        self.configuration = configuration
        self.core = ServerCore(maxBodySize: configuration.maxBodySize, logger: logger, handler: handler)
    }

    /// A server that sends every request through `router`.
    public convenience init(configuration: Configuration = Configuration(), logger: RequestLogger = .standardError, router: Router) {
        self.init(configuration: configuration, logger: logger) { request in try await router.respond(to: request) }
    }

    /// The bound TCP port while running (the ephemeral one when `configuration.port` is 0).
    public var port: Int? {
        lifecycle.withLock { state in
            switch state {
            case .running(_, _, let port), .stopping(let port): port
            case .idle, .stopped: nil
            }
        }
    }

    /// Connections closed so far because their request head missed its deadline (`requestHeadTimeout`).
    public var requestHeadsTimedOut: UInt64 {
        lifecycle.withLock { state in
            guard case .running(_, let headWatch, _) = state else { return 0 }
            return fs_mhd_heads_timed_out(headWatch)
        }
    }

    /// Manual request-head clock only: moves it on by `duration` (whole milliseconds) and, before returning, closes
    /// every connection whose request-head deadline has passed.
    func advanceRequestHeadClock(by duration: Duration) {
        let milliseconds = UInt64(min(max(0, duration / .milliseconds(1)), 1e15))
        lifecycle.withLock { state in
            guard case .running(_, let headWatch, _) = state else { return }
            fs_mhd_head_clock_advance(headWatch, milliseconds)
        }
    }

    /// Blocks (at most `bound` of real time) until at least `count` connections wait for a request head under a
    /// deadline: a test's way to know the server has accepted a connection or finished a response. Only while the
    /// server runs, never at the same time as `stop()`.
    func awaitRequestHeadsWatched(_ count: Int, bound: Duration = .seconds(30)) -> Bool {
        let watch = lifecycle.withLock { state -> OpaquePointer? in
            guard case .running(_, let headWatch, _) = state else { return nil }
            return headWatch
        }
        guard let watch, count >= 0 else { return false }
        return fs_mhd_heads_await_watched(watch, UInt64(count), UInt32(clamping: bound.components.seconds * 1000)) != 0
    }

    /// `http://host:port` while running (IPv6 hosts in brackets).
    public var baseURL: URL? {
        guard let port else { return nil }
        let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        return URL(string: "http://\(host):\(port)")
    }

    /// Binds and starts serving. Returns once the socket is listening.
    public func start() throws(HTTPServerError) {
        let configuration = self.configuration
        guard (0...65535).contains(configuration.port) else { throw .invalidConfiguration("port \(configuration.port)") }
        guard configuration.maxBodySize >= 0 else { throw .invalidConfiguration("maxBodySize \(configuration.maxBodySize)") }
        guard (1...256).contains(configuration.threadPoolSize) else {
            throw .invalidConfiguration("threadPoolSize \(configuration.threadPoolSize)")
        }
        guard configuration.connectionLimit >= 0, configuration.connectionLimit <= Int(UInt32.max) else {
            throw .invalidConfiguration("connectionLimit \(configuration.connectionLimit)")
        }
        guard configuration.perAddressConnectionLimit >= 0, configuration.perAddressConnectionLimit <= Int(UInt32.max) else {
            throw .invalidConfiguration("perAddressConnectionLimit \(configuration.perAddressConnectionLimit)")
        }
        guard configuration.connectionMemoryLimit >= 0 else {
            throw .invalidConfiguration("connectionMemoryLimit \(configuration.connectionMemoryLimit)")
        }
        guard let timeoutSeconds = Self.wholeSeconds(configuration.connectionTimeout) else {
            throw .invalidConfiguration("connectionTimeout \(configuration.connectionTimeout)")
        }
        guard let headSeconds = Self.wholeSeconds(configuration.requestHeadTimeout) else {
            throw .invalidConfiguration("requestHeadTimeout \(configuration.requestHeadTimeout)")
        }
        let core = self.core
        let outcome = lifecycle.withLock { state -> Result<Int, HTTPServerError> in
            let cls = Unmanaged.passUnretained(core).toOpaque()
            guard case .idle = state else { return .failure(.alreadyStarted) }
            var startError: Int32 = 0
            var systemError: Int32 = 0
            var headWatch: OpaquePointer?
            let daemon = configuration.host.withCString { host -> OpaquePointer? in
                var settings = fs_mhd_settings(
                    host: host,
                    port: UInt16(configuration.port),
                    connection_limit: UInt32(configuration.connectionLimit),
                    connection_timeout_seconds: timeoutSeconds,
                    thread_pool_size: UInt32(configuration.threadPoolSize),
                    connection_memory_limit: configuration.connectionMemoryLimit,
                    per_address_connection_limit: UInt32(configuration.perAddressConnectionLimit),
                    request_head_timeout_seconds: headSeconds,
                    request_head_manual_clock: configuration.requestHeadClock == .manual ? 1 : 0
                )
                let daemon = fs_mhd_start(&settings, accessHandler, cls, requestCompleted, cls, uriLogged, cls, &headWatch, &startError)
                systemError = errno  // read at once, before anything else can overwrite it
                return daemon
            }
            guard let daemon else {
                if startError == Int32(FS_MHD_START_BAD_HOST.rawValue) { return .failure(.invalidHost(configuration.host)) }
                return .failure(.startFailed(host: configuration.host, port: configuration.port, errno: systemError))
            }
            let port = Int(fs_mhd_bound_port(daemon))
            state = .running(daemon: daemon, headWatch: headWatch, port: port)
            return .success(port)
        }
        if case .failure(let error) = outcome { throw error }
    }

    /// Answers new requests 503 from now on, waits for every in-flight handler to finish and its response to
    /// be sent, then closes all connections. Requests that arrive meanwhile on kept-alive
    /// connections get 503. Safe to call more than once.
    ///
    /// - Parameter cancellingHandlers: also cancel the tasks of running handlers, so handlers that
    ///   wait cooperatively (long polls) answer at once instead of running out their wait.
    public func stop(cancellingHandlers: Bool = false) async {
        let running = lifecycle.withLock { state -> (daemon: OpaquePointer, headWatch: OpaquePointer?)? in
            guard case .running(let daemon, let headWatch, let port) = state else { return nil }
            state = .stopping(port: port)
            return (daemon, headWatch)
        }
        guard let (daemon, headWatch) = running else { return }
        // No MHD_quiesce_daemon: with the internal epoll thread it races that thread's own changes to the epoll set
        // (at the connection limit) and libmicrohttpd aborts the process ("Failed to remove listen FD from epoll
        // set"). Connections that arrive while handlers drain get 503; MHD_stop_daemon closes the listening socket.
        core.beginStopping(cancellingHandlers: cancellingHandlers)
        await core.drain()
        fs_mhd_stop(daemon, headWatch)
        lifecycle.withLock { $0 = .stopped }
    }

    /// Begins a graceful stop: from now on every new request is answered `503` with `Retry-After`
    /// (`HTTPError.unavailable`) and its connection closed, while in-flight handlers run on. Connections are still
    /// accepted, so a client hears why instead of waiting in the listen backlog. Idempotent.
    public func beginDraining() {
        let running = lifecycle.withLock { state -> Bool in
            if case .running = state { return true }
            return false
        }
        guard running else { return }
        core.beginStopping(cancellingHandlers: false)
    }

    /// The graceful stop: `beginDraining()`, then waits until every in-flight handler has finished and its response
    /// is sent, or until `gracePeriod` passed; then cancels the handlers still running and stops as
    /// `stop(cancellingHandlers: true)` does.
    public func stop(gracePeriod: Duration) async {
        beginDraining()
        await core.drain(atMost: max(gracePeriod, .zero))
        await stop(cancellingHandlers: true)
    }

    /// Whole seconds of a non-negative duration that fits libmicrohttpd's `unsigned int`, a fraction rounded up
    /// (so 0.5 s does not mean "never"); nil otherwise.
    private static func wholeSeconds(_ duration: Duration) -> UInt32? {
        let parts = duration.components
        guard parts.seconds >= 0, parts.attoseconds >= 0, parts.seconds < Int64(UInt32.max) else { return nil }
        return UInt32(parts.seconds) + (parts.attoseconds > 0 ? 1 : 0)
    }

    deinit {
        // Released while running: answer in-flight requests with 503 (resuming their suspended
        // connections) and stop, rather than leave threads calling into freed memory.
        let running = lifecycle.withLock { state -> (daemon: OpaquePointer, headWatch: OpaquePointer?)? in
            guard case .running(let daemon, let headWatch, _) = state else { return nil }
            state = .stopped
            return (daemon, headWatch)
        }
        if let (daemon, headWatch) = running {
            core.abandonAll()
            fs_mhd_stop(daemon, headWatch)
        }
    }
}

// MARK: C callbacks. Context arrives through `cls` (the ServerCore, unretained: the server outlives
// the daemon) and `con_cls` (the RequestContext, retained from the URI log until completion).

private let uriLogged: fs_mhd_uri_log_callback = { _, uri, _ in
    let context = RequestContext(target: uri.map { String(cString: $0) } ?? "")
    return Unmanaged.passRetained(context).toOpaque()
}

private let accessHandler: MHD_AccessHandlerCallback = { cls, connection, _, method, _, uploadData, uploadSize, conCls in
    guard let cls, let connection, let uploadSize, let contextPointer = conCls?.pointee else { return MHD_Result.NO }
    let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
    let context = Unmanaged<RequestContext>.fromOpaque(contextPointer).takeUnretainedValue()
    return core.access(connection: connection, method: method, uploadData: uploadData, uploadSize: uploadSize, context: context)
}

private let requestCompleted: MHD_RequestCompletedCallback = { cls, connection, conCls, _ in
    // The connection now waits for its next request head, under a fresh deadline.
    if let connection { fs_mhd_head_expected(connection) }
    guard let cls, let conCls, let contextPointer = conCls.pointee else { return }
    conCls.pointee = nil
    let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
    let context = Unmanaged<RequestContext>.fromOpaque(contextPointer).takeRetainedValue()
    core.unregister(context)
}
