/// A cursor over bytes in dlib's serialization format (integers, bools, strings, `float_details`,
/// matrices), as used by the four model files. Every read checks bounds and throws `FaceModelError`.
///
/// See `reference/dlib_format.md` §1: integers are a control byte (bit 7 sign, bits 0–3 byte count)
/// then little-endian magnitude bytes; `float_details` is mantissa then exponent, value = m·2^e.
public struct DlibReader: Sendable {
    /// The bytes being read.
    public let bytes: [UInt8]
    /// The offset of the next unread byte.
    public var offset: Int
    /// Whether every byte has been read.
    public var isAtEnd: Bool { offset == bytes.count }

    /// A reader positioned at `offset` (default: the start).
    public init(bytes: [UInt8], offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    private mutating func byte() throws -> UInt8 {
        guard offset < bytes.count else { throw FaceModelError.truncated(offset: offset) }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// A dlib integer (any integer type).
    public mutating func readInt() throws -> Int {
        let start = offset
        let control = try byte()
        let count = Int(control & 0x0F)
        guard count >= 1, count <= 8, control & 0x70 == 0 else {
            throw FaceModelError.malformed(offset: start, reason: "integer control byte \(control)")
        }
        guard offset + count <= bytes.count else { throw FaceModelError.truncated(offset: start) }
        var magnitude: UInt64 = 0
        for i in 0..<count { magnitude |= UInt64(bytes[offset + i]) << (8 * UInt64(i)) }
        offset += count
        guard magnitude <= UInt64(Int.max) else {
            throw FaceModelError.malformed(offset: start, reason: "integer out of range")
        }
        return control & 0x80 != 0 ? -Int(magnitude) : Int(magnitude)
    }

    /// A dlib integer that must be ≥ 0 (sizes, counts, versions).
    public mutating func readUInt() throws -> Int {
        let start = offset
        let value = try readInt()
        guard value >= 0 else { throw FaceModelError.malformed(offset: start, reason: "negative unsigned value") }
        return value
    }

    /// A bool: ASCII `'1'` or `'0'`.
    public mutating func readBool() throws -> Bool {
        let start = offset
        switch try byte() {
        case 0x31: return true
        case 0x30: return false
        case let other: throw FaceModelError.malformed(offset: start, reason: "bool byte \(other)")
        }
    }

    /// A length-prefixed ASCII string of at most `maxLength` bytes.
    public mutating func readString(maxLength: Int = 4096) throws -> String {
        let start = offset
        let length = try readUInt()
        guard length <= maxLength else { throw FaceModelError.malformed(offset: start, reason: "string of \(length) bytes") }
        let raw = try readBytes(length)
        guard raw.allSatisfy({ $0 < 0x80 }) else {
            throw FaceModelError.malformed(offset: start, reason: "non-ASCII string")
        }
        return String(decoding: raw, as: UTF8.self)
    }

    /// Reads a string and checks it is `expected`.
    public mutating func expectString(_ expected: String) throws {
        let start = offset
        let found = try readString()
        guard found == expected else {
            throw FaceModelError.unexpectedRecord(offset: start, expected: expected, found: found)
        }
    }

    /// A `float_details` value as a double (exact for these files).
    public mutating func readDouble() throws -> Double {
        let start = offset
        let mantissa = try readInt()
        let exponent = try readInt()
        switch exponent {
        case 32000: return .infinity
        case 32001: return -.infinity
        case 32002: return .nan
        case -2000...2000: return Double(sign: .plus, exponent: exponent, significand: Double(mantissa))
        default: throw FaceModelError.malformed(offset: start, reason: "float exponent \(exponent)")
        }
    }

    /// A `float_details` value as a float.
    public mutating func readFloat() throws -> Float { Float(try readDouble()) }

    /// The next `count` raw bytes.
    public mutating func readBytes(_ count: Int) throws -> ArraySlice<UInt8> {
        guard count >= 0, count <= bytes.count - offset else { throw FaceModelError.truncated(offset: offset) }
        defer { offset += count }
        return bytes[offset..<(offset + count)]
    }

    /// A `dlib::matrix<float>`: −rows, −cols, then rows·cols `float_details` in row-major order.
    /// `maxElements` bounds the allocation a corrupt header could ask for.
    public mutating func readFloatMatrix(maxElements: Int = 1 << 24) throws -> (rows: Int, cols: Int, values: [Float]) {
        let start = offset
        let rows = -(try readInt())
        let cols = -(try readInt())
        guard rows >= 0, cols >= 0, rows.multipliedReportingOverflow(by: cols).overflow == false,
              rows * cols <= maxElements else {
            throw FaceModelError.malformed(offset: start, reason: "matrix \(rows)×\(cols)")
        }
        var values = [Float]()
        values.reserveCapacity(rows * cols)
        for _ in 0..<(rows * cols) { values.append(try readFloat()) }
        return (rows, cols, values)
    }

    /// Throws unless every byte has been read.
    public func expectEnd() throws {
        guard isAtEnd else { throw FaceModelError.trailingBytes(offset: offset) }
    }
}
