import FaceSealCrypto
import Foundation
import Synchronization

/// The authority's ID-token keys as loaded from the store: the signing key of each algorithm and every public key
/// to publish at `/jwks` (retired keys for `Authority.idTokenKeyOverlap` after their retirement, so tokens they signed
/// still verify while they live).
struct IDTokenKeyRing: Sendable {
    /// The current signing key per algorithm.
    let signers: [JWSAlgorithm: IDTokenSigningKey]
    /// The public keys `/jwks` serves.
    let published: JWKSet

    /// Whether `/jwks` serves `record` at `now`: not retired, or retired less than the overlap ago.
    static func isPublished(_ record: SigningKeyRecord, at now: Date) -> Bool {
        guard let retired = record.retiredAt else { return true }
        return now.timeIntervalSince(retired) < TimeInterval(Authority.idTokenKeyOverlap)
    }
}

/// Loads the key ring once per process and shares it for `reloadInterval` (so a rotation by another process is picked
/// up); concurrent callers wait for the same load, and a failed load is retried by the next caller.
final class IDTokenKeyLoader: Sendable {
    /// How long a loaded ring is used before the store is read again.
    static let reloadInterval: TimeInterval = 300

    private let loading = Mutex<(task: Task<IDTokenKeyRing, any Error>, startedAt: Date)?>(nil)

    /// The ring, loading it with `load` if no load has succeeded or is under way, or the last began `reloadInterval` ago.
    func ring(now: Date, _ load: @escaping @Sendable () async throws -> IDTokenKeyRing) async throws -> IDTokenKeyRing {
        let task = loading.withLock { current in
            if let current, now >= current.startedAt, now.timeIntervalSince(current.startedAt) < Self.reloadInterval { return current.task }
            let task = Task { try await load() }
            current = (task, now)
            return task
        }
        do {
            return try await task.value
        } catch {
            loading.withLock { current in
                if current?.task == task { current = nil }
            }
            throw error
        }
    }

    /// Forgets the loaded ring (after a rotation in this process).
    func reset() {
        loading.withLock { $0 = nil }
    }
}

extension Authority {
    /// Re-wraps legacy secrets (`migrateWrappedSecrets()`), then loads the ID-token signing keys, creating (and
    /// storing, sealed under the signing-key-wrapping key) any algorithm that has no active key yet. `faceseal serve`
    /// calls it at start, before it serves; handlers get the same ring lazily through `idTokenKeyRing()`.
    public func prepareSigningKeys() async throws {
        _ = try await idTokenKeyRing()
        try await refreshDeviceResponseKey(force: true)
    }

    /// How long `/jwks` keeps serving a retired ID-token key, seconds: a day, well beyond an ID token's 600 s and a
    /// client's JWKS cache.
    public static let idTokenKeyOverlap = 86_400

    /// The loaded key ring (loaded on first use, reloaded every `IDTokenKeyLoader.reloadInterval`).
    func idTokenKeyRing() async throws -> IDTokenKeyRing {
        try await idTokenKeys.ring(now: clock.now()) { [self] in try await loadIDTokenKeyRing() }
    }

    /// Rotates every ID-token algorithm: a new key each signs from now on; the previous keys are retired and `/jwks`
    /// serves them for `idTokenKeyOverlap` more. Answers the new keys.
    public func rotateIDTokenKeys() async throws -> [SigningKeyRecord] {
        let previous = try await idTokenKeyRecords().filter { $0.retiredAt == nil }
        var added: [SigningKeyRecord] = []
        for algorithm in IDTokenSigningKey.algorithms { added.append(try await store.addSigningKey(try newIDTokenKey(algorithm))) }
        for record in previous { _ = try await store.retireSigningKey(keyID: record.keyID) }
        idTokenKeys.reset()
        _ = try await idTokenKeyRing()
        return added
    }

    /// The stored ID-token keys (not the device-response keys, which share the table).
    private func idTokenKeyRecords() async throws -> [SigningKeyRecord] {
        try await store.signingKeys().filter { $0.algorithm != DeviceResponseKeyRing.algorithm }
    }

    /// A fresh key of `algorithm`, sealed for the store.
    private func newIDTokenKey(_ algorithm: JWSAlgorithm) throws -> SigningKeyRecord {
        let (key, privateKey) = try IDTokenSigningKey.generate(algorithm)
        let sealed = try SigningKeySeal.seal(privateKey, keyID: key.keyID, algorithm: algorithm, masterKey: keys.signingKeyWrappingKey)
        return SigningKeyRecord(keyID: key.keyID, algorithm: algorithm.rawValue, publicJWK: String(decoding: key.publicJWK.jsonData, as: UTF8.self),
                                encryptedPrivateKey: sealed)
    }

    private func loadIDTokenKeyRing() async throws -> IDTokenKeyRing {
        try await migrateWrappedSecrets()
        var records = try await idTokenKeyRecords()
        let active = Set(records.filter { $0.retiredAt == nil }.map(\.algorithm))
        var created = false
        for algorithm in IDTokenSigningKey.algorithms where !active.contains(algorithm.rawValue) {
            _ = try await store.addSigningKey(try newIDTokenKey(algorithm))
            created = true
        }
        // Re-read after creating: when several processes start at once each may add keys, and all of them then sign
        // with the oldest active key of each algorithm (every key is published either way).
        if created { records = try await idTokenKeyRecords() }
        var published: [JWK] = []
        var signers: [JWSAlgorithm: IDTokenSigningKey] = [:]
        let now = clock.now()
        for record in records where IDTokenKeyRing.isPublished(record, at: now) {
            let jwk: JWK
            do {
                jwk = try JWK(json: Array(record.publicJWK.utf8))
            } catch {
                throw SigningKeyError.malformedPublicKey(keyID: record.keyID)
            }
            published.append(jwk)
            guard record.retiredAt == nil, let algorithm = JWSAlgorithm(rawValue: record.algorithm),
                  signers[algorithm] == nil else { continue }
            let privateKey = try SigningKeySeal.open(record, masterKey: keys.signingKeyWrappingKey)
            defer { privateKey.zero() }
            signers[algorithm] = try IDTokenSigningKey.restore(algorithm, privateKey: privateKey, publicJWK: jwk)
        }
        return IDTokenKeyRing(signers: signers, published: JWKSet(keys: published))
    }
}
