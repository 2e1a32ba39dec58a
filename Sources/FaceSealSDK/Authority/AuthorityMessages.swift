public import FaceSealCrypto
public import FaceSealWire
public import Foundation

/// Which flow a link starts (SPEC §4.1 `kind`): the wire protocol's type.
public typealias LinkKind = FaceSealWire.LinkKind

/// A link whose signature, issuer and expiry have been checked.
public struct VerifiedLink: Sendable, Hashable {
    /// The flow the link starts.
    public let kind: LinkKind
    /// The authority's request id (`rid`).
    public let requestId: String
    /// The authority that signed the link (`iss`).
    public let issuer: String
    /// When the link expires (`exp`), Unix seconds.
    public let expiresAtUnix: Int64

    /// Creates a verified link.
    public init(kind: LinkKind, requestId: String, issuer: String, expiresAtUnix: Int64) {
        self.kind = kind
        self.requestId = requestId
        self.issuer = issuer
        self.expiresAtUnix = expiresAtUnix
    }
}

/// What the authority says about a pending sign-in or ceremony request (read with the ambient key).
public struct RequestDetails: Sendable, Hashable {
    /// The request id.
    public let requestId: String
    /// The identity the request is for.
    public let identityId: String
    /// The application that started it: chooses the key that answers and derives the face-locked keys, so it stays
    /// inside the package (the host app neither sees nor changes it).
    package let clientId: String
    /// The application's display name.
    public let rpLabel: String
    /// The application's branding, if configured.
    public let branding: Branding?
    /// The CIBA `binding_message`; always present on a ceremony.
    public let bindingMessage: String?
    /// What a ceremony asks for; nil for a sign-in.
    public let pkiKind: PkiCeremonyKind?
    /// When the request expires, Unix seconds.
    public let expiresAtUnix: Int64
    /// How many face mismatches the user may have.
    public let attemptsMax: Int
    /// How many of them are left: the authority counts, so a new flow on the same link does not reset them.
    public let attemptsLeft: Int
    /// How many liveness and capture-quality failures the request allows.
    public let captureRetriesMax: Int
    /// How many of them are left (counted by the authority).
    public let captureRetriesLeft: Int
    /// Whether the tenant requires liveness now: it runs when this or the token header asks for it.
    public let livenessRequired: Bool
    /// The tenant's match threshold now: the match uses the lower of this and the token header's.
    public let matchThreshold: Double
    /// The lowest device protocol that may answer this request.
    public let minimumDeviceProtocol: Int
    /// The tenant's key policy (algorithm names such as `ML-DSA-65`, `ML-KEM-768`).
    public let keyPolicy: [String]
    /// The opaque `pki_context`: inside the package only ("your app does not see the context and cannot change it").
    package let pkiContext: [UInt8]
    /// The `pki_data` (message to sign or ML-KEM ciphertext); empty when none.
    public let pkiData: [UInt8]
    /// The application's delivery endpoint (ceremonies only).
    public let deliveryEndpoint: URL?
    /// The application's `client_notification_token`, the delivery's bearer (ceremonies only).
    public let clientNotificationToken: String?

    /// Creates request details; `attemptsLeft` and `captureRetriesLeft` default to the whole budget. Package-only: a host app
    /// cannot make details with a context or client id of its choosing.
    package init(
        requestId: String, identityId: String, clientId: String, rpLabel: String, branding: Branding?,
        bindingMessage: String?, pkiKind: PkiCeremonyKind?, expiresAtUnix: Int64, attemptsMax: Int, attemptsLeft: Int? = nil,
        captureRetriesMax: Int = 10, captureRetriesLeft: Int? = nil, livenessRequired: Bool = false,
        matchThreshold: Double = MatchPolicy.defaultThreshold,
        minimumDeviceProtocol: Int, keyPolicy: [String], pkiContext: [UInt8] = [], pkiData: [UInt8] = [],
        deliveryEndpoint: URL? = nil, clientNotificationToken: String? = nil
    ) {
        self.requestId = requestId
        self.identityId = identityId
        self.clientId = clientId
        self.rpLabel = rpLabel
        self.branding = branding
        self.bindingMessage = bindingMessage
        self.pkiKind = pkiKind
        self.expiresAtUnix = expiresAtUnix
        self.attemptsMax = attemptsMax
        self.attemptsLeft = attemptsLeft ?? attemptsMax
        self.captureRetriesMax = captureRetriesMax
        self.captureRetriesLeft = captureRetriesLeft ?? captureRetriesMax
        self.livenessRequired = livenessRequired
        self.matchThreshold = matchThreshold
        self.minimumDeviceProtocol = minimumDeviceProtocol
        self.keyPolicy = keyPolicy
        self.pkiContext = pkiContext
        self.pkiData = pkiData
        self.deliveryEndpoint = deliveryEndpoint
        self.clientNotificationToken = clientNotificationToken
    }
}

/// What a failed face check was, as the SDK reports it to the authority (SPEC §5.4): the wire protocol's type
/// (`face_mismatch`, `capture_retry`).
public typealias AttemptKind = FaceSealWire.AttemptKind

/// A sealed face token as downloaded, with the authority's share needed to open it.
///
/// `serverShare` is secret: the driver keeps it only until the token is opened.
public struct FaceTokenEnvelope: Sendable {
    /// The token bytes (cleartext header plus sealed body, SPEC §5.1).
    public let token: [UInt8]
    /// The authority's share of the layer keys.
    public let serverShare: SecretBytes
    /// Header: whether a password is needed to open the token.
    public let passwordRequired: Bool
    /// Header: whether liveness must be checked before the match.
    public let livenessRequired: Bool
    /// Header: the token generation downloaded (the completion's compare-and-swap value).
    public let generation: Int

    /// Creates an envelope.
    public init(token: [UInt8], serverShare: SecretBytes, passwordRequired: Bool, livenessRequired: Bool, generation: Int) {
        self.token = token
        self.serverShare = serverShare
        self.passwordRequired = passwordRequired
        self.livenessRequired = livenessRequired
        self.generation = generation
    }
}

/// The signed result for the application's delivery endpoint (SPEC §4.4). Kept by the flow so a
/// retry re-sends the very same bytes.
public struct DeliveryRequest: Sendable, Hashable {
    /// The application's delivery endpoint.
    public let endpoint: URL
    /// `Authorization: Bearer` value: the application's `client_notification_token`.
    public let bearer: String
    /// The exact JSON body bytes.
    public let body: [UInt8]
    /// `X-FaceSeal-Signature` value: base64url ML-DSA-65 signature over `body`.
    public let signature: String

    /// Creates a delivery request.
    public init(endpoint: URL, bearer: String, body: [UInt8], signature: String) {
        self.endpoint = endpoint
        self.bearer = bearer
        self.body = body
        self.signature = signature
    }
}

/// What the application answered to a delivery.
public enum DeliveryOutcome: Sendable, Hashable {
    /// 2xx: the application holds the result.
    case accepted
    /// A non-2xx status.
    case refused(httpStatus: Int)
    /// No answer (connection refused, timeout), described.
    case unreachable(String)
}

/// The completion posted to the authority after the delivery was accepted (or, for a sign-in,
/// after the match). Kept by the flow so a retry re-posts the same completion.
public struct CompletionSubmission: Sendable, Hashable {
    /// The request id.
    public let requestId: String
    /// SHA-256 of the delivery body (ceremonies only): the receipt; never the body itself.
    public let resultSHA256: [UInt8]?
    /// The re-sealed face token, generation + 1 (SPEC §5.3).
    public let rotatedToken: [UInt8]
    /// The generation that was downloaded (compare-and-swap value).
    public let downloadedGeneration: Int
    /// The fresh server share of the rotated token.
    public let serverShare: SecretBytes
    /// Whether the user typed the token's password.
    public let passwordUsed: Bool
    /// A password-protected token: the public key of its password verifier (docs/PROTOCOL.md §8.1).
    public let passwordVerifier: [UInt8]?

    /// Creates a completion.
    public init(requestId: String, resultSHA256: [UInt8]?, rotatedToken: [UInt8], downloadedGeneration: Int,
                serverShare: SecretBytes = SecretBytes([UInt8]()), passwordUsed: Bool = false, passwordVerifier: [UInt8]? = nil) {
        self.passwordVerifier = passwordVerifier
        self.requestId = requestId
        self.resultSHA256 = resultSHA256
        self.rotatedToken = rotatedToken
        self.downloadedGeneration = downloadedGeneration
        self.serverShare = serverShare
        self.passwordUsed = passwordUsed
    }
}

/// A signed authority response's payload plus the rotation hint the authority may set on any
/// signed response (SPEC §4.2).
public struct AuthorityReply<Value: Sendable>: Sendable {
    /// The decoded, signature-checked payload.
    public let value: Value
    /// True when the request was signed with the previous key of a rotation overlap.
    public let rotationHint: Bool

    /// Creates a reply.
    public init(_ value: Value, rotationHint: Bool = false) {
        self.value = value
        self.rotationHint = rotationHint
    }
}

/// Why an authority call failed. Implementations map the authority's error codes onto these.
public enum AuthorityFailure: Error, Sendable, Hashable {
    /// The link is refused for this reason (link verification, or the request's state).
    case linkRefused(LinkRefusal)
    /// The request is no longer pending (answered, aborted) on the authority.
    case requestNotPending
    /// The request expired.
    case requestExpired
    /// The request needs a higher device protocol.
    case upgradeRequired
    /// The completion lost the token-rotation compare-and-swap (`stale_token`).
    case staleToken
    /// The signing device key was revoked.
    case deviceKeyRevoked(deviceKeyId: String)
    /// The signing device key's user has no application left.
    case deviceKeyTerminated(deviceKeyId: String)
    /// The signing device key was replaced by an enrolment on another device (one device per user).
    case deviceKeyReplaced(deviceKeyId: String)
    /// The authority refused the call with this error code, described.
    case refused(code: String, message: String)
    /// Network or 5xx failure; the same call may succeed later.
    case transient(String)
    /// The response did not verify or parse.
    case invalidResponse(String)
    /// The device key could not sign the request.
    case signing(SignKeypairError)
    /// A further device's enrolment still waits for its approval (`approval_pending`): wait again.
    case approvalPending
}

/// What releases the face token to a further device: the wire protocol's type (`enrolled_device`, `password`, `none`).
public typealias FurtherDeviceApproval = FaceSealWire.FurtherDeviceApproval

/// A further device's enrolment waiting for its approval (docs/PROTOCOL.md §8.1).
public struct PendingEnrolmentApproval: Sendable, Hashable {
    /// What releases the token.
    public let method: FurtherDeviceApproval
    /// Six digits to show: the approval request on the user's other device names the same code.
    public let code: String
    /// When the approval window ends, Unix seconds.
    public let expiresAtUnix: Int64
    /// `password` only: the token's header (the verifier key is derived from its `tid` and scrypt parameters).
    public let tokenHeader: [UInt8]?

    /// Creates the description.
    public init(method: FurtherDeviceApproval, code: String, expiresAtUnix: Int64, tokenHeader: [UInt8]? = nil) {
        self.method = method
        self.code = code
        self.expiresAtUnix = expiresAtUnix
        self.tokenHeader = tokenHeader
    }
}

/// The authority's answer to a further device's password proof.
public struct PasswordProofOutcome: Sendable, Hashable {
    /// The password was right: the enrolment is approved.
    public let accepted: Bool
    /// Wrong proofs left; at 0 the authority ended the enrolment.
    public let attemptsLeft: Int

    /// Creates the outcome.
    public init(accepted: Bool, attemptsLeft: Int) {
        self.accepted = accepted
        self.attemptsLeft = attemptsLeft
    }
}

/// A face-PKI key operation could not be done after the match (SPEC §5.2).
public enum KeyOperationError: Error, Sendable, Hashable {
    /// The operation does not fit the key type.
    case notPermitted
    /// The policy names an algorithm this SDK does not implement.
    case unsupportedAlgorithm(String)
    /// The application's data is not acceptable (bad ciphertext length, too long).
    case invalidData(String)
    /// The token could not be re-sealed or the body not built, described.
    case internalFailure(String)
}

/// A face token could not be opened.
public enum FaceTokenOpenError: Error, Sendable, Hashable {
    /// The password is wrong (the AEAD failed with a password supplied).
    case wrongPassword
    /// The token needs a password and none was given.
    case passwordRequired
    /// The token is malformed, of an unsupported version, or damaged.
    case unusable(String)
}
