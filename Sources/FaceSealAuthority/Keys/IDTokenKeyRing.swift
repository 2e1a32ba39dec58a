import FaceSealCrypto
import Foundation
import Synchronization

/// The authority's ID-token keys as loaded from the store: the signing key of each algorithm and every public key
/// to publish at `/jwks` (retired keys included, so tokens they signed still verify).
struct IDTokenKeyRing: Sendable {
    /// The current signing key per algorithm.
    let signers: [JWSAlgorithm: IDTokenSigningKey]
    /// Every stored public key.
    let published: JWKSet
}

/// Loads the key ring once per process and shares it; concurrent first callers wait for the same load, and a failed
/// load is retried by the next caller.
final class IDTokenKeyLoader: Sendable {
    private let loading = Mutex<Task<IDTokenKeyRing, any Error>?>(nil)

    /// The ring, loading it with `load` if no load has succeeded or is under way.
    func ring(_ load: @escaping @Sendable () async throws -> IDTokenKeyRing) async throws -> IDTokenKeyRing {
        let task = loading.withLock { current in
            if let current { return current }
            let task = Task { try await load() }
            current = task
            return task
        }
        do {
            return try await task.value
        } catch {
            loading.withLock { current in
                if current == task { current = nil }
            }
            throw error
        }
    }
}

extension Authority {
    /// Re-wraps legacy secrets (`migrateWrappedSecrets()`), then loads the ID-token signing keys, creating (and
    /// storing, sealed under the signing-key-wrapping key) any algorithm that has no active key yet. `faceseal serve`
    /// calls it at start, before it serves; handlers get the same ring lazily through `idTokenKeyRing()`.
    public func prepareSigningKeys() async throws {
        _ = try await idTokenKeyRing()
    }

    /// The loaded key ring (loaded on first use).
    func idTokenKeyRing() async throws -> IDTokenKeyRing {
        try await idTokenKeys.ring { [self] in try await loadIDTokenKeyRing() }
    }

    private func loadIDTokenKeyRing() async throws -> IDTokenKeyRing {
        try await migrateWrappedSecrets()
        var records = try await store.signingKeys()
        let active = Set(records.filter { $0.retiredAt == nil }.map(\.algorithm))
        var created = false
        for algorithm in IDTokenSigningKey.algorithms where !active.contains(algorithm.rawValue) {
            let (key, privateKey) = try IDTokenSigningKey.generate(algorithm)
            let sealed = try SigningKeySeal.seal(privateKey, keyID: key.keyID, algorithm: algorithm, masterKey: keys.signingKeyWrappingKey)
            let record = SigningKeyRecord(keyID: key.keyID, algorithm: algorithm.rawValue,
                                          publicJWK: String(decoding: key.publicJWK.jsonData, as: UTF8.self),
                                          encryptedPrivateKey: sealed)
            _ = try await store.addSigningKey(record)
            created = true
        }
        // Re-read after creating: when several processes start at once each may add keys, and all of them then sign
        // with the oldest active key of each algorithm (every key is published either way).
        if created { records = try await store.signingKeys() }
        var published: [JWK] = []
        var signers: [JWSAlgorithm: IDTokenSigningKey] = [:]
        for record in records {
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
