import Foundation

/// A cursor over bytes in dlib's serialization format (integers, bools, strings, `float_details`,
/// matrices), as used by the four model files. Every read checks bounds and throws `FaceModelError`.
///
/// The bytes are either all in memory or a file read through a window of a few megabytes, so a
/// 100 MB model never sits in memory next to the arrays parsed from it.
///
/// See `reference/dlib_format.md` §1: integers are a control byte (bit 7 sign, bits 0–3 byte count)
/// then little-endian magnitude bytes; `float_details` is mantissa then exponent, value = m·2^e.
public struct DlibReader: Sendable {
    /// The bytes held in memory: the whole input, or the part of the file around `offset`.
    private(set) var window: [UInt8]
    /// The input offset of `window[0]`.
    private var windowStart = 0
    /// The next unread byte in `window` (the bulk float decoder advances it).
    var index: Int
    /// Every byte of the input (the file's size when it was opened).
    private let count: Int
    private let file: DlibFileSource?

    /// The offset of the next unread byte.
    public var offset: Int { windowStart + index }
    /// Whether every byte has been read.
    public var isAtEnd: Bool { offset == count }
    /// Bytes not read yet.
    var remaining: Int { count - offset }

    /// A reader positioned at `offset` (default: the start).
    public init(bytes: [UInt8], offset: Int = 0) {
        self.window = bytes
        self.index = offset
        self.count = bytes.count
        self.file = nil
    }

    /// A reader over the file at `path`, which must hold at most `maxBytes` bytes.
    init(contentsOfFile path: String, maxBytes: Int) throws(FaceModelError) {
        let source = try DlibFileSource(path: path)
        guard source.size <= maxBytes else {
            throw .malformed(offset: 0, reason: "model file of \(source.size) bytes exceeds \(maxBytes)")
        }
        self.window = []
        self.index = 0
        self.count = source.size
        self.file = source
    }

    /// Makes `needed` bytes from `index` available in `window`, reading more of the file when there is one.
    /// Returns false when the input has fewer.
    mutating func makeAvailable(_ needed: Int) throws(FaceModelError) -> Bool {
        guard needed >= 0, needed <= count - offset else { return false }
        if index + needed <= window.count { return true }
        guard let file else { return false }
        // Keep the unread tail, then fill up to a chunk (or what this read needs) from the file.
        let start = offset
        let length = min(count - start, max(DlibFileSource.chunk, needed))
        var next = [UInt8](repeating: 0, count: length)
        let kept = window.count - index
        if kept > 0 { next.replaceSubrange(0..<kept, with: window[index...]) }
        let failure = next.withUnsafeMutableBytes { buffer in
            file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[kept...]), at: start + kept)
        }
        if let failure { throw failure }
        window = next
        windowStart = start
        index = 0
        return true
    }

    private mutating func byte() throws(FaceModelError) -> UInt8 {
        guard try makeAvailable(1) else { throw .truncated(offset: offset) }
        defer { index += 1 }
        return window[index]
    }

    /// A dlib integer (any integer type).
    public mutating func readInt() throws(FaceModelError) -> Int {
        let start = offset
        let control = try byte()
        let length = Int(control & 0x0F)
        guard length >= 1, length <= 8, control & 0x70 == 0 else {
            throw .malformed(offset: start, reason: "integer control byte \(control)")
        }
        guard try makeAvailable(length) else { throw .truncated(offset: start) }
        var magnitude: UInt64 = 0
        for i in 0..<length { magnitude |= UInt64(window[index + i]) << (8 * UInt64(i)) }
        index += length
        guard magnitude <= UInt64(Int.max) else { throw .malformed(offset: start, reason: "integer out of range") }
        return control & 0x80 != 0 ? -Int(magnitude) : Int(magnitude)
    }

    /// A dlib integer that must be ≥ 0 (sizes, counts, versions).
    public mutating func readUInt() throws(FaceModelError) -> Int {
        let start = offset
        let value = try readInt()
        guard value >= 0 else { throw .malformed(offset: start, reason: "negative unsigned value") }
        return value
    }

    /// A bool: ASCII `'1'` or `'0'`.
    public mutating func readBool() throws(FaceModelError) -> Bool {
        let start = offset
        switch try byte() {
        case 0x31: return true
        case 0x30: return false
        case let other: throw .malformed(offset: start, reason: "bool byte \(other)")
        }
    }

    /// A length-prefixed ASCII string of at most `maxLength` bytes.
    public mutating func readString(maxLength: Int = 4096) throws(FaceModelError) -> String {
        let start = offset
        let length = try readUInt()
        guard length <= maxLength else { throw .malformed(offset: start, reason: "string of \(length) bytes") }
        let raw = try readBytes(length)
        guard raw.allSatisfy({ $0 < 0x80 }) else { throw .malformed(offset: start, reason: "non-ASCII string") }
        return String(decoding: raw, as: UTF8.self)
    }

    /// Reads a string and checks it is `expected`.
    public mutating func expectString(_ expected: String) throws(FaceModelError) {
        let start = offset
        let found = try readString()
        guard found == expected else { throw .unexpectedRecord(offset: start, expected: expected, found: found) }
    }

    /// A `float_details` value as a double (exact for these files).
    public mutating func readDouble() throws(FaceModelError) -> Double {
        let start = offset
        let mantissa = try readInt()
        let exponent = try readInt()
        switch exponent {
        case 32000: return .infinity
        case 32001: return -.infinity
        case 32002: return .nan
        case -2000...2000: return Double(sign: .plus, exponent: exponent, significand: Double(mantissa))
        default: throw .malformed(offset: start, reason: "float exponent \(exponent)")
        }
    }

    /// A `float_details` value as a float.
    public mutating func readFloat() throws(FaceModelError) -> Float { Float(try readDouble()) }

    /// The next `count` raw bytes.
    public mutating func readBytes(_ count: Int) throws(FaceModelError) -> ArraySlice<UInt8> {
        guard try makeAvailable(count) else { throw .truncated(offset: offset) }
        defer { index += count }
        return window[index..<(index + count)]
    }

    /// `count` raw little-endian float32 values (a tensor's data), read a window at a time.
    mutating func readRawFloats(_ count: Int) throws(FaceModelError) -> [Float] {
        guard count >= 0, count <= remaining / 4 else { throw .truncated(offset: offset) }
        var values = [Float]()
        values.reserveCapacity(count)
        while values.count < count {
            let step = min(count - values.count, max(1, (window.count - index) / 4))
            guard try makeAvailable(4 * step) else { throw .truncated(offset: offset) }
            window.withUnsafeBytes { raw in
                for i in 0..<step {
                    let bits = raw.loadUnaligned(fromByteOffset: index + 4 * i, as: UInt32.self)
                    values.append(Float(bitPattern: UInt32(littleEndian: bits)))
                }
            }
            index += 4 * step
        }
        return values
    }

    /// A `dlib::matrix<float>`: −rows, −cols, then rows·cols `float_details` in row-major order.
    /// `maxElements` bounds the allocation a corrupt header could ask for.
    public mutating func readFloatMatrix(maxElements: Int = 1 << 24) throws(FaceModelError) -> (rows: Int, cols: Int, values: [Float]) {
        let start = offset
        let rows = -(try readInt())
        let cols = -(try readInt())
        guard rows >= 0, cols >= 0, rows.multipliedReportingOverflow(by: cols).overflow == false,
              rows * cols <= maxElements else {
            throw .malformed(offset: start, reason: "matrix \(rows)×\(cols)")
        }
        var values = [Float]()
        values.reserveCapacity(rows * cols)
        try appendFloats(count: rows * cols, to: &values)
        return (rows, cols, values)
    }

    /// Throws unless every byte has been read.
    public func expectEnd() throws(FaceModelError) {
        guard isAtEnd else { throw .trailingBytes(offset: offset) }
    }
}

/// An open model file, read at given offsets (`pread`); closed when the last reader lets go of it.
final class DlibFileSource: Sendable {
    /// Bytes read from the file at a time: small, so that no large buffer is freed and reallocated per read.
    static let chunk = 1 << 20

    let size: Int
    private let descriptor: Int32
    private let path: String

    init(path: String) throws(FaceModelError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .unreadable(path: path) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_size >= 0 else {
            close(descriptor)
            throw .unreadable(path: path)
        }
        self.descriptor = descriptor
        self.size = Int(status.st_size)
        self.path = path
    }

    /// Fills `buffer` with the bytes at `offset`; the error when it cannot (a file that got shorter since it
    /// was opened is truncated).
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) -> FaceModelError? {
        var done = 0
        while done < buffer.count {
            let got = pread(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset + done))
            if got < 0 && errno == EINTR { continue }
            if got == 0 { return .truncated(offset: offset + done) }
            if got < 0 { return .unreadable(path: path) }
            done += got
        }
        return nil
    }

    deinit { close(descriptor) }
}
