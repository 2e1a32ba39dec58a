public import Foundation

/// A request for `HTTPClient.send`.
public struct HTTPClientRequest: Sendable {
    /// The method to send.
    public var method: HTTPMethod
    /// An absolute `http` or `https` URL.
    public var url: URL
    /// Request headers (`Content-Length` is computed).
    public var headers: HTTPHeaders
    /// The body, sent byte for byte.
    public var body: [UInt8]
    /// Deadline for the whole exchange (connect, send, receive).
    public var timeout: Duration
    /// Largest response body accepted for this request; nil uses the client's limit.
    public var maxResponseBodySize: Int?

    /// A request; the timeout defaults to 30 s.
    public init(
        method: HTTPMethod = .get,
        url: URL,
        headers: HTTPHeaders = [:],
        body: [UInt8] = [],
        timeout: Duration = .seconds(30),
        maxResponseBodySize: Int? = nil
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.maxResponseBodySize = maxResponseBodySize
    }

    /// A request whose body is `value` as JSON (sorted keys) with `Content-Type: application/json`.
    public static func json(
        _ method: HTTPMethod = .post,
        url: URL,
        value: some Encodable,
        headers: HTTPHeaders = [:],
        timeout: Duration = .seconds(30)
    ) throws -> HTTPClientRequest {
        var headers = headers
        if !headers.contains("Content-Type") { headers["Content-Type"] = "application/json" }
        return HTTPClientRequest(method: method, url: url, headers: headers, body: try JSONBody.encode(value), timeout: timeout)
    }

    /// A request whose body is `form` with `Content-Type: application/x-www-form-urlencoded`.
    public static func form(
        _ method: HTTPMethod = .post,
        url: URL,
        form: FormParameters,
        headers: HTTPHeaders = [:],
        timeout: Duration = .seconds(30)
    ) -> HTTPClientRequest {
        var headers = headers
        headers["Content-Type"] = "application/x-www-form-urlencoded"
        return HTTPClientRequest(method: method, url: url, headers: headers, body: Array(form.encoded.utf8), timeout: timeout)
    }
}

/// A response received by `HTTPClient`. Any status is a response (a 4xx is not an error here).
public struct HTTPClientResponse: Sendable {
    /// The status received.
    public var status: HTTPStatus
    /// The response headers, looked up case-insensitively.
    public var headers: HTTPHeaders
    /// The body exactly as received (within the client's size limit).
    public var body: [UInt8]

    /// A response built in code (test doubles).
    public init(status: HTTPStatus, headers: HTTPHeaders = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The body decoded as JSON, size-limited; the `Content-Type` is not checked.
    public func decodeJSON<T: Decodable>(
        _ type: T.Type,
        maxBytes: Int = JSONBody.defaultMaxBytes,
        decoder: JSONDecoder = JSONDecoder()
    ) throws(JSONDecodingError) -> T {
        try JSONBody.decode(type, from: body, maxBytes: maxBytes, decoder: decoder)
    }
}
