import COpenSSL
import COpenSSLShims
import Foundation

/// An `EVP_PKEY` owned for the length of one operation, freed on release.
///
/// Public key types keep their key as bytes (which are `Sendable`) and build one of these per operation,
/// so no C pointer outlives a call or crosses a thread.
final class EVPKey {
    let pointer: OpaquePointer

    init(taking pointer: OpaquePointer) { self.pointer = pointer }

    deinit { EVP_PKEY_free(pointer) }

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

    /// One-shot `EVP_DigestSign` (`digest` nil for Ed25519, which hashes internally).
    func sign(digest: OpaquePointer?, message: UnsafeRawBufferPointer) throws(CryptoError) -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw LibCrypto.failure("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, digest, nil, pointer) == 1 else {
            throw LibCrypto.failure("EVP_DigestSignInit")
        }
        var length = 0
        guard EVP_DigestSign(context, nil, &length, message.uint8Base, message.count) == 1 else {
            throw LibCrypto.failure("EVP_DigestSign (length)")
        }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(context, &signature, &length, message.uint8Base, message.count) == 1 else {
            throw LibCrypto.failure("EVP_DigestSign")
        }
        return Array(signature.prefix(length))
    }

    /// One-shot `EVP_DigestVerify`; any failure (bad encoding, wrong key, wrong message) is `false`.
    func verify(digest: OpaquePointer?, message: UnsafeRawBufferPointer, signature: UnsafeRawBufferPointer) -> Bool {
        guard let context = EVP_MD_CTX_new() else { return false }
        defer {
            EVP_MD_CTX_free(context)
            LibCrypto.clearErrors()
        }
        guard EVP_DigestVerifyInit(context, nil, digest, nil, pointer) == 1 else { return false }
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
