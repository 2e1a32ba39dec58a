import FaceSealHTTP
import FaceSealWire

/// A device-API refusal: a `DeviceErrorCode` and a description that never holds a secret or a body.
/// Thrown by handlers and the edge; the edge turns it into a `DeviceErrorResponse` with the code's status,
/// signed when the request carried a parsable device signature.
struct DeviceFailure: Error, Sendable, Equatable, HTTPResponseConvertible {
    /// The code the device sees.
    let code: DeviceErrorCode
    /// Why, for the device's logs.
    let description: String
    /// Extra headers (`Retry-After` for a rate limit).
    var headers: HTTPHeaders = [:]

    init(_ code: DeviceErrorCode, _ description: String) {
        self.code = code
        self.description = description
    }

    /// Too many failed signatures for one key id: `rate_limited` with `Retry-After`.
    static func rateLimited(_ limited: RateLimited) -> DeviceFailure {
        var failure = DeviceFailure(.rateLimited, "too many failed signatures for this key; retry after \(limited.retryAfter) s")
        failure.headers = limited.headers
        return failure
    }

    /// The error body, exact bytes (what a response signature covers).
    var body: [UInt8] { DeviceErrorResponse(code, description).encoded() }

    /// The unsigned response (unsigned routes: enrolment details and the enrolment token download).
    var httpResponse: HTTPResponse {
        var headers = headers
        headers["Cache-Control"] = "no-store"
        return HTTPResponse(jsonBytes: body, status: HTTPStatus(code: code.httpStatus), headers: headers)
    }

    static func invalidRequest(_ description: String) -> DeviceFailure { DeviceFailure(.invalidRequest, description) }

    /// Maps a message-parsing failure: every one is `invalid_request`, naming what was wrong but no value.
    static func malformed(_ error: WireError) -> DeviceFailure {
        switch error {
        case .tooLarge(let limit): return .invalidRequest("body larger than \(limit) bytes")
        case .malformed(let detail): return .invalidRequest("malformed body: \(detail)")
        case .unknownField(let field): return .invalidRequest("unknown field '\(field.prefix(64))'")
        case .missingField(let field): return .invalidRequest("missing field '\(field)'")
        case .invalidValue(let field, let reason): return .invalidRequest("invalid '\(field)': \(reason.prefix(120))")
        case .unsupportedVersion(let version): return .invalidRequest("unsupported message version \(version)")
        case .badSignature: return .invalidRequest("a proof does not verify")
        case .expired: return .invalidRequest("expired")
        }
    }

    /// Maps a store failure on a device route. Unknown records read as `unknown_request` so a device learns
    /// nothing about requests that are not its user's; database trouble is a `server_error` with no detail.
    static func store(_ error: AuthorityStoreError) -> DeviceFailure {
        switch error {
        case .notFound(.cibaRequest, _), .notFound(.faceToken, _):
            return DeviceFailure(.unknownRequest, "no such request for this key")
        case .notFound(.invitation, _), .invitationUnusable:
            return DeviceFailure(.invalidInvitation, "the invitation is unknown, used or expired")
        case .notFound(let entity, _):
            return DeviceFailure(.invalidRequest, "unknown \(entity.rawValue)")
        case .requestNotPending(_, .expired):
            return DeviceFailure(.requestExpired, "the request expired")
        case .requestNotPending(_, let state):
            return DeviceFailure(.requestNotPending, "the request is \(state.rawValue)")
        case .completionMismatch:
            return DeviceFailure(.requestNotPending, "the request was completed with another result")
        case .deviceKeyNotActive(_, let status):
            return DeviceFailure(status.errorCode, "the key is \(status.rawValue)")
        case .enrolmentNotActive(_, let status):
            return DeviceFailure(status.errorCode, "the enrolment is \(status.rawValue)")
        case .conflict(let entity, _):
            return DeviceFailure(.invalidRequest, "\(entity.rawValue) already exists")
        case .inUse(let entity, _, _):
            return DeviceFailure(.invalidRequest, "\(entity.rawValue) is in use")
        case .invalidInput(let field, let reason):
            return DeviceFailure(.invalidRequest, "invalid \(field): \(reason)")
        case .schemaTooNew, .unavailable, .database:
            return DeviceFailure(.serverError, "storage unavailable")
        }
    }
}

extension DeviceKeyStatus {
    /// The code a request signed with a key in this status gets (active keys never reach this).
    var errorCode: DeviceErrorCode {
        switch self {
        case .terminated: .deviceKeyTerminated
        case .replaced: .deviceKeyReplaced
        case .revoked, .superseded, .active: .deviceKeyRevoked
        case .pending: .approvalPending
        }
    }
}
