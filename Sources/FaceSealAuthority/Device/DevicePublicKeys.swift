import FaceSealCrypto
import Synchronization

/// The parsed P-256 keys of device keys, kept between requests.
///
/// Every signed device request is verified with its key's stored JWK. Parsing that text and validating its point
/// (twice: the JWK's own check and the key's) cost about as much as the signature check itself, at every request
/// (`make bench-authority`); the stored text of a key id never changes, so it is parsed once per distinct text here.
/// An entry is only used while the stored text is unchanged, so a cache can never verify with a key the store no
/// longer holds; a key's status is judged from the store at every request, never from here.
final class DevicePublicKeys: Sendable {
    /// Entries kept at most; when full, the cache starts over (parsing is cheap once, only parsing per request is not).
    static let capacity = 8192

    private struct Entry {
        let jwk: String
        let key: P256.Signing.PublicKey
    }

    private struct State {
        var keys: [String: Entry] = [:]
        var parsed = 0
    }

    private let state = Mutex(State())

    /// Keys parsed from their stored text so far (tests).
    var parsed: Int { state.withLock { $0.parsed } }

    /// The P-256 key of `keyID`'s stored JWK, from the cache while the text is unchanged. A stored key that does not
    /// parse is the authority's fault, not the device's.
    func key(keyID: String, storedJWK: String) throws -> P256.Signing.PublicKey {
        if let cached = state.withLock({ $0.keys[keyID] }), cached.jwk == storedJWK { return cached.key }
        guard let jwk = try? JWK(json: Array(storedJWK.utf8)), case .p256(let x, let y) = jwk.material,
              let key = try? P256.Signing.PublicKey(x: x, y: y) else {
            throw DeviceFailure(.serverError, "stored device key unreadable")
        }
        state.withLock { state in
            if state.keys.count >= Self.capacity { state.keys.removeAll(keepingCapacity: true) }
            state.keys[keyID] = Entry(jwk: storedJWK, key: key)
            state.parsed += 1
        }
        return key
    }
}
