/// Errors thrown by `Authenticator` calls (not by flows, which report in their state).
public enum AuthnRuntimeError: Error, Sendable, Hashable {
    /// The key id is not held by this device.
    case UnknownKey(String)
    /// The authority revoked the device key used; the SDK removed it. The user can enrol again.
    case deviceKeyRevoked(keyId: String)
    /// The identity has no application left to enrol through; the SDK removed the key.
    case deviceKeyTerminated(keyId: String)
    /// The device holds no key, so there is nothing to rotate or sync.
    case noKeys
    /// The authority or the network failed, described.
    case authorityUnavailable(String)
    /// The device's key store failed.
    case vault(VaultError)
    /// A signed request could not be signed.
    case signKeypair(SignKeypairError)
}

/// A device key could not sign. `code` tells the three cases apart; none of them removes keys or
/// signs the user out (SPEC §6.1).
public struct SignKeypairError: Error, Sendable, Hashable {
    /// The three ways a signature with a device key fails.
    public enum Code: String, Sendable, Hashable, Codable, CaseIterable {
        /// The user dismissed the biometric or credential prompt. Ask again later.
        case userCancelled = "user_cancelled"
        /// No biometric or credential is available, or it is locked out. Ask again later.
        case notAvailable = "not_available"
        /// The key was invalidated by a biometric enrolment change (user-present key only).
        case keyInvalidated = "key_invalidated"
    }

    /// Which failure this is.
    public let code: Code
    /// A human-readable description, never containing secrets.
    public let message: String

    /// Creates the error.
    public init(code: Code, message: String = "") {
        self.code = code
        self.message = message
    }
}
