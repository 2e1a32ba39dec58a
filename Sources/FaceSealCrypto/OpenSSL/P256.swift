import COpenSSL
import COpenSSLShims
public import Foundation

/// NIST P-256 namespace, as in swift-crypto.
public enum P256 {
    /// ECDSA over P-256 with SHA-256 (FIPS 186-4/5, the JOSE `ES256` algorithm).
    public enum Signing {
        /// A P-256 private key: the 32-byte scalar d, kept in ``SecretBytes``.
        public struct PrivateKey: Sendable {
            private let scalar: SecretBytes
            private let cache: CachedEVPKey
            /// The matching public key.
            public let publicKey: PublicKey

            /// A new random key.
            public init() {
                // Rejection sampling: a random 256-bit value is ≥ n or zero with probability < 2^-32,
                // so 64 refusals in a row mean OpenSSL itself is failing, not bad luck.
                for _ in 0..<64 {
                    if let key = try? Self(scalar: SecretBytes(randomCount: 32)) {
                        self = key
                        return
                    }
                }
                fatalError("P-256 key generation failed 64 times: \(LibCrypto.drainErrors())")
            }

            /// A key from its 32-byte big-endian scalar (0 < d < n).
            /// - Throws: ``CryptoError/incorrectKeySize(expected:actual:)`` or
            ///   ``CryptoError/invalidKeyRepresentation(_:)`` for a scalar out of range.
            public init<D: ContiguousBytes>(rawRepresentation: D) throws(CryptoError) {
                try self.init(scalar: rawRepresentation.withUnsafeBytes { SecretBytes($0) })
            }

            private init(scalar: SecretBytes) throws(CryptoError) {
                guard scalar.count == 32 else { throw .incorrectKeySize(expected: 32, actual: scalar.count) }
                var point = [UInt8](repeating: 0, count: 65)
                // Building the key validates the scalar and computes the public point.
                _ = try Self.evpKey(scalar, point: &point)
                self.scalar = scalar
                publicKey = PublicKey(validatedX963: point)
                cache = CachedEVPKey { () throws(CryptoError) in
                    var scratch = [UInt8](repeating: 0, count: 65)
                    return try Self.evpKey(scalar, point: &scratch)
                }
            }

            private static func evpKey(_ scalar: SecretBytes, point: inout [UInt8]) throws(CryptoError) -> EVPKey {
                let pointer = scalar.withUnsafeBytes { raw in
                    point.withUnsafeMutableBufferPointer { out in
                        fs_p256_private_key(raw.uint8Base, raw.count, out.baseAddress)
                    }
                }
                guard let pointer else {
                    LibCrypto.clearErrors()
                    throw .invalidKeyRepresentation("P-256 private scalar not in 1..<n")
                }
                return EVPKey(taking: pointer)
            }

            /// The 32-byte scalar. The returned `Data` is an ordinary copy: keep it no longer than needed.
            public var rawRepresentation: Data { Data(scalar.copyBytes()) }

            /// The scalar as secret bytes (shared, not copied).
            public var secretRepresentation: SecretBytes { scalar }

            /// An ECDSA signature of SHA-256(`data`), with a fresh random nonce.
            public func signature<D: DataProtocol>(for data: D) throws(CryptoError) -> ECDSASignature {
                try ECDSASignature(derRepresentation: cache.sign(sha256Digest: SHA256.hash(data: data).bytes))
            }
        }

        /// A P-256 public key, kept as its uncompressed SEC1 point (equal and hashed by it).
        public struct PublicKey: Sendable, Hashable {
            /// `0x04 ‖ X ‖ Y` (65 bytes).
            public let x963Representation: Data
            /// The OpenSSL key for verifying, built at the first verification and kept: building it per
            /// signature cost a third of the verification.
            private let verifier: CachedEVPKey

            init(validatedX963 point: [UInt8]) {
                x963Representation = Data(point)
                verifier = CachedEVPKey { () throws(CryptoError) in try Self.evpKey(point) }
            }

            public static func == (lhs: Self, rhs: Self) -> Bool { lhs.x963Representation == rhs.x963Representation }

            public func hash(into hasher: inout Hasher) { hasher.combine(x963Representation) }

            /// A key from `0x04 ‖ X ‖ Y` (65 bytes); the point must be on the curve.
            public init<D: ContiguousBytes>(x963Representation: D) throws(CryptoError) {
                let point = x963Representation.withUnsafeBytes { [UInt8]($0) }
                guard point.count == 65 else { throw .incorrectKeySize(expected: 65, actual: point.count) }
                _ = try Self.evpKey(point, check: true)
                self.init(validatedX963: point)
            }

            /// A key from `X ‖ Y` (64 bytes); the point must be on the curve.
            public init<D: ContiguousBytes>(rawRepresentation: D) throws(CryptoError) {
                let raw = rawRepresentation.withUnsafeBytes { [UInt8]($0) }
                guard raw.count == 64 else { throw .incorrectKeySize(expected: 64, actual: raw.count) }
                try self.init(x963Representation: [0x04] + raw)
            }

            /// A key from its JWK coordinates (32 bytes each, big endian).
            public init<X: DataProtocol, Y: DataProtocol>(x: X, y: Y) throws(CryptoError) {
                guard x.count == 32, y.count == 32 else {
                    throw .invalidKeyRepresentation("P-256 coordinates must be 32 bytes each")
                }
                try self.init(x963Representation: [0x04] + [UInt8](x) + [UInt8](y))
            }

            /// A key from a DER SubjectPublicKeyInfo (id-ecPublicKey, prime256v1).
            public init<D: DataProtocol>(derRepresentation: D) throws(CryptoError) {
                guard derRepresentation.count <= 4096 else { throw .invalidKeyRepresentation("SPKI too large") }
                let key = try EVPKey.subjectPublicKeyInfo([UInt8](derRepresentation))
                guard fs_pkey_is_p256(key.pointer) == 1 else {
                    LibCrypto.clearErrors()
                    throw .invalidKeyRepresentation("SPKI is not a P-256 key")
                }
                var point = [UInt8](repeating: 0, count: 65)
                var length = 0
                guard EVP_PKEY_get_octet_string_param(key.pointer, OSSL_PKEY_PARAM_PUB_KEY, &point, 65, &length) == 1,
                      length == 65, point[0] == 0x04 else {
                    LibCrypto.clearErrors()
                    throw .invalidKeyRepresentation("P-256 SPKI point is not uncompressed")
                }
                try self.init(x963Representation: point)
            }

            /// `X ‖ Y` (64 bytes).
            public var rawRepresentation: Data { x963Representation.dropFirst() }
            /// The JWK `x` coordinate (32 bytes).
            public var x: Data { x963Representation.dropFirst().prefix(32) }
            /// The JWK `y` coordinate (32 bytes).
            public var y: Data { x963Representation.suffix(32) }

            /// DER SubjectPublicKeyInfo.
            public var derRepresentation: Data {
                // The point was validated at construction, so building and encoding it cannot fail
                // short of OpenSSL running out of memory.
                guard let key = try? Self.evpKey([UInt8](x963Representation)), let der = try? key.subjectPublicKeyInfo() else {
                    fatalError("P-256 SPKI encoding failed: \(LibCrypto.drainErrors())")
                }
                return Data(der)
            }

            /// The OpenSSL key; `check` runs OpenSSL's full public-key check (once, when a key is imported).
            static func evpKey(_ point: [UInt8], check: Bool = false) throws(CryptoError) -> EVPKey {
                let pointer = point.withUnsafeBufferPointer { fs_p256_public_key($0.baseAddress, $0.count, check ? 1 : 0) }
                guard let pointer else {
                    LibCrypto.clearErrors()
                    throw .invalidKeyRepresentation("not a P-256 point on the curve")
                }
                return EVPKey(taking: pointer)
            }

            /// Whether `signature` is a valid ECDSA signature of SHA-256(`data`) under this key.
            public func isValidSignature<D: DataProtocol>(_ signature: ECDSASignature, for data: D) -> Bool {
                // A key that verifies often (a device key at the authority) verifies on its own table, else OpenSSL.
                if let verified = P256Tables.shared.verify(signature.rawRepresentation, message: data, key: x963Representation) {
                    return verified
                }
                return isValidSignatureWithOpenSSL(signature, for: data)
            }

            /// OpenSSL's verification (keys without a table; the reference of the tables' tests and the peer of
            /// `faceseal bench crypto`'s P-256 row).
            package func isValidSignatureWithOpenSSL<D: DataProtocol>(_ signature: ECDSASignature, for data: D) -> Bool {
                verifier.verify(sha256Digest: SHA256.hash(data: data).bytes, signature: signature.derBytes)
            }
        }

        /// An ECDSA P-256 signature (r, s), convertible between raw `r ‖ s` (JOSE) and DER (X.509, TLS).
        public struct ECDSASignature: Sendable, Hashable {
            /// `r ‖ s`, 32 bytes each, big endian.
            public let rawRepresentation: Data

            /// A signature from `r ‖ s` (64 bytes).
            public init<D: DataProtocol>(rawRepresentation: D) throws(CryptoError) {
                guard rawRepresentation.count == 64 else { throw .invalidSignatureEncoding }
                self.rawRepresentation = Data(rawRepresentation)
            }

            /// A signature from a strict DER `ECDSA-Sig-Value` (no trailing bytes, minimal integers).
            ///
            /// Exactly the canonical encodings of 0 ≤ r, s < 2²⁵⁶ are accepted: a SEQUENCE of two INTEGERs, short-form
            /// lengths, each integer non-negative, in its fewest bytes (one leading 0x00 only before a high bit), at
            /// most 33 bytes with the 33rd a 0x00 pad.
            public init<D: DataProtocol>(derRepresentation: D) throws(CryptoError) {
                guard derRepresentation.count <= 80 else { throw .invalidSignatureEncoding }
                var raw = [UInt8](repeating: 0, count: 64)
                let ok = derRepresentation.withContiguousBytes { der -> Bool in
                    guard der.count >= 2, der[0] == 0x30, Int(der[1]) == der.count - 2 else { return false }
                    var cursor = 2
                    for half in 0..<2 {
                        guard cursor + 2 <= der.count, der[cursor] == 0x02 else { return false }
                        let length = Int(der[cursor + 1])
                        let start = cursor + 2
                        guard (1...33).contains(length), start + length <= der.count,
                              der[start] & 0x80 == 0,  // non-negative
                              length == 1 || der[start] != 0 || der[start + 1] & 0x80 != 0,  // minimal
                              length < 33 || der[start] == 0 else { return false }  // at most 256 bits
                        let digits = length == 33 ? 32 : length
                        for i in 0..<digits { raw[half * 32 + 32 - digits + i] = der[start + length - digits + i] }
                        cursor = start + length
                    }
                    return cursor == der.count
                }
                guard ok else { throw .invalidSignatureEncoding }
                rawRepresentation = Data(raw)
            }

            /// The DER `ECDSA-Sig-Value` SEQUENCE { r INTEGER, s INTEGER }.
            public var derRepresentation: Data { Data(derBytes) }

            /// ``derRepresentation`` as bytes, built in one buffer (at most 72 bytes).
            var derBytes: [UInt8] {
                var der = [UInt8]()
                der.reserveCapacity(72)
                der += [0x30, 0]
                rawRepresentation.withUnsafeBytes { raw in
                    for half in [raw[0..<32], raw[32..<64]] {
                        // Minimal big-endian integer: no leading zeros, one 0x00 before a high bit, 0 as one byte.
                        let digits = half.drop { $0 == 0 }
                        let pad = digits.first.map { $0 & 0x80 != 0 } ?? true
                        der += [0x02, UInt8(digits.count + (pad ? 1 : 0))]
                        if pad { der.append(0) }
                        der += digits
                    }
                }
                der[1] = UInt8(der.count - 2)
                return der
            }
        }
    }
}
