import COpenSSL
import COpenSSLShims
import Foundation

/// An `EVP_PKEY` (and, once used, its kept signing and verifying contexts), freed on release.
///
/// Key types keep their key as bytes (which are `Sendable`) and build one of these either for one operation or,
/// for signing and verifying, once inside a ``CachedEVPKey``, whose lock is the only way to reach it: no C pointer
/// crosses a thread unguarded.
final class EVPKey {
    let pointer: OpaquePointer
    private var signContext: OpaquePointer?
    private var verifyContext: OpaquePointer?

    init(taking pointer: OpaquePointer) { self.pointer = pointer }

    deinit {
        EVP_PKEY_CTX_free(signContext)
        EVP_PKEY_CTX_free(verifyContext)
        EVP_PKEY_free(pointer)
    }

    /// Parses a DER SubjectPublicKeyInfo.
    static func subjectPublicKeyInfo(_ der: [UInt8]) throws(CryptoError) -> EVPKey {
        let pointer: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            let key = d2i_PUBKEY(nil, &cursor, buffer.count)
            // Trailing bytes after the structure are not a key encoding we accept.
            if key != nil, cursor != buffer.baseAddress.map({ $0 + buffer.count }) {
                EVP_PKEY_free(key)
                return nil
            }
            return key
        }
        guard let pointer else {
            LibCrypto.clearErrors()
            throw .invalidKeyRepresentation("not a DER SubjectPublicKeyInfo")
        }
        return EVPKey(taking: pointer)
    }

    /// DER SubjectPublicKeyInfo of this key.
    func subjectPublicKeyInfo() throws(CryptoError) -> [UInt8] {
        let length = i2d_PUBKEY(pointer, nil)
        guard length > 0 else { throw LibCrypto.failure("i2d_PUBKEY") }
        var out = [UInt8](repeating: 0, count: Int(length))
        let written = out.withUnsafeMutableBufferPointer { buffer in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return i2d_PUBKEY(pointer, &cursor)
        }
        guard written == length else { throw LibCrypto.failure("i2d_PUBKEY") }
        return out
    }

    /// Signs a SHA-256 `digest` (ECDSA: a DER signature of at most 72 bytes; RSA: PKCS#1 v1.5 over the digest's
    /// DigestInfo, as long as the modulus) with `EVP_PKEY_sign` on the kept signing context.
    func sign(sha256Digest digest: UnsafeRawBufferPointer) throws(CryptoError) -> [UInt8] {
        if signContext == nil { signContext = try makeDigestContext(sign: true) }
        var length = Int(EVP_PKEY_get_size(pointer))
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_PKEY_sign(signContext, &signature, &length, digest.uint8Base, digest.count) == 1 else {
            throw LibCrypto.failure("EVP_PKEY_sign")
        }
        signature.removeLast(signature.count - length)
        return signature
    }

    /// Whether `signature` is valid for the SHA-256 `digest` (`EVP_PKEY_verify` on the kept verifying context); any
    /// failure (bad encoding, wrong key, wrong digest) is `false`.
    func verify(sha256Digest digest: UnsafeRawBufferPointer, signature: UnsafeRawBufferPointer) -> Bool {
        defer { LibCrypto.clearErrors() }
        if verifyContext == nil { verifyContext = try? makeDigestContext(sign: false) }
        guard let verifyContext else { return false }
        return EVP_PKEY_verify(verifyContext, signature.uint8Base, signature.count, digest.uint8Base, digest.count) == 1
    }

    /// A signing or verifying context of this key over a SHA-256 digest, initialised once and kept: `EVP_PKEY_sign`
    /// and `EVP_PKEY_verify` keep no state between calls, and the owner serialises them (`CachedEVPKey`), as an
    /// `EVP_PKEY_CTX` is not safe to share between threads. RSA gets PKCS#1 v1.5 padding and SHA-256's DigestInfo.
    private func makeDigestContext(sign: Bool) throws(CryptoError) -> OpaquePointer {
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, pointer, nil) else { throw LibCrypto.failure("EVP_PKEY_CTX_new_from_pkey") }
        var ok = (sign ? EVP_PKEY_sign_init(context) : EVP_PKEY_verify_init(context)) == 1
        if ok, EVP_PKEY_get_base_id(pointer) == EVP_PKEY_RSA {
            ok = EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PADDING) == 1
                && EVP_PKEY_CTX_set_signature_md(context, fs_md(FS_SHA256)) == 1
        }
        guard ok else {
            EVP_PKEY_CTX_free(context)
            throw LibCrypto.failure(sign ? "EVP_PKEY_sign_init" : "EVP_PKEY_verify_init")
        }
        return context
    }

    /// One-shot `EVP_DigestSign` of a whole message (Ed25519, which hashes internally), into a buffer of the key's
    /// maximum signature size.
    func sign(message: UnsafeRawBufferPointer) throws(CryptoError) -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw LibCrypto.failure("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, nil, nil, pointer) == 1 else {
            throw LibCrypto.failure("EVP_DigestSignInit")
        }
        var length = Int(EVP_PKEY_get_size(pointer))
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(context, &signature, &length, message.uint8Base, message.count) == 1 else {
            throw LibCrypto.failure("EVP_DigestSign")
        }
        signature.removeLast(signature.count - length)
        return signature
    }

    /// One-shot `EVP_DigestVerify` of a whole message (Ed25519); any failure is `false`.
    func verify(message: UnsafeRawBufferPointer, signature: UnsafeRawBufferPointer) -> Bool {
        guard let context = EVP_MD_CTX_new() else { return false }
        defer {
            EVP_MD_CTX_free(context)
            LibCrypto.clearErrors()
        }
        guard EVP_DigestVerifyInit(context, nil, nil, nil, pointer) == 1 else { return false }
        return EVP_DigestVerify(context, signature.uint8Base, signature.count, message.uint8Base, message.count) == 1
    }

    /// A big-integer parameter ("n", "e", "priv"), big endian; padded to `paddedTo` bytes if given.
    func bigInteger(_ name: String, paddedTo: Int? = nil, maximumBytes: Int = 1024) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: paddedTo ?? maximumBytes)
        let written = fs_pkey_get_bn(pointer, name, &out, out.count, paddedTo == nil ? 0 : 1)
        guard written >= 0 else {
            LibCrypto.clearErrors()
            return nil
        }
        return Array(out.prefix(Int(written)))
    }
}
