import CMicroHTTPD
import CMicroHTTPDShims
import Foundation
import Synchronization

/// The part of the server libmicrohttpd's callbacks reach (through `Unmanaged` in `cls`): the
/// handler, the limits, the logger and the set of requests whose handlers are in flight.
final class ServerCore: Sendable {
    struct InFlight {
        var stopping = false
        var requests: [ObjectIdentifier: RequestContext] = [:]
        var nextWaiter: UInt64 = 0
        var idleWaiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
    }

    let maxBodySize: Int
    let handler: HTTPHandler
    let logger: RequestLogger
    let inFlight = Mutex(InFlight())
    /// Handlers' tasks inside `RequestContext.finish`, which may resume a suspended connection after its lock.
    let finishing = Atomic<Int>(0)

    init(maxBodySize: Int, logger: RequestLogger, handler: @escaping HTTPHandler) {
        self.maxBodySize = maxBodySize
        self.logger = logger
        self.handler = handler
    }

    // MARK: Lifecycle of in-flight requests

    /// Counts a request as in flight from handler dispatch until its completion callback.
    /// Refused once stopping began.
    func register(_ context: RequestContext) -> Bool {
        inFlight.withLock { state in
            guard !state.stopping else { return false }
            state.requests[ObjectIdentifier(context)] = context
            return true
        }
    }

    func unregister(_ context: RequestContext) {
        let waiters = inFlight.withLock { state -> Dictionary<UInt64, CheckedContinuation<Void, Never>>.Values in
            state.requests[ObjectIdentifier(context)] = nil
            guard state.stopping, state.requests.isEmpty else { return [:].values }
            defer { state.idleWaiters = [:] }
            return state.idleWaiters.values
        }
        for waiter in waiters { waiter.resume() }
    }

    var isStopping: Bool { inFlight.withLock { $0.stopping } }

    /// Stops dispatching new requests; with `cancellingHandlers`, cancels the running ones' tasks.
    func beginStopping(cancellingHandlers: Bool) {
        let contexts = inFlight.withLock { state -> [RequestContext] in
            state.stopping = true
            return cancellingHandlers ? Array(state.requests.values) : []
        }
        for context in contexts { context.cancelHandler() }
    }

    /// Stops dispatching new requests and waits until every dispatched one completed, or until `limit` passed (nil:
    /// no limit). The limit is wall time, raced against the last completion, never polled.
    func drain(atMost limit: Duration? = nil) async {
        let waiter = inFlight.withLock { state -> UInt64 in
            state.stopping = true
            state.nextWaiter += 1
            return state.nextWaiter
        }
        var timer: Task<Void, Never>?
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = inFlight.withLock { state -> Bool in
                if state.requests.isEmpty { return true }
                state.idleWaiters[waiter] = continuation
                return false
            }
            if idle { return continuation.resume() }
            // Started once the waiter is registered: whichever of the timer and the last completion comes first resumes it.
            timer = limit.map { limit in
                Task { [self] in
                    guard (try? await Task.sleep(for: limit)) != nil else { return }
                    inFlight.withLock { $0.idleWaiters.removeValue(forKey: waiter) }?.resume()
                }
            }
        }
        timer?.cancel()
    }

    /// Stops dispatching and answers every in-flight request with 503 now; returns once no handler's `finish` is under
    /// way, so the daemon can stop (a connection one of them resumes after the stop would abort libmicrohttpd).
    func abandonAll() {
        let contexts = inFlight.withLock { state -> [RequestContext] in
            state.stopping = true
            return Array(state.requests.values)
        }
        for context in contexts { context.abandon() }
        // A finish that began before its context was abandoned is between its lock and its resume for microseconds;
        // one that begins after finds the request abandoned and resumes nothing.
        while finishing.load(ordering: .acquiring) > 0 { sched_yield() }
    }

    // MARK: Access handler

    /// libmicrohttpd calls this for a request: once after the headers, once per body chunk, once
    /// when the body is complete, and once more after each resume.
    func access(
        connection: OpaquePointer,
        method: UnsafePointer<CChar>?,
        uploadData: UnsafePointer<CChar>?,
        uploadSize: UnsafeMutablePointer<Int>,
        context: RequestContext
    ) -> MHD_Result {
        enum Step {
            case headers, body, complete, respond(HTTPResponse, errorType: String?), nothing
        }
        let chunk = uploadSize.pointee
        let step = context.state.withLock { state -> Step in
            switch state.phase {
            case .headers:
                state.phase = .receiving
                state.method = method.map { String(cString: $0) } ?? ""
                return .headers
            case .receiving:
                return chunk > 0 ? .body : .complete
            case .responded(let response, let errorType):
                state.phase = .done
                return .respond(response, errorType: errorType)
            case .abandoned:
                state.phase = .done
                return .respond(HTTPError.unavailable.httpResponse, errorType: nil)
            case .starting, .handling, .done:
                return .nothing
            }
        }
        switch step {
        case .headers:
            return headersReceived(connection: connection, context: context)
        case .body:
            let accepted = context.state.withLock { state -> Bool in
                guard state.body.count + chunk <= maxBodySize else { return false }
                if let uploadData {
                    state.body.append(contentsOf: UnsafeRawBufferPointer(start: uploadData, count: chunk))
                }
                return true
            }
            guard accepted else {
                // libmicrohttpd cannot queue a response mid-body, so an undeclared (chunked) body
                // that outgrows the limit loses its connection instead of being read to the end.
                log(context, status: HTTPStatus.contentTooLarge.code, errorType: nil)
                return MHD_Result.NO
            }
            uploadSize.pointee = 0
            return MHD_Result.YES
        case .complete:
            return dispatch(connection: connection, context: context)
        case .respond(let response, let errorType):
            return queue(response, on: connection, context: context, errorType: errorType)
        case .nothing:
            // Body bytes after an early response: discard them rather than have them offered again.
            uploadSize.pointee = 0
            return MHD_Result.YES
        }
    }

    /// First call: the head is complete (its deadline no longer applies); refuse early what can be refused from the
    /// headers alone.
    private func headersReceived(connection: OpaquePointer, context: RequestContext) -> MHD_Result {
        fs_mhd_head_received(connection)
        if isStopping {
            return queueNow(HTTPError.unavailable.httpResponse, on: connection, context: context)
        }
        if let declared = MHD_lookup_connection_value(connection, .HEADER_KIND, "Content-Length") {
            // libmicrohttpd has already rejected a malformed Content-Length with 400.
            let length = Int(String(cString: declared)) ?? Int.max
            guard length <= maxBodySize else {
                // Queued before the body is read: no `100 Continue` is sent and the connection closes.
                return queueNow(HTTPError.bodyTooLarge(limit: maxBodySize).httpResponse, on: connection, context: context)
            }
            context.state.withLock { $0.body.reserveCapacity(length) }
        }
        return MHD_Result.YES
    }

    /// Last body call: build the request and start the handler's task right here, on the polling thread, until its
    /// first suspension point. A handler that answers without suspending has its response queued by this same call
    /// (no thread hand-off either way); otherwise the connection is suspended until the task resumes it.
    private func dispatch(connection: OpaquePointer, context: RequestContext) -> MHD_Result {
        let target: RequestTarget
        do {
            target = try RequestTarget(parsing: context.target)
        } catch {
            return queueNow(error.httpResponse, on: connection, context: context)
        }
        guard register(context) else {
            return queueNow(HTTPError.unavailable.httpResponse, on: connection, context: context)
        }
        let headers = Self.requestHeaders(of: connection)
        let remoteAddress = Self.remoteAddress(of: connection)
        let taken = context.state.withLock { state -> (method: String, body: [UInt8])? in
            guard case .receiving = state.phase else { return nil }
            state.phase = .starting
            defer { state.body = [] }
            return (state.method, state.body)
        }
        guard let taken else {
            context.state.withLock { $0.phase = .done }
            return queueNow(HTTPError.unavailable.httpResponse, on: connection, context: context)
        }
        let request = HTTPRequest(
            id: context.id, method: HTTPMethod(rawValue: taken.method), target: target,
            headers: headers, body: taken.body, remoteAddress: remoteAddress
        )
        let handler = self.handler
        let task = Task.immediate { [self] in
            let (response, errorType) = await Self.run(handler, request)
            finishing.add(1, ordering: .acquiringAndReleasing)
            context.finish(response, errorType: errorType)
            finishing.subtract(1, ordering: .releasing)
        }
        context.attach(task)
        // The connection handle moves into shared state as its address: libmicrohttpd documents
        // `MHD_resume_connection` as callable from any thread, and the connection stays allocated
        // while suspended (it is freed only after the completion callback, which needs a resume).
        let handle = UInt(bitPattern: connection)
        let ready = context.state.withLock { state -> (HTTPResponse, errorType: String?)? in
            switch state.phase {
            case .starting:
                // Suspending under the lock: the task's `finish` and a forced shutdown must never see `.handling`
                // for a connection that is not suspended yet.
                state.phase = .handling(connection: handle)
                MHD_suspend_connection(connection)
                return nil
            case .responded(let response, let errorType):
                state.phase = .done
                return (response, errorType)
            case .abandoned, .headers, .receiving, .handling, .done:
                // Besides `finish`, only a forced shutdown (`.abandoned`) moves a request out of `.starting`.
                state.phase = .done
                return (HTTPError.unavailable.httpResponse, nil)
            }
        }
        guard let (response, errorType) = ready else { return MHD_Result.YES }
        return queue(response, on: connection, context: context, errorType: errorType)
    }

    /// Runs the handler and maps what it throws: `HTTPResponseConvertible` to its response,
    /// anything else to a 500 that says nothing (its type name goes to the log only).
    static func run(_ handler: HTTPHandler, _ request: HTTPRequest) async -> (HTTPResponse, String?) {
        do {
            return (try await handler(request), nil)
        } catch let error as any HTTPResponseConvertible {
            return (error.httpResponse, nil)
        } catch {
            return (HTTPError.internalServerError.httpResponse, String(reflecting: type(of: error)))
        }
    }

    // MARK: Responses

    private func queueNow(_ response: HTTPResponse, on connection: OpaquePointer, context: RequestContext) -> MHD_Result {
        context.state.withLock { $0.phase = .done }
        return queue(response, on: connection, context: context, errorType: nil)
    }

    private func queue(_ response: HTTPResponse, on connection: OpaquePointer, context: RequestContext, errorType: String?) -> MHD_Result {
        var response = response
        var errorType = errorType
        let mhdResponse: OpaquePointer
        if let built = Self.makeResponse(response, requestID: context.id) {
            mhdResponse = built
        } else {
            // A header libmicrohttpd refuses (CR/LF in a value, a reserved name): a handler bug.
            errorType = errorType ?? "InvalidResponseHeader"
            response = HTTPError.internalServerError.httpResponse
            guard let fallback = Self.makeResponse(response, requestID: context.id) else { return MHD_Result.NO }
            mhdResponse = fallback
        }
        let result = MHD_queue_response(connection, UInt32(response.status.code), mhdResponse)
        MHD_destroy_response(mhdResponse)
        log(context, status: response.status.code, errorType: errorType)
        return result
    }

    /// The libmicrohttpd response for `response` with `X-Request-Id: requestID` (replacing any the handler set).
    private static func makeResponse(_ response: HTTPResponse, requestID: String) -> OpaquePointer? {
        let created = response.body.withUnsafeBytes { bytes in
            MHD_create_response_from_buffer(bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), .RESPMEM_MUST_COPY)
        }
        guard let created else { return nil }
        for field in response.headers {
            // libmicrohttpd computes the framing headers itself and refuses to be told them.
            if HTTPHeaders.namesEqual(field.name, "Content-Length") || HTTPHeaders.namesEqual(field.name, "Transfer-Encoding")
                || HTTPHeaders.namesEqual(field.name, "X-Request-Id") {
                continue
            }
            // `withCString`: a short name passed as a plain argument would be copied to the heap first.
            guard field.name.withCString({ name in field.value.withCString { MHD_add_response_header(created, name, $0) } }) == MHD_Result.YES else {
                MHD_destroy_response(created)
                return nil
            }
        }
        guard MHD_add_response_header(created, "X-Request-Id", requestID) == MHD_Result.YES else {
            MHD_destroy_response(created)
            return nil
        }
        return created
    }

    private func log(_ context: RequestContext, status: Int, errorType: String?) {
        let method = context.state.withLock { $0.method }
        logger.log(RequestLogger.Entry(
            requestID: context.id, method: method, path: context.logPath, status: status,
            duration: ContinuousClock.now - context.started, errorType: errorType
        ))
    }

    // MARK: Reading the connection

    private static func requestHeaders(of connection: OpaquePointer) -> HTTPHeaders {
        var headers = HTTPHeaders()
        // Without an iterator libmicrohttpd only counts them.
        headers.reserveCapacity(max(0, Int(MHD_get_connection_values(connection, .HEADER_KIND, nil, nil))))
        // The iterator calls back synchronously, so the local's address is valid throughout.
        withUnsafeMutablePointer(to: &headers) { headers in
            _ = MHD_get_connection_values(connection, .HEADER_KIND, { cls, _, key, value in
                guard let cls, let key else { return MHD_Result.YES }
                cls.assumingMemoryBound(to: HTTPHeaders.self).pointee.add(name: String(cString: key), value: value.map { String(cString: $0) } ?? "")
                return MHD_Result.YES
            }, headers)
        }
        return headers
    }

    private static func remoteAddress(of connection: OpaquePointer) -> String? {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buffer -> String? in
            guard let base = buffer.baseAddress, fs_mhd_client_address(connection, base, buffer.count) == 0 else { return nil }
            return String(cString: base)
        }
    }
}
