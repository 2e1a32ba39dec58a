public import Foundation

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
        /// The authority told this device that a further device was registered for the user (``DeviceNotice``).
        case newDeviceNotice = "new_device_notice"
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
        // Whole milliseconds: what the activity file stores, so an entry reads back equal after a restart.
        let timestamp = Self.date(milliseconds: Self.milliseconds(entry.timestamp))
        entries.append(AuditEntry(timestamp: timestamp, kind: entry.kind, identityId: entry.identityId, note: note))
        if entries.count > capacity { entries.removeFirst(entries.count - capacity) }
    }

    static func milliseconds(_ date: Date) -> Int64 {
        let value = (date.timeIntervalSince1970 * 1_000).rounded()
        // A clock far outside ±292 million years is clamped rather than trapping.
        return value.isFinite ? Int64(max(min(value, 9.0e15), -9.0e15)) : 0
    }

    static func date(milliseconds: Int64) -> Date { Date(timeIntervalSince1970: Double(milliseconds) / 1_000) }

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
        var entries: [StoredEntry]
        var unreported: [RevokedKeyNotice]
    }

    /// An entry with its timestamp as whole milliseconds since 1970.
    private struct StoredEntry: Codable {
        var ms: Int64
        var kind: AuditEntry.Kind
        var identityId: String?
        var note: String
    }

    mutating func queue(_ notice: RevokedKeyNotice) {
        unreported.append(notice)
        if unreported.count > Self.maximumUnreported { unreported.removeFirst(unreported.count - Self.maximumUnreported) }
    }

    func encoded() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let entries = log.entries.map { StoredEntry(ms: AuditLog.milliseconds($0.timestamp), kind: $0.kind, identityId: $0.identityId, note: $0.note) }
        do {
            return Array(try encoder.encode(Stored(v: Self.version, entries: entries, unreported: unreported)))
        } catch {
            // Strings, numbers and dates only: encoding cannot fail.
            preconditionFailure("activity file failed to encode: \(error)")
        }
    }

    /// Decodes a stored file into a log of `capacity` (a smaller capacity keeps the newest entries).
    static func decode(_ bytes: [UInt8], capacity: Int) throws(VaultError) -> ActivityFile {
        guard bytes.count <= maximumSize else { throw .recordsTooLarge(bytes.count) }
        let decoder = JSONDecoder()
        guard let stored = try? decoder.decode(Stored.self, from: Data(bytes)), stored.v == version else {
            throw .corruptRecords("activity file does not parse")
        }
        let entries = stored.entries.map {
            AuditEntry(timestamp: AuditLog.date(milliseconds: $0.ms), kind: $0.kind, identityId: $0.identityId, note: $0.note)
        }
        var file = ActivityFile(log: AuditLog(capacity: capacity, entries: entries))
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
