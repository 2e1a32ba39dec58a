/// Why a request was denied: the `error_description` of the token endpoint's `access_denied` (docs/PROTOCOL.md §3), so
/// the application learns why without parsing prose.
public enum DenialReason: String, Codable, Sendable, CaseIterable {
    /// The face did not match within the tenant's attempts.
    case attemptsExhausted = "attempts_exhausted"
    /// Liveness or capture quality failed as often as the tenant allows.
    case captureRetriesExhausted = "capture_retries_exhausted"
    /// A wrong password as often as the request allows attempts.
    case passwordAttemptsExhausted = "password_attempts_exhausted"
    /// The user declined.
    case userCancelled = "user_cancelled"
    /// The device could not deliver the result to the application, and the user gave up.
    case deliveryFailed = "delivery_failed"
    /// The user was deleted while the request was pending.
    case userDeleted = "user_deleted"
    /// The authority's or the device's policy refused (for example a key operation that does not fit the key).
    case policy

    /// The reason for a device's abort.
    public init(_ abort: AbortReason) {
        switch abort {
        case .attemptsExhausted: self = .attemptsExhausted
        case .captureRetriesExhausted: self = .captureRetriesExhausted
        case .passwordAttemptsExhausted: self = .passwordAttemptsExhausted
        case .deliveryFailed: self = .deliveryFailed
        case .userCancelled: self = .userCancelled
        case .refused: self = .policy
        }
    }

    /// The reason a stored denial gives the application: itself when known, else `policy`.
    public init(stored: String?) {
        self = stored.flatMap(DenialReason.init(rawValue:)) ?? .policy
    }

    /// One sentence for a person.
    public var explanation: String {
        switch self {
        case .attemptsExhausted: "the face did not match within the attempts allowed"
        case .captureRetriesExhausted: "liveness or capture quality failed too often"
        case .passwordAttemptsExhausted: "the password was wrong too often"
        case .userCancelled: "the user declined"
        case .deliveryFailed: "the device could not deliver the result to the application"
        case .userDeleted: "the user was deleted"
        case .policy: "the authority's policy refused"
        }
    }
}
