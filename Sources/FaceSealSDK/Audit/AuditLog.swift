import Foundation

/// One local record of SDK activity, for an in-app activity screen.
public struct AuditEntry: Sendable, Hashable, Codable {
    /// What happened.
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        /// A device enrolled (both keys created and registered).
        case enrolment
        /// A sign-in was approved.
        case signIn = "sign_in"
        /// A face-PKI ceremony finished.
        case ceremony
        /// A flow ended without success.
        case flowFailed = "flow_failed"
        /// A signed abort was sent.
        case abortSent = "abort_sent"
        /// Keys were rotated.
        case keyRotation = "key_rotation"
        /// A key was revoked from this device.
        case keyRevocation = "key_revocation"
        /// The authority reported a key revoked or terminated; it was removed.
        case keyRemovedByAuthority = "key_removed_by_authority"
        /// Branding was synchronised.
        case brandingSync = "branding_sync"
        /// `open()` reconciled the vault (interrupted rotation, wiped keys, reinstall).
        case vaultReconciled = "vault_reconciled"
    }

    /// When it happened (from the injected clock).
    public let timestamp: Date
    /// What happened.
    public let kind: Kind
    /// The identity concerned, if any.
    public let identityId: String?
    /// A short description (never a secret).
    public let note: String

    /// Creates an entry.
    public init(timestamp: Date, kind: Kind, identityId: String?, note: String) {
        self.timestamp = timestamp
        self.kind = kind
        self.identityId = identityId
        self.note = note
    }
}

/// The bounded, append-only local audit log (pure value).
struct AuditLog: Sendable, Equatable {
    /// How many entries are kept; the oldest are dropped first.
    let capacity: Int
    private(set) var entries: [AuditEntry] = []

    init(capacity: Int = 1_000) {
        precondition(capacity > 0, "audit capacity must be positive")
        self.capacity = capacity
    }

    mutating func append(_ entry: AuditEntry) {
        entries.append(entry)
        if entries.count > capacity { entries.removeFirst(entries.count - capacity) }
    }

    /// At most `limit` entries, newest first (a negative limit yields none).
    func newest(limit: Int) -> [AuditEntry] {
        Array(entries.reversed().prefix(max(0, limit)))
    }
}
