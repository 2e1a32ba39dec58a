/// Why a flow refused a submitted link. The flow stays on `awaitingLink` with this refusal, so the
/// host app can show it or re-submit the link to the flow it names.
public enum LinkRefusal: String, Error, Sendable, Hashable, Codable, CaseIterable {
    /// The link starts a sign-in: submit it to a `LoginFlow`.
    case isLoginLink = "is_login_link"
    /// The link starts a face-PKI ceremony: submit it to a `PkiCeremonyFlow`.
    case isPkiCeremonyLink = "is_pki_ceremony_link"
    /// The link is an enrolment invitation: submit it to a `RegistrationFlow`.
    case isEnrolmentLink = "is_enrolment_link"
    /// The bytes are not a FaceSeal link.
    case malformed
    /// The link's signature does not verify against the pinned authority key.
    case badSignature = "bad_signature"
    /// The link (or its request) has expired.
    case expired
    /// The link is for an identity or authority this device does not hold.
    case unknownIdentity = "unknown_identity"
    /// The request was already answered (on this or another device).
    case alreadyAnswered = "already_answered"
}

/// Why a submitted password was not accepted; the flow keeps its password step.
public enum PasswordError: String, Error, Sendable, Hashable, Codable {
    /// The password does not open the face token.
    case incorrect
    /// An empty password was submitted.
    case empty
    /// A new password does not meet the tenant's password policy.
    case tooWeak = "too_weak"
}
