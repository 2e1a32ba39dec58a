import Foundation
import Synchronization

/// A key's OpenSSL object, built on first use and kept for the life of the key value, with its signing and
/// verifying contexts.
///
/// Rebuilding an `EVP_PKEY` per signature costs as much as the signature itself (Ed25519 and P-256
/// recompute the public point, RSA re-parses DER and redoes its Montgomery set-up), and initialising a context per
/// call (`EVP_DigestSignInit`: algorithm fetches, a context duplicated at the final step) a few microseconds more.
/// The object lives inside a lock and never leaves it, so the owning key type stays `Sendable`; signatures with one
/// key are serialised, which OpenSSL's contexts need anyway. Messages are hashed (SHA-256) before the lock is taken.
final class CachedEVPKey: Sendable {
    private let slot: Mutex<EVPKey?>
    private let make: @Sendable () throws(CryptoError) -> EVPKey

    /// The key is built on first use. (Seeding the slot with a key passed in as `sending` made the debug build
    /// crash intermittently in `Mutex` with Swift 6.3: the futex word was found holding garbage.)
    init(make: @escaping @Sendable () throws(CryptoError) -> EVPKey) {
        self.slot = Mutex(nil)
        self.make = make
    }

    /// Runs `body` on the key, building it first if needed.
    private func withKey<R>(_ body: @Sendable (EVPKey) throws(CryptoError) -> R) throws(CryptoError) -> R {
        let make = self.make
        return try slot.withLock { (key) throws(CryptoError) -> R in
            if key == nil { key = try make() }
            return try body(key!)
        }
    }

    /// Signs the SHA-256 digest of a message (ECDSA P-256, RSA PKCS#1 v1.5).
    func sign(sha256Digest digest: [UInt8]) throws(CryptoError) -> [UInt8] {
        try withKey { (key) throws(CryptoError) in
            try digest.withContiguousBytes { (raw) throws(CryptoError) in try key.sign(sha256Digest: raw) }
        }
    }

    /// Whether `signature` is valid for the SHA-256 digest of a message; false when the key cannot be built.
    func verify(sha256Digest digest: [UInt8], signature: some DataProtocol & Sendable) -> Bool {
        (try? withKey { key in
            digest.withUnsafeBytes { raw in signature.withContiguousBytes { key.verify(sha256Digest: raw, signature: $0) } }
        }) ?? false
    }

    /// Signs a whole message (Ed25519).
    func sign(message: [UInt8]) throws(CryptoError) -> [UInt8] {
        try withKey { (key) throws(CryptoError) in
            try message.withContiguousBytes { (raw) throws(CryptoError) in try key.sign(message: raw) }
        }
    }

    /// Whether `signature` is valid for a whole message (Ed25519); false when the key cannot be built.
    func verify(message: [UInt8], signature: [UInt8]) -> Bool {
        (try? withKey { key in
            message.withUnsafeBytes { raw in signature.withUnsafeBytes { key.verify(message: raw, signature: $0) } }
        }) ?? false
    }
}
