public import Foundation
import Synchronization

/// Where an application keeps the keys it pinned per (user, context). Implementations must make
/// `pin(_:for:)` atomic: it never replaces a different key.
public protocol KeyPinStore: Sendable {
    /// The keys pinned for `key`, if any.
    func pinnedKeys(for key: PinKey) async throws -> PinnedKeys?
    /// Pins `keys` for `key` unless different keys are already pinned there.
    func pin(_ keys: PinnedKeys, for key: PinKey) async throws -> PinResult
    /// Removes the pin for `key` if it still holds exactly `keys` (nil removes whatever is pinned).
    func removePin(for key: PinKey, ifEqualTo keys: PinnedKeys?) async throws
}

/// What `KeyPinStore.pin(_:for:)` did.
public enum PinResult: Sendable, Equatable {
    /// Nothing was pinned; `keys` now are.
    case pinned
    /// The same keys were already pinned.
    case alreadyPinned
    /// Different keys are pinned; nothing changed.
    case conflict(existing: PinnedKeys)
}

/// Pins kept in memory (tests, short-lived processes).
public final class InMemoryKeyPinStore: KeyPinStore {
    private let pins = Mutex<[PinKey: PinnedKeys]>([:])

    /// An empty store.
    public init() {}

    /// The keys pinned for `key`, if any.
    public func pinnedKeys(for key: PinKey) async throws -> PinnedKeys? { pins.withLock { $0[key] } }

    /// Pins `keys` for `key` unless different keys are already pinned there.
    public func pin(_ keys: PinnedKeys, for key: PinKey) async throws -> PinResult {
        pins.withLock { pins in
            if let existing = pins[key] { return existing == keys ? .alreadyPinned : .conflict(existing: existing) }
            pins[key] = keys
            return .pinned
        }
    }

    /// Removes the pin for `key` if it still holds exactly `keys` (nil removes whatever is pinned).
    public func removePin(for key: PinKey, ifEqualTo keys: PinnedKeys?) async throws {
        pins.withLock { pins in
            if keys == nil || pins[key] == keys { pins[key] = nil }
        }
    }

    /// Number of pins (tests).
    public var count: Int { pins.withLock { $0.count } }
}

/// Pins in one JSON file, written atomically with mode 0600. The file is read once at creation and
/// rewritten on every change; one process owns it.
public final class FileKeyPinStore: KeyPinStore {
    private struct Entry: Codable {
        var user: String
        var context: String
        var keys: PinnedKeys
    }

    /// The largest pin file read (a few thousand pins).
    public static let maxFileBytes = 16 << 20

    /// The file.
    public let url: URL
    private let pins: Mutex<[PinKey: PinnedKeys]>

    /// Opens (or starts) the pin file at `url`.
    public init(url: URL) throws(RelyingPartyError) {
        self.url = url
        var loaded: [PinKey: PinnedKeys] = [:]
        if FileManager.default.fileExists(atPath: url.path) {
            let data: Data
            do {
                data = try Data(contentsOf: url)
            } catch {
                throw .storage("cannot read \(url.path): \(error.localizedDescription)")
            }
            guard data.count <= Self.maxFileBytes else { throw .storage("\(url.path) exceeds \(Self.maxFileBytes) bytes") }
            guard let entries = try? JSONDecoder().decode([Entry].self, from: data) else {
                throw .storage("\(url.path) is not a FaceSeal pin file")
            }
            for entry in entries { loaded[PinKey(user: entry.user, context: entry.context)] = entry.keys }
        }
        pins = Mutex(loaded)
    }

    /// The keys pinned for `key`, if any.
    public func pinnedKeys(for key: PinKey) async throws -> PinnedKeys? { pins.withLock { $0[key] } }

    /// Pins `keys` for `key` unless different keys are already pinned there.
    public func pin(_ keys: PinnedKeys, for key: PinKey) async throws -> PinResult {
        try pins.withLock { pins throws(RelyingPartyError) -> PinResult in
            if let existing = pins[key] { return existing == keys ? .alreadyPinned : .conflict(existing: existing) }
            var updated = pins
            updated[key] = keys
            try write(updated)
            pins = updated
            return .pinned
        }
    }

    /// Removes the pin for `key` if it still holds exactly `keys` (nil removes whatever is pinned).
    public func removePin(for key: PinKey, ifEqualTo keys: PinnedKeys?) async throws {
        try pins.withLock { pins throws(RelyingPartyError) in
            guard pins[key] != nil, keys == nil || pins[key] == keys else { return }
            var updated = pins
            updated[key] = nil
            try write(updated)
            pins = updated
        }
    }

    /// Writes to a temporary file created 0600, then renames it over the pin file, so a crash never leaves half a file.
    private func write(_ pins: [PinKey: PinnedKeys]) throws(RelyingPartyError) {
        let entries = pins.sorted { ($0.key.user, $0.key.context) < ($1.key.user, $1.key.context) }
            .map { Entry(user: $0.key.user, context: $0.key.context, keys: $0.value) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        guard let data = try? encoder.encode(entries) else { throw .storage("cannot encode pins") }
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString)")
        // O_EXCL and mode 0600 at creation: the keys are never readable by others, not even for a moment.
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else { throw .storage("cannot create \(temporary.path) (errno \(errno))") }
        let written = data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = Foundation.write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                if n <= 0 { return false }
                offset += n
            }
            return fsync(descriptor) == 0
        }
        close(descriptor)
        guard written else {
            try? FileManager.default.removeItem(at: temporary)
            throw .storage("cannot write \(temporary.path)")
        }
        if rename(temporary.path, url.path) != 0 {
            try? FileManager.default.removeItem(at: temporary)
            throw .storage("cannot replace \(url.path) (errno \(errno))")
        }
    }
}
