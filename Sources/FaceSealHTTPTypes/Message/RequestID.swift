/// Request ids: 128 random bits as 32 lowercase hex digits, unguessable so they can be shown to clients.
public enum RequestID {
    /// A fresh id from the system's secure generator, formatted into one string (no intermediate strings: one id per
    /// request).
    public static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next() as UInt64
        let low = generator.next() as UInt64
        return String(unsafeUninitializedCapacity: 32) { digits in
            for index in 0..<32 {
                let word = index < 16 ? high : low
                let nibble = UInt8(truncatingIfNeeded: word >> UInt64(60 - 4 * (index % 16))) & 0x0F
                digits[index] = nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
            }
            return 32
        }
    }
}
