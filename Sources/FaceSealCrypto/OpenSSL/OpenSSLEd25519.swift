import COpenSSL

/// OpenSSL 3.0's Ed25519, which FaceSeal used before libsodium: kept as the independent implementation the tests
/// cross-check ``Curve25519/Signing`` against and `faceseal bench crypto` measures beside it. Not used in production.
package enum OpenSSLEd25519 {
    /// A signing key from its 32-byte seed, its `EVP_PKEY` built once (as the production code did).
    package struct PrivateKey: Sendable {
        private let key: CachedEVPKey
        /// The 32-byte public key OpenSSL derives from the seed.
        package let publicKey: [UInt8]

        package init(seed: SecretBytes) throws(CryptoError) {
            guard seed.count == 32 else { throw .incorrectKeySize(expected: 32, actual: seed.count) }
            let evp = try Self.evpKey(seed)
            var bytes = [UInt8](repeating: 0, count: 32)
            var length = 32
            guard EVP_PKEY_get_raw_public_key(evp.pointer, &bytes, &length) == 1, length == 32 else {
                throw LibCrypto.failure("EVP_PKEY_get_raw_public_key")
            }
            publicKey = bytes
            key = CachedEVPKey { () throws(CryptoError) in try Self.evpKey(seed) }
        }

        private static func evpKey(_ seed: SecretBytes) throws(CryptoError) -> EVPKey {
            let pointer = seed.withUnsafeBytes { EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nil, $0.uint8Base, $0.count) }
            guard let pointer else { throw LibCrypto.failure("EVP_PKEY_new_raw_private_key(Ed25519)") }
            return EVPKey(taking: pointer)
        }

        /// The 64-byte signature of `message`.
        package func signature(for message: [UInt8]) throws(CryptoError) -> [UInt8] {
            try key.sign(message: message)
        }
    }

    /// A verifying key from its 32-byte encoding, its `EVP_PKEY` built at the first verification and kept.
    package struct PublicKey: Sendable {
        private let key: CachedEVPKey

        package init(rawRepresentation bytes: [UInt8]) throws(CryptoError) {
            guard bytes.count == 32 else { throw .incorrectKeySize(expected: 32, actual: bytes.count) }
            key = CachedEVPKey { () throws(CryptoError) in
                guard let pointer = bytes.withUnsafeBytes({ EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, $0.uint8Base, $0.count) }) else {
                    throw LibCrypto.failure("EVP_PKEY_new_raw_public_key")
                }
                return EVPKey(taking: pointer)
            }
        }

        /// Whether `signature` is a valid signature of `message` under this key, by OpenSSL's rules.
        package func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
            signature.count == 64 && key.verify(message: message, signature: signature)
        }
    }
}
