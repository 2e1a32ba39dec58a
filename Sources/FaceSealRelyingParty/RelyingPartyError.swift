import FaceSealCrypto
public import FaceSealWire

/// Why a relying-party operation failed. Refused deliveries are not errors: they are answered with a
/// `DeliveryRefusal`.
public enum RelyingPartyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The configuration cannot work (the reason).
    case invalidConfiguration(String)
    /// The authority could not be reached or answered garbage at the transport level.
    case transport(String)
    /// The discovery document or JWKS is unusable (the reason).
    case discovery(String)
    /// The authority refused the request with an OAuth error.
    case refused(CIBAErrorCode, String?)
    /// The authority answered something the protocol does not allow (the reason).
    case unexpectedResponse(String)
    /// The request cannot be made (the reason): no pinned key, bad binding message, ….
    case invalidRequest(String)
    /// The ID token failed verification (the reason).
    case invalidIDToken(String)
    /// The ID token's receipt does not match the body the relying party accepted, or no body was accepted.
    case receiptMismatch(String)
    /// A pending request this process does not know (or already finished).
    case unknownRequest(String)
    /// The pin or pending-request store failed (the reason).
    case storage(String)
    /// No ping arrived before the request expired.
    case pingTimeout

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .invalidConfiguration(let reason): "invalid configuration: \(reason)"
        case .transport(let reason): "authority unreachable: \(reason)"
        case .discovery(let reason): "discovery failed: \(reason)"
        case .refused(let code, let description): "authority refused: \(code.rawValue)" + (description.map { " (\($0))" } ?? "")
        case .unexpectedResponse(let reason): "unexpected answer from the authority: \(reason)"
        case .invalidRequest(let reason): "invalid request: \(reason)"
        case .invalidIDToken(let reason): "ID token rejected: \(reason)"
        case .receiptMismatch(let reason): "receipt check failed: \(reason)"
        case .unknownRequest(let id): "unknown request \(id)"
        case .storage(let reason): "storage: \(reason)"
        case .pingTimeout: "no ping before the request expired"
        }
    }
}
