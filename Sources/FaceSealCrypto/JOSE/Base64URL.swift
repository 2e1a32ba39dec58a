public import Foundation

/// Base64url without padding (RFC 4648 §5, RFC 7515 §2), decoded strictly.
public enum Base64URL {
    /// The default limit on decoded output (1 MiB).
    public static let defaultMaximumDecodedCount = 1 << 20

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// 0xFF marks a byte outside the alphabet.
    private static let decodingTable: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, symbol) in alphabet.enumerated() { table[Int(symbol)] = UInt8(index) }
        return table
    }()

    /// The unpadded base64url text of `data`.
    public static func encode<D: DataProtocol>(_ data: D) -> String {
        String(decoding: data.withContiguousBytes { symbols(of: $0) }, as: UTF8.self)
    }

    /// The unpadded base64url text of `bytes` (bytes: no generic detour from another module).
    public static func encode(_ bytes: [UInt8]) -> String {
        String(decoding: bytes.withUnsafeBytes { symbols(of: $0) }, as: UTF8.self)
    }

    /// The unpadded base64url text of a secret, read in place (for a wire field that carries it: the text is as
    /// secret as the bytes, and the scratch buffer it was built in is wiped).
    public static func encode(_ secret: SecretBytes) -> String {
        var out = secret.withUnsafeBytes { symbols(of: $0) }
        defer { secureZero(&out) }
        return String(decoding: out, as: UTF8.self)
    }

    private static func symbols(of bytes: UnsafeRawBufferPointer) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(encodedCount(bytes.count))  // exactly: a secret's text is never copied by growing
        append(bytes, to: &out)
        return out
    }

    private static func encodedCount(_ count: Int) -> Int { count / 3 * 4 + (count % 3 == 0 ? 0 : count % 3 + 1) }

    /// Appends the unpadded base64url text of `data` to `out` (the JWS writer builds a compact serialisation in one
    /// buffer).
    static func append<D: DataProtocol>(_ data: D, to out: inout [UInt8]) {
        data.withContiguousBytes { append($0, to: &out) }
    }

    private static func append(_ bytes: UnsafeRawBufferPointer, to out: inout [UInt8]) {
        let start = out.count
        out.append(contentsOf: repeatElement(0, count: encodedCount(bytes.count)))
        out.withUnsafeMutableBufferPointer { buffer in
            alphabet.withUnsafeBufferPointer { table in
                var index = 0, cursor = start
                while index + 3 <= bytes.count {
                    let value = Int(bytes[index]) << 16 | Int(bytes[index + 1]) << 8 | Int(bytes[index + 2])
                    buffer[cursor] = table[value >> 18 & 63]
                    buffer[cursor + 1] = table[value >> 12 & 63]
                    buffer[cursor + 2] = table[value >> 6 & 63]
                    buffer[cursor + 3] = table[value & 63]
                    index += 3
                    cursor += 4
                }
                switch bytes.count - index {
                case 1:
                    let value = Int(bytes[index]) << 16
                    buffer[cursor] = table[value >> 18 & 63]
                    buffer[cursor + 1] = table[value >> 12 & 63]
                case 2:
                    let value = Int(bytes[index]) << 16 | Int(bytes[index + 1]) << 8
                    buffer[cursor] = table[value >> 18 & 63]
                    buffer[cursor + 1] = table[value >> 12 & 63]
                    buffer[cursor + 2] = table[value >> 6 & 63]
                default:
                    break
                }
            }
        }
    }

    /// Decodes unpadded base64url.
    ///
    /// Refuses padding (`=`), whitespace and any character outside `A–Z a–z 0–9 - _`, a length of 1 mod 4,
    /// and non-canonical encodings (unused low bits of the last character set), so each byte string has
    /// exactly one accepted encoding.
    /// - Parameters:
    ///   - part: names the input in the error (`header`, `x`, …).
    ///   - maximumDecodedCount: the largest output accepted.
    /// - Throws: ``JOSEError/invalidBase64URL(part:)`` or ``JOSEError/inputTooLarge(limit:)``.
    public static func decode<S: StringProtocol>(
        _ text: S, part: String = "value", maximumDecodedCount: Int = defaultMaximumDecodedCount
    ) throws(JOSEError) -> [UInt8] {
        try decode(utf8: Array(text.utf8), part: part, maximumDecodedCount: maximumDecodedCount)
    }

    /// Decodes unpadded base64url given as UTF-8 bytes (same rules as ``decode(_:part:maximumDecodedCount:)``).
    public static func decode<C: Collection>(
        utf8 text: C, part: String = "value", maximumDecodedCount: Int = defaultMaximumDecodedCount
    ) throws(JOSEError) -> [UInt8] where C.Element == UInt8 {
        let count = try decodedCount(text.count, part: part, maximumDecodedCount: maximumDecodedCount)
        var out = [UInt8](repeating: 0, count: count)
        try out.withUnsafeMutableBufferPointer { (buffer) throws(JOSEError) in try decode(text, into: buffer, part: part) }
        return out
    }

    /// Decodes unpadded base64url (same rules) straight into ``SecretBytes``: no plain copy of the decoded secret is made.
    public static func decodeSecret<C: Collection>(
        utf8 text: C, part: String = "value", maximumDecodedCount: Int = defaultMaximumDecodedCount
    ) throws(JOSEError) -> SecretBytes where C.Element == UInt8 {
        let count = try decodedCount(text.count, part: part, maximumDecodedCount: maximumDecodedCount)
        return try SecretBytes(count: count) { (buffer) throws(JOSEError) in try decode(text, into: buffer, part: part) }
    }

    private static func decodedCount(_ count: Int, part: String, maximumDecodedCount: Int) throws(JOSEError) -> Int {
        guard count % 4 != 1 else { throw .invalidBase64URL(part: part) }
        let outputCount = count / 4 * 3 + max(0, count % 4 - 1)
        guard outputCount <= maximumDecodedCount else { throw .inputTooLarge(limit: maximumDecodedCount) }
        return outputCount
    }

    /// Writes the decoded bytes into `out`, which holds exactly ``decodedCount(_:part:maximumDecodedCount:)`` bytes.
    private static func decode<C: Collection>(_ text: C, into out: UnsafeMutableBufferPointer<UInt8>, part: String) throws(JOSEError)
    where C.Element == UInt8 {
        if let decoded = text.withContiguousStorageIfAvailable({ decode($0, into: out) }) {
            guard decoded else { throw .invalidBase64URL(part: part) }
            return
        }
        var written = 0
        var accumulator: UInt32 = 0
        var bits = 0
        for symbol in text {
            let value = decodingTable[Int(symbol)]
            guard value != 0xFF else { throw .invalidBase64URL(part: part) }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out[written] = UInt8(truncatingIfNeeded: accumulator >> UInt32(bits))
                written += 1
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        // Leftover bits (2 or 4) must be zero, otherwise two texts would decode to the same bytes.
        guard accumulator == 0 else { throw .invalidBase64URL(part: part) }
    }

    /// The same decoding over contiguous text, four symbols at a time; false on a symbol outside the alphabet or
    /// non-zero leftover bits.
    private static func decode(_ text: UnsafeBufferPointer<UInt8>, into out: UnsafeMutableBufferPointer<UInt8>) -> Bool {
        decodingTable.withUnsafeBufferPointer { table in
            var index = 0, written = 0
            while index + 4 <= text.count {
                let a = table[Int(text[index])], b = table[Int(text[index + 1])]
                let c = table[Int(text[index + 2])], d = table[Int(text[index + 3])]
                guard (a | b | c | d) & 0x80 == 0 else { return false }  // 0xFF marks a symbol outside the alphabet
                let value = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                out[written] = UInt8(truncatingIfNeeded: value >> 16)
                out[written + 1] = UInt8(truncatingIfNeeded: value >> 8)
                out[written + 2] = UInt8(truncatingIfNeeded: value)
                index += 4
                written += 3
            }
            switch text.count - index {
            case 0:
                return true
            case 2:
                let a = table[Int(text[index])], b = table[Int(text[index + 1])]
                guard a != 0xFF, b != 0xFF, b & 0x0F == 0 else { return false }
                out[written] = a << 2 | b >> 4
                return true
            case 3:
                let a = table[Int(text[index])], b = table[Int(text[index + 1])], c = table[Int(text[index + 2])]
                guard a != 0xFF, b != 0xFF, c != 0xFF, c & 0x03 == 0 else { return false }
                out[written] = a << 2 | b >> 4
                out[written + 1] = (b & 0x0F) << 4 | c >> 2
                return true
            default:
                return false  // one symbol: refused before decoding
            }
        }
    }
}
