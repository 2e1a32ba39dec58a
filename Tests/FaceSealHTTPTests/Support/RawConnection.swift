import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A raw TCP connection for what an HTTP client hides: keep-alive reuse, chunked uploads, exact bytes.
/// Its blocking calls run on a dedicated thread (`blocking`) so they never occupy Swift's
/// cooperative pool, which the server's handlers need.
final class RawConnection: Sendable {
    struct Response: Sendable {
        var status: Int
        var headers: [String: String]  // lowercased names
        var body: [UInt8]
    }

    enum Failure: Error { case socket(Int32), closed, malformed }

    let fd: Int32

    /// Connects to `host:port`; with `source`, from that local IPv4 address (127.0.0.2… play other clients).
    init(port: Int, host: String = "127.0.0.1", source: String? = nil) throws {
        let family = host.contains(":") ? AF_INET6 : AF_INET
        fd = socket(family, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure.socket(errno) }
        // A bound on every read, so a broken server fails the test instead of hanging it.
        var timeout = timeval(tv_sec: 20, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let result: Int32
        if family == AF_INET6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = in_port_t(UInt16(port).bigEndian)
            inet_pton(AF_INET6, host, &address.sin6_addr)
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        } else {
            if let source {
                var local = sockaddr_in()
                local.sin_family = sa_family_t(AF_INET)
                inet_pton(AF_INET, source, &local.sin_addr)
                let bound = withUnsafePointer(to: &local) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
                }
                guard bound == 0 else {
                    let code = errno
                    close(fd)
                    throw Failure.socket(code)
                }
            }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            inet_pton(AF_INET, host, &address.sin_addr)
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        guard result == 0 else {
            let code = errno
            close(fd)
            throw Failure.socket(code)
        }
    }

    deinit { close(fd) }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw Failure.socket(errno) }
            offset += sent
        }
    }

    /// Bytes read past the end of the last response (pipelined responses arrive together).
    private let pending = Mutex<[UInt8]>([])

    /// Reads one response framed by `Content-Length` (all this server sends).
    func readResponse() throws -> Response { try read(bodyExpected: true) }

    /// Reads a response head only (the answer to HEAD: `Content-Length` without a body).
    func readHead() throws -> Response { try read(bodyExpected: false) }

    private func read(bodyExpected: Bool) throws -> Response {
        var buffer = pending.withLock { pending in
            defer { pending = [] }
            return pending
        }
        let separator = Array("\r\n\r\n".utf8)
        // A pipelined response may already be complete in what the last read left over.
        var headEnd = buffer.firstRange(of: separator)?.upperBound
        while headEnd == nil {
            try readMore(into: &buffer)
            headEnd = buffer.firstRange(of: separator)?.upperBound
        }
        let head = String(decoding: buffer[..<headEnd!], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw Failure.malformed }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { throw Failure.malformed }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let length = bodyExpected ? Int(headers["content-length"] ?? "0") ?? 0 : 0
        while buffer.count - headEnd! < length { try readMore(into: &buffer) }
        let end = headEnd! + length
        pending.withLock { $0 = Array(buffer[end...]) }
        return Response(status: status, headers: headers, body: Array(buffer[headEnd!..<end]))
    }

    /// Waits for the peer to close the connection: true on end-of-stream or reset, false if the
    /// receive bound passed first (or data arrived instead).
    func isClosedByPeer() -> Bool {
        var byte: UInt8 = 0
        let count = recv(fd, &byte, 1, 0)
        return count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
    }

    /// Whether the connection is open with nothing to read, at this instant (never waits).
    func isOpenWithoutData() -> Bool {
        var byte: UInt8 = 0
        let count = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        return count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)
    }

    /// Shortens the bound on each read (the default is 20 s).
    func setReceiveTimeout(milliseconds: Int) {
        var timeout = timeval(tv_sec: milliseconds / 1000, tv_usec: (milliseconds % 1000) * 1000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    private func readMore(into buffer: inout [UInt8]) throws {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { throw count == 0 ? Failure.closed : Failure.socket(errno) }
        buffer.append(contentsOf: chunk[..<count])
    }
}

/// Runs blocking work on its own thread and awaits the result.
func blocking<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try work() }) }
        thread.start()
    }
}
