public import Foundation

/// A complete HTTP request as a handler sees it: the body is fully read (and within the server's
/// limit) before the handler runs.
public struct HTTPRequest: Sendable {
    /// A random id for this request, also sent back as `X-Request-Id` and written to the log.
    public let id: String
    /// The request method.
    public var method: HTTPMethod
    /// The path exactly as received, still percent-encoded, without the query (what a client signs).
    public var path: String
    /// The path split on `/` and percent-decoded, without the leading empty segment (`/a/b` → `["a", "b"]`).
    public var pathSegments: [String]
    /// The raw query string after `?`, if any.
    public var rawQuery: String?
    /// The decoded query; repeated names are kept (use `FormParameters.required` / `.optional` to refuse them).
    public var query: FormParameters
    /// Request headers, looked up case-insensitively.
    public var headers: HTTPHeaders
    /// The body bytes exactly as received.
    public var body: [UInt8]
    /// The peer's numeric IP address, when known.
    public var remoteAddress: String?
    /// Values of the matched route's `:name` segments, set by `Router`.
    public var pathParameters: [String: String]

    /// A request built in code (tests, in-process dispatch). `path` may carry a query after `?`.
    public init(
        method: HTTPMethod,
        path: String,
        headers: HTTPHeaders = [:],
        body: [UInt8] = [],
        remoteAddress: String? = nil,
        id: String = RequestID.make()
    ) throws(HTTPRequestTargetError) {
        let target = try RequestTarget(parsing: path)
        self.init(id: id, method: method, target: target, headers: headers, body: body, remoteAddress: remoteAddress)
    }

    package init(id: String, method: HTTPMethod, target: RequestTarget, headers: HTTPHeaders, body: [UInt8], remoteAddress: String?) {
        self.id = id
        self.method = method
        self.path = target.path
        self.pathSegments = target.segments
        self.rawQuery = target.rawQuery
        self.query = target.query
        self.headers = headers
        self.body = body
        self.remoteAddress = remoteAddress
        self.pathParameters = [:]
    }

    /// The value of the route's `:name` segment; a route without it is a programming error.
    public func pathParameter(_ name: String) -> String {
        guard let value = pathParameters[name] else {
            preconditionFailure("route has no path parameter ':\(name)' (have: \(pathParameters.keys.sorted()))")
        }
        return value
    }

    /// The body decoded as JSON after checking `Content-Type` (`application/json` or `…+json`) and size.
    public func decodeJSON<T: Decodable>(
        _ type: T.Type,
        maxBytes: Int = JSONBody.defaultMaxBytes,
        decoder: JSONDecoder = JSONDecoder()
    ) throws(JSONDecodingError) -> T {
        let contentType = headers["Content-Type"]
        guard MediaType.isJSON(contentType) else { throw .unsupportedContentType(contentType) }
        return try JSONBody.decode(type, from: body, maxBytes: maxBytes, decoder: decoder)
    }

    /// The body parsed as `application/x-www-form-urlencoded` after checking `Content-Type`.
    /// Repeated names are refused unless `allowDuplicates` (OAuth 2.0 §3.1 forbids them).
    public func formParameters(
        limits: FormParameters.Limits = FormParameters.Limits(),
        allowDuplicates: Bool = false
    ) throws(FormDecodingError) -> FormParameters {
        let contentType = headers["Content-Type"]
        guard MediaType.isFormURLEncoded(contentType) else { throw .unsupportedContentType(contentType) }
        return try FormParameters(parsing: body, limits: limits, allowDuplicates: allowDuplicates)
    }
}

/// Why a request target (path and query) was refused; the server answers 400 before any handler runs.
public enum HTTPRequestTargetError: Error, Sendable, Equatable, HTTPResponseConvertible {
    /// Not an origin-form target (`/path?query`).
    case notOriginForm
    /// A path segment with a malformed percent escape or invalid UTF-8.
    case invalidPath
    /// The query string could not be parsed.
    case invalidQuery(FormDecodingError)

    /// 400 `invalid_request`.
    public var httpResponse: HTTPResponse {
        switch self {
        case .notOriginForm: HTTPError.badRequest("request target must be an absolute path").httpResponse
        case .invalidPath: HTTPError.badRequest("malformed path").httpResponse
        case .invalidQuery(let error): error.httpResponse
        }
    }
}

/// The request target split into path and query (RFC 9112 §3.2.1, origin-form only).
package struct RequestTarget: Sendable {
    /// Query strings are bounded by libmicrohttpd's per-connection memory; this caps the pair count.
    package static let queryLimits = FormParameters.Limits(maxBytes: 16 * 1024, maxParameters: 64)

    package let path: String
    package let segments: [String]
    package let rawQuery: String?
    package let query: FormParameters

    package init(parsing target: String) throws(HTTPRequestTargetError) {
        // Split on the first `?` by bytes (ASCII, so a character boundary): no grapheme breaking per request.
        let queryStart = target.utf8.firstIndex(of: UInt8(ascii: "?"))
        let path = queryStart.map { String(target[..<$0]) } ?? target
        guard path.utf8.first == UInt8(ascii: "/") else { throw .notOriginForm }
        self.path = path
        // One pass over the bytes: a segment without `%` is a slice of the path (valid UTF-8 already, being a String).
        let bytes = path.utf8
        var segments: [String] = []
        segments.reserveCapacity(8)
        var start = bytes.index(after: bytes.startIndex)
        var escaped = false
        var index = start
        while true {
            let atEnd = index == bytes.endIndex
            if atEnd || bytes[index] == UInt8(ascii: "/") {
                if escaped {
                    guard let segment = Self.percentDecode(bytes[start..<index]) else { throw .invalidPath }
                    segments.append(segment)
                } else {
                    segments.append(String(Substring(bytes[start..<index])))
                }
                if atEnd { break }
                start = bytes.index(after: index)
                escaped = false
            } else if bytes[index] == UInt8(ascii: "%") {
                escaped = true
            }
            index = bytes.index(after: index)
        }
        self.segments = segments
        if let queryStart {
            let rawQuery = String(target[target.utf8.index(after: queryStart)...])
            self.rawQuery = rawQuery
            do {
                query = try FormParameters(parsing: Array(rawQuery.utf8), limits: Self.queryLimits, allowDuplicates: true)
            } catch {
                throw .invalidQuery(error)
            }
        } else {
            rawQuery = nil
            query = FormParameters([])
        }
    }

    /// Percent-decoding of a path segment with a `%` in it: unlike forms, `+` stays a plus.
    private static func percentDecode(_ raw: Substring.UTF8View) -> String? {
        var escaped: [UInt8] = []
        for byte in raw { escaped.append(contentsOf: byte == UInt8(ascii: "+") ? Array("%2B".utf8) : [byte]) }
        return try? FormParameters.decode(escaped)
    }
}
