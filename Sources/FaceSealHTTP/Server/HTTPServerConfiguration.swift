public import Foundation

extension HTTPServer {
    /// Everything that shapes a server, in one value.
    public struct Configuration: Sendable {
        /// Numeric IPv4 or IPv6 address to listen on. Default: loopback only.
        public var host: String
        /// TCP port; 0 picks an ephemeral port, readable from `HTTPServer.port` after `start()`.
        public var port: Int
        /// Largest request body accepted. A larger declared `Content-Length` gets 413 before the body
        /// is read; a chunked body that grows past it has its connection closed.
        public var maxBodySize: Int
        /// A connection idle for this long is closed (whole seconds, fractions rounded up; zero disables it).
        public var connectionTimeout: Duration
        /// Most connections open at once; 0 leaves libmicrohttpd's default.
        public var connectionLimit: Int
        /// Most connections open at once from one IP address (0: no such limit). Connections over it are closed at
        /// once, so one client cannot take the whole `connectionLimit`. Behind a reverse proxy, where every
        /// connection comes from the proxy's address, raise it or set 0.
        public var perAddressConnectionLimit: Int
        /// How long a connection has to deliver a complete request head, from its accept and again after each
        /// response (whole seconds, fractions rounded up; zero disables it). A deadline, not an idle timeout:
        /// a client trickling one byte at a time is closed when it passes.
        public var requestHeadTimeout: Duration
        /// Where the request-head deadlines take their time from: the monotonic clock, or (tests) a manual clock that
        /// only `HTTPServer.advanceRequestHeadClock(by:)` moves.
        var requestHeadClock = RequestHeadClock.monotonic
        /// Worker threads of libmicrohttpd's internal epoll pool. They do the I/O and run each handler up to its
        /// first suspension point; the rest runs on Swift's concurrency pool. 1 means a single polling thread.
        public var threadPoolSize: Int
        /// Bytes per connection for the request line, headers and read buffer; 0 leaves the library
        /// default (32 KiB). Longer request heads are refused by libmicrohttpd (414/431).
        public var connectionMemoryLimit: Int

        /// Defaults: loopback, ephemeral port, 1 MiB bodies, 30 s idle timeout, 1024 connections of which at most
        /// 128 from one address, 10 s for a request head, a pool of min(cores, 4).
        public init(
            host: String = "127.0.0.1",
            port: Int = 0,
            maxBodySize: Int = 1 << 20,
            connectionTimeout: Duration = .seconds(30),
            connectionLimit: Int = 1024,
            perAddressConnectionLimit: Int = 128,
            requestHeadTimeout: Duration = .seconds(10),
            threadPoolSize: Int = max(1, min(ProcessInfo.processInfo.activeProcessorCount, 4)),
            connectionMemoryLimit: Int = 0
        ) {
            self.host = host
            self.port = port
            self.maxBodySize = maxBodySize
            self.connectionTimeout = connectionTimeout
            self.connectionLimit = connectionLimit
            self.perAddressConnectionLimit = perAddressConnectionLimit
            self.requestHeadTimeout = requestHeadTimeout
            self.threadPoolSize = threadPoolSize
            self.connectionMemoryLimit = connectionMemoryLimit
        }
    }
}

/// The time source of request-head deadlines.
enum RequestHeadClock: Sendable {
    /// Real time, watched by a thread of the server's own.
    case monotonic
    /// Time that stands still until `HTTPServer.advanceRequestHeadClock(by:)` moves it, so a test decides when a
    /// deadline passes.
    case manual
}

/// Why `HTTPServer.start()` failed.
public enum HTTPServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `host` is not a numeric IPv4 or IPv6 address.
    case invalidHost(String)
    /// A configuration value is out of range (which one).
    case invalidConfiguration(String)
    /// libmicrohttpd could not start (usually the port is taken); `errno` as the library left it.
    case startFailed(host: String, port: Int, errno: Int32)
    /// `start()` was called on a server that is running or was stopped (servers are single-use).
    case alreadyStarted

    /// A one-line explanation for logs and CLI output.
    public var description: String {
        switch self {
        case .invalidHost(let host): "invalid listen address '\(host)' (numeric IPv4/IPv6 only)"
        case .invalidConfiguration(let what): "invalid server configuration: \(what)"
        case .startFailed(let host, let port, let code): "cannot listen on \(host):\(port): \(String(cString: strerror(code)))"
        case .alreadyStarted: "server already started"
        }
    }
}
