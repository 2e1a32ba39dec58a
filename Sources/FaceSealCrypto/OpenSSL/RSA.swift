import COpenSSL
import COpenSSLShims
public import Foundation

/// RSA namespace (RS256 only: OpenID Connect requires it for ID tokens).
public enum RSA {
    /// RSASSA-PKCS1-v1_5 with SHA-256 (RFC 8017 §8.2, the JOSE `RS256` algorithm).
    public enum Signing {
        /// The smallest modulus accepted, in bits.
        public static let minimumKeySize = 2048
        /// The largest modulus accepted, in bits: bounds the work a foreign key can cause (an 8192-bit key costs
        /// about eight times a 4096-bit one to check and to verify with).
        public static let maximumKeySize = 4096

        /// An RSA private key, kept as its DER encoding in ``SecretBytes``.
        public struct PrivateKey: Sendable {
            private let der: SecretBytes
            private let cache: CachedEVPKey
            /// The matching public key.
            public let publicKey: PublicKey

            /// A new key with public exponent 65537.
            /// - Throws: ``CryptoError/incorrectParameterSize(_:)`` for a size outside 2048…4096 or not a multiple of 8.
            public init(keySize: Int = 2048) throws(CryptoError) {
                guard (minimumKeySize...maximumKeySize).contains(keySize), keySize % 8 == 0 else {
                    throw .incorrectParameterSize("RSA key size \(keySize)")
                }
                guard let context = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil) else {
                    throw LibCrypto.failure("EVP_PKEY_CTX_new_from_name(RSA)")
                }
                defer { EVP_PKEY_CTX_free(context) }
                var generated: OpaquePointer?
                guard EVP_PKEY_keygen_init(context) == 1,
                      EVP_PKEY_CTX_set_rsa_keygen_bits(context, Int32(keySize)) == 1,
                      EVP_PKEY_keygen(context, &generated) == 1, let generated else {
                    throw LibCrypto.failure("RSA key generation")
                }
                try self.init(key: EVPKey(taking: generated))
            }

            /// A key from DER: PKCS#1 `RSAPrivateKey` or PKCS#8 `PrivateKeyInfo`.
            /// - Throws: ``CryptoError/invalidKeyRepresentation(_:)`` for anything else, or a modulus outside 2048…4096 bits.
            public init<D: DataProtocol>(derRepresentation: D) throws(CryptoError) {
                guard derRepresentation.count <= 16_384 else { throw .invalidKeyRepresentation("RSA DER too large") }
                let secret = SecretBytes(derRepresentation)
                let pointer: OpaquePointer? = secret.withUnsafeBytes { raw in
                    var cursor: UnsafePointer<UInt8>? = raw.uint8Base
                    let key = d2i_AutoPrivateKey(nil, &cursor, raw.count)
                    if key != nil, cursor != raw.uint8Base + raw.count {
                        EVP_PKEY_free(key)
                        return nil
                    }
                    return key
                }
                guard let pointer else {
                    LibCrypto.clearErrors()
                    throw .invalidKeyRepresentation("not a DER RSA private key")
                }
                try self.init(key: EVPKey(taking: pointer))
            }

            private init(key: EVPKey) throws(CryptoError) {
                guard EVP_PKEY_get_base_id(key.pointer) == EVP_PKEY_RSA else {
                    throw .invalidKeyRepresentation("not an RSA key")
                }
                let bits = Int(EVP_PKEY_get_bits(key.pointer))
                guard (minimumKeySize...maximumKeySize).contains(bits) else {
                    throw .invalidKeyRepresentation("RSA modulus of \(bits) bits not in \(minimumKeySize)...\(maximumKeySize)")
                }
                guard let n = key.bigInteger("n"), let e = key.bigInteger("e") else {
                    throw LibCrypto.failure("RSA parameters")
                }
                publicKey = try PublicKey(modulus: n, publicExponent: e)
                let length = i2d_PrivateKey(key.pointer, nil)
                guard length > 0 else { throw LibCrypto.failure("i2d_PrivateKey") }
                var failed = false
                der = SecretBytes(count: Int(length)) { out in
                    var cursor: UnsafeMutablePointer<UInt8>? = out.baseAddress
                    failed = i2d_PrivateKey(key.pointer, &cursor) != length
                }
                guard !failed else { throw LibCrypto.failure("i2d_PrivateKey") }
                let der = self.der
                cache = CachedEVPKey { () throws(CryptoError) in
                    let pointer: OpaquePointer? = der.withUnsafeBytes { raw in
                        var cursor: UnsafePointer<UInt8>? = raw.uint8Base
                        return d2i_AutoPrivateKey(nil, &cursor, raw.count)
                    }
                    guard let pointer else { throw LibCrypto.failure("d2i_AutoPrivateKey") }
                    return EVPKey(taking: pointer)
                }
            }

            /// The PKCS#1 `RSAPrivateKey` DER. The returned `Data` is an ordinary copy: keep it no longer than needed.
            public var derRepresentation: Data { Data(der.copyBytes()) }

            /// The DER as secret bytes (shared, not copied).
            public var secretRepresentation: SecretBytes { der }

            /// The RSASSA-PKCS1-v1_5 SHA-256 signature of `data` (as long as the modulus).
            public func signature<D: DataProtocol>(for data: D) throws(CryptoError) -> RSASignature {
                RSASignature(rawRepresentation: try cache.sign(sha256Digest: SHA256.hash(data: data).bytes))
            }
        }

        /// An RSA public key: modulus n and public exponent e, big endian without leading zeros.
        public struct PublicKey: Sendable, Hashable {
            /// The modulus n (the JWK `n`).
            public let modulus: Data
            /// The public exponent e (the JWK `e`).
            public let publicExponent: Data
            /// The OpenSSL key for verifying, built at the first verification and kept: rebuilding it (and its
            /// Montgomery set-up) per signature cost more than the verification.
            private let verifier: CachedEVPKey

            /// A key from n and e (leading zero bytes are ignored). Cheap: sizes and parities are checked here;
            /// OpenSSL's public-key check (``check()``) costs milliseconds per key and runs once, where a key is
            /// registered.
            /// - Throws: ``CryptoError/invalidKeyRepresentation(_:)`` for a modulus outside 2048…4096 bits or even, or
            ///   an exponent that is even, below 65537 or longer than 256 bits.
            public init<N: DataProtocol, E: DataProtocol>(modulus: N, publicExponent: E) throws(CryptoError) {
                let n = Array([UInt8](modulus).drop { $0 == 0 })
                let e = Array([UInt8](publicExponent).drop { $0 == 0 })
                let bits = n.isEmpty ? 0 : n.count * 8 - n[0].leadingZeroBitCount
                guard (minimumKeySize...maximumKeySize).contains(bits) else {
                    throw .invalidKeyRepresentation("RSA modulus of \(bits) bits not in \(minimumKeySize)...\(maximumKeySize)")
                }
                guard (1...32).contains(e.count) else { throw .invalidKeyRepresentation("RSA exponent length") }
                // SP 800-56B: an odd modulus, an odd exponent of at least 65537 (0x010001).
                guard n[n.count - 1] & 1 == 1, e[e.count - 1] & 1 == 1, e.count > 3 || (e.count == 3 && e[0] >= 1) else {
                    throw .invalidKeyRepresentation("RSA modulus or exponent out of range")
                }
                _ = try Self.evpKey(n: n, e: e)
                self.modulus = Data(n)
                self.publicExponent = Data(e)
                verifier = CachedEVPKey { () throws(CryptoError) in try Self.evpKey(n: n, e: e) }
            }

            public static func == (lhs: Self, rhs: Self) -> Bool {
                lhs.modulus == rhs.modulus && lhs.publicExponent == rhs.publicExponent
            }

            public func hash(into hasher: inout Hasher) {
                hasher.combine(modulus)
                hasher.combine(publicExponent)
            }

            /// OpenSSL's public-key check (SP 800-56B: an odd composite modulus without small factors, an odd
            /// exponent ≥ 65537). A primality test of n: run it once, when a foreign key is registered.
            /// - Throws: ``CryptoError/invalidKeyRepresentation(_:)`` when the check fails.
            public func check() throws(CryptoError) {
                _ = try Self.evpKey(n: [UInt8](modulus), e: [UInt8](publicExponent), check: true)
            }

            /// A key from a DER SubjectPublicKeyInfo (rsaEncryption).
            public init<D: DataProtocol>(derRepresentation: D) throws(CryptoError) {
                guard derRepresentation.count <= 4096 else { throw .invalidKeyRepresentation("SPKI too large") }
                let key = try EVPKey.subjectPublicKeyInfo([UInt8](derRepresentation))
                guard EVP_PKEY_get_base_id(key.pointer) == EVP_PKEY_RSA,
                      let n = key.bigInteger("n"), let e = key.bigInteger("e") else {
                    throw .invalidKeyRepresentation("SPKI is not an RSA key")
                }
                try self.init(modulus: n, publicExponent: e)
            }

            /// The modulus length in bits.
            public var keySizeInBits: Int { modulus.count * 8 - modulus[modulus.startIndex].leadingZeroBitCount }

            /// DER SubjectPublicKeyInfo.
            public var derRepresentation: Data {
                // n and e were validated at construction; only memory exhaustion could fail here.
                guard let key = try? Self.evpKey(n: [UInt8](modulus), e: [UInt8](publicExponent)),
                      let der = try? key.subjectPublicKeyInfo() else {
                    fatalError("RSA SPKI encoding failed: \(LibCrypto.drainErrors())")
                }
                return Data(der)
            }

            static func evpKey(n: [UInt8], e: [UInt8], check: Bool = false) throws(CryptoError) -> EVPKey {
                let pointer = n.withUnsafeBufferPointer { nb in
                    e.withUnsafeBufferPointer { eb in fs_rsa_public_key(nb.baseAddress, nb.count, eb.baseAddress, eb.count, check ? 1 : 0) }
                }
                guard let pointer else {
                    LibCrypto.clearErrors()
                    throw .invalidKeyRepresentation("OpenSSL rejected the RSA public key")
                }
                return EVPKey(taking: pointer)
            }

            /// Whether `signature` is a valid RSASSA-PKCS1-v1_5 SHA-256 signature of `data`.
            public func isValidSignature<D: DataProtocol>(_ signature: RSASignature, for data: D) -> Bool {
                guard signature.rawRepresentation.count == modulus.count else { return false }
                return verifier.verify(sha256Digest: SHA256.hash(data: data).bytes, signature: signature.rawRepresentation)
            }
        }

        /// An RSA signature: a big-endian integer as long as the modulus.
        public struct RSASignature: Sendable, Hashable {
            /// The signature bytes.
            public let rawRepresentation: Data

            /// A signature from its bytes (its length is checked against the key at verification).
            public init<D: DataProtocol>(rawRepresentation: D) {
                self.rawRepresentation = Data(rawRepresentation)
            }
        }
    }
}
