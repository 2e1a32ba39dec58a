// Sentences for the SDK's errors and failure reasons, for a person reading a log or a terminal. Never a secret: the
// strings carried by some cases are the authority's or the vault's own descriptions.

extension AuthnRuntimeError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .UnknownKey(let id): "this device holds no key \(id)"
        case .deviceKeyRevoked(let id): "the authority revoked key \(id); it was removed from this device (enrol again to use it)"
        case .deviceKeyTerminated(let id): "key \(id) has no application left to sign in to; it was removed from this device"
        case .noKeys: "this device holds no key: enrol first"
        case .authorityUnavailable(let reason): "the authority could not be reached or failed: \(reason)"
        case .vault(let error): "the device's key store failed: \(error)"
        case .signKeypair(let error): "a device key could not sign: \(error)"
        }
    }
}

extension SignKeypairError: CustomStringConvertible {
    public var description: String { message.isEmpty ? code.explanation : "\(code.explanation) (\(message))" }
}

extension SignKeypairError.Code: CustomStringConvertible {
    /// The wire name, e.g. `not_available`.
    public var description: String { rawValue }

    /// The failure as a sentence.
    public var explanation: String {
        switch self {
        case .userCancelled: "the user dismissed the confirmation"
        case .notAvailable: "user presence is not available (no passphrase prompt or biometric could be shown, e.g. no terminal)"
        case .keyInvalidated: "the key was invalidated by a change of the biometric or credential enrolment"
        }
    }
}

extension VaultError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .unknownProtectionTag(let tag): "a stored key has an unknown protection tag \(tag)"
        case .keyNotFound(let id): "the key store holds no key \(id)"
        case .userPresenceRequired: "a user-present key was asked to sign without the user's confirmation"
        case .corruptRecords(let reason): "the key records do not parse (\(reason))"
        case .recordsTooLarge(let size): "the key records are too large (\(size) bytes)"
        case .sealFailure(let reason): "the key records could not be opened (\(reason))"
        case .storageFailed(let reason): "the key store could not be read or written (\(reason))"
        }
    }
}

extension AuthorityFailure: CustomStringConvertible {
    public var description: String {
        switch self {
        case .linkRefused(let refusal): "the link was refused: \(refusal.explanation)"
        case .requestNotPending: "the request was already answered"
        case .requestExpired: "the request expired"
        case .upgradeRequired: "the request needs a newer device protocol: update this authenticator"
        case .staleToken: "another approval changed the face token first; the application must ask again"
        case .deviceKeyRevoked(let id): "the authority revoked device key \(id)"
        case .deviceKeyTerminated(let id): "device key \(id) has no application left"
        case .deviceKeyReplaced(let id): "device key \(id) was replaced by an enrolment on another device"
        case .refused(let code, let message): message.isEmpty ? "the authority refused (\(code))" : "the authority refused (\(code)): \(message)"
        case .transient(let reason): "the authority could not be reached or failed: \(reason)"
        case .invalidResponse(let reason): "the authority's answer did not verify or parse: \(reason)"
        case .signing(let error): "the device key could not sign: \(error)"
        case .approvalPending: "the enrolment still waits for its approval"
        }
    }
}

extension LinkRefusal {
    /// The refusal as a sentence.
    public var explanation: String {
        switch self {
        case .isLoginLink: "it is a sign-in link"
        case .isPkiCeremonyLink: "it is a key-ceremony link"
        case .isEnrolmentLink: "it is an enrolment invitation"
        case .malformed: "it is not a FaceSeal link"
        case .badSignature: "its signature does not verify against this device's authority key"
        case .expired: "it has expired (or is unknown to the authority)"
        case .unknownIdentity: "it is for an identity or authority this device does not hold"
        case .alreadyAnswered: "it was already used (answered on this or another device)"
        }
    }
}

extension FailureReason {
    /// The reason as a sentence.
    public var explanation: String {
        switch self {
        case .cancelled: "the flow was cancelled"
        case .attemptsExhausted: "the face did not match within the attempts allowed; the authority denied the request"
        case .captureRetriesExhausted: "the liveness and capture-quality retries were spent; the authority denied the request"
        case .passwordAttemptsExhausted: "the password was wrong as many times as the request allows"
        case .deliveryFailed: "the application did not accept the delivery"
        case .requestExpired: "the request expired"
        case .requestNoLongerPending: "the request was answered or aborted elsewhere"
        case .staleToken: "another approval changed the face token first; the application must ask again"
        case .upgradeRequired: "the request needs a newer device protocol: update this authenticator"
        case .deviceKeyRevoked: "the authority revoked this device's key; it was removed (enrol again)"
        case .deviceKeyTerminated: "the identity has no application left; its key was removed"
        case .protocolViolation(let reason): "the authority answered something this device cannot accept: \(reason)"
        case .authorityUnavailable(let reason): "the authority could not be reached or failed: \(reason)"
        case .authorityRefused(let code): "the authority refused (\(code))"
        case .faceTokenUnusable: "the face token could not be used (malformed, unsupported or damaged)"
        case .keyOperationNotPermitted: "the operation does not fit the key type"
        case .unsupportedKeyAlgorithm: "the key policy names an algorithm this device does not implement"
        case .invalidPkiData: "the application's data is not acceptable for the operation"
        case .userPresence(let code): code.explanation
        case .enrolmentFailed(let reason): "the enrolment failed: \(reason)"
        case .vaultFailure(let reason): "the device's key store failed: \(reason)"
        }
    }
}

extension CompletionFailureReason {
    /// The reason as a sentence.
    public var explanation: String {
        switch self {
        case .transient(let reason): "the authority could not be reached or failed: \(reason)"
        case .staleToken: "another approval changed the face token first; the application must ask again"
        case .userPresence(let code): code.explanation
        }
    }
}

extension DeliveryFailureStatus {
    /// The status as a sentence.
    public var explanation: String {
        switch self {
        case .refused(let status): "the application answered HTTP \(status)"
        case .unreachable(let reason): "the application could not be reached: \(reason)"
        }
    }
}

extension KeyOperationError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .notPermitted: "the operation does not fit the key type"
        case .unsupportedAlgorithm(let name): "the key policy names \(name), which this device does not implement"
        case .invalidData(let reason): "the application's data is not acceptable: \(reason)"
        case .internalFailure(let reason): "the key operation failed: \(reason)"
        }
    }
}

extension FaceTokenOpenError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .wrongPassword: "the password does not open the face token"
        case .passwordRequired: "the face token needs a password"
        case .unusable(let reason): "the face token could not be used: \(reason)"
        }
    }
}
