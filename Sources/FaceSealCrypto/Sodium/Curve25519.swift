import CSodium
public import Foundation

/// Curve25519 namespace, as in swift-crypto.
public enum Curve25519 {
    /// Ed25519 signatures (RFC 8032), pure mode, by libsodium (2–3× faster here than OpenSSL 3.0's; docs/PERFORMANCE.md).
    public enum Signing {
        /// An Ed25519 private key: the 32-byte seed of RFC 8032, kept in ``SecretBytes``.
        public struct PrivateKey: Sendable {
            private let seed: SecretBytes
            /// libsodium's expanded secret key (seed ‖ public key), derived once so signing does not redo the point.
            private let secretKey: SecretBytes
            /// The matching public key.
            public let publicKey: PublicKey

            /// A new random key.
            public init() {
                // Any 32 bytes are a valid Ed25519 seed, so this cannot throw.
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
                Sodium.initialise()
                var publicBytes = [UInt8](repeating: 0, count: 32)
                self.seed = seed
                // The expanded key is written straight into its secret storage: it never exists in a plain array.
                secretKey = seed.withUnsafeBytes { raw in
                    SecretBytes(count: 64) { secret in
                        // 64 bytes: the buffer has an address.
                        _ = crypto_sign_seed_keypair(&publicBytes, secret.baseAddress!, raw.uint8Base)
                    }
                }
                publicKey = PublicKey(validated: publicBytes)
            }

            /// The 32-byte seed. The returned `Data` is an ordinary copy: keep it no longer than needed.
            public var rawRepresentation: Data { Data(seed.copyBytes()) }

            /// The seed as secret bytes (shared, not copied).
            public var secretRepresentation: SecretBytes { seed }

            /// The 64-byte Ed25519 signature of `data` (deterministic).
            public func signature<D: DataProtocol>(for data: D) throws(CryptoError) -> Data {
                Data(signatureBytes(for: data))
            }

            /// The signature as an array (JWS signs into one). libsodium's signing cannot fail on a valid key.
            func signatureBytes<D: DataProtocol>(for data: D) -> [UInt8] {
                var signature = [UInt8](repeating: 0, count: 64)
                data.withContiguousBytes { message in
                    secretKey.withUnsafeBytes { secret in
                        _ = crypto_sign_detached(&signature, nil, message.uint8Base, UInt64(message.count), secret.uint8Base)
                    }
                }
                return signature
            }
        }

        /// An Ed25519 public key (32 bytes), equal and hashed by its encoding.
        ///
        /// Any 32 bytes make a key, but an encoding that is not a canonical point, or a point of small order, never
        /// verifies a signature (libsodium refuses them, and so a key that would accept forgeries).
        public struct PublicKey: Sendable, Hashable {
            /// The 32-byte encoded point.
            public let rawRepresentation: Data

            /// A key from its 32-byte encoding.
            /// - Throws: ``CryptoError/incorrectKeySize(expected:actual:)`` for another length.
            public init<D: ContiguousBytes>(rawRepresentation: D) throws(CryptoError) {
                let bytes = rawRepresentation.withUnsafeBytes { [UInt8]($0) }
                guard bytes.count == 32 else { throw .incorrectKeySize(expected: 32, actual: bytes.count) }
                self.init(validated: bytes)
            }

            init(validated bytes: [UInt8]) {
                rawRepresentation = Data(bytes)
            }

            /// Whether `signature` is a valid Ed25519 signature of `data` under this key.
            /// Wrong lengths, a non-canonical `S` or point, and small-order points are simply invalid.
            public func isValidSignature<S: DataProtocol, D: DataProtocol>(_ signature: S, for data: D) -> Bool {
                guard signature.count == 64 else { return false }
                Sodium.initialise()
                return signature.withContiguousBytes { signature in
                    data.withContiguousBytes { message in
                        // A key that verifies often (a pinned authority key) verifies on its own table, else libsodium.
                        if let verified = Ed25519Tables.shared.verify(signature, message: message, key: rawRepresentation) {
                            return verified
                        }
                        return isValidSignatureWithLibsodium(signature, message: message)
                    }
                }
            }

            /// libsodium's verification of a 64-byte `signature` (keys without a table; the reference of the tables'
            /// tests and of the `curves` fuzz target).
            func isValidSignatureWithLibsodium(_ signature: UnsafeRawBufferPointer, message: UnsafeRawBufferPointer) -> Bool {
                guard signature.count == 64 else { return false }
                Sodium.initialise()
                return rawRepresentation.withUnsafeBytes { key in
                    crypto_sign_verify_detached(signature.uint8Base, message.uint8Base, UInt64(message.count), key.uint8Base) == 0
                }
            }
        }
    }
}
