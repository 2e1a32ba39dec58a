/// The ranges of the integers wire messages carry (checked by ``WireMessage/checkRanges()`` at decode time).
///
/// Every bound leaves room for the arithmetic a reader does with the value — a generation plus one, a time plus
/// a skew or a lifetime — so that a checked value can never overflow an `Int64`.
public enum WireRange {
    /// Unix seconds: 1970 through the end of year 9999.
    public static let unixTime: ClosedRange<Int64> = 0...253_402_300_799
    /// A protocol or format version.
    public static let version: ClosedRange<Int> = 0...9_999
    /// A face-token generation (the first is 1).
    public static let generation: ClosedRange<Int> = 1...Int(Int32.max)
    /// A lifetime or interval in seconds: at most ten years.
    public static let seconds: ClosedRange<Int> = 0...315_360_000
    /// An HTTP status code.
    public static let httpStatus: ClosedRange<Int> = 100...599
    /// An attempts budget.
    public static let attempts: ClosedRange<Int> = 1...100
    /// scrypt's log2 N as a token header may carry it (the policy a token must meet is
    /// ``ScryptParameters/isWithinLimits``).
    public static let scryptLogN: ClosedRange<Int> = 1...30
    /// scrypt's r or p as a token header may carry them.
    public static let scryptFactor: ClosedRange<Int> = 1...1_024

    /// Throws ``WireError/invalidValue(field:reason:)`` unless `value` is in `range`.
    public static func check<Value: BinaryInteger>(_ value: Value, _ range: ClosedRange<Value>, _ field: String) throws(WireError) {
        guard range.contains(value) else {
            throw .invalidValue(field: field, reason: "must be within \(range.lowerBound)…\(range.upperBound)")
        }
    }
}
