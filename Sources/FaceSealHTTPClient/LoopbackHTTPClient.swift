import CCurl
import FaceSealHTTPTypes
package import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A minimal HTTP/1.1 client for loopback measurement: the load generator's of `faceseal bench authority` (package
/// access, not part of the library's API, which is `HTTPClient`). Keep-alive connections to a loopback server; each
/// request is written by the task that sends it, every response read by one thread that sleeps in `epoll_wait`. It
/// shares the two cores with the authority it measures, so it does only what a ceremony needs: `http://` URLs with an
/// IPv4 literal, responses framed by `Content-Length`. The authority gets the same requests as from `HTTPClient` (the
/// same method, target, fields and body, `Host` and `Accept: */*` as libcurl writes them); the load generator spends
/// 10–13 % less CPU a ceremony against the authority's (docs/PERFORMANCE.md, session 12).
///
/// Limits as for any input: a response head over `maxHeadSize`, a body over the request's limit (1 MiB when it sets
/// none), a malformed status line, field or `Content-Length`, chunked framing, or no complete answer by
/// the request's timeout end the exchange with a typed `LoopbackHTTPError` and close the connection. A request on a kept
/// connection that the server had closed meanwhile (no byte answered) is sent once more on a new one, as libcurl does.
/// The thread runs until `stop()`.
package final class LoopbackHTTPClient: Sendable {
    /// What a request is checked and reduced against (`CurlRequest`, as `HTTPClient` does), and the response limits: a
    /// body of 1 MiB for a request that sets none, a head of 16 KiB.
    private static let configuration = HTTPClient.Configuration(maxResponseBodySize: 1 << 20, maxResponseHeadSize: 16 << 10)
    /// Largest response head accepted.
    static var maxHeadSize: Int { configuration.maxResponseHeadSize }

    /// How an exchange ended, and whether the sender closes its connection (else the connection is kept).
    private typealias Outcome = (result: Result<HTTPClientResponse, LoopbackHTTPError>, release: Bool)

    /// One request on its connection, from the moment it is registered until its response is complete.
    private struct Exchange {
        let id: UInt64
        let continuation: CheckedContinuation<Outcome, Never>
        let origin: LoopbackOrigin
        let reused: Bool
        let isHead: Bool
        let maxBodySize: Int
        let deadline: ContinuousClock.Instant
        /// The whole request is written: only then may the connection carry another one.
        var written = false
        /// A response that came complete before the sender had noted the request written: the sender finishes it.
        var early: (response: HTTPClientResponse, keepAlive: Bool)?
        var received: [UInt8] = []
    }

    private struct State {
        /// Kept connections, by origin, each watched by the thread (a server's close is noticed while it waits).
        var idle: [LoopbackOrigin: [Int32]] = [:]
        /// Exchanges under way, by connection.
        var exchanges: [Int32: Exchange] = [:]
        var started = false
        var stopped = false
    }

    /// A sender's cancellation against its registration: whichever comes second ends the exchange.
    private final class Cancellation: Sendable {
        /// -1 before the registration, -2 once cancelled, else the registered connection.
        private let slot = Atomic<Int64>(-1)

        /// False when the task was cancelled first.
        func register(_ descriptor: Int32) -> Bool {
            slot.compareExchange(expected: -1, desired: Int64(descriptor), ordering: .acquiringAndReleasing).exchanged
        }

        /// The registered connection, if the registration came first.
        func cancel() -> Int32? {
            let old = slot.exchange(-2, ordering: .acquiringAndReleasing)
            return old >= 0 ? Int32(old) : nil
        }
    }

    private let state = Mutex(State())
    private let nextID = Atomic<UInt64>(0)
    private let opened = Atomic<Int>(0)
    private let epoll: Int32

    /// Connections opened so far (the rest of the requests went on kept ones).
    package var connectionsOpened: Int { opened.load(ordering: .relaxed) }

    package init() {
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
    }

    deinit {
        if epoll >= 0 { close(epoll) }
    }

    /// Ends the thread within ~100 ms: exchanges under way fail with `.cancelled`, kept connections close, and requests
    /// sent afterwards fail with `.cancelled`.
    package func stop() {
        state.withLock { $0.stopped = true }
    }

    /// Sends `request` and answers the response (any status).
    package func send(_ request: HTTPClientRequest) async throws -> HTTPClientResponse {
        let origin = try LoopbackOrigin(request.url)
        let (bytes, maxBodySize) = try Self.prepare(request, origin: origin)
        let deadline = ContinuousClock.now + request.timeout
        let isHead = request.method.rawValue == "HEAD"
        switch await exchange(bytes, origin: origin, reuse: true, isHead: isHead, maxBodySize: maxBodySize, deadline: deadline) {
        case .success(let response): return response
        case .failure(.staleConnection):
            return try await exchange(bytes, origin: origin, reuse: false, isHead: isHead, maxBodySize: maxBodySize, deadline: deadline).get()
        case .failure(let error): throw error
        }
    }

    /// One attempt: a kept connection (or a new one), the request written on it, the response as the thread read it.
    private func exchange(_ bytes: [UInt8], origin: LoopbackOrigin, reuse: Bool, isHead: Bool, maxBodySize: Int,
                          deadline: ContinuousClock.Instant) async -> Result<HTTPClientResponse, LoopbackHTTPError> {
        guard epoll >= 0 else { return .failure(.system("epoll_create1", errno)) }
        guard !Task.isCancelled, !state.withLock({ $0.stopped }) else { return .failure(.cancelled) }
        startIfNeeded()
        var fresh: Int32?
        if !reuse || state.withLock({ $0.idle[origin]?.isEmpty ?? true }) {
            switch Self.connect(origin) {
            case .success(let descriptor): fresh = descriptor
            case .failure(let error): return .failure(error)
            }
            opened.add(1, ordering: .relaxed)
            if watch(fresh!) != 0 {
                close(fresh!)
                return .failure(.system("epoll_ctl", errno))
            }
        }
        let id = nextID.add(1, ordering: .relaxed).newValue
        let cancellation = Cancellation()
        var descriptor: Int32?
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
                // Taking a kept connection and registering the exchange happen under one lock: the thread never sees
                // a connection that is neither kept nor in an exchange.
                descriptor = state.withLock { state -> Int32? in
                    guard !state.stopped, let chosen = fresh ?? state.idle[origin]?.popLast() else { return nil }
                    state.exchanges[chosen] = Exchange(id: id, continuation: continuation, origin: origin, reused: fresh == nil,
                                                       isHead: isHead, maxBodySize: maxBodySize, deadline: deadline)
                    return chosen
                }
                guard let descriptor else {
                    // Stopped, or another task took the last kept connection meanwhile (the caller tries again on a
                    // new one); a new connection of a stopped client is closed by the caller.
                    let stopped = state.withLock { $0.stopped }
                    return continuation.resume(returning: (.failure(stopped ? .cancelled : .staleConnection), false))
                }
                guard cancellation.register(descriptor) else { return end(descriptor, id, .cancelled) }
                if let error = Self.write(bytes, to: descriptor) {
                    return end(descriptor, id, fresh == nil ? .staleConnection : error)
                }
                let early = state.withLock { state -> (Exchange, HTTPClientResponse, keepAlive: Bool)? in
                    guard state.exchanges[descriptor]?.id == id else { return nil }
                    guard let (response, keepAlive) = state.exchanges[descriptor]?.early else {
                        state.exchanges[descriptor]?.written = true
                        return nil
                    }
                    let exchange = state.exchanges.removeValue(forKey: descriptor)!
                    if keepAlive { state.idle[origin, default: []].append(descriptor) }
                    return (exchange, response, keepAlive)
                }
                if let (exchange, response, keepAlive) = early {
                    if !keepAlive { unwatch(descriptor) }
                    exchange.continuation.resume(returning: (.success(response), !keepAlive))
                }
            }
        } onCancel: {
            if let descriptor = cancellation.cancel() { end(descriptor, id, .cancelled) }
        }
        if outcome.release, let descriptor { close(descriptor) }
        if descriptor == nil, let fresh {
            unwatch(fresh)
            close(fresh)
        }
        return outcome.result
    }

    /// Ends exchange `id` on `descriptor` with `error` unless the thread has ended it already.
    private func end(_ descriptor: Int32, _ id: UInt64, _ error: LoopbackHTTPError) {
        guard let exchange = state.withLock({ state in
            state.exchanges[descriptor]?.id == id ? state.exchanges.removeValue(forKey: descriptor) : nil
        }) else { return }
        unwatch(descriptor)
        exchange.continuation.resume(returning: (.failure(error), true))
    }

    // MARK: The thread

    private func startIfNeeded() {
        guard state.withLock({ state in
            defer { state.started = true }
            return !state.started
        }) else { return }
        let thread = Thread { [self] in run() }
        thread.name = "faceseal-loopback-http"
        thread.start()
    }

    /// Reads what is ready and finishes exchanges until `stop()`, checking every 100 ms or so for exchanges past their
    /// deadline.
    private func run() {
        defer { shutDown() }
        let capacity: Int32 = 64
        var ready = [Int32](repeating: 0, count: Int(capacity))
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var checked = ContinuousClock.now
        while true {
            let count = ready.withUnsafeMutableBufferPointer { fs_epoll_wait_descriptors(epoll, 100, $0.baseAddress, capacity) }
            for index in 0..<Int(max(0, count)) {
                readable(ready[index], &chunk)
            }
            let now = ContinuousClock.now
            if now - checked >= .milliseconds(100) {
                checked = now
                if state.withLock({ $0.stopped }) { return }
                expire(now: now)
            }
        }
    }

    /// After `stop()`: fails what is under way and closes the kept connections (the epoll instance closes with the client).
    private func shutDown() {
        let (exchanges, idle) = state.withLock { state in
            defer {
                state.exchanges = [:]
                state.idle = [:]
            }
            return (state.exchanges, state.idle.values.flatMap { $0 })
        }
        for (descriptor, exchange) in exchanges {
            unwatch(descriptor)
            exchange.continuation.resume(returning: (.failure(.cancelled), true))
        }
        idle.forEach { close($0) }
    }

    /// Reads what `descriptor` has; finishes its exchange when the response is complete or cannot be.
    private func readable(_ descriptor: Int32, _ chunk: inout [UInt8]) {
        let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        if count < 0 && (errno == EAGAIN || errno == EINTR) { return }
        let failure = errno
        let finished = state.withLock { state -> (Exchange, Outcome)? in
            guard state.exchanges[descriptor] != nil else {
                // A kept connection the server closed (or sent to unasked): no longer kept.
                if let origin = state.idle.first(where: { $0.value.contains(descriptor) })?.key {
                    state.idle[origin]?.removeAll { $0 == descriptor }
                    unwatch(descriptor)
                    close(descriptor)
                }
                return nil
            }
            if state.exchanges[descriptor]!.early != nil {
                // Answered already, the sender not yet done writing: it finishes the exchange. Anything after the
                // response (a close, bytes nobody asked for) means the connection is not kept.
                state.exchanges[descriptor]!.early!.keepAlive = false
                unwatch(descriptor)
                return nil
            }
            guard count > 0 else {
                let exchange = state.exchanges.removeValue(forKey: descriptor)!
                let error: LoopbackHTTPError = count == 0 ? .closedBeforeResponse : .system("recv", failure)
                return (exchange, (.failure(exchange.reused && exchange.received.isEmpty ? .staleConnection : error), true))
            }
            state.exchanges[descriptor]!.received.append(contentsOf: chunk[..<count])
            let exchange = state.exchanges[descriptor]!
            do throws(LoopbackHTTPError) {
                // Not complete yet: the next read goes on with it.
                guard let (response, keepAlive) = try Self.parse(exchange.received, isHead: exchange.isHead,
                                                                 maxBodySize: exchange.maxBodySize) else { return nil }
                guard exchange.written else {
                    state.exchanges[descriptor]!.early = (response, keepAlive)
                    state.exchanges[descriptor]!.received = []
                    return nil
                }
                state.exchanges[descriptor] = nil
                guard keepAlive else { return (exchange, (.success(response), true)) }
                state.idle[exchange.origin, default: []].append(descriptor)
                return (exchange, (.success(response), false))
            } catch {
                state.exchanges[descriptor] = nil
                return (exchange, (.failure(error), true))
            }
        }
        guard let (exchange, outcome) = finished else { return }
        if outcome.release { unwatch(descriptor) }
        exchange.continuation.resume(returning: outcome)
    }

    private func expire(now: ContinuousClock.Instant) {
        let expired = state.withLock { state -> [(Int32, Exchange)] in
            let due = state.exchanges.filter { $0.value.deadline <= now }
            for descriptor in due.keys { state.exchanges[descriptor] = nil }
            return due.map { ($0.key, $0.value) }
        }
        for (descriptor, exchange) in expired {
            unwatch(descriptor)
            exchange.continuation.resume(returning: (.failure(.timeout), true))
        }
    }

    /// Watches `descriptor` for reading (a server's close reads as the end of the stream).
    private func watch(_ descriptor: Int32) -> Int32 {
        fs_epoll_add_readable(epoll, descriptor)
    }

    private func unwatch(_ descriptor: Int32) {
        _ = fs_epoll_remove(epoll, descriptor)
    }

    // MARK: Sockets

    private static func connect(_ origin: LoopbackOrigin) -> Result<Int32, LoopbackHTTPError> {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return .failure(.system("socket", errno)) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = origin.port.bigEndian
        address.sin_addr = in_addr(s_addr: origin.address.bigEndian)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            let failure = errno
            close(descriptor)
            return .failure(.system("connect", failure))
        }
        var on: Int32 = 1
        _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        return .success(descriptor)
    }

    /// Writes all of `bytes` (the socket blocks when the server's window is full); nil when they were all written.
    private static func write(_ bytes: [UInt8], to descriptor: Int32) -> LoopbackHTTPError? {
        bytes.withUnsafeBytes { raw -> LoopbackHTTPError? in
            var offset = 0
            while offset < raw.count {
                let sent = Glibc.send(descriptor, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                if sent < 0 {
                    if errno == EINTR { continue }
                    return .system("send", errno)
                }
                offset += sent
            }
            return nil
        }
    }

    // MARK: Messages

    /// The request as libcurl writes it for `HTTPClient`, and its response body's limit. `CurlRequest.message` checks
    /// and reduces it as for `HTTPClient` (method and field names tokens, no CR, LF or NUL in a value, values trimmed,
    /// the caller's framing fields dropped); then the request line, `Host`, `Accept: */*`, its field lines (`Name;` is
    /// libcurl's spelling of an empty value; `Name:` switches off a default of libcurl's, which this client never
    /// sends), `Content-Length` when a body is sent, the body. Written as bytes straight into one array.
    package static func prepare(_ request: HTTPClientRequest, origin: LoopbackOrigin) throws(LoopbackHTTPError) -> (bytes: [UInt8], maxBodySize: Int) {
        let message: CurlRequest.Message
        do {
            message = try CurlRequest.message(request)
        } catch {
            throw .invalidRequest(error.description)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(128 + origin.target.utf8.count + message.headerLines.reduce(0) { $0 + $1.utf8.count + 2 }
                              + (message.body?.count ?? 0))
        func append(_ text: String) { bytes.append(contentsOf: text.utf8) }
        append(message.method)
        append(" ")
        append(origin.target)
        append(" HTTP/1.1\r\nHost: ")
        append(origin.authority)
        append("\r\nAccept: */*\r\n")
        for line in message.headerLines {
            let utf8 = line.utf8
            guard let colon = utf8.firstIndex(of: UInt8(ascii: ":")) else {
                bytes.append(contentsOf: utf8.dropLast())  // `Name;`: an empty value
                append(":\r\n")
                continue
            }
            if utf8.index(after: colon) == utf8.endIndex { continue }  // `Name:`
            append(line)
            append("\r\n")
        }
        if let body = message.body {
            append("Content-Length: ")
            append(String(body.count))
            append("\r\n\r\n")
            bytes.append(contentsOf: body)
        } else {
            append("\r\n")
        }
        return (bytes, CurlRequest.maxBodySize(request, configuration: configuration))
    }

    /// The response in `bytes` when it is complete (and whether its connection may carry another request), nil while
    /// it is not; throws what makes it unacceptable.
    package static func parse(_ bytes: [UInt8], isHead: Bool, maxBodySize: Int) throws(LoopbackHTTPError) -> (HTTPClientResponse, keepAlive: Bool)? {
        guard let headEnd = Self.headEnd(bytes) else {
            guard bytes.count <= maxHeadSize else { throw .malformedResponse("a head over \(maxHeadSize) bytes") }
            return nil
        }
        guard headEnd <= maxHeadSize else { throw .malformedResponse("a head over \(maxHeadSize) bytes") }
        // The head's lines (LF-separated, a CR before the LF dropped), read in place: the status line, then the fields.
        let end = headEnd - 4
        func line(from start: Int) -> (line: ArraySlice<UInt8>, next: Int?) {
            let stop = bytes[start..<end].firstIndex(of: 0x0A) ?? end
            let line = bytes[start..<stop]
            return (line.last == 0x0D ? line.dropLast() : line, stop < end ? stop + 1 : nil)
        }
        let (statusLine, afterStatus) = line(from: 0)
        // "HTTP/1.x SP 3DIGIT [SP reason]"
        guard statusLine.count >= 12, statusLine.starts(with: "HTTP/1.".utf8), statusLine[statusLine.startIndex + 8] == 0x20,
              let code = Int(String(decoding: statusLine[(statusLine.startIndex + 9)..<(statusLine.startIndex + 12)], as: UTF8.self)),
              (100...599).contains(code), statusLine.count == 12 || statusLine[statusLine.startIndex + 12] == 0x20 else {
            throw .malformedResponse("status line")
        }
        var keepAlive = statusLine[statusLine.startIndex + 7] == UInt8(ascii: "1")
        var headers = HTTPHeaders()
        var contentLength: Int?
        var next = afterStatus
        while let start = next {
            let (field, following) = line(from: start)
            next = following
            guard let colon = field.firstIndex(of: UInt8(ascii: ":")), colon > field.startIndex,
                  field[..<colon].allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
                throw .malformedResponse("header field")
            }
            let name = String(decoding: field[..<colon], as: UTF8.self)
            let value = String(decoding: field[(colon + 1)...].trimmingHTTPWhitespace(), as: UTF8.self)
            if HTTPHeaders.namesEqual(name, "Content-Length") {
                // Digits only, at most 12 of them, before any arithmetic; a second, different value is refused.
                guard !value.isEmpty, value.utf8.count <= 12, value.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
                      let length = Int(value), contentLength == nil || contentLength == length else {
                    throw .malformedResponse("Content-Length")
                }
                contentLength = length
            } else if HTTPHeaders.namesEqual(name, "Transfer-Encoding") {
                throw .malformedResponse("Transfer-Encoding (only Content-Length framing is read)")
            } else if HTTPHeaders.namesEqual(name, "Connection") {
                let tokens = value.lowercased()
                if tokens.contains("close") { keepAlive = false } else if tokens.contains("keep-alive") { keepAlive = true }
            }
            headers.add(name: name, value: value)
        }
        guard code >= 200 else { throw .malformedResponse("an interim \(code) answer (no request asks for one)") }
        let bodyLength = isHead || code == 204 || code == 304 ? 0 : (contentLength ?? -1)
        guard bodyLength >= 0 else { throw .malformedResponse("no Content-Length") }
        guard bodyLength <= maxBodySize else { throw .responseTooLarge(limit: maxBodySize) }
        guard bytes.count - headEnd >= bodyLength else { return nil }
        guard bytes.count - headEnd == bodyLength else { throw .malformedResponse("bytes after the response") }
        return (HTTPClientResponse(status: HTTPStatus(code: code), headers: headers, body: Array(bytes[headEnd...])), keepAlive)
    }

    /// The offset just past the head's empty line, if `bytes` hold it.
    private static func headEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 3..<bytes.count where bytes[index] == 0x0A && bytes[index - 1] == 0x0D && bytes[index - 2] == 0x0A && bytes[index - 3] == 0x0D {
            return index + 1
        }
        return nil
    }
}

/// Where a `LoopbackHTTPClient` request goes: an `http://` URL with an IPv4 literal and a port; requests to one
/// address and port share kept connections.
package struct LoopbackOrigin: Hashable, Sendable {
    let address: UInt32
    let port: UInt16
    /// `host:port` as written in the URL (the `Host` field).
    let authority: String
    /// The path and query, as written in the URL (not part of the origin's identity).
    let target: String

    package static func == (lhs: Self, rhs: Self) -> Bool { lhs.address == rhs.address && lhs.port == rhs.port }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(address)
        hasher.combine(port)
    }

    package init(_ url: URL) throws(LoopbackHTTPError) {
        let text = url.absoluteString
        let utf8 = text.utf8
        guard utf8.starts(with: "http://".utf8) else { throw .invalidRequest("not an http:// URL: \(text)") }
        // Bytes, not characters: `http://`, then `a.b.c.d:port` and the target, each found by its ASCII delimiter.
        let rest = utf8.dropFirst(7)
        let slash = rest.firstIndex(of: UInt8(ascii: "/")) ?? rest.endIndex
        let authority = rest[..<slash]
        let colon = authority.firstIndex(of: UInt8(ascii: ":")) ?? authority.endIndex
        let portText = authority[colon...].dropFirst()
        guard colon < authority.endIndex, portText.count <= 5, !portText.contains(UInt8(ascii: ":")),
              let port = UInt16(Substring(portText)), port > 0,
              let host = IPAddress(Substring(authority[..<colon])), host.bytes.count == 4 else {
            throw .invalidRequest("not an IPv4 literal and port: \(Substring(authority))")
        }
        address = host.bytes.reduce(0) { $0 << 8 | UInt32($1) }
        self.port = port
        self.authority = String(Substring(authority))
        let target = rest[slash...]
        self.target = target.isEmpty ? "/" : String(Substring(target.prefix { $0 != UInt8(ascii: "#") }))
    }
}

/// Why a `LoopbackHTTPClient` exchange failed.
package enum LoopbackHTTPError: Error, Equatable, CustomStringConvertible {
    case invalidRequest(String)
    case system(String, Int32)
    case closedBeforeResponse
    case malformedResponse(String)
    case responseTooLarge(limit: Int)
    case timeout
    /// The sending task was cancelled.
    case cancelled
    /// A kept connection had been closed by the server: the request is sent again on a new one.
    case staleConnection

    package var description: String {
        switch self {
        case .invalidRequest(let what): "invalid request: \(what)"
        case .system(let call, let code): "\(call): \(String(cString: strerror(code)))"
        case .closedBeforeResponse: "the server closed the connection before its response was complete"
        case .malformedResponse(let what): "malformed response: \(what)"
        case .responseTooLarge(let limit): "response body over \(limit) bytes"
        case .timeout: "no complete response before the request's timeout"
        case .cancelled: "cancelled"
        case .staleConnection: "the kept connection was closed by the server"
        }
    }
}
