import FaceSealCrypto
import FaceSealWire
public import Foundation
import Synchronization

/// The authority key the device pinned at its first enrolment (SPEC §4.1): every later link and every
/// signed response is checked against it. Kept in a small file (mode 0600) next to the vault, so it
/// survives restarts; an enrolment link's key is held provisionally until the enrolment response confirms it.
///
/// A pin is never replaced by a link: once pinned, an enrolment link carrying another key (whatever issuer name it
/// carries) or another issuer is refused, and `confirm` refuses to overwrite the pin. Moving the device to another
/// authority takes an explicit ``reset()`` by the host app. The one other way the pin moves is the authority's own key
/// rollover: a statement signed by the pinned key (``rollOver(_:now:)``, docs/PROTOCOL.md §2).
public final class AuthorityKeyPin: Sendable {
    private struct Pinned: Codable {
        var issuer: String
        var key: [UInt8]
        /// When this device pinned `key` (Unix seconds, its own clock); absent in pins written before rollovers, which
        /// count from the file's modification time.
        var pinnedAt: Int64?
    }

    private struct State {
        var pinned: Pinned?
        /// Enrolment links seen but not yet confirmed: invitation id → (issuer, key).
        var provisional: [String: Pinned] = [:]
    }

    private let file: URL?
    private let state: Mutex<State>

    /// Reads the pin from `file` (nil: in memory only, for tests).
    public init(file: URL?) throws(VaultError) {
        self.file = file
        var pinned: Pinned?
        if let file, FileManager.default.fileExists(atPath: file.path) {
            guard let data = try? Data(contentsOf: file), data.count <= 4096,
                  var decoded = try? JSONDecoder().decode(Pinned.self, from: data), decoded.key.count == 32 else {
                throw .corruptRecords("the authority pin file does not parse")
            }
            if decoded.pinnedAt == nil, let modified = try? FileManager.default.attributesOfItem(atPath: file.path)[.modificationDate] as? Date {
                decoded.pinnedAt = Int64(modified.timeIntervalSince1970)
            }
            pinned = decoded
        }
        state = Mutex(State(pinned: pinned))
    }

    /// The pinned issuer, if any.
    public var issuer: String? { state.withLock { $0.pinned?.issuer } }

    /// The pinned key of `issuer`, if that is the pinned issuer.
    func key(issuer: String) -> Curve25519.Signing.PublicKey? {
        guard let pinned = state.withLock({ $0.pinned }), pinned.issuer == issuer else { return nil }
        return try? Curve25519.Signing.PublicKey(rawRepresentation: pinned.key)
    }

    /// Whether an enrolment link of `issuer` carrying `key` may be used: always before anything is pinned, and
    /// afterwards only for the pinned issuer and key.
    func admitsEnrolment(issuer: String, key: [UInt8]) -> Bool {
        guard let pinned = state.withLock({ $0.pinned }) else { return true }
        return pinned.issuer == issuer && constantTimeEquals(pinned.key, key)
    }

    /// The pinned key whatever its issuer (a client talks to one authority).
    func currentKey() -> Curve25519.Signing.PublicKey? {
        guard let pinned = state.withLock({ $0.pinned }) else { return nil }
        return try? Curve25519.Signing.PublicKey(rawRepresentation: pinned.key)
    }

    func holdProvisional(invitation: String, issuer: String, key: [UInt8]) {
        state.withLock { $0.provisional[invitation] = Pinned(issuer: issuer, key: key) }
    }

    func provisional(invitation: String) -> (issuer: String, key: Curve25519.Signing.PublicKey)? {
        guard let entry = state.withLock({ $0.provisional[invitation] }),
              let key = try? Curve25519.Signing.PublicKey(rawRepresentation: entry.key) else { return nil }
        return (entry.issuer, key)
    }

    /// Pins the key an enrolment response confirmed (at `now`, Unix seconds); refused when another issuer or key is
    /// already pinned.
    func confirm(invitation: String, issuer: String, key: [UInt8], now: Int64 = Int64(Date().timeIntervalSince1970)) throws(VaultError) {
        let pinned = Pinned(issuer: issuer, key: key, pinnedAt: now)
        guard admitsEnrolment(issuer: issuer, key: key) else {
            throw .corruptRecords("another authority is pinned: reset the pin explicitly to move to a new authority")
        }
        try write(pinned)
        state.withLock {
            $0.pinned = pinned
            $0.provisional[invitation] = nil
        }
    }

    /// Follows the authority's rollover statements from the pinned key: each step must be signed by the key reached so
    /// far, name the pinned issuer and be inside its window while that key's pin is younger than
    /// `AuthorityKeyRollover.pinLifetime`; anything else is ignored, never followed. Persists the new pin atomically
    /// (written beside, synced, renamed over) before using it. Answers whether the pin moved.
    func rollOver(_ statements: [String], now: Int64) throws(VaultError) -> Bool {
        guard var pinned = state.withLock({ $0.pinned }), var key = try? Curve25519.Signing.PublicKey(rawRepresentation: pinned.key) else {
            return false
        }
        var pinnedAt = pinned.pinnedAt ?? now
        var moved = false
        // One step per statement at most: a cycle among statements cannot loop.
        for _ in statements.indices {
            let next = statements.lazy.compactMap { statement in
                try? AuthorityKeyRollover.verify(statement, pinned: key, pinnedAt: pinnedAt, issuer: pinned.issuer, now: now)
            }.first.flatMap { try? Curve25519.Signing.PublicKey(rawRepresentation: $0.new.bytes) }
            guard let next else { break }
            key = next
            pinnedAt = now
            moved = true
        }
        guard moved else { return false }
        pinned.key = Array(key.rawRepresentation)
        pinned.pinnedAt = now
        try write(pinned)
        state.withLock { $0.pinned = pinned }
        return true
    }

    /// Writes the pin beside the file, syncs it and renames it over, so a crash leaves the old pin or the new one.
    private func write(_ pinned: Pinned) throws(VaultError) {
        guard let file else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(pinned) else { throw .storageFailed("the pin does not encode") }
        let temporary = file.deletingLastPathComponent().appendingPathComponent(".\(file.lastPathComponent).tmp")
        guard FileManager.default.createFile(atPath: temporary.path, contents: data, attributes: [.posixPermissions: 0o600]),
              let handle = try? FileHandle(forWritingTo: temporary), (try? handle.synchronize()) != nil, (try? handle.close()) != nil,
              rename(temporary.path, file.path) == 0 else {
            throw .storageFailed("cannot write the authority pin")
        }
    }

    /// Forgets the pinned authority (and every provisional enrolment key), so the next enrolment link pins a new one.
    ///
    /// Only for a host app that decided, outside any link, to move this device to another authority (a new
    /// deployment, a re-keyed authority): a link can never do it. Keys enrolled at the previous authority stay in the
    /// vault but their links and responses no longer verify; revoke or remove them first.
    public func reset() throws(VaultError) {
        if let file, FileManager.default.fileExists(atPath: file.path) {
            do {
                try FileManager.default.removeItem(at: file)
            } catch {
                throw .storageFailed("cannot remove the authority pin")
            }
        }
        state.withLock { $0 = State() }
    }
}
