extension DlibReader {
    /// Appends `count` consecutive `float_details` values (as `readFloat()` decodes them) to `output`.
    ///
    /// The 68-point model is 16 million such values; decoding them in one tight loop over the bytes,
    /// rather than through two `readInt()` calls each, makes loading it faster. Anything unusual
    /// (special or out-of-range exponents, malformed or truncated integers) is left to `readFloat()`,
    /// which decodes it or throws its precise error.
    mutating func appendFloats(count: Int, to output: inout [Float]) throws(FaceModelError) {
        guard count >= 0 else { throw .malformed(offset: offset, reason: "negative float count") }
        var done = 0
        while done < count {
            // Decode what the window holds without per-value checks, then let `readFloat()` take the value
            // at its edge (it reads more of a file) or anything unusual.
            var position = index
            let fast = window.withUnsafeBufferPointer { buffer -> Int in
                var decoded = 0
                while done + decoded < count {
                    var p = position
                    guard let mantissa = Self.plainInt(buffer, &p), let exponent = Self.plainInt(buffer, &p),
                          exponent >= -2000, exponent <= 2000 else { break }
                    output.append(Float(Double(sign: .plus, exponent: exponent, significand: Double(mantissa))))
                    position = p
                    decoded += 1
                }
                return decoded
            }
            index = position
            done += fast
            if done < count {
                output.append(try readFloat())
                done += 1
            }
        }
    }

    /// A well-formed dlib integer at `position` (advanced past it), or nil.
    @inline(__always)
    private static func plainInt(_ buffer: UnsafeBufferPointer<UInt8>, _ position: inout Int) -> Int? {
        guard position < buffer.count else { return nil }
        let control = buffer[position]
        let n = Int(control & 0x0F)
        guard n >= 1, n <= 7, control & 0x70 == 0, position + n < buffer.count else { return nil }
        var magnitude = 0
        for i in 0..<n { magnitude |= Int(buffer[position + 1 + i]) << (8 * i) }
        position += 1 + n
        return control & 0x80 != 0 ? -magnitude : magnitude
    }
}
