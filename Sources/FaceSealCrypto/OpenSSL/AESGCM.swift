import COpenSSL
import COpenSSLShims
public import Foundation

/// AES namespace, as in swift-crypto.
public enum AES {
    /// AES-GCM authenticated encryption (NIST SP 800-38D) with 96-bit nonces and 128-bit tags.
    /// The key decides the variant: 16, 24 or 32 bytes (FaceSeal uses AES-256).
    public enum GCM {
        /// Nonce length in bytes.
        public static let nonceByteCount = 12
        /// Tag length in bytes.
        public static let tagByteCount = 16

        /// A 96-bit GCM nonce. Never reuse one with the same key: the default initialiser draws a random one.
        public struct Nonce: Sendable, Hashable, ContiguousBytes, Sequence {
            let bytes: [UInt8]

            /// A fresh random nonce.
            public init() { bytes = SecureRandom.bytes(count: GCM.nonceByteCount) }

            /// A nonce from exactly 12 bytes.
            /// - Throws: ``CryptoError/incorrectParameterSize(_:)`` for any other length.
            public init<D: DataProtocol>(data: D) throws(CryptoError) {
                guard data.count == GCM.nonceByteCount else {
                    throw .incorrectParameterSize("AES-GCM nonce must be \(GCM.nonceByteCount) bytes, got \(data.count)")
                }
                bytes = [UInt8](data)
            }

            /// Calls `body` with the nonce bytes.
            public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
                try bytes.withUnsafeBytes(body)
            }
            /// Iterates over the nonce bytes.
            public func makeIterator() -> IndexingIterator<[UInt8]> { bytes.makeIterator() }
        }

        /// Nonce, ciphertext and tag. `combined` is `nonce ‖ ciphertext ‖ tag`.
        public struct SealedBox: Sendable, Hashable {
            /// The nonce used.
            public let nonce: Nonce
            /// The ciphertext (same length as the plaintext).
            public let ciphertext: Data
            /// The 16-byte authentication tag.
            public let tag: Data

            /// `nonce ‖ ciphertext ‖ tag`.
            public var combined: Data { Data(nonce.bytes) + ciphertext + tag }

            /// A box from its parts.
            /// - Throws: ``CryptoError/incorrectParameterSize(_:)`` if the tag is not 16 bytes.
            public init<C: DataProtocol, T: DataProtocol>(nonce: Nonce, ciphertext: C, tag: T) throws(CryptoError) {
                guard tag.count == GCM.tagByteCount else {
                    throw .incorrectParameterSize("AES-GCM tag must be \(GCM.tagByteCount) bytes, got \(tag.count)")
                }
                self.nonce = nonce
                self.ciphertext = Data(ciphertext)
                self.tag = Data(tag)
            }

            /// A box from `nonce ‖ ciphertext ‖ tag`.
            /// - Throws: ``CryptoError/incorrectParameterSize(_:)`` if shorter than nonce plus tag (28 bytes).
            public init<D: DataProtocol>(combined: D) throws(CryptoError) {
                let bytes = [UInt8](combined)
                guard bytes.count >= GCM.nonceByteCount + GCM.tagByteCount else {
                    throw .incorrectParameterSize("AES-GCM combined box of \(bytes.count) bytes is shorter than nonce and tag")
                }
                try self.init(
                    nonce: Nonce(data: bytes[..<GCM.nonceByteCount]),
                    ciphertext: bytes[GCM.nonceByteCount..<(bytes.count - GCM.tagByteCount)],
                    tag: bytes[(bytes.count - GCM.tagByteCount)...]
                )
            }
        }

        /// Encrypts and authenticates `message`, authenticating `aad` too.
        /// - Throws: ``CryptoError/incorrectKeySize(expected:actual:)`` for a key that is not 16, 24 or 32 bytes.
        public static func seal<Plaintext: DataProtocol, AAD: DataProtocol>(
            _ message: Plaintext, using key: SymmetricKey, nonce: Nonce? = nil, authenticating aad: AAD
        ) throws(CryptoError) -> SealedBox {
            var box: Result<SealedBox, CryptoError>!
            message.withContiguousBytes { input in box = Result { () throws(CryptoError) in try seal(input, key, nonce, aad) } }
            return try box.get()
        }

        /// Encrypts and authenticates a secret plaintext read in place from its ``SecretBytes`` (no plain copy is made).
        public static func seal<AAD: DataProtocol>(
            _ message: SecretBytes, using key: SymmetricKey, nonce: Nonce? = nil, authenticating aad: AAD
        ) throws(CryptoError) -> SealedBox {
            try message.withUnsafeBytes { (input) throws(CryptoError) in try seal(input, key, nonce, aad) }
        }

        private static func seal<AAD: DataProtocol>(
            _ input: UnsafeRawBufferPointer, _ key: SymmetricKey, _ nonce: Nonce?, _ aad: AAD
        ) throws(CryptoError) -> SealedBox {
            let nonce = nonce ?? Nonce()
            var ciphertext = [UInt8](repeating: 0, count: input.count)
            var tag = [UInt8](repeating: 0, count: tagByteCount)
            var failure: CryptoError?
            let aadBytes = [UInt8](aad)
            aadBytes.withUnsafeBytes { aadRaw in
                ciphertext.withUnsafeMutableBytes { output in
                    tag.withUnsafeMutableBytes { tagBytes in
                        do throws(CryptoError) {
                            try run(encrypt: true, key: key, nonce: nonce, aad: aadRaw, input: input, output: output, tag: tagBytes)
                        } catch { failure = error }
                    }
                }
            }
            if let failure { throw failure }
            return try SealedBox(nonce: nonce, ciphertext: ciphertext, tag: tag)
        }

        /// Encrypts and authenticates `message` without associated data.
        public static func seal<Plaintext: DataProtocol>(
            _ message: Plaintext, using key: SymmetricKey, nonce: Nonce? = nil
        ) throws(CryptoError) -> SealedBox {
            try seal(message, using: key, nonce: nonce, authenticating: [UInt8]())
        }

        /// Checks the tag and decrypts.
        /// - Throws: ``CryptoError/authenticationFailure`` if key, nonce, AAD, ciphertext or tag do not match.
        public static func open<AAD: DataProtocol>(
            _ sealedBox: SealedBox, using key: SymmetricKey, authenticating aad: AAD
        ) throws(CryptoError) -> Data {
            var plaintext = Data(count: sealedBox.ciphertext.count)
            try decrypt(sealedBox, key: key, aad: aad, into: &plaintext)
            return plaintext
        }

        /// Checks the tag and decrypts a box sealed without associated data.
        public static func open(_ sealedBox: SealedBox, using key: SymmetricKey) throws(CryptoError) -> Data {
            try open(sealedBox, using: key, authenticating: [UInt8]())
        }

        /// Checks the tag and decrypts straight into ``SecretBytes`` (for sealed keys: no plain copy is left behind).
        public static func openSecret<AAD: DataProtocol>(
            _ sealedBox: SealedBox, using key: SymmetricKey, authenticating aad: AAD
        ) throws(CryptoError) -> SecretBytes {
            try SecretBytes(count: sealedBox.ciphertext.count) { (out) throws(CryptoError) in
                var failure: CryptoError?
                let aadBytes = [UInt8](aad)
                sealedBox.ciphertext.withUnsafeBytes { input in
                    sealedBox.tag.withUnsafeBytes { tagBytes in
                        aadBytes.withUnsafeBytes { aadRaw in
                            do throws(CryptoError) {
                                try run(encrypt: false, key: key, nonce: sealedBox.nonce, aad: aadRaw, input: input,
                                        output: UnsafeMutableRawBufferPointer(out),
                                        tag: UnsafeMutableRawBufferPointer(mutating: tagBytes))
                            } catch { failure = error }
                        }
                    }
                }
                if let failure { throw failure }
            }
        }

        private static func decrypt<AAD: DataProtocol>(
            _ box: SealedBox, key: SymmetricKey, aad: AAD, into plaintext: inout Data
        ) throws(CryptoError) {
            var failure: CryptoError?
            let aadBytes = [UInt8](aad)
            var tag = [UInt8](box.tag)
            box.ciphertext.withUnsafeBytes { input in
                plaintext.withUnsafeMutableBytes { output in
                    tag.withUnsafeMutableBytes { tagBytes in
                        aadBytes.withUnsafeBytes { aadRaw in
                            do throws(CryptoError) {
                                try run(encrypt: false, key: key, nonce: box.nonce, aad: aadRaw, input: input,
                                        output: output, tag: tagBytes)
                            } catch { failure = error }
                        }
                    }
                }
            }
            if let failure {
                // Nothing of an unauthenticated plaintext may reach the caller.
                plaintext.resetBytes(in: 0..<plaintext.count)
                throw failure
            }
        }

        /// One GCM pass. On decryption `tag` is read (the expected tag); on encryption it is written.
        private static func run(
            encrypt: Bool, key: SymmetricKey, nonce: Nonce, aad: UnsafeRawBufferPointer,
            input: UnsafeRawBufferPointer, output: UnsafeMutableRawBufferPointer, tag: UnsafeMutableRawBufferPointer
        ) throws(CryptoError) {
            let cipher: OpaquePointer?
            switch key.secret.count {
            case 16: cipher = fs_cipher(FS_AES_128_GCM)
            case 24: cipher = fs_cipher(FS_AES_192_GCM)
            case 32: cipher = fs_cipher(FS_AES_256_GCM)
            default: throw .incorrectKeySize(expected: 32, actual: key.secret.count)
            }
            guard input.count <= Int(Int32.max), aad.count <= Int(Int32.max) else {
                throw .incorrectParameterSize("AES-GCM input larger than 2 GiB")
            }
            guard let context = EVP_CIPHER_CTX_new() else { throw LibCrypto.failure("EVP_CIPHER_CTX_new") }
            defer { EVP_CIPHER_CTX_free(context) }
            let enc: Int32 = encrypt ? 1 : 0
            var length: Int32 = 0
            let initialised = key.withUnsafeBytes { keyBytes in
                nonce.bytes.withUnsafeBytes { iv in
                    EVP_CipherInit_ex(context, cipher, nil, nil, nil, enc) == 1
                        && EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_IVLEN, Int32(iv.count), nil) == 1
                        && EVP_CipherInit_ex(context, nil, nil, keyBytes.uint8Base, iv.uint8Base, enc) == 1
                }
            }
            guard initialised else { throw LibCrypto.failure("AES-GCM init") }
            if aad.count > 0 {
                guard EVP_CipherUpdate(context, nil, &length, aad.uint8Base, Int32(aad.count)) == 1 else {
                    throw LibCrypto.failure("AES-GCM AAD")
                }
            }
            if input.count > 0 {
                let out = output.baseAddress!.assumingMemoryBound(to: UInt8.self)
                guard EVP_CipherUpdate(context, out, &length, input.uint8Base, Int32(input.count)) == 1 else {
                    throw LibCrypto.failure("AES-GCM update")
                }
            }
            if !encrypt {
                guard EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, Int32(tagByteCount), tag.baseAddress) == 1 else {
                    throw LibCrypto.failure("AES-GCM set tag")
                }
            }
            var scratch = [UInt8](repeating: 0, count: 16)
            guard EVP_CipherFinal_ex(context, &scratch, &length) == 1 else {
                if encrypt { throw LibCrypto.failure("AES-GCM final") }
                LibCrypto.clearErrors()
                throw .authenticationFailure
            }
            if encrypt {
                guard EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, Int32(tagByteCount), tag.baseAddress) == 1 else {
                    throw LibCrypto.failure("AES-GCM get tag")
                }
            }
        }
    }
}
