public import FaceSealWire

/// Why a flow ended in `failed(reason:)`. None of these is retried by the SDK.
public enum FailureReason: Sendable, Hashable {
    /// The user ended the flow with `cancel()` or `cancelCeremony()`.
    case cancelled
    /// Every face-mismatch attempt of `attemptsMax` was spent. The authority counts them and denied the request
    /// (`attempts_exhausted`) at the last one; the SDK signs that abort itself only if a report did not arrive.
    case attemptsExhausted
    /// The request's budget of liveness and capture-quality failures was spent (denied `capture_retries_exhausted`).
    case captureRetriesExhausted
    /// The user typed a wrong password as many times as the request allows attempts; the SDK signed a
    /// `password_attempts_exhausted` abort.
    case passwordAttemptsExhausted
    /// The application refused the delivery (or could not be reached) and the user chose
    /// `cancelCeremony()`; the SDK signed a `delivery_failed` abort.
    case deliveryFailed
    /// The request expired before the flow finished.
    case requestExpired
    /// The request was answered or aborted elsewhere while this flow ran.
    case requestNoLongerPending
    /// The authority refused the completion because another completion rotated the face token
    /// first; the application must start a new request.
    case staleToken
    /// The request needs a newer device protocol than this SDK speaks: prompt for an update.
    case upgradeRequired
    /// The authority revoked this device's key for the identity; the SDK removed it. The user can enrol again.
    case deviceKeyRevoked
    /// The identity has no application left to enrol through; the SDK removed its key.
    case deviceKeyTerminated
    /// The authority answered something this SDK cannot accept (a protocol violation), described.
    case protocolViolation(String)
    /// The authority or the network failed in a way the flow cannot recover from, described.
    case authorityUnavailable(String)
    /// The authority refused a call with this error code.
    case authorityRefused(code: String)
    /// The face token could not be used (malformed, unsupported version or damaged).
    case faceTokenUnusable
    /// Face PKI: the requested operation does not fit the key type (ML-DSA signs, ML-KEM decapsulates).
    case keyOperationNotPermitted
    /// Face PKI: the key policy names an algorithm this SDK does not implement.
    case unsupportedKeyAlgorithm
    /// Face PKI: the application's data is not acceptable for the operation (bad ciphertext, too long).
    case invalidPkiData
    /// The user-present key could not be used; the code says why. Keys are kept.
    case userPresence(SignKeypairError.Code)
    /// Enrolment failed; neither device key remains on the device or the authority.
    case enrolmentFailed(String)
    /// The device's key store failed, described.
    case vaultFailure(String)
}

/// Why the application did not accept a delivery (`deliveryFailed(status:)`).
public enum DeliveryFailureStatus: Sendable, Hashable {
    /// The application answered with this non-2xx HTTP status.
    case refused(httpStatus: Int)
    /// The delivery endpoint could not be reached, described.
    case unreachable(String)
}

/// Why posting a completion to the authority failed (`postingResultFailed(reason:)`; whether `retry()` can succeed is ``isRetryable``).
public enum CompletionFailureReason: Sendable, Hashable {
    /// A transient network or server error, described; `retry()` re-posts.
    case transient(String)
    /// Another completion rotated the face token first. Not retryable: offer only cancel; the
    /// application starts a new request.
    case staleToken
    /// The user-present key could not sign the completion. Retryable unless the key was invalidated.
    case userPresence(SignKeypairError.Code)

    /// Whether `retry()` can succeed.
    public var isRetryable: Bool {
        switch self {
        case .transient: true
        case .staleToken: false
        case .userPresence(let code): code != .keyInvalidated
        }
    }
}

/// The reason the SDK gives the authority in a signed abort: the wire protocol's type
/// (`attempts_exhausted`, `delivery_failed`, `user_cancelled`, `refused`).
public typealias AbortReason = FaceSealWire.AbortReason
