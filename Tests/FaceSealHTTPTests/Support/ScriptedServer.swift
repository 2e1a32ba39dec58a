import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A loopback TCP server that plays one fixed part for every connection, for what a well-behaved HTTP server
/// never does: answer with exact bytes (then hang up), accept and never answer, or hang up without a word.
/// Its blocking calls run on a thread of its own, never on Swift's cooperative pool. Use it through
/// `withScriptedServer`, which always stops it.
final class ScriptedServer: Sendable {
    enum Script: Sendable {
        /// Reads the request head, writes these bytes, closes.
        case answer([UInt8])
        /// Reads the request head and keeps the connection open without a byte in reply.
        case silent
        /// Reads the request head and closes.
        case hangUp
    }

    enum Failure: Error { case socket(Int32) }

    private struct State {
        var held: [Int32] = []
        var accepted = 0
        var stopped = false
    }

    /// The port it listens on (127.0.0.1).
    let port: Int
    /// Every request head received, as text, in order.
    let heads: AsyncStream<String>
    private let listener: Int32
    private let state = Mutex(State())

    init(_ script: Script) throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw Failure.socket(errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 16) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        guard bound else {
            let code = errno
            close(listener)
            throw Failure.socket(code)
        }
        self.listener = listener
        port = Int(UInt16(bigEndian: address.sin_port))
        let (heads, sink) = AsyncStream<String>.makeStream()
        self.heads = heads
        let thread = Thread { [self] in serve(script, sink) }
        thread.start()
    }

    /// The URL of `path` on this server.
    func url(_ path: String = "/") -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    /// Connections accepted so far.
    var accepted: Int { state.withLock { $0.accepted } }

    /// Stops accepting and closes every held connection.
    func stop() {
        let held = state.withLock { state -> [Int32] in
            guard !state.stopped else { return [] }
            state.stopped = true
            defer { state.held = [] }
            return state.held
        }
        held.forEach { close($0) }
        // Wakes the blocked accept(); the serving thread then closes the listener.
        shutdown(listener, Int32(SHUT_RDWR))
    }

    private func serve(_ script: Script, _ sink: AsyncStream<String>.Continuation) {
        defer {
            close(listener)
            sink.finish()
        }
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            var timeout = timeval(tv_sec: 20, tv_usec: 0)
            setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            state.withLock { $0.accepted += 1 }
            sink.yield(Self.readHead(connection))
            switch script {
            case .answer(let bytes):
                _ = bytes.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                close(connection)
            case .hangUp:
                close(connection)
            case .silent:
                let kept = state.withLock { state -> Bool in
                    guard !state.stopped else { return false }
                    state.held.append(connection)
                    return true
                }
                if !kept { close(connection) }
            }
        }
    }

    /// Bytes up to the blank line that ends a request head (or whatever arrived before the peer stopped).
    private static func readHead(_ connection: Int32) -> String {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while received.firstRange(of: Array("\r\n\r\n".utf8)) == nil {
            let count = recv(connection, &buffer, buffer.count, 0)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            received += buffer[..<count]
        }
        return String(decoding: received, as: UTF8.self)
    }
}

/// Runs `body` with a scripted server, and always stops it.
@discardableResult
func withScriptedServer<T>(_ script: ScriptedServer.Script, _ body: (ScriptedServer) async throws -> T) async throws -> T {
    let server = try ScriptedServer(script)
    defer { server.stop() }
    return try await body(server)
}
