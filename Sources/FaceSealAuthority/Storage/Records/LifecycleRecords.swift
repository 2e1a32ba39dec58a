public import FaceSealWire
public import Foundation

/// What a deletion changed (docs/PROTOCOL.md §11); the same counts are in its audit tombstone.
public struct DeletionSummary: Sendable, Hashable {
    /// Enrolments ended (revoked for a user, terminated for an application).
    public var enrolmentsEnded: Int
    /// Pending requests denied.
    public var requestsEnded: Int
    /// Unused invitations cancelled.
    public var invitationsCancelled: Int
    /// Face tokens erased (0 or 1).
    public var faceTokensErased: Int
    /// Management API keys revoked (a tenant's).
    public var apiKeysRevoked: Int
    /// The requests denied, for their ping callbacks.
    public var endedRequestIDs: [String] = []

    /// Creates a summary.
    public init(enrolmentsEnded: Int = 0, requestsEnded: Int = 0, invitationsCancelled: Int = 0, faceTokensErased: Int = 0, apiKeysRevoked: Int = 0) {
        self.enrolmentsEnded = enrolmentsEnded
        self.requestsEnded = requestsEnded
        self.invitationsCancelled = invitationsCancelled
        self.faceTokensErased = faceTokensErased
        self.apiKeysRevoked = apiKeysRevoked
    }
}

/// How a CIBA request's life is written to the audit (`request.<event>`, target the `auth_req_id`).
public enum RequestAuditEvent: String, Sendable, Hashable, CaseIterable {
    /// The backchannel endpoint stored it.
    case created
    /// A device of the user opened it (first time only).
    case delivered
    /// The completion stored the rotated token.
    case completed
    /// It was denied; the detail carries the reason.
    case denied
    /// It outlived its expiry.
    case expired
    /// Its completion lost the rotation race.
    case stale

    /// The audit `kind`.
    public var kind: String { "request.\(rawValue)" }
}

extension InvitationRecord {
    /// Its status at `now`.
    public func status(at now: Date) -> InvitationStatus {
        if consumedAt != nil { return .consumed }
        if cancelledAt != nil { return .cancelled }
        return expiresAt > now ? .pending : .expired
    }
}
