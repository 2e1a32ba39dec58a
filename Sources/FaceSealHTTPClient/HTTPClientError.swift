/// Why `HTTPClient.send` produced no response. Each case says what a caller can act on; the strings are
/// libcurl's own explanation (never request headers or bodies).
public enum HTTPClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The URL is not an absolute `http` or `https` URL with a host.
    case invalidURL(String)
    /// The request cannot be sent as given (a header name or value, or the method, is not valid HTTP).
    case invalidRequest(String)
    /// The host name did not resolve.
    case hostNotFound(String)
    /// The host answered the connection attempt with a refusal: nothing listens on that port (`host:port`).
    case connectionRefused(String)
    /// The client may connect to public addresses only, and the host resolved to none (`host:port`).
    case destinationNotPublic(String)
    /// No connection could be made for another reason (network or host unreachable).
    case unreachable(String)
    /// The TLS handshake or the certificate check failed; the reason as libcurl and OpenSSL gave it.
    case tls(String)
    /// The request's deadline passed before the response was complete.
    case timeout
    /// The response body is, or announced it would be, larger than the limit.
    case responseTooLarge(limit: Int)
    /// The response's status line and header fields are larger than the limit.
    case responseHeadTooLarge(limit: Int)
    /// The calling task was cancelled; the transfer was aborted.
    case cancelled
    /// Any other transport failure (connection lost mid-response, a malformed answer, …).
    case transport(String)

    /// A one-line explanation for logs.
    public var description: String {
        switch self {
        case .invalidURL(let url): "invalid URL \(url)"
        case .invalidRequest(let reason): "invalid request: \(reason)"
        case .hostNotFound(let host): "host not found: \(host)"
        case .connectionRefused(let address): "connection refused by \(address)"
        case .destinationNotPublic(let address): "refused to connect to \(address): not a public address"
        case .unreachable(let reason): "unreachable: \(reason)"
        case .tls(let reason): "TLS failure: \(reason)"
        case .timeout: "timed out"
        case .responseTooLarge(let limit): "response body exceeds \(limit) bytes"
        case .responseHeadTooLarge(let limit): "response head exceeds \(limit) bytes"
        case .cancelled: "cancelled"
        case .transport(let reason): "transport error: \(reason)"
        }
    }
}
