import Foundation
import Synchronization

/// A key's OpenSSL objects, built on first use and kept for the life of the key value, with their signing and
/// verifying contexts.
///
/// Rebuilding an `EVP_PKEY` per signature costs as much as the signature itself (Ed25519 and P-256
/// recompute the public point, RSA re-parses DER and redoes its Montgomery set-up), and initialising a context per
/// call (`EVP_DigestSignInit`: algorithm fetches, a context duplicated at the final step) a few microseconds more.
/// Each object lives inside a lock and never leaves it, so the owning key type stays `Sendable`; OpenSSL's contexts
/// need one user at a time. There are a few of them (`slots`), each built when first needed, so concurrent
/// signatures with one key (the authority's ID-token key: RS256 takes a quarter of a millisecond) run side by side
/// instead of queueing on one lock. Messages are hashed (SHA-256) before a lock is taken.
final class CachedEVPKey: Sendable {
    private final class Slot: Sendable {
        let key = Mutex<EVPKey?>(nil)
    }

    private let slots: [Slot]
    private let nextSlot = Atomic<Int>(0)
    private let make: @Sendable () throws(CryptoError) -> EVPKey

    /// The keys are built on first use, one per slot. (Seeding a slot with a key passed in as `sending` made the debug
    /// build crash intermittently in `Mutex` with Swift 6.3: the futex word was found holding garbage.)
    init(slots: Int = 4, make: @escaping @Sendable () throws(CryptoError) -> EVPKey) {
        self.slots = (0..<max(1, slots)).map { _ in Slot() }
        self.make = make
    }

    /// Runs `body` on a free slot's key (building it first if needed), or waits for the slots in turn when all are
    /// taken.
    private func withKey<R>(_ body: @Sendable (EVPKey) throws(CryptoError) -> R) throws(CryptoError) -> R {
        let make = self.make
        let use: (inout sending EVPKey?) throws(CryptoError) -> sending R = { (key) throws(CryptoError) -> sending R in
            if key == nil { key = try make() }
            return try body(key!)
        }
        for slot in slots {
            if let result = try slot.key.withLockIfAvailable(use) { return result }
        }
        let index = nextSlot.wrappingAdd(1, ordering: .relaxed).oldValue
        return try slots[Int(UInt(bitPattern: index) % UInt(slots.count))].key.withLock(use)
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
