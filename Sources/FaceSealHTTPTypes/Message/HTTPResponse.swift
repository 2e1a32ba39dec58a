public import Foundation

/// What a handler returns: a status, headers and the exact body bytes.
///
/// `Content-Length` is computed by the server; `Content-Length` and `Transfer-Encoding` set here are
/// ignored. The server adds `X-Request-Id`.
public struct HTTPResponse: Sendable, Equatable {
    /// The status to send.
    public var status: HTTPStatus
    /// Response headers (the server adds `X-Request-Id`).
    public var headers: HTTPHeaders
    /// The body, sent byte for byte (so a signature over it stays valid).
    public var body: [UInt8]

    /// A response; 200 with no headers and no body by default.
    public init(status: HTTPStatus = .ok, headers: HTTPHeaders = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON response: `value` encoded with `JSONBody.encode` (sorted keys), `Content-Type: application/json`.
    public static func json(
        _ value: some Encodable,
        status: HTTPStatus = .ok,
        headers: HTTPHeaders = [:],
        encoder: JSONEncoder = JSONBody.makeEncoder()
    ) throws -> HTTPResponse {
        try HTTPResponse(jsonBytes: JSONBody.encode(value, encoder: encoder), status: status, headers: headers)
    }

    /// A JSON response from bytes the caller already holds (e.g. bytes it signed).
    public init(jsonBytes: [UInt8], status: HTTPStatus = .ok, headers: HTTPHeaders = [:]) {
        var headers = headers
        if !headers.contains("Content-Type") { headers["Content-Type"] = "application/json" }
        self.init(status: status, headers: headers, body: jsonBytes)
    }

    /// A `text/plain; charset=utf-8` response.
    public static func text(_ text: String, status: HTTPStatus = .ok, headers: HTTPHeaders = [:]) -> HTTPResponse {
        var headers = headers
        if !headers.contains("Content-Type") { headers["Content-Type"] = "text/plain; charset=utf-8" }
        return HTTPResponse(status: status, headers: headers, body: Array(text.utf8))
    }

    /// A response with no body (204 by default).
    public static func empty(_ status: HTTPStatus = .noContent, headers: HTTPHeaders = [:]) -> HTTPResponse {
        HTTPResponse(status: status, headers: headers)
    }
}
