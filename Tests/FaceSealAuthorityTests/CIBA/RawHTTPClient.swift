import FaceSealHTTP
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A minimal blocking HTTP/1.1 client over a POSIX socket, for code that runs on a thread of its own and cannot
/// await (the `faceseal serve` child-process test). Everything else uses `HTTPClient`.
enum RawHTTPClient {
    enum Failure: Error { case connect, send, malformedResponse }

    /// The exchange itself, blocking the calling thread (never call it on the cooperative pool).
    static func exchange(_ request: HTTPClientRequest) throws -> HTTPClientResponse {
        guard let host = request.url.host, let port = request.url.port else { throw Failure.connect }
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure.connect }
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: 120, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { throw Failure.connect }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw Failure.connect }
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
}
