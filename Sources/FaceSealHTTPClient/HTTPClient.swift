/// A small HTTP/1.1 client on libcurl for talking to the authority and to delivery endpoints.
///
/// Each client owns one libcurl multi handle, driven by a thread of its own that sleeps in `epoll_wait` on the
/// transfers' sockets while it waits: no busy loop, and the Swift concurrency pool is never blocked. Connections are
/// kept alive and reused between requests to the same host.
///
/// Redirects are not followed (a 3xx comes back as the response), so a bearer token never travels to another
/// origin. Only `http` and `https`; HTTPS certificates and host names are verified against the system's CA store.
/// No cookies, no `~/.netrc`, no proxies (the `http_proxy`/`https_proxy`/`ALL_PROXY` environment is ignored: the
/// authority and delivery endpoints are reached directly). Response heads and bodies are capped while they stream in.
public final class HTTPClient: Sendable {
    /// Client-wide settings.
    public struct Configuration: Sendable {
        /// Largest response body accepted, in bytes.
        public var maxResponseBodySize: Int
        /// Parallel connections to one host; further requests wait for a free one (within their own deadline).
        public var maxConnectionsPerHost: Int
        /// Largest response head (status line and header fields, interim 1xx heads included), in bytes.
        public var maxResponseHeadSize: Int
        /// Which addresses the client may connect to.
        public var destinations: Destinations

        /// Defaults: 4 MiB bodies, 16 connections per host, 64 KiB heads, any address.
        public init(maxResponseBodySize: Int = 4 << 20, maxConnectionsPerHost: Int = 16, maxResponseHeadSize: Int = 64 << 10,
                    destinations: Destinations = .any) {
            self.maxResponseBodySize = maxResponseBodySize
            self.maxConnectionsPerHost = maxConnectionsPerHost
            self.maxResponseHeadSize = maxResponseHeadSize
            self.destinations = destinations
        }
    }

    /// Which addresses a client may connect to.
    public enum Destinations: String, Sendable, CaseIterable {
        /// Any address the URL's host resolves to.
        case any
        /// Public unicast addresses only: never loopback, private (RFC 1918, unique-local), shared, link-local
        /// (cloud metadata services among them), multicast or reserved ones. Checked for each address libcurl is
        /// about to connect to, after name resolution, so a name resolving to an internal address is refused as well
        /// (`HTTPClientError.destinationNotPublic`). For requests whose URL a less trusted party chose.
        case publicOnly = "public"
    }

    /// The settings the client was created with.
    public let configuration: Configuration
    private let loop: CurlTransferLoop

    /// A client with its own connections; share one per process where possible. Its thread starts with the
    /// first request and ends with the client.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        loop = CurlTransferLoop(maxConnectionsPerHost: configuration.maxConnectionsPerHost,
                                publicAddressesOnly: configuration.destinations == .publicOnly)
    }

    deinit {
        loop.stop()
    }

    /// Sends `request` and returns the response, whatever its status. Cancelling the calling task aborts the
    /// transfer at once and throws `.cancelled`.
    public func send(_ request: HTTPClientRequest) async throws(HTTPClientError) -> HTTPClientResponse {
        let ticket = TransferTicket(request: try CurlRequest(request, configuration: configuration))
        let loop = self.loop
        let result = await withTaskCancellationHandler {
            await withUnsafeContinuation { continuation in
                if ticket.attach(continuation) { loop.submit(ticket) }
            }
        } onCancel: {
            if ticket.cancel() { loop.wake() }
        }
        return try result.get()
    }

    /// New connections opened so far (a reused keep-alive connection adds nothing).
    var connectionsOpened: Int { loop.connectionsOpened }
}
