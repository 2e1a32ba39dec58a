/// Why the delivery endpoint refused a delivery (SPEC §4.4), with the 4xx status it answers.
public enum DeliveryRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not a POST.
    case methodNotAllowed
    /// The body is not even a JSON object naming an `auth_req_id` (or the header is unreadable).
    case malformed(String)
    /// No bearer, or not the `client_notification_token` sent for the request.
    case wrongBearer
    /// The `auth_req_id` is not a request this relying party has outstanding.
    case unknownRequest
    /// A delivery for this request was already accepted (a replay).
    case alreadyDelivered
    /// The `kind` is not what was asked for.
    case wrongKind(expected: String, got: String)
    /// No key is pinned for the user and context, so nothing can verify the delivery.
    case noPinnedKey
    /// The delivered public keys differ from the keys already pinned for the user and context.
    case pinnedKeyConflict
    /// The `X-FaceSeal-Signature` is missing, malformed, from another key, or does not verify.
    case badSignature(String)
    /// The body is larger than the delivery limit.
    case tooLarge(limit: Int)
    /// The body does not parse strictly as a delivery, or its result fields do not fit its kind.
    case invalidBody(String)
    /// The result itself is wrong: a signature over the data that does not verify, a different shared secret.
    case wrongResult(String)

    /// The HTTP status answered.
    public var status: Int {
        switch self {
        case .methodNotAllowed: 405
        case .malformed, .invalidBody: 400
        case .wrongBearer: 401
        case .badSignature: 403
        case .unknownRequest: 404
        case .alreadyDelivered, .pinnedKeyConflict, .noPinnedKey: 409
        case .tooLarge: 413
        case .wrongKind, .wrongResult: 422
        }
    }

    /// The machine-readable code in the answer body.
    public var code: String {
        switch self {
        case .methodNotAllowed: "method_not_allowed"
        case .malformed: "malformed_delivery"
        case .wrongBearer: "invalid_token"
        case .unknownRequest: "unknown_auth_req_id"
        case .alreadyDelivered: "already_delivered"
        case .wrongKind: "wrong_kind"
        case .noPinnedKey: "no_pinned_key"
        case .pinnedKeyConflict: "pinned_key_conflict"
        case .badSignature: "invalid_signature"
        case .tooLarge: "body_too_large"
        case .invalidBody: "invalid_delivery"
        case .wrongResult: "wrong_result"
        }
    }

    /// A one-line explanation (sent as `error_description`).
    public var description: String {
        switch self {
        case .methodNotAllowed: "deliveries are POSTed"
        case .malformed(let reason): "malformed delivery: \(reason)"
        case .wrongBearer: "the bearer is not the client notification token of this request"
        case .unknownRequest: "no such outstanding request"
        case .alreadyDelivered: "this request was already delivered"
        case .wrongKind(let expected, let got): "kind \(got) delivered for a \(expected) request"
        case .noPinnedKey: "no key is pinned for this user and context; request public_keys first"
        case .pinnedKeyConflict: "the delivered keys differ from the keys pinned for this user and context"
        case .badSignature(let reason): "delivery signature rejected: \(reason)"
        case .tooLarge(let limit): "delivery exceeds \(limit) bytes"
        case .invalidBody(let reason): "invalid delivery body: \(reason)"
        case .wrongResult(let reason): "wrong result: \(reason)"
        }
    }
}

/// A framework-agnostic HTTP answer: status and body bytes (JSON), plus headers to set.
public struct EndpointResponse: Sendable, Equatable {
    /// The HTTP status.
    public var status: Int
    /// The body.
    public var body: [UInt8]
    /// Headers to send (`Content-Type`, `WWW-Authenticate`).
    public var headers: [(String, String)]

    /// Builds an answer.
    public init(status: Int, body: [UInt8] = [], headers: [(String, String)] = []) {
        self.status = status
        self.body = body
        self.headers = headers
    }

    /// Equal status, body and headers (in order).
    public static func == (a: Self, b: Self) -> Bool {
        a.status == b.status && a.body == b.body && a.headers.map { "\($0.0):\($0.1)" } == b.headers.map { "\($0.0):\($0.1)" }
    }
}
