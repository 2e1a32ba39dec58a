import COpenSSLShims
public import Foundation

/// HKDF (RFC 5869) over a ``HashFunction``, as in swift-crypto: `HKDF<SHA256>.deriveKey(...)`.
public enum HKDF<H: HashFunction> {
    /// The largest output RFC 5869 allows: 255 blocks of the hash length (8160 bytes for SHA-256).
    public static var maximumOutputByteCount: Int { 255 * H.byteCount }

    /// Extract-then-expand: `outputByteCount` bytes from `inputKeyMaterial`, `salt` and `info`.
    /// - Throws: ``CryptoError/incorrectParameterSize(_:)`` if `outputByteCount` is not in 1…``maximumOutputByteCount``.
    public static func deriveKey<Salt: DataProtocol, Info: DataProtocol>(
        inputKeyMaterial: SymmetricKey, salt: Salt, info: Info, outputByteCount: Int
    ) throws(CryptoError) -> SymmetricKey {
        try derive(mode: 0, key: inputKeyMaterial, salt: salt, info: info, outputByteCount: outputByteCount)
    }

    /// Extract-then-expand with an empty salt.
    public static func deriveKey<Info: DataProtocol>(
        inputKeyMaterial: SymmetricKey, info: Info, outputByteCount: Int
    ) throws(CryptoError) -> SymmetricKey {
        try derive(mode: 0, key: inputKeyMaterial, salt: [UInt8](), info: info, outputByteCount: outputByteCount)
    }

    /// Expand only: `outputByteCount` bytes from a pseudorandom key (at least the hash length, e.g. a previous HKDF output).
    public static func expand<Info: DataProtocol>(
        pseudoRandomKey: SymmetricKey, info: Info, outputByteCount: Int
    ) throws(CryptoError) -> SymmetricKey {
        guard pseudoRandomKey.secret.count >= H.byteCount else {
            throw .incorrectKeySize(expected: H.byteCount, actual: pseudoRandomKey.secret.count)
        }
        return try derive(mode: 1, key: pseudoRandomKey, salt: [UInt8](), info: info, outputByteCount: outputByteCount)
    }

    private static func derive<Salt: DataProtocol, Info: DataProtocol>(
        mode: Int32, key: SymmetricKey, salt: Salt, info: Info, outputByteCount: Int
    ) throws(CryptoError) -> SymmetricKey {
        guard (1...maximumOutputByteCount).contains(outputByteCount) else {
            throw .incorrectParameterSize("HKDF output length \(outputByteCount) not in 1...\(maximumOutputByteCount)")
        }
        let saltBytes = [UInt8](salt)
        let infoBytes = [UInt8](info)
        var failed = false
        let output = SecretBytes(count: outputByteCount) { out in
            let ok = key.withUnsafeBytes { ikm in
                saltBytes.withUnsafeBytes { s in
                    infoBytes.withUnsafeBytes { i in
                        fs_hkdf(H.algorithmName, mode, ikm.uint8Base, ikm.count, s.uint8Base, s.count,
                                       i.uint8Base, i.count, out.baseAddress, out.count)
                    }
                }
            }
            failed = ok != 1
        }
        guard !failed else { throw LibCrypto.failure("HKDF-\(H.algorithmName)") }
        return SymmetricKey(secret: output)
    }
}
