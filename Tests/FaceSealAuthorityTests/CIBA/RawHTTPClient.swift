import FaceSealHTTP
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A minimal blocking HTTP/1.1 client over a POSIX socket, for code that runs on a thread of its own and cannot
/// await (the `faceseal serve` child-process test) or must pick its source address. Everything else uses `HTTPClient`.
enum RawHTTPClient {
    enum Failure: Error { case connect, send, malformedResponse }

    /// The exchange itself, blocking the calling thread (never call it on the cooperative pool); with `source`, from
    /// that local IPv4 address (127.0.0.2… play other clients).
    static func exchange(_ request: HTTPClientRequest, source: String? = nil) throws -> HTTPClientResponse {
        guard let host = request.url.host, let port = request.url.port else { throw Failure.connect }
        let descriptor = try connected(host: host, port: port, source: source)
        defer { close(descriptor) }
        var path = request.url.path.isEmpty ? "/" : request.url.path
        if let query = request.url.query { path += "?" + query }
        var head = "\(request.method.rawValue) \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nConnection: close\r\n"
        for field in request.headers { head += "\(field.name): \(field.value)\r\n" }
        head += "Content-Length: \(request.body.count)\r\n\r\n"
        let bytes = Array(head.utf8) + request.body
        guard write(descriptor, bytes, bytes.count) == bytes.count else { throw Failure.send }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = read(descriptor, &buffer, buffer.count)
            if count < 0, errno == EINTR { continue }
            if count <= 0 { break }
            received += buffer[0..<count]
        }
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        guard let end = (0...(max(0, received.count - 4))).first(where: { Array(received[$0..<min($0 + 4, received.count)]) == separator })
        else { throw Failure.malformedResponse }
        let lines = String(decoding: received[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { throw Failure.malformedResponse }
        var headers = HTTPHeaders()
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.add(name: String(line[..<colon]), value: line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        return HTTPClientResponse(status: HTTPStatus(code: status), headers: headers, body: Array(received[(end + 4)...]))
    }

    /// A socket connected to `host:port` (IPv4), from `source` when given, with a 120 s bound on each read.
    static func connected(host: String, port: Int, source: String? = nil) throws -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure.connect }
        var timeout = timeval(tv_sec: 120, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        func ipv4(_ text: String, port: Int) -> sockaddr_in? {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            return inet_pton(AF_INET, text, &address.sin_addr) == 1 ? address : nil
        }
        func call(_ address: sockaddr_in, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
            withUnsafePointer(to: address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        }
        if let source {
            guard let local = ipv4(source, port: 0), call(local, { bind(descriptor, $0, $1) }) == 0 else {
                close(descriptor)
                throw Failure.connect
            }
        }
        guard let remote = ipv4(host, port: port), call(remote, { connect(descriptor, $0, $1) }) == 0 else {
            close(descriptor)
            throw Failure.connect
        }
        return descriptor
    }
}

/// Runs blocking socket work on a thread of its own, never on the cooperative pool the server's handlers need.
func onItsOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}
