public import FaceSealCrypto
public import Foundation

/// Opens and creates face tokens (SPEC §5.1–5.3). The real implementation lives on `FaceSealWire`
/// and `FaceSealCrypto` (HKDF, scrypt, AES-GCM, ML-DSA, ML-KEM).
public protocol FaceTokenOpener: Sendable {
    /// Opens a downloaded token with the authority's share and the password, if any.
    func open(_ envelope: FaceTokenEnvelope, password: String?) async throws(FaceTokenOpenError) -> any OpenedFaceToken

    /// Creates the first face token of a user from enrolment templates, with fresh masters for
    /// every algorithm of `keyPolicy`. `subject` and `tenant` are the enrolment details' (the header's `sub` and
    /// `tenant`): the authority refuses a token that names another user.
    func create(templates: FaceTemplates, password: String?, keyPolicy: [String], subject: String,
                tenant: String) async throws(KeyOperationError) -> NewFaceToken
}

/// A face token opened for the match: its templates in memory, its masters still sealed (SPEC §5.1 format 2).
/// Implementations zero their secrets when released and never log them.
public protocol OpenedFaceToken: Sendable {
    /// The enrolled templates, for the match.
    var templates: FaceTemplates { get }
    /// The token's match threshold.
    var matchThreshold: Float { get }
    /// The generation that was downloaded.
    var generation: Int { get }

    /// Opens the keys layer. Call it only after liveness and the match passed: a flow that fails either never
    /// has a master in memory.
    func openKeys() async throws(KeyOperationError) -> any FaceTokenKeys
}

/// A face token whose keys layer is open: the masters in memory, after a match.
public protocol FaceTokenKeys: Sendable {
    /// Fills masters missing from `request.keyPolicy` (fill-only), does the key operation of a ceremony, builds and
    /// signs the delivery body, hashes it, and re-seals the token (generation + 1, fresh share, format 2). For a
    /// sign-in (`request.pkiKind == nil`) only re-seals.
    func prepareCompletion(for request: RequestDetails, issuedAt: Date) async throws(KeyOperationError) -> PreparedCompletion
}

/// What `prepareCompletion` produced.
public struct PreparedCompletion: Sendable, Hashable {
    /// Ceremonies: the exact delivery body bytes.
    public let deliveryBody: [UInt8]?
    /// Ceremonies: base64url ML-DSA-65 signature over `deliveryBody`, context `faceseal-delivery-v1`.
    public let deliverySignature: String?
    /// Ceremonies: SHA-256 of `deliveryBody`.
    public let deliverySHA256: [UInt8]?
    /// The re-sealed token to upload with the completion.
    public let rotatedToken: [UInt8]
    /// The fresh server share the rotated token is sealed with (sent once, with the completion).
    public let rotatedServerShare: SecretBytes
    /// Whether the token was opened with the user's password (the ID token's `amr` gets `pwd`).
    public let passwordUsed: Bool
    /// A password-protected token: the public key of its password verifier, uploaded with the completion.
    public let passwordVerifier: [UInt8]?

    /// Creates a prepared completion.
    public init(deliveryBody: [UInt8]?, deliverySignature: String?, deliverySHA256: [UInt8]?, rotatedToken: [UInt8],
                rotatedServerShare: SecretBytes = SecretBytes([UInt8]()), passwordUsed: Bool = false, passwordVerifier: [UInt8]? = nil) {
        self.passwordVerifier = passwordVerifier
        self.deliveryBody = deliveryBody
        self.deliverySignature = deliverySignature
        self.deliverySHA256 = deliverySHA256
        self.rotatedToken = rotatedToken
        self.rotatedServerShare = rotatedServerShare
        self.passwordUsed = passwordUsed
    }
}

/// A newly created face token and the share the authority will keep.
public struct NewFaceToken: Sendable, Hashable {
    /// The sealed token.
    public let token: [UInt8]
    /// The authority's share (sent once, at enrolment).
    public let serverShare: SecretBytes
    /// A password-protected token: the public key of its password verifier (docs/PROTOCOL.md §8.1).
    public let passwordVerifier: [UInt8]?

    /// Creates a new token value.
    public init(token: [UInt8], serverShare: SecretBytes, passwordVerifier: [UInt8]? = nil) {
        self.passwordVerifier = passwordVerifier
        self.token = token
        self.serverShare = serverShare
    }
}
