import COpenSSL

/// The cryptographically secure random generator (OpenSSL `RAND_bytes`, seeded by the kernel).
public enum SecureRandom {
    /// `count` random bytes.
    public static func bytes(count: Int) -> [UInt8] {
        precondition(count >= 0, "SecureRandom.bytes: count must not be negative")
        var out = [UInt8](repeating: 0, count: count)
        out.withUnsafeMutableBytes { fill($0) }
        return out
    }

    /// Fills `buffer` with random bytes.
    ///
    /// A failure of the generator stops the process: carrying on would hand out predictable keys and
    /// nonces, and no caller could do anything sensible with the error.
    public static func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        var offset = 0
        while offset < buffer.count {
            let chunk = min(buffer.count - offset, Int(Int32.max))
            guard RAND_bytes(base.advanced(by: offset).assumingMemoryBound(to: UInt8.self), Int32(chunk)) == 1 else {
                fatalError("OpenSSL RAND_bytes failed: no secure randomness available")
            }
            offset += chunk
        }
    }
}

/// A `RandomNumberGenerator` backed by ``SecureRandom`` (for `shuffled(using:)`, `random(in:using:)`).
public struct SecureRandomNumberGenerator: RandomNumberGenerator, Sendable {
    /// Creates the generator; it has no state of its own.
    public init() {}

    /// 64 random bits.
    public mutating func next() -> UInt64 {
        var value: UInt64 = 0
        withUnsafeMutableBytes(of: &value) { SecureRandom.fill($0) }
        return value
    }
}
