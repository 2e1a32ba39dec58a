public import Foundation
public import FaceSealCrypto
import FaceSealWire

/// A request the relying party started: what it needs to wait for the result.
public struct PendingRequestHandle: Sendable, Equatable {
    /// The authority's request id.
    public var authReqId: String
    /// What was asked for (`sign` carries the data).
    public var kind: RequestKind
    /// The user (`login_hint`).
    public var user: String
    /// The key context.
    public var context: String
    /// When the authority forgets the request.
    public var expiresAt: Date
    /// The minimum polling interval, seconds.
    public var interval: Int

    /// Builds a handle.
    public init(authReqId: String, kind: RequestKind, user: String, context: String, expiresAt: Date, interval: Int) {
        self.authReqId = authReqId
        self.kind = kind
        self.user = user
        self.context = context
        self.expiresAt = expiresAt
        self.interval = interval
    }
}

/// The verified claims of an ID token.
public struct IDTokenClaims: Sendable {
    /// The compact JWS as received.
    public var rawToken: String
    /// The signing algorithm.
    public var algorithm: JWSAlgorithm
    /// `kid` of the authority key that signed it.
    public var keyID: String?
    /// `sub`: the user's pairwise subject for this application.
    public var subject: String
    /// `auth_time`, if present.
    public var authTime: Date?
    /// `amr` (`face`, `hwk`, `pwd`).
    public var amr: [String]
    /// Every claim.
    public var claims: JWTClaims
}

/// What a verified request produced.
public enum VerifiedValue: Sendable {
    /// A sign-in: the ID token is the result.
    case signIn
    /// The user's public keys for the context (pinned).
    case publicKeys(PinnedKeys)
    /// An ML-DSA-65 signature over the requested data (empty context), verified with the pinned key.
    case signature([UInt8])
    /// The ML-KEM-768 shared secret, equal to the one the relying party encapsulated.
    case sharedSecret(SymmetricKey)
}

/// A result whose delivery, ID token and receipt all verified.
public struct VerifiedResult: Sendable {
    /// The request.
    public var authReqId: String
    /// The result.
    public var value: VerifiedValue
    /// The ID token's claims.
    public var idToken: IDTokenClaims
    /// Every check that passed, one line each, in order (delivery, ID token, receipt).
    public var checks: [String]
}

/// How a request ended.
public enum RequestOutcome: Sendable {
    /// Everything verified.
    case verified(VerifiedResult)
    /// The user (or the authority's policy) refused: `access_denied`.
    case denied(String?)
    /// The request expired before the user answered: `expired_token`.
    case expired
    /// The ceremony's token rotation lost (SPEC §5.3): `stale_token`; start a new request.
    case stale

    /// A one-word name for logs and the CLI.
    public var name: String {
        switch self {
        case .verified: "verified"
        case .denied: "denied"
        case .expired: "expired"
        case .stale: "stale"
        }
    }
}
