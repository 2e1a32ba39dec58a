// The vocabulary of the management API's documents (docs/openapi.yaml): the values a stored record and its
// management view share. The authority's records use the same types.

/// Whether a tenant's face tokens are sealed with a password as well as the server share (SPEC §5.1).
public enum PasswordMode: String, Sendable, Hashable, Codable, CaseIterable {
    /// No password: the token key is derived from the server share alone.
    case none
    /// The user may set a password at enrolment.
    case optional
    /// Every token of the tenant needs a password.
    case required
}

/// How an application learns that a CIBA request finished (CIBA Core §5).
public enum DeliveryMode: String, Sendable, Hashable, Codable, CaseIterable {
    /// The application polls the token endpoint.
    case poll
    /// The authority POSTs `{auth_req_id}` to the notification endpoint, then the application fetches the token.
    case ping
}

/// What an invitation is for (docs/PROTOCOL.md §8.1).
public enum InvitationKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// A first or further device.
    case enrolment
    /// The user has no enrolled device left: keep the keys by password, or start a new token with new keys.
    case recovery
}

/// Which of an enrolment's two device keys (SPEC §6.1).
public enum DeviceKeyRole: String, Sendable, Hashable, Codable, CaseIterable {
    /// Signs without prompting: reads and background sync.
    case ambient
    /// Every use needs the user: completion, abort, rotation, revocation, enrolment.
    case userPresent = "user_present"
}

/// The life-cycle state of a device key as the authority sees it.
public enum DeviceKeyStatus: String, Sendable, Hashable, Codable, CaseIterable {
    /// Registered and usable.
    case active
    /// A rotation replaced it; it stays usable until `overlapUntil` and then carries the rotation hint.
    case superseded
    /// Revoked by the user or an admin: requests get `deviceKeyRevoked`.
    case revoked
    /// The user no longer has an application to enrol through: requests get `deviceKeyTerminated`.
    case terminated
    /// The user enrolled the application on another device under a one-device-per-user tenant.
    case replaced
    /// A further device's enrolment waiting for its approval (docs/PROTOCOL.md §8.1): its keys may only wait for the
    /// token and prove a password; every other endpoint answers `approval_pending`.
    case pending
}

/// Where an invitation stands.
public enum InvitationStatus: String, Sendable, Hashable, Codable, CaseIterable {
    /// Usable: unused, not cancelled, unexpired.
    case pending
    /// A device used it.
    case consumed
    /// Cancelled before use.
    case cancelled
    /// Unused past its expiry.
    case expired
}
