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

    /// The longest note kept (longer ones are cut): with `capacity` this bounds the stored file.
    static let maximumNoteLength = 240

    init(capacity: Int = 1_000, entries: [AuditEntry] = []) {
        precondition(capacity > 0, "audit capacity must be positive")
        self.capacity = capacity
        for entry in entries { append(entry) }
    }

    mutating func append(_ entry: AuditEntry) {
        let note = entry.note.count > Self.maximumNoteLength ? String(entry.note.prefix(Self.maximumNoteLength - 1)) + "…" : entry.note
        entries.append(AuditEntry(timestamp: entry.timestamp, kind: entry.kind, identityId: entry.identityId, note: note))
        if entries.count > capacity { entries.removeFirst(entries.count - capacity) }
    }

    /// At most `limit` entries, newest first (a negative limit yields none).
    func newest(limit: Int) -> [AuditEntry] {
        Array(entries.reversed().prefix(max(0, limit)))
    }
}

/// The SDK's activity file, sealed like the key records and kept in the vault directory so that the activity screen
/// and the notices of dead keys survive a restart: the audit entries, and the ``RevokedKeyNotice``s of keys removed
/// outside a call that reports them (by `open()`, a flow or the outbox), until a branding sync reports them.
struct ActivityFile: Sendable, Equatable {
    /// The most unreported notices kept (the oldest are dropped first).
    static let maximumUnreported = 64
    /// The largest file accepted (the log's capacity and note length keep real files far below it).
    static let maximumSize = 1 << 20
    static let version = 1

    var log: AuditLog
    var unreported: [RevokedKeyNotice] = []

    private struct Stored: Codable {
        var v: Int
        var entries: [AuditEntry]
        var unreported: [RevokedKeyNotice]
    }

    mutating func queue(_ notice: RevokedKeyNotice) {
        unreported.append(notice)
        if unreported.count > Self.maximumUnreported { unreported.removeFirst(unreported.count - Self.maximumUnreported) }
    }

    func encoded() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .secondsSince1970
        do {
            return Array(try encoder.encode(Stored(v: Self.version, entries: log.entries, unreported: unreported)))
        } catch {
            // Strings, numbers and dates only: encoding cannot fail.
            preconditionFailure("activity file failed to encode: \(error)")
        }
    }

    /// Decodes a stored file into a log of `capacity` (a smaller capacity keeps the newest entries).
    static func decode(_ bytes: [UInt8], capacity: Int) throws(VaultError) -> ActivityFile {
        guard bytes.count <= maximumSize else { throw .recordsTooLarge(bytes.count) }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        guard let stored = try? decoder.decode(Stored.self, from: Data(bytes)), stored.v == version else {
            throw .corruptRecords("activity file does not parse")
        }
        var file = ActivityFile(log: AuditLog(capacity: capacity, entries: stored.entries))
        for notice in stored.unreported { file.queue(notice) }
        return file
    }
}

/// Reads and writes the sealed activity file through the vault and the sealer.
struct ActivityStore: Sendable {
    let vault: any KeyVault
    let sealer: any RecordSealer

    func load(capacity: Int) throws(VaultError) -> ActivityFile {
        guard let sealed = try vault.readAuditFile() else { return ActivityFile(log: AuditLog(capacity: capacity)) }
        return try ActivityFile.decode(try sealer.open(sealed), capacity: capacity)
    }

    func save(_ file: ActivityFile) throws(VaultError) {
        try vault.writeAuditFile(try sealer.seal(file.encoded()))
    }
}
