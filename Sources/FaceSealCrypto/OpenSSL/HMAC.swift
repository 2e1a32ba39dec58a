import COpenSSL
import COpenSSLShims
public import Foundation

/// HMAC (RFC 2104) over a ``HashFunction``, one-shot, as in swift-crypto: `HMAC<SHA256>.authenticationCode(for:using:)`.
public enum HMAC<H: HashFunction> {
    /// The MAC of `data` under `key`.
    public static func authenticationCode<D: DataProtocol>(for data: D, using key: SymmetricKey) -> HashedAuthenticationCode<H> {
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        let length = key.withUnsafeBytes { keyBytes in
            data.withContiguousBytes { message in
                fs_hmac(H.algorithmName, keyBytes.uint8Base, keyBytes.count, message.uint8Base, message.count, &out)
            }
        }
        guard length == H.byteCount else {
            fatalError("HMAC(\(H.algorithmName)) failed: \(LibCrypto.drainErrors())")
        }
        return HashedAuthenticationCode(bytes: Array(out.prefix(H.byteCount)))
    }

    /// Whether `code` is the MAC of `data` under `key` (constant-time comparison).
    public static func isValidAuthenticationCode<C: DataProtocol, D: DataProtocol>(
        _ code: C, authenticating data: D, using key: SymmetricKey
    ) -> Bool {
        constantTimeEquals(authenticationCode(for: data, using: key).bytes, code)
    }
}

/// An HMAC value, compared in constant time.
public struct HashedAuthenticationCode<H: HashFunction>: Hashable, Sendable, Sequence, ContiguousBytes, CustomStringConvertible {
    /// The MAC bytes.
    public let bytes: [UInt8]

    init(bytes: [UInt8]) { self.bytes = bytes }

    /// The MAC length in bytes.
    public var byteCount: Int { bytes.count }
    /// Constant-time comparison.
    public static func == (lhs: Self, rhs: Self) -> Bool { constantTimeEquals(lhs.bytes, rhs.bytes) }
    /// Hashes the MAC bytes.
    public func hash(into hasher: inout Hasher) { hasher.combine(bytes) }
    /// Iterates over the MAC bytes.
    public func makeIterator() -> IndexingIterator<[UInt8]> { bytes.makeIterator() }
    /// Calls `body` with the MAC bytes.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes(body)
    }
    /// The algorithm and the hex of the MAC.
    public var description: String {
        "HMAC-\(H.algorithmName): " + bytes.map { String(format: "%02x", $0) }.joined()
    }
}
