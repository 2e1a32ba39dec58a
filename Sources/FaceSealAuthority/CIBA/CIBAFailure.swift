import FaceSealHTTP
import FaceSealWire

/// A refusal at the CIBA endpoints: the OAuth error body with the status CIBA Core gives its code
/// (`CIBAErrorCode.httpStatus`), `Cache-Control: no-store` and `Pragma: no-cache` (RFC 6749 §5.1).
struct CIBAFailure: Error, HTTPResponseConvertible, Equatable, CustomStringConvertible {
    /// The CIBA/OAuth error code.
    let code: CIBAErrorCode
    /// The `error_description`: says what to fix, never contains a secret or a client-supplied value.
    let reason: String
    /// Extra headers (`WWW-Authenticate` for a failed `client_secret_basic`).
    var headers: HTTPHeaders = [:]

    init(_ code: CIBAErrorCode, _ reason: String, headers: HTTPHeaders = [:]) {
        self.code = code
        self.reason = reason
        self.headers = headers
    }

    var httpResponse: HTTPResponse {
        var headers = headers
        headers["Cache-Control"] = "no-store"
        headers["Pragma"] = "no-cache"
        return HTTPResponse(jsonBytes: OAuthErrorResponse(code, reason).encoded(), status: HTTPStatus(code: code.httpStatus),
                            headers: headers)
    }

    var description: String { "\(code.rawValue): \(reason)" }
}
