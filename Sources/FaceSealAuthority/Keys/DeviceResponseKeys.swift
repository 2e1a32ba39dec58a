import FaceSealCrypto
import FaceSealWire
import Foundation
import Synchronization

/// The authority's device-response key (it signs every link and every answer to a device) and the rollover statements
/// that lead devices from the keys they pinned to it (docs/PROTOCOL.md §2, "Authority key rollover").
///
/// Before any rotation it is the key of `AuthorityKeys` (derived from the master key); each rotation stores a new key,
/// sealed under the signing-key-wrapping key, with the statement the previous key signed, and erases the previous stored
/// key. Every process reloads the current key at most a minute after another one rotated it.
final class DeviceResponseKeyRing: Sendable {
    /// The `signing_keys.algorithm` of device-response keys (never an ID-token key, never in `/jwks`).
    static let algorithm = "faceseal-device-Ed25519"
    /// How long a process signs with what it loaded before it looks at the store again.
    static let reloadInterval: TimeInterval = 60

    private struct State {
        var key: Curve25519.Signing.PrivateKey
        var keyID: String?
        var rollovers: [String] = []
        var loadedAt: Date?
    }

    private let state: Mutex<State>

    init(initial: Curve25519.Signing.PrivateKey) {
        state = Mutex(State(key: initial))
    }

    /// The key to sign with now, and its stored id (nil: the master-derived key).
    var current: (key: Curve25519.Signing.PrivateKey, keyID: String?) { state.withLock { ($0.key, $0.keyID) } }

    /// The unexpired rollover statements, oldest first.
    var rollovers: [String] { state.withLock { $0.rollovers } }

    func isStale(at now: Date) -> Bool {
        state.withLock { state in state.loadedAt.map { now.timeIntervalSince($0) >= Self.reloadInterval || now < $0 } ?? true }
    }

    func set(key: Curve25519.Signing.PrivateKey, keyID: String?, rollovers: [String], loadedAt: Date) {
        state.withLock { $0 = State(key: key, keyID: keyID, rollovers: rollovers, loadedAt: loadedAt) }
    }
}

extension Authority {
    /// The key links and device responses are signed with now.
    var deviceKey: Curve25519.Signing.PrivateKey { deviceResponseKeys.current.key }

    /// Reloads the current device-response key and the rollover statements when the last load is older than
    /// `reloadInterval` (or always, `force`). A store that cannot be read leaves the loaded key in use.
    func refreshDeviceResponseKey(force: Bool = false) async throws {
        let now = clock.now()
        guard force || deviceResponseKeys.isStale(at: now) else { return }
        let records = try await store.signingKeys().filter { $0.algorithm == DeviceResponseKeyRing.algorithm }
        var key = keys.deviceKey
        var keyID: String?
        if let newest = records.last(where: { $0.retiredAt == nil }) {
            let secret = try SigningKeySeal.open(newest, masterKey: keys.signingKeyWrappingKey)
            defer { secret.zero() }
            key = try secret.withUnsafeBytes { try Curve25519.Signing.PrivateKey(rawRepresentation: $0) }
            guard JWK(publicKey: key.publicKey).thumbprintBase64URL == newest.keyID else {
                throw SigningKeyError.publicKeyMismatch(keyID: newest.keyID)
            }
            keyID = newest.keyID
        }
        let rollovers = records.filter { ($0.rolloverExpiresAt ?? .distantPast) > now }.compactMap(\.rollover)
        deviceResponseKeys.set(key: key, keyID: keyID, rollovers: Self.chainOrder(rollovers), loadedAt: now)
    }

    /// `statements` in the order they hand over (each one's `new` is the next one's `old`), whatever order their rows
    /// came in (two rotations within one clock tick sort by id).
    static func chainOrder(_ statements: [String]) -> [String] {
        let parsed = statements.compactMap { statement in AuthorityKeyRollover.unverifiedClaims(statement).map { (statement, $0) } }
        let news = Set(parsed.map(\.1.new.bytes))
        var ordered = parsed.filter { !news.contains($0.1.old.bytes) }.map(\.0)
        var remaining = parsed.filter { news.contains($0.1.old.bytes) }
        while let last = ordered.last.flatMap(AuthorityKeyRollover.unverifiedClaims),
              let index = remaining.firstIndex(where: { $0.1.old.bytes == last.new.bytes }) {
            ordered.append(remaining.remove(at: index).0)
        }
        return ordered + remaining.map(\.0)
    }

    /// Rotates the device-response key: a new Ed25519 key, the rollover statement the current key signs over it (valid
    /// `window` seconds, at most `AuthorityKeyRollover.maximumWindow`), stored in one transaction that retires the current
    /// stored key and erases its private half. A concurrent rotation elsewhere makes this one `.conflict(.signingKey)`.
    /// Answers the new key's record.
    public func rotateDeviceResponseKey(window: Int64) async throws -> SigningKeyRecord {
        guard (1...AuthorityKeyRollover.maximumWindow).contains(window) else {
            throw AuthorityStoreError.invalidInput(field: "window", reason: "outside 1…\(AuthorityKeyRollover.maximumWindow) s")
        }
        try await refreshDeviceResponseKey(force: true)
        let (old, oldID) = deviceResponseKeys.current
        let new = Curve25519.Signing.PrivateKey()
        let issuedAt = now
        let statement = try AuthorityKeyRollover.make(
            AuthorityKeyRolloverClaims(iss: issuer, old: Array(old.publicKey.rawRepresentation), new: Array(new.publicKey.rawRepresentation),
                                       iat: issuedAt, exp: issuedAt + window),
            oldKey: old)
        var jwk = JWK(publicKey: new.publicKey)
        jwk.keyID = jwk.thumbprintBase64URL
        let keyID = jwk.keyID ?? ""
        let secret = new.secretRepresentation
        var record = SigningKeyRecord(keyID: keyID, algorithm: DeviceResponseKeyRing.algorithm, publicJWK: String(decoding: jwk.jsonData, as: UTF8.self),
                                      encryptedPrivateKey: try SigningKeySeal.seal(secret, keyID: keyID, algorithmName: DeviceResponseKeyRing.algorithm,
                                                                                   masterKey: keys.signingKeyWrappingKey))
        record.rollover = statement
        record.rolloverExpiresAt = Date(timeIntervalSince1970: TimeInterval(issuedAt + window))
        let stored = try await store.rotateDeviceResponseKey(record, replacing: oldID)
        try await refreshDeviceResponseKey(force: true)
        return stored
    }

    /// `GET /device/v1/authority-keys` (unsigned): the rollover statements, oldest first. Each authenticates itself; the
    /// answer releases only public keys.
    func authorityKeyChain() async throws -> AuthorityKeyChain {
        try await refreshDeviceResponseKey()
        return AuthorityKeyChain(rollovers: Array(deviceResponseKeys.rollovers.suffix(AuthorityKeyRollover.maxChainLength)))
    }
}
