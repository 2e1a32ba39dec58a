public import FaceSealWire
public import Foundation

/// The authority's device API as the SDK needs it (SPEC §4.2). The real implementation lives on
/// `FaceSealWire` + the HTTP client: it signs every request with the given device key, checks the
/// authority's signature on every response, and maps error codes onto ``AuthorityFailure``.
///
/// Reads accept an ambient signer; sensitive calls (token download, failure reports, completion, abort,
/// enrolment, rotation, revocation) must be given a user-present signer.
public protocol AuthorityClient: Sendable {
    /// Verifies a link's signature (pinned authority key), issuer and expiry. Refusals are thrown
    /// as `.linkRefused`.
    func verifyLink(_ payload: [UInt8]) async throws(AuthorityFailure) -> VerifiedLink

    /// Reads a pending sign-in or ceremony request.
    func requestDetails(requestId: String, signer: any DeviceRequestSigner) async throws(AuthorityFailure) -> AuthorityReply<RequestDetails>

    /// Downloads the user's face token and the authority's share for a pending request (user-present signer).
    func downloadFaceToken(requestId: String, signer: any DeviceRequestSigner) async throws(AuthorityFailure) -> AuthorityReply<FaceTokenEnvelope>

    /// Reports a failed face check (signed by the user-present key that downloaded); answers what the request has left.
    func reportAttempt(requestId: String, kind: AttemptKind, signer: any DeviceRequestSigner) async throws(AuthorityFailure) -> AuthorityReply<AttemptBudget>

    /// Posts a completion; answers the time the authority recorded it.
    func complete(_ completion: CompletionSubmission, signer: any DeviceRequestSigner) async throws(AuthorityFailure) -> AuthorityReply<Date>

    /// Signs an abort so the application learns the outcome at once.
    func abort(requestId: String, reason: AbortReason, signer: any DeviceRequestSigner) async throws(AuthorityFailure) -> AuthorityReply<Void>

    /// Reads an enrolment invitation (authorised by the link itself: the device has no key yet).
    func enrolmentDetails(requestId: String) async throws(AuthorityFailure) -> EnrolmentDetails

    /// A further device: downloads the user's face token once its pending enrolment is approved, signed with that
    /// enrolment's user-present key; waits up to `wait` seconds on the authority, then throws `.approvalPending`.
    func enrolmentFaceToken(requestId: String, signer: any DeviceRequestSigner, wait: Int) async throws(AuthorityFailure) -> FaceTokenEnvelope

    /// A further device under `password` approval: proves the token's password (a proof by the verifier key derived
    /// from `password` and `tokenHeader`), signed with the pending enrolment's user-present key.
    func provePassword(requestId: String, password: String, tokenHeader: [UInt8],
                       signer: any DeviceRequestSigner) async throws(AuthorityFailure) -> PasswordProofOutcome

    /// Registers both new device keys (each proves possession by signing); all-or-nothing on the authority.
    func registerEnrolment(_ submission: EnrolmentSubmission, ambient: any DeviceRequestSigner, userPresent: any DeviceRequestSigner) async throws(AuthorityFailure) -> AuthorityReply<EnrolmentReceipt>

    /// Removes a registration whose outcome the device could not learn (all-or-nothing cleanup).
    func withdrawEnrolment(requestId: String, userPresent: any DeviceRequestSigner) async throws(AuthorityFailure)

    /// Registers replacement keys for held keys (proved by the old user-present key and both new keys).
    func rotateKeys(_ rotations: [KeyRotationSubmission]) async throws(AuthorityFailure) -> AuthorityReply<[KeyRotationOutcome]>

    /// Tells whether a device key is registered (used by `open()` to reconcile an interrupted rotation).
    func deviceKeyStatus(keyId: String, signer: any DeviceRequestSigner) async throws(AuthorityFailure) -> AuthorityReply<DeviceKeyStatus>

    /// Revokes one key on the authority.
    func revokeKey(keyId: String, signer: any DeviceRequestSigner) async throws(AuthorityFailure) -> AuthorityReply<Void>

    /// Reads current branding for held keys and which of them the authority revoked or terminated.
    func syncBranding(_ keys: [SignedKey]) async throws(AuthorityFailure) -> AuthorityReply<BrandingSyncResult>

    /// True once after any signed answer carried the rotation hint — also an error answer, which reaches the caller
    /// as an ``AuthorityFailure`` without an ``AuthorityReply``, and a read outside the calls above (the outbox);
    /// reading clears it. So the hint is never lost with the answer that carried it (SPEC §4.2).
    func takeRotationHint() -> Bool
}

/// The device side's signature on a request: one hardware key.
public protocol DeviceRequestSigner: Sendable {
    /// The hardware key id (`kid` of the request JWS).
    var deviceKeyId: String { get }
    /// The key's permanent protection level.
    var protection: KeyProtection { get }
    /// Signs `message`. A user-present key may prompt; failures keep the key.
    func sign(_ message: [UInt8]) async throws(SignKeypairError) -> [UInt8]
}

/// A held key with the signer the call should use for it.
public struct SignedKey: Sendable {
    /// The key.
    public let key: Key
    /// Its signer (ambient for reads).
    public let signer: any DeviceRequestSigner
    /// The enrolment's current user-present key id: the authority names enrolments by it.
    public let userPresentKeyId: String?

    /// Creates the pair.
    public init(key: Key, signer: any DeviceRequestSigner, userPresentKeyId: String? = nil) {
        self.key = key
        self.signer = signer
        self.userPresentKeyId = userPresentKeyId
    }
}

/// An enrolment invitation as the authority describes it.
public struct EnrolmentDetails: Sendable, Hashable {
    /// The enrolment request id.
    public let requestId: String
    /// The identity being enrolled.
    public let identityId: String
    /// Its email address.
    public let email: String
    /// The user's subject at the authority: the `sub` a first device's new face token carries.
    public let subject: String
    /// The user's tenant: the `tenant` a first device's new face token carries.
    public let tenant: String
    /// The application enrolled through.
    public let clientId: String
    /// The application's display name.
    public let appLabel: String
    /// Its branding, if any.
    public let branding: Branding?
    /// True when the user already has a face token (enrolment on a further device: face match).
    public let hasFaceToken: Bool
    /// For a first enrolment: whether the tenant requires a password on the new token.
    public let passwordPolicyRequiresPassword: Bool
    /// Whether liveness is required.
    public let livenessRequired: Bool
    /// Face-mismatch budget (further device).
    public let attemptsMax: Int
    /// When the invitation expires, Unix seconds.
    public let expiresAtUnix: Int64
    /// The tenant's key policy.
    public let keyPolicy: [String]
    /// The lowest device protocol that may enrol.
    public let minimumDeviceProtocol: Int

    /// Creates enrolment details.
    public init(
        requestId: String, identityId: String, email: String, subject: String, tenant: String, clientId: String,
        appLabel: String, branding: Branding?, hasFaceToken: Bool, passwordPolicyRequiresPassword: Bool, livenessRequired: Bool, attemptsMax: Int,
        expiresAtUnix: Int64, keyPolicy: [String], minimumDeviceProtocol: Int
    ) {
        self.requestId = requestId
        self.identityId = identityId
        self.email = email
        self.subject = subject
        self.tenant = tenant
        self.clientId = clientId
        self.appLabel = appLabel
        self.branding = branding
        self.hasFaceToken = hasFaceToken
        self.passwordPolicyRequiresPassword = passwordPolicyRequiresPassword
        self.livenessRequired = livenessRequired
        self.attemptsMax = attemptsMax
        self.expiresAtUnix = expiresAtUnix
        self.keyPolicy = keyPolicy
        self.minimumDeviceProtocol = minimumDeviceProtocol
    }
}

/// The two new device keys and, on a first enrolment, the new face token.
public struct EnrolmentSubmission: Sendable, Hashable {
    /// The enrolment request id.
    public let requestId: String
    /// The new ambient key.
    public let ambient: DeviceKeyDescriptor
    /// The new user-present key.
    public let userPresent: DeviceKeyDescriptor
    /// First enrolment only: the sealed token and the share the authority keeps.
    public let newFaceToken: NewFaceToken?

    /// Creates a submission.
    public init(requestId: String, ambient: DeviceKeyDescriptor, userPresent: DeviceKeyDescriptor, newFaceToken: NewFaceToken?) {
        self.requestId = requestId
        self.ambient = ambient
        self.userPresent = userPresent
        self.newFaceToken = newFaceToken
    }
}

/// What the authority recorded for an enrolment.
public struct EnrolmentReceipt: Sendable, Hashable {
    /// The new key's id (the enrolment id), used as `Key.id`.
    public let keyId: String
    /// When it was recorded.
    public let enrolledAt: Date
    /// The identity the authority enrolled (its pairwise subject), when it says so; else the invitation's.
    public let identityId: String?
    /// The authority's issuer, when it says so.
    public let issuer: String?
    /// A further device: the enrolment is pending until this approval releases the token.
    public let approval: PendingEnrolmentApproval?

    /// Creates a receipt.
    public init(keyId: String, enrolledAt: Date, identityId: String? = nil, issuer: String? = nil, approval: PendingEnrolmentApproval? = nil) {
        self.approval = approval
        self.keyId = keyId
        self.enrolledAt = enrolledAt
        self.identityId = identityId
        self.issuer = issuer
    }
}

/// Replacement keys for one held key, with the signers proving old and new possession.
public struct KeyRotationSubmission: Sendable {
    /// The held key being rotated.
    public let keyId: String
    /// The current user-present key (proves the rotation is the device's).
    public let currentUserPresent: any DeviceRequestSigner
    /// The new ambient key.
    public let newAmbient: DeviceKeyDescriptor
    /// The new user-present key.
    public let newUserPresent: DeviceKeyDescriptor
    /// Signers for the new keys (proof of possession).
    public let newAmbientSigner: any DeviceRequestSigner
    /// Signer for the new user-present key.
    public let newUserPresentSigner: any DeviceRequestSigner

    /// Creates a rotation submission.
    public init(
        keyId: String, currentUserPresent: any DeviceRequestSigner, newAmbient: DeviceKeyDescriptor, newUserPresent: DeviceKeyDescriptor,
        newAmbientSigner: any DeviceRequestSigner, newUserPresentSigner: any DeviceRequestSigner
    ) {
        self.keyId = keyId
        self.currentUserPresent = currentUserPresent
        self.newAmbient = newAmbient
        self.newUserPresent = newUserPresent
        self.newAmbientSigner = newAmbientSigner
        self.newUserPresentSigner = newUserPresentSigner
    }
}

/// The authority's answer for one key of a rotation.
public enum KeyRotationOutcome: Sendable, Hashable {
    /// The replacement keys are registered; the old ones stay valid for the overlap window.
    case rotated(keyId: String)
    /// The key was already revoked or terminated; it is dropped rather than rotated.
    case revoked(keyId: String, terminated: Bool, replaced: Bool)
}

/// Whether a device key is registered on the authority.
public enum DeviceKeyStatus: Sendable, Hashable {
    /// Registered and current.
    case active
    /// Registered as the previous key of a rotation overlap.
    case previous
    /// Not known to the authority.
    case unknown
    /// Revoked or terminated.
    case revoked(terminated: Bool, replaced: Bool)
}

/// Branding and revocations for the held keys.
public struct BrandingSyncResult: Sendable, Hashable {
    /// Current branding per key id.
    public let branding: [String: Branding]
    /// Keys the authority revoked or terminated, by key id.
    public let revoked: [String: DeviceKeyStatus]

    /// Creates a result.
    public init(branding: [String: Branding], revoked: [String: DeviceKeyStatus]) {
        self.branding = branding
        self.revoked = revoked
    }
}
