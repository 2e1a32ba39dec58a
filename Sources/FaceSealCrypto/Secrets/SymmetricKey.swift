public import Foundation

/// A symmetric key (AES key, HMAC key, HKDF output) held in ``SecretBytes``, shaped like swift-crypto's.
public struct SymmetricKey: Sendable, Equatable, CustomStringConvertible {
    /// The secret key bytes.
    public let secret: SecretBytes

    /// A random key of `size`.
    public init(size: SymmetricKeySize) {
        secret = SecretBytes(randomCount: size.bitCount / 8)
    }

    /// A key from existing bytes (copied into secret storage).
    public init<D: ContiguousBytes>(data: D) {
        secret = data.withUnsafeBytes { SecretBytes($0) }
    }

    /// A key that takes ownership of already-secret bytes.
    public init(secret: SecretBytes) {
        self.secret = secret
    }

    /// The key length in bits.
    public var bitCount: Int { secret.count * 8 }

    /// Calls `body` with the key bytes; the pointer must not escape.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try secret.withUnsafeBytes(body)
    }

    /// Constant-time comparison of the key bytes.
    public static func == (lhs: SymmetricKey, rhs: SymmetricKey) -> Bool { lhs.secret == rhs.secret }

    /// The length only; key bytes are never printed.
    public var description: String { "SymmetricKey(\(bitCount) bits, redacted)" }
}

/// A symmetric key length.
public struct SymmetricKeySize: Sendable, Hashable {
    /// The length in bits (a multiple of 8).
    public let bitCount: Int

    /// A length of `bitCount` bits; must be a positive multiple of 8.
    public init(bitCount: Int) {
        precondition(bitCount > 0 && bitCount % 8 == 0, "SymmetricKeySize must be a positive multiple of 8 bits")
        self.bitCount = bitCount
    }

    /// 128 bits.
    public static let bits128 = SymmetricKeySize(bitCount: 128)
    /// 192 bits.
    public static let bits192 = SymmetricKeySize(bitCount: 192)
    /// 256 bits.
    public static let bits256 = SymmetricKeySize(bitCount: 256)
}
