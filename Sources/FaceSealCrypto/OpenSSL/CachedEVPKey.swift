import COpenSSL
import Synchronization

/// A key's OpenSSL object, built on first use and kept for the life of the key value.
///
/// Rebuilding an `EVP_PKEY` per signature costs as much as the signature itself (Ed25519 and P-256
/// recompute the public point, RSA re-parses DER and redoes its Montgomery set-up). The object lives
/// inside a lock and never leaves it, so the owning key type stays `Sendable`; signatures with one
/// key are serialised, which OpenSSL's objects would need anyway.
final class CachedEVPKey: Sendable {
    private let slot: Mutex<EVPKey?>
    private let make: @Sendable () throws(CryptoError) -> EVPKey

    /// The key is built on first use. (Seeding the slot with a key passed in as `sending` made the debug build
    /// crash intermittently in `Mutex` with Swift 6.3: the futex word was found holding garbage.)
    init(make: @escaping @Sendable () throws(CryptoError) -> EVPKey) {
        self.slot = Mutex(nil)
        self.make = make
    }

    /// Signs `message` (SHA-256 digest when `sha256`, none for Ed25519).
    func sign(message: [UInt8], sha256: Bool) throws(CryptoError) -> [UInt8] {
        let make = self.make
        return try slot.withLock { (key) throws(CryptoError) -> [UInt8] in
            if key == nil { key = try make() }
            var outcome: Result<[UInt8], CryptoError> = .failure(.underlyingLibraryFailure("sign not run"))
            message.withUnsafeBytes { raw in
                do throws(CryptoError) {
                    outcome = .success(try key!.sign(digest: sha256 ? EVP_sha256() : nil, message: raw))
                } catch {
                    outcome = .failure(error)
                }
            }
            return try outcome.get()
        }
    }

    /// Whether `signature` is valid for `message` (SHA-256 digest when `sha256`); false when the key cannot be built.
    func verify(message: [UInt8], signature: [UInt8], sha256: Bool) -> Bool {
        let make = self.make
        return slot.withLock { key -> Bool in
            if key == nil { key = try? make() }
            guard let key else { return false }
            return message.withUnsafeBytes { raw in
                signature.withUnsafeBytes { key.verify(digest: sha256 ? EVP_sha256() : nil, message: raw, signature: $0) }
            }
        }
    }
}
