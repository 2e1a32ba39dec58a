/// Compares two byte sequences in time that depends only on their lengths, never on their content.
///
/// Use it for MACs, tags, bearer tokens and any other secret. Sequences of different lengths compare
/// unequal at once (the length is not treated as secret).
public func constantTimeEquals<A: Sequence, B: Sequence>(_ lhs: A, _ rhs: B) -> Bool
where A.Element == UInt8, B.Element == UInt8 {
    let a = Array(lhs)
    let b = Array(rhs)
    guard a.count == b.count else { return false }
    return a.withUnsafeBytes { pa in b.withUnsafeBytes { pb in constantTimeEquals(pa, pb) } }
}

/// Constant-time comparison of two raw buffers (see ``constantTimeEquals(_:_:)-(A,B)``).
public func constantTimeEquals(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Bool {
    guard lhs.count == rhs.count else { return false }
    // Accumulate the differences without an early exit; the final test is on the accumulator only.
    var difference: UInt8 = 0
    for index in 0..<lhs.count {
        difference |= lhs[index] ^ rhs[index]
    }
    return difference == 0
}
