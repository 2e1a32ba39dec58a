import FaceSealCrypto
import Synchronization

/// The parsed key sets of `private_key_jwt` clients, kept between requests.
///
/// A client's JWKS is checked in full once, when the management API registers it (`JWK.checkPublicKey`: RSA's
/// primality test, ML-DSA's decode). What is stored is parsed here once per distinct JWKS text — sizes and curve
/// points only — and kept, so an unauthenticated token or backchannel request costs a dictionary lookup, one key
/// chosen by `kid` and `alg`, and at most one signature verification, whatever the client registered.
final class ClientKeySets: Sendable {
    /// What the cache has done (for tests and for the cost of an unauthenticated request).
    struct Counts: Sendable, Equatable {
        /// Key sets parsed from their stored text.
        var parsed = 0
        /// Signatures verified.
        var verifications = 0
    }

    /// Entries kept at most; when full, the cache starts over (parsing is cheap, only parsing per request is not).
    static let capacity = 4096

    private struct Entry {
        let jwks: String
        let keys: JWKSet
    }

    private struct State {
        var sets: [String: Entry] = [:]
        var counts = Counts()
    }

    private let state = Mutex(State())

    /// What the cache has done so far.
    var counts: Counts { state.withLock { $0.counts } }

    /// Verifies `jws` with the one key of `clientID`'s set (registered as `jwks`) that its header names: by `kid`
    /// and `alg`, or by `alg` alone when it is the only such key. No key, a key of another algorithm or several
    /// candidates fail before any verification.
    /// - Throws: a `JOSEError` naming why.
    func verify(_ jws: UnverifiedJWS, clientID: String, jwks: String) throws(JOSEError) {
        let key = try keySet(clientID: clientID, jwks: jwks).key(for: jws.header)
        let verifier = try key.verifier(factory: .includingMLDSA65)
        state.withLock { $0.counts.verifications += 1 }
        _ = try JWS.verify(jws, verifier: verifier)
    }

    /// The parsed set, from the cache while the stored text is unchanged.
    private func keySet(clientID: String, jwks: String) throws(JOSEError) -> JWKSet {
        if let cached = state.withLock({ $0.sets[clientID] }), cached.jwks == jwks { return cached.keys }
        let keys = try JWKSet(json: Array(jwks.utf8), maximumSize: Authority.maxClientJWKSBytes,
                              maximumKeyCount: Authority.maxClientKeys)
        state.withLock { state in
            if state.sets.count >= Self.capacity { state.sets.removeAll(keepingCapacity: true) }
            state.sets[clientID] = Entry(jwks: jwks, keys: keys)
            state.counts.parsed += 1
        }
        return keys
    }
}
