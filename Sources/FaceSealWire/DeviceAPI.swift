/// Error codes of the device API (SPEC §4.2), in `{"v":…, "error":…, "error_description":…}` bodies.
public enum DeviceErrorCode: String, Codable, Sendable, CaseIterable, Error {
    /// The signing key was revoked (by an administrator or the device): remove it; the device may enrol again.
    case deviceKeyRevoked
    /// The key's user no longer has any application they could enrol through: remove it.
    case deviceKeyTerminated
    /// The key was replaced by an enrolment on another device under a one-device-per-user tenant.
    case deviceKeyReplaced
    /// The signature header is missing, malformed, or does not verify.
    case invalidSignature = "invalid_signature"
    /// `iat` is outside ±120 s of the authority's clock.
    case clockSkew = "clock_skew"
    /// The `jti` was seen before.
    case replayedRequest = "replayed_request"
    /// The endpoint needs the user-present key and the request was signed with the ambient key.
    case userPresenceRequired = "user_presence_required"
    /// The request id is unknown to this device's user.
    case unknownRequest = "unknown_request"
    /// The request expired.
    case requestExpired = "request_expired"
    /// The request was already answered (completed, aborted or stale).
    case requestNotPending = "request_not_pending"
    /// The completion's rotation lost: another completion from the same token generation was stored.
    case staleToken = "stale_token"
    /// The request needs a newer device protocol.
    case upgradeRequired = "upgrade_required"
    /// The body is malformed, too large, or has an unknown field.
    case invalidRequest = "invalid_request"
    /// The invitation is unknown, used or expired, or its enrolment's approval was denied, ran out or was released.
    case invalidInvitation = "invalid_invitation"
    /// The key's further-device enrolment waits for its approval (docs/PROTOCOL.md §8.1): it may only wait for the
    /// token and prove a password.
    case approvalPending = "approval_pending"
    /// Too many failed signatures for this key id recently: retry after the response's `Retry-After` seconds.
    case rateLimited = "rate_limited"
    /// Something else went wrong on the authority.
    case serverError = "server_error"

    /// The HTTP status the authority answers with.
    public var httpStatus: Int {
        switch self {
        case .deviceKeyRevoked, .deviceKeyTerminated, .deviceKeyReplaced, .invalidSignature, .clockSkew, .replayedRequest: 401
        case .userPresenceRequired: 403
        case .unknownRequest, .invalidInvitation: 404
        case .requestExpired, .requestNotPending, .staleToken, .approvalPending: 409
        case .upgradeRequired: 426
        case .invalidRequest: 400
        case .rateLimited: 429
        case .serverError: 500
        }
    }

    /// Whether the device must drop the signing key.
    public var removesKey: Bool { self == .deviceKeyRevoked || self == .deviceKeyTerminated || self == .deviceKeyReplaced }
}

/// A device-API error body.
public struct DeviceErrorResponse: WireMessage {
    /// Protocol version.
    public var v: Int
    /// The code.
    public var error: DeviceErrorCode
    /// A human-readable explanation (never secret).
    public var errorDescription: String?

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case v, error
        case errorDescription = "error_description"
    }

    /// Builds an error body.
    public init(v: Int = ProtocolVersion.current, _ error: DeviceErrorCode, _ description: String? = nil) {
        self.v = v
        self.error = error
        self.errorDescription = description
    }
}

/// The paths of the device API, relative to the authority's base URL.
public enum DevicePaths {
    /// `GET` enrolment details for an invitation (unsigned: the device has no key yet).
    public static func enrolment(_ invitation: String) -> String { "/device/v1/enrolments/\(invitation)" }
    /// `GET` the face token for a further device, once, after approval (the pending enrolment's user-present key).
    public static func enrolmentToken(_ invitation: String) -> String { "/device/v1/enrolments/\(invitation)/token" }
    /// `POST` a further device's password proof (the pending enrolment's user-present key).
    public static func enrolmentPassword(_ invitation: String) -> String { "/device/v1/enrolments/\(invitation)/password" }
    /// `GET` request details (ambient key).
    public static func request(_ rid: String) -> String { "/device/v1/requests/\(rid)" }
    /// `GET` the face token and server share (user-present key).
    public static func requestToken(_ rid: String) -> String { "/device/v1/requests/\(rid)/token" }
    /// `POST` a completion (user-present key).
    public static func completion(_ rid: String) -> String { "/device/v1/requests/\(rid)/completion" }
    /// `POST` an abort (user-present key).
    public static func abort(_ rid: String) -> String { "/device/v1/requests/\(rid)/abort" }
    /// `POST` a failed face check (the user-present key that downloaded the token).
    public static func attempts(_ rid: String) -> String { "/device/v1/requests/\(rid)/attempts" }
    /// `POST` a key rotation (user-present key of each rotated enrolment).
    public static let rotation = "/device/v1/keys/rotation"
    /// `POST` a revocation of one enrolment's keys (user-present key).
    public static let revocation = "/device/v1/keys/revocation"
    /// `GET` branding and key status (ambient key).
    public static let branding = "/device/v1/branding"
    /// `GET` the link outbox, long poll (ambient key).
    public static let outbox = "/device/v1/outbox"
}

extension DeviceErrorResponse {
    public func checkRanges() throws(WireError) { try WireRange.check(v, WireRange.version, "v") }
}
