public import FaceSealHTTP

/// Why the management API refused a request. Each case becomes one HTTP status and a JSON body
/// `{error, error_description}`; a refused request changed nothing.
public enum ManagementError: Error, Sendable, Equatable, HTTPResponseConvertible {
    /// No `Authorization: Bearer …` header (401 `unauthorized`).
    case missingCredentials
    /// A bearer key that is malformed, unknown or revoked (401 `invalid_token`); which of them is not said.
    case invalidCredentials
    /// The key may not act on this tenant, or the action needs an administrator key (403 `forbidden`).
    case forbidden(String)
    /// The body is not acceptable JSON: wrong content type (415), too large (413), not JSON, a missing
    /// field or a field of the wrong type (400 `invalid_request`).
    case invalidRequest(status: Int, String)
    /// A field the endpoint does not know (400 `unknown_field`).
    case unknownField(String)
    /// A well-formed field whose value is not acceptable (400 `invalid_field`).
    case invalidField(field: String, reason: String)
    /// No such resource (404 `not_found`).
    case notFound(String)
    /// The resource exists already or is in a state that forbids the change (409 `conflict`).
    case conflict(String)
    /// The database is unreachable (503 `temporarily_unavailable`).
    case unavailable

    /// The `error` member of the body.
    public var code: String {
        switch self {
        case .missingCredentials: "unauthorized"
        case .invalidCredentials: "invalid_token"
        case .forbidden: "forbidden"
        case .invalidRequest: "invalid_request"
        case .unknownField: "unknown_field"
        case .invalidField: "invalid_field"
        case .notFound: "not_found"
        case .conflict: "conflict"
        case .unavailable: "temporarily_unavailable"
        }
    }

    /// The HTTP status.
    public var status: Int {
        switch self {
        case .missingCredentials, .invalidCredentials: 401
        case .forbidden: 403
        case .invalidRequest(let status, _): status
        case .unknownField, .invalidField: 400
        case .notFound: 404
        case .conflict: 409
        case .unavailable: 503
        }
    }

    /// The `error_description` member: names fields, never echoes secrets.
    public var errorDescription: String {
        switch self {
        case .missingCredentials: "an API key is required: Authorization: Bearer fsk_…"
        case .invalidCredentials: "the API key is malformed, unknown or revoked"
        case .forbidden(let reason): reason
        case .invalidRequest(_, let reason): reason
        case .unknownField(let field): "unknown field '\(field)'"
        case .invalidField(let field, let reason): "field '\(field)': \(reason)"
        case .notFound(let what): "\(what) not found"
        case .conflict(let reason): reason
        case .unavailable: "the database is unavailable"
        }
    }

    /// The response; 401s carry `WWW-Authenticate: Bearer` (RFC 6750 §3).
    public var httpResponse: HTTPResponse {
        var headers: HTTPHeaders = [:]
        switch self {
        case .missingCredentials:
            headers["WWW-Authenticate"] = #"Bearer realm="faceseal-management""#
        case .invalidCredentials:
            headers["WWW-Authenticate"] = #"Bearer realm="faceseal-management", error="invalid_token""#
        default:
            break
        }
        return HTTPError(HTTPStatus(code: status), code: code, description: errorDescription, headers: headers).httpResponse
    }

    /// Maps a store failure: the store validated and refused, or the database failed.
    init(_ error: AuthorityStoreError) {
        switch error {
        case .notFound(let entity, _):
            self = .notFound(Self.name(of: entity))
        case .conflict(let entity, _):
            self = .conflict("\(Self.name(of: entity)) already exists")
        case .invalidInput(let field, let reason):
            self = .invalidField(field: field, reason: reason)
        case .enrolmentNotActive(_, let status):
            self = .conflict("the device enrolment has already ended (\(status.rawValue))")
        case .deviceKeyNotActive(_, let status):
            self = .conflict("the device key is not active (\(status.rawValue))")
        case .invitationUnusable(_, let reason):
            self = .conflict("invitation unusable: \(reason)")
        case .inUse(_, _, let reason):
            self = .conflict(reason)
        case .requestNotPending, .completionMismatch:
            self = .conflict("the request is not pending")
        case .unavailable, .schemaTooNew, .database:
            self = .unavailable
        }
    }

    static func name(of entity: StoredEntity) -> String {
        switch entity {
        case .tenant: "tenant"
        case .apiKey: "API key"
        case .application: "application"
        case .user: "user"
        case .invitation: "invitation"
        case .device: "device"
        case .enrolment: "device enrolment"
        case .deviceKey: "device key"
        case .faceToken: "face token"
        case .cibaRequest: "request"
        case .signingKey: "signing key"
        case .browserSignIn: "browser sign-in"
        }
    }
}
