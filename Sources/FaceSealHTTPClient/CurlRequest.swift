import Foundation

/// An `HTTPClientRequest` checked and reduced to what libcurl is given: every refusal happens here, before any
/// connection, so a request that cannot be sent exactly as written is never sent at all.
struct CurlRequest: Sendable {
    /// The absolute URL as text.
    let url: String
    /// The URL's host, and `host:port` (what a refused connection names).
    let host: String
    let address: String
    /// The method token.
    let method: String
    /// `Name: value` lines (`Name;` for an empty value, libcurl's spelling), plus the lines that switch off
    /// libcurl's own defaults that the caller did not ask for.
    let headerLines: [String]
    /// The body, or nil when none is sent (no `Content-Length` either).
    let body: [UInt8]?
    /// The whole exchange's deadline, in milliseconds (at least 1: libcurl reads 0 as "never").
    let timeoutMilliseconds: Int
    /// Largest response body accepted.
    let maxBodySize: Int
    /// Largest response head accepted.
    let maxHeadSize: Int

    /// Framing fields libcurl computes from the body itself; a caller's value would contradict it.
    private static let framingFields = ["Content-Length", "Transfer-Encoding"]

    init(_ request: HTTPClientRequest, configuration: HTTPClient.Configuration) throws(HTTPClientError) {
        let url = request.url
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = url.host, !host.isEmpty else {
            throw .invalidURL(url.absoluteString)
        }
        let message = try Self.message(request)
        self.url = url.absoluteString
        self.host = host
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        // Byte tests: `String.contains(_:)` on text goes through Foundation's NSString search.
        address = host.utf8.contains(UInt8(ascii: ":")) && host.utf8.first != UInt8(ascii: "[") ? "[\(host)]:\(port)" : "\(host):\(port)"
        method = message.method
        headerLines = message.headerLines
        body = message.body
        timeoutMilliseconds = Self.milliseconds(request.timeout)
        maxBodySize = Self.maxBodySize(request, configuration: configuration)
        maxHeadSize = max(0, configuration.maxResponseHeadSize)
    }

    /// A request's method, field lines and body as libcurl is given them (everything but the URL).
    typealias Message = (method: String, headerLines: [String], body: [UInt8]?)

    /// The request's `Message`: the method and field names tokens, no CR, LF or NUL in a value, values trimmed, the
    /// caller's framing fields dropped, and the lines that switch off libcurl's defaults the caller did not ask for.
    static func message(_ request: HTTPClientRequest) throws(HTTPClientError) -> Message {
        guard Self.isToken(request.method.rawValue) else { throw .invalidRequest("method \(request.method.rawValue) is not a token") }
        var lines: [String] = []
        for field in request.headers where !Self.framingFields.contains(where: { HTTPHeaders.namesEqual($0, field.name) }) {
            guard Self.isToken(field.name) else { throw .invalidRequest("header name \(field.name.debugDescription) is not a token") }
            guard !field.value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) else {
                throw .invalidRequest("the value of header \(field.name) contains CR, LF or NUL")
            }
            let value = Self.trimmed(field.value)
            lines.append(value.isEmpty ? "\(field.name);" : "\(field.name): \(value)")
        }
        let method = request.method.rawValue
        let sendsBody = switch method {
        case "HEAD": false
        case "GET", "DELETE", "OPTIONS": !request.body.isEmpty
        default: true
        }
        // No `Expect: 100-continue` round trip, and no form Content-Type the caller did not choose.
        lines.append("Expect:")
        if sendsBody, !request.headers.contains("Content-Type") { lines.append("Content-Type:") }
        return (method, lines, sendsBody ? request.body : nil)
    }

    /// The largest response body `request` accepts: its own limit, else the client's.
    static func maxBodySize(_ request: HTTPClientRequest, configuration: HTTPClient.Configuration) -> Int {
        max(0, request.maxResponseBodySize ?? configuration.maxResponseBodySize)
    }

    /// `duration` in whole milliseconds, rounded up, within 1 ms … 24 days (libcurl's `long` and `int` polls).
    static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        let ceiling = Int64(Int32.max) / 1000
        guard seconds >= 0 else { return 1 }
        guard seconds < ceiling else { return Int(Int32.max) }
        let fraction = (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return max(1, Int(seconds * 1000 + fraction))
    }

    /// RFC 9110 §5.6.2 `token`: one or more tchar.
    static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                true
            case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
                 UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
                 UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
                true
            default:
                false
            }
        }
    }

    /// Without leading and trailing spaces and tabs (optional whitespace around a field value).
    static func trimmed(_ text: String) -> String {
        let trimmed = text.utf8[...].trimmingHTTPWhitespace()
        // Most values have nothing to trim: no copy then.
        if trimmed.startIndex == text.utf8.startIndex && trimmed.endIndex == text.utf8.endIndex { return text }
        return String(Substring(trimmed))
    }
}
