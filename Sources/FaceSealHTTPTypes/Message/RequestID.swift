import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Request ids: 128 random bits as 32 lowercase hex digits, unguessable so they can be shown to clients.
public enum RequestID {
    /// A fresh id from the system's secure generator, formatted into one string (no intermediate strings: one id per
    /// request).
    public static func make() -> String {
        let (high, low) = pool.withLock { $0.next() }
        return String(unsafeUninitializedCapacity: 32) { digits in
            for index in 0..<32 {
                let word = index < 16 ? high : low
                let nibble = UInt8(truncatingIfNeeded: word >> UInt64(60 - 4 * (index % 16))) & 0x0F
                digits[index] = nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
            }
            return 32
        }
    }

    private static let pool = Mutex(RandomWords())

    /// Random words from the system's secure generator (`arc4random_buf`: the kernel's `getrandom`), drawn 64 at a
    /// time: one system call for 32 ids, where `SystemRandomNumberGenerator` makes one for every 8 bytes.
    private struct RandomWords {
        private var words = [UInt64](repeating: 0, count: 64)
        private var used = 64

        /// The next two unused words; every word is handed out once.
        mutating func next() -> (UInt64, UInt64) {
            if used + 2 > words.count {
                words.withUnsafeMutableBytes { arc4random_buf($0.baseAddress!, $0.count) }
                used = 0
            }
            defer { used += 2 }
            return (words[used], words[used + 1])
        }
    }
}
