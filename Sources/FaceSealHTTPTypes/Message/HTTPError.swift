/// An error that knows the response it should become.
///
/// The server catches whatever a handler throws: an error conforming to this protocol is sent as
/// its `httpResponse`; any other error becomes a bare 500 whose body reveals nothing about it.
/// Authority errors (CIBA, device API) conform so a handler can simply `throw`.
public protocol HTTPResponseConvertible: Error {
    /// The response to send. It must not contain secrets: it goes to whoever sent the request.
    var httpResponse: HTTPResponse { get }
}

/// A ready-made error response in the OAuth 2.0 error shape (RFC 6749 §5.2):
/// `{"error": code, "error_description": description}`.
public struct HTTPError: Error, Sendable, Equatable, HTTPResponseConvertible, CustomStringConvertible {
    /// The status to send.
    public var status: HTTPStatus
    /// A machine-readable code (e.g. `invalid_request`).
    public var code: String
    /// A short human-readable explanation; omitted from the body when nil. Never put secrets here.
    public var errorDescription: String?
    /// Extra response headers (e.g. `WWW-Authenticate`, `Allow`, `Retry-After`).
    public var headers: HTTPHeaders

    /// An error response; `description` becomes `error_description`.
    public init(_ status: HTTPStatus, code: String, description: String? = nil, headers: HTTPHeaders = [:]) {
        self.status = status
        self.code = code
        self.errorDescription = description
        self.headers = headers
    }

    /// The JSON error body with `Cache-Control: no-store` and the extra headers.
    public var httpResponse: HTTPResponse {
        var fields = ["error": code]
        if let errorDescription { fields["error_description"] = errorDescription }
        // Encoding a [String: String] cannot fail; the fallback keeps this path total anyway.
        var response = (try? HTTPResponse.json(fields, status: status))
            ?? HTTPResponse(status: status, body: Array(#"{"error":"server_error"}"#.utf8))
        for field in headers { response.headers.replaceOrAdd(name: field.name, value: field.value) }
        response.headers["Cache-Control"] = "no-store"
        return response
    }

    /// Status, code and description, for logs.
    public var description: String { "HTTP \(status.code) \(code)" + (errorDescription.map { ": \($0)" } ?? "") }

    /// 400 `invalid_request`.
    public static func badRequest(_ description: String) -> HTTPError {
        HTTPError(.badRequest, code: "invalid_request", description: description)
    }

    /// 404 `not_found`.
    public static let notFound = HTTPError(.notFound, code: "not_found", description: "no such resource")

    /// 500 `server_error`: what an unknown error becomes. Says nothing about the cause.
    public static let internalServerError = HTTPError(.internalServerError, code: "server_error",
                                                      description: "internal error")

    /// 503 `temporarily_unavailable` with `Retry-After`: the server is shutting down (or draining for a restart) and
    /// did not act on the request, so a client may send it again after that many seconds, here or to another instance.
    public static let unavailable = HTTPError(.serviceUnavailable, code: "temporarily_unavailable",
                                              description: "server is shutting down",
                                              headers: ["Connection": "close", "Retry-After": String(unavailableRetryAfter)])

    /// The `Retry-After` of `unavailable`, seconds: about what a restarted instance needs to listen again.
    public static let unavailableRetryAfter = 1

    /// 413 for a body over the server's limit.
    package static func bodyTooLarge(limit: Int) -> HTTPError {
        HTTPError(.contentTooLarge, code: "invalid_request", description: "body exceeds \(limit) bytes",
                  headers: ["Connection": "close"])
    }

    /// Echoes a client-supplied name in an error message, truncated so a hostile name cannot bloat it.
    package static func quoted(_ name: String) -> String {
        let limit = 64
        return "'" + (name.count > limit ? String(name.prefix(limit)) + "…" : name) + "'"
    }
}
