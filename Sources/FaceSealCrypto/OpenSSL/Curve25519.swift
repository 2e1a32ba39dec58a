import COpenSSL
public import Foundation

/// Curve25519 namespace, as in swift-crypto.
public enum Curve25519 {
    /// Ed25519 signatures (RFC 8032), pure mode.
    public enum Signing {
        /// An Ed25519 private key: the 32-byte seed of RFC 8032, kept in ``SecretBytes``.
        public struct PrivateKey: Sendable {
            private let seed: SecretBytes
            private let cache: CachedEVPKey
            /// The matching public key.
            public let publicKey: PublicKey

            /// A new random key.
            public init() {
                // Any 32 bytes are a valid Ed25519 seed: only OpenSSL running out of memory can fail here.
                do {
                    try self.init(seed: SecretBytes(randomCount: 32))
                } catch {
                    fatalError("Ed25519 key generation failed: \(error)")
                }
            }

            /// A key from its 32-byte seed.
            /// - Throws: ``CryptoError/incorrectKeySize(expected:actual:)`` for another length.
            public init<D: ContiguousBytes>(rawRepresentation: D) throws(CryptoError) {
                try self.init(seed: rawRepresentation.withUnsafeBytes { SecretBytes($0) })
            }

            private init(seed: SecretBytes) throws(CryptoError) {
                guard seed.count == 32 else { throw .incorrectKeySize(expected: 32, actual: seed.count) }
                self.seed = seed
                let key = try Self.evpKey(seed)
                var publicBytes = [UInt8](repeating: 0, count: 32)
                var length = 32
                guard EVP_PKEY_get_raw_public_key(key.pointer, &publicBytes, &length) == 1, length == 32 else {
                    throw LibCrypto.failure("EVP_PKEY_get_raw_public_key")
                }
                publicKey = PublicKey(validated: publicBytes)
                cache = CachedEVPKey { () throws(CryptoError) in try Self.evpKey(seed) }
            }

            private static func evpKey(_ seed: SecretBytes) throws(CryptoError) -> EVPKey {
                let pointer = seed.withUnsafeBytes { raw in
                    EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nil, raw.uint8Base, raw.count)
                }
                guard let pointer else { throw LibCrypto.failure("EVP_PKEY_new_raw_private_key(Ed25519)") }
                return EVPKey(taking: pointer)
            }

            /// The 32-byte seed. The returned `Data` is an ordinary copy: keep it no longer than needed.
            public var rawRepresentation: Data { Data(seed.copyBytes()) }

            /// The seed as secret bytes (shared, not copied).
            public var secretRepresentation: SecretBytes { seed }

            /// The 64-byte Ed25519 signature of `data` (deterministic).
            public func signature<D: DataProtocol>(for data: D) throws(CryptoError) -> Data {
                try Data(cache.sign(message: [UInt8](data), sha256: false))
            }
        }

        /// An Ed25519 public key (32 bytes), equal and hashed by its encoding.
        public struct PublicKey: Sendable, Hashable {
            /// The 32-byte encoded point.
            public let rawRepresentation: Data
            /// The OpenSSL key for verifying, built at the first verification and kept (a key pinned once verifies
            /// every answer after).
            private let verifier: CachedEVPKey

            /// A key from its 32-byte encoding.
            /// - Throws: ``CryptoError/incorrectKeySize(expected:actual:)`` for another length.
            public init<D: ContiguousBytes>(rawRepresentation: D) throws(CryptoError) {
                let bytes = rawRepresentation.withUnsafeBytes { [UInt8]($0) }
                guard bytes.count == 32 else { throw .incorrectKeySize(expected: 32, actual: bytes.count) }
                self.init(validated: bytes)
            }

            init(validated bytes: [UInt8]) {
                rawRepresentation = Data(bytes)
                verifier = CachedEVPKey { () throws(CryptoError) in
                    guard let pointer = bytes.withUnsafeBytes({ EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, $0.uint8Base, $0.count) }) else {
                        throw LibCrypto.failure("EVP_PKEY_new_raw_public_key")
                    }
                    return EVPKey(taking: pointer)
                }
            }

            public static func == (lhs: Self, rhs: Self) -> Bool { lhs.rawRepresentation == rhs.rawRepresentation }

            public func hash(into hasher: inout Hasher) { hasher.combine(rawRepresentation) }

            /// Whether `signature` is a valid Ed25519 signature of `data` under this key.
            /// Wrong lengths and non-canonical encodings are simply invalid.
            public func isValidSignature<S: DataProtocol, D: DataProtocol>(_ signature: S, for data: D) -> Bool {
                guard signature.count == 64 else { return false }
                return verifier.verify(message: [UInt8](data), signature: [UInt8](signature), sha256: false)
            }
        }
    }
}
