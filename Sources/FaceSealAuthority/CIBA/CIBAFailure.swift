import FaceSealHTTP
import FaceSealWire

/// A refusal at the CIBA endpoints: the OAuth error body with the status CIBA Core gives its code
/// (`CIBAErrorCode.httpStatus`), `Cache-Control: no-store` and `Pragma: no-cache` (RFC 6749 §5.1).
struct CIBAFailure: Error, HTTPResponseConvertible, Equatable, CustomStringConvertible {
    /// The CIBA/OAuth error code.
    let code: CIBAErrorCode
    /// The `error_description`: says what to fix, never contains a secret or a client-supplied value.
    let reason: String
    /// Extra headers (`WWW-Authenticate` for a failed `client_secret_basic`, `Retry-After` for a rate limit).
    var headers: HTTPHeaders = [:]
    /// The HTTP status: the code's, or 429 for a rate limit.
    var status: Int

    init(_ code: CIBAErrorCode, _ reason: String, headers: HTTPHeaders = [:]) {
        self.code = code
        self.reason = reason
        self.headers = headers
        self.status = code.httpStatus
    }

    /// Too many failed authentications of one client id: 429 with `Retry-After` and the OAuth body `invalid_client`.
    static func clientRateLimited(_ limited: RateLimited) -> CIBAFailure {
        var failure = CIBAFailure(.invalidClient, "too many failed authentications of this client; retry after \(limited.retryAfter) s",
                                  headers: limited.headers)
        failure.status = 429
        return failure
    }

    var httpResponse: HTTPResponse {
        var headers = headers
        headers["Cache-Control"] = "no-store"
        headers["Pragma"] = "no-cache"
        return HTTPResponse(jsonBytes: OAuthErrorResponse(code, reason).encoded(), status: HTTPStatus(code: status), headers: headers)
    }

    var description: String { "\(code.rawValue): \(reason)" }
}
