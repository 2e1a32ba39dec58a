import Foundation

/// FaceSeal's canonical JSON writer: an `Encoder` that writes straight into one byte buffer the exact bytes Foundation's
/// `JSONEncoder` with `[.sortedKeys, .withoutEscapingSlashes]` gives (swift-foundation's `JSONWriter`): object members
/// sorted by the bytes of their UTF-8 keys, no whitespace, strings escaped as `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`
/// and `\u00xx` (lowercase) for the other control characters, everything else (`/`, DEL, non-ASCII) as is, integers
/// in decimal, floating-point numbers as their `description` without a trailing `.0`, and `{}` for a value that
/// encodes nothing.
///
/// It does without `JSONEncoder`'s tree of boxed values: members are written in the order they come, and an object's
/// members are reordered in the buffer when it closes. Whatever it does not reproduce with certainty — `Data`, `URL`,
/// `Decimal` (which `JSONEncoder` special-cases), a non-finite number, a key written twice, `superEncoder`, a
/// container used after its value ended or out of order — makes ``encode(_:)`` answer nil, and the caller encodes
/// with `JSONEncoder` instead (`WireJSON.encode`). `codingPath` is always empty: no type of the package reads it while
/// encoding.
enum CanonicalJSONEncoder {
    /// The canonical encoding of `value`, or nil when only `JSONEncoder` can say what it is (see above); nil too when
    /// `value` throws or encodes nothing at the top level, where `JSONEncoder` throws.
    static func encode<T: Encodable>(_ value: T) -> [UInt8]? {
        let sink = JSONSink()
        guard let wrote = try? sink.encodeValue(value), wrote, !sink.failed else { return nil }
        return sink.out
    }
}

/// Thrown (and recorded in ``JSONSink/failed``) when the value needs something only `JSONEncoder` reproduces.
private struct NeedsFoundationEncoder: Error {}

/// The buffer and the stack of open containers of one encoding.
private final class JSONSink {
    /// An open object or array.
    struct Frame {
        let id: Int
        let isObject: Bool
        /// Offset of its `{` or `[`.
        let start: Int
        var count = 0
        /// Index of its first member in ``JSONSink/members`` (objects).
        let membersBase: Int
    }

    /// A value being encoded by a `encode(to:)` call, and what it has written so far.
    struct Position {
        enum State { case fresh, container(frameID: Int, isObject: Bool), done }
        let token: Int
        /// The depth of the frame stack when the value began: its containers are the frames above.
        let depth: Int
        var state = State.fresh
    }

    /// A member of an open object: where `"key":value` starts, where its key's bytes are in ``out`` (between the
    /// quotes), their first eight bytes as a big-endian number (most keys differ there), and, for a key that needed
    /// escapes (its bytes in ``out`` are then not its UTF-8), its index in ``escapedKeys``.
    struct Member {
        let start: Int
        let keyStart: Int
        let keyCount: Int
        let prefix: UInt64
        let escapedKey: Int
    }

    // One encoding runs on one thread and no access to these outlives the statement that makes it, so the run-time
    // exclusivity checks (a quarter of the encoder's time) are left out.
    @exclusivity(unchecked) var out: [UInt8] = []
    @exclusivity(unchecked) var frames: [Frame] = []
    /// The members of the open objects, each frame's contiguous from its `membersBase`.
    @exclusivity(unchecked) var members: [Member] = []
    @exclusivity(unchecked) var escapedKeys: [String] = []
    @exclusivity(unchecked) var positions: [Position] = []
    @exclusivity(unchecked) var serial = 0
    @exclusivity(unchecked) var failed = false

    init() { out.reserveCapacity(512) }

    func fail() -> NeedsFoundationEncoder {
        failed = true
        return NeedsFoundationEncoder()
    }

    // MARK: Values

    /// Encodes `value` at the current place in the buffer (the top level, a member's value, an array element); a value
    /// that writes nothing is `{}`, as in JSONEncoder. Returns whether the value wrote anything itself.
    @discardableResult
    func encodeValue<T: Encodable>(_ value: T) throws -> Bool {
        // JSONEncoder writes these types its own way, not through their Encodable conformance.
        if T.self == Data.self || T.self == URL.self || T.self == Decimal.self { throw fail() }
        if T.self == String.self {
            writeString(value as! String)
            return true
        }
        serial += 1
        let token = serial
        positions.append(Position(token: token, depth: frames.count))
        try value.encode(to: SinkEncoder(sink: self, token: token))
        guard let position = positions.popLast(), position.token == token else { throw fail() }
        try close(downTo: position.depth)
        if case .fresh = position.state {
            out += [UInt8(ascii: "{"), UInt8(ascii: "}")]
            return false
        }
        return true
    }

    /// The current value, if `token` names it.
    func position(_ token: Int) throws -> Position {
        guard let position = positions.last, position.token == token else { throw fail() }
        return position
    }

    /// A single value written directly by the current value (`token`).
    func singleValue(_ token: Int, write: () throws -> Void) throws {
        let current = try position(token)
        guard case .fresh = current.state, frames.count == current.depth else { throw fail() }
        try write()
        positions[positions.count - 1].state = .done
    }

    /// A generic value encoded through a single-value container: JSONEncoder encodes it with the same encoder.
    func singleGeneric<T: Encodable>(_ token: Int, _ value: T) throws {
        let current = try position(token)
        guard case .fresh = current.state, frames.count == current.depth else { throw fail() }
        if T.self == Data.self || T.self == URL.self || T.self == Decimal.self { throw fail() }
        if T.self == String.self {
            writeString(value as! String)
        } else {
            try value.encode(to: SinkEncoder(sink: self, token: token))
            try close(downTo: current.depth)
            if case .fresh = positions[positions.count - 1].state { out += [UInt8(ascii: "{"), UInt8(ascii: "}")] }
        }
        positions[positions.count - 1].state = .done
    }

    /// The container the current value (`token`) asks for: opened on first request, the same one after.
    func container(_ token: Int, isObject: Bool) -> (index: Int, id: Int) {
        guard let current = try? position(token) else { return (-1, -1) }
        switch current.state {
        case .fresh:
            guard frames.count == current.depth else { failed = true; return (-1, -1) }
            let frame = open(isObject: isObject)
            positions[positions.count - 1].state = .container(frameID: frame.id, isObject: isObject)
            return frame
        case .container(let id, let object):
            guard object == isObject, frames.count > current.depth, frames[current.depth].id == id else {
                failed = true
                return (-1, -1)
            }
            return (current.depth, id)
        case .done:
            failed = true
            return (-1, -1)
        }
    }

    // MARK: Containers

    /// Opens an object or array at the current place.
    func open(isObject: Bool) -> (index: Int, id: Int) {
        serial += 1
        out.append(isObject ? UInt8(ascii: "{") : UInt8(ascii: "["))
        frames.append(Frame(id: serial, isObject: isObject, start: out.count - 1, membersBase: members.count))
        return (frames.count - 1, serial)
    }

    /// Makes frame `index` (identified by `id`) the innermost open one, closing any opened inside it since (a nested
    /// container is done once its parent writes again); fails if it was closed already or belongs to a finished value.
    func activate(_ index: Int, _ id: Int) throws {
        guard index >= 0, index < frames.count, frames[index].id == id,
              index >= (positions.last?.depth ?? 0) else { throw fail() }
        try close(downTo: index + 1)
    }

    /// Writes the separator and, in an object, the key of the next element of the innermost frame.
    func beginElement(key: String?) {
        let index = frames.count - 1
        if frames[index].count > 0 { out.append(UInt8(ascii: ",")) }
        frames[index].count += 1
        if let key {
            let start = out.count
            var escapedKey = -1
            if writeString(key) {
                escapedKey = escapedKeys.count
                escapedKeys.append(key)
            }
            var prefix: UInt64 = 0
            for offset in 0..<8 {
                prefix <<= 8
                if start + 1 + offset < out.count - 1 { prefix |= UInt64(out[start + 1 + offset]) }
            }
            members.append(Member(start: start, keyStart: start + 1, keyCount: out.count - start - 2, prefix: prefix,
                                  escapedKey: escapedKey))
            out.append(UInt8(ascii: ":"))
        }
    }

    /// Closes open frames until `depth` remain.
    func close(downTo depth: Int) throws {
        while frames.count > depth {
            let frame = frames.removeLast()
            if frame.isObject {
                try sortMembers(of: frame)
                if let firstEscaped = members[frame.membersBase...].first(where: { $0.escapedKey >= 0 })?.escapedKey {
                    escapedKeys.removeLast(escapedKeys.count - firstEscaped)
                }
                members.removeLast(members.count - frame.membersBase)
                out.append(UInt8(ascii: "}"))
            } else {
                out.append(UInt8(ascii: "]"))
            }
        }
    }

    /// Rewrites the members of `frame` (which end at the end of the buffer) in the order of their keys' UTF-8 bytes.
    private func sortMembers(of frame: Frame) throws {
        let range = frame.membersBase..<members.count
        guard range.count > 1 else { return }
        var inOrder = true
        for i in range.dropFirst() {
            let order = compare(members[i - 1], members[i])
            if order == 0 { throw fail() }  // JSONEncoder keeps one value per key
            if order > 0 { inOrder = false }
        }
        if inOrder { return }
        var order = Array(range)
        order.sort { compare(members[$0], members[$1]) < 0 }
        for i in order.indices.dropFirst() where compare(members[order[i - 1]], members[order[i]]) == 0 { throw fail() }
        let first = members[range.lowerBound].start
        let region = Array(out[first...])
        var cursor = first
        for (n, index) in order.enumerated() {
            if n > 0 {
                out[cursor] = UInt8(ascii: ",")
                cursor += 1
            }
            // The member runs to the comma before the next one, or to the end of the buffer.
            let end = index + 1 < members.count ? members[index + 1].start - 1 : out.count
            let start = members[index].start
            out.replaceSubrange(cursor..<cursor + end - start, with: region[(start - first)..<(end - first)])
            cursor += end - start
        }
    }

    /// The order of two members' keys by their UTF-8 bytes (negative, zero, positive).
    private func compare(_ a: Member, _ b: Member) -> Int {
        if a.escapedKey >= 0 || b.escapedKey >= 0 {
            let x = a.escapedKey >= 0 ? Array(escapedKeys[a.escapedKey].utf8) : Array(out[a.keyStart..<a.keyStart + a.keyCount])
            let y = b.escapedKey >= 0 ? Array(escapedKeys[b.escapedKey].utf8) : Array(out[b.keyStart..<b.keyStart + b.keyCount])
            return x.lexicographicallyPrecedes(y) ? -1 : (x == y ? 0 : 1)
        }
        if a.prefix != b.prefix { return a.prefix < b.prefix ? -1 : 1 }
        return out.withUnsafeBufferPointer { bytes in
            let common = min(a.keyCount, b.keyCount)
            if common > 8 {
                let order = memcmp(bytes.baseAddress! + a.keyStart + 8, bytes.baseAddress! + b.keyStart + 8, common - 8)
                if order != 0 { return Int(order) }
            }
            return a.keyCount - b.keyCount
        }
    }

    // MARK: Scalars

    /// Writes `string` quoted and escaped; returns whether anything needed an escape.
    @discardableResult
    func writeString(_ string: String) -> Bool {
        var string = string
        var escaped = false
        out.append(UInt8(ascii: "\""))
        string.withUTF8 { bytes in
            var mark = 0
            for (index, byte) in bytes.enumerated() where byte < 0x20 || byte == 0x22 || byte == 0x5C {
                escaped = true
                out.append(contentsOf: bytes[mark..<index])
                mark = index + 1
                out.append(UInt8(ascii: "\\"))
                switch byte {
                case 0x22: out.append(UInt8(ascii: "\""))
                case 0x5C: out.append(UInt8(ascii: "\\"))
                case 0x08: out.append(UInt8(ascii: "b"))
                case 0x0C: out.append(UInt8(ascii: "f"))
                case 0x0A: out.append(UInt8(ascii: "n"))
                case 0x0D: out.append(UInt8(ascii: "r"))
                case 0x09: out.append(UInt8(ascii: "t"))
                default:
                    let hex = Array("0123456789abcdef".utf8)
                    out += [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
                }
            }
            out.append(contentsOf: bytes[mark...])
        }
        out.append(UInt8(ascii: "\""))
        return escaped
    }

    func writeInteger<I: FixedWidthInteger>(_ value: I) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = UInt64(value.magnitude)
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: room for the 20 digits of UInt64.max
        withUnsafeMutableBytes(of: &digits) { buffer in
            var start = buffer.count
            repeat {
                start -= 1
                buffer[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            out.append(contentsOf: buffer[start...])
        }
    }

    func writeFloat<F: BinaryFloatingPoint & CustomStringConvertible>(_ value: F) throws {
        guard value.isFinite else { throw fail() }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        out += text.utf8
    }

    func writeBool(_ value: Bool) { out += (value ? "true" : "false").utf8 }

    func writeNull() { out += "null".utf8 }
}

// MARK: - The Encoder and its containers

private struct SinkEncoder: Encoder {
    let sink: JSONSink
    let token: Int
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let frame = sink.container(token, isObject: true)
        return KeyedEncodingContainer(KeyedSink<Key>(sink: sink, index: frame.index, id: frame.id))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let frame = sink.container(token, isObject: false)
        return UnkeyedSink(sink: sink, index: frame.index, id: frame.id)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { SingleSink(sink: sink, token: token) }
}

private struct KeyedSink<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let sink: JSONSink
    let index: Int
    let id: Int
    var codingPath: [any CodingKey] { [] }

    private func member(_ key: Key) throws {
        try sink.activate(index, id)
        sink.beginElement(key: key.stringValue)
    }

    mutating func encodeNil(forKey key: Key) throws { try member(key); sink.writeNull() }
    mutating func encode(_ value: Bool, forKey key: Key) throws { try member(key); sink.writeBool(value) }
    mutating func encode(_ value: String, forKey key: Key) throws { try member(key); sink.writeString(value) }
    mutating func encode(_ value: Double, forKey key: Key) throws { try member(key); try sink.writeFloat(value) }
    mutating func encode(_ value: Float, forKey key: Key) throws { try member(key); try sink.writeFloat(value) }
    mutating func encode(_ value: Int, forKey key: Key) throws { try member(key); sink.writeInteger(value) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try member(key); sink.writeInteger(value) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try member(key); sink.writeInteger(value) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try member(key); sink.writeInteger(value) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try member(key); sink.writeInteger(value) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try member(key); sink.writeInteger(value) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try member(key); sink.writeInteger(value) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try member(key); sink.writeInteger(value) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try member(key); sink.writeInteger(value) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try member(key); sink.writeInteger(value) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { try member(key); try sink.encodeValue(value) }
    // The optional forms directly (the library's defaults take a generic detour): absent members are left out.
    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { if let value { try encode(value, forKey: key) } }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { if let value { try encode(value, forKey: key) } }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { if let value { try encode(value, forKey: key) } }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { if let value { try encode(value, forKey: key) } }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { if let value { try encode(value, forKey: key) } }
    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey> {
        guard (try? member(key)) != nil else { return KeyedEncodingContainer(KeyedSink<NestedKey>(sink: sink, index: -1, id: -1)) }
        let frame = sink.open(isObject: true)
        return KeyedEncodingContainer(KeyedSink<NestedKey>(sink: sink, index: frame.index, id: frame.id))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        guard (try? member(key)) != nil else { return UnkeyedSink(sink: sink, index: -1, id: -1) }
        let frame = sink.open(isObject: false)
        return UnkeyedSink(sink: sink, index: frame.index, id: frame.id)
    }

    mutating func superEncoder() -> any Encoder {
        sink.failed = true
        return SinkEncoder(sink: sink, token: -1)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        sink.failed = true
        return SinkEncoder(sink: sink, token: -1)
    }
}

private struct UnkeyedSink: UnkeyedEncodingContainer {
    let sink: JSONSink
    let index: Int
    let id: Int
    var codingPath: [any CodingKey] { [] }
    var count: Int { index >= 0 && index < sink.frames.count && sink.frames[index].id == id ? sink.frames[index].count : 0 }

    private func element() throws {
        try sink.activate(index, id)
        sink.beginElement(key: nil)
    }

    mutating func encodeNil() throws { try element(); sink.writeNull() }
    mutating func encode(_ value: Bool) throws { try element(); sink.writeBool(value) }
    mutating func encode(_ value: String) throws { try element(); sink.writeString(value) }
    mutating func encode(_ value: Double) throws { try element(); try sink.writeFloat(value) }
    mutating func encode(_ value: Float) throws { try element(); try sink.writeFloat(value) }
    mutating func encode(_ value: Int) throws { try element(); sink.writeInteger(value) }
    mutating func encode(_ value: Int8) throws { try element(); sink.writeInteger(value) }
    mutating func encode(_ value: Int16) throws { try element(); sink.writeInteger(value) }
    mutating func encode(_ value: Int32) throws { try element(); sink.writeInteger(value) }
    mutating func encode(_ value: Int64) throws { try element(); sink.writeInteger(value) }
    mutating func encode(_ value: UInt) throws { try element(); sink.writeInteger(value) }
    mutating func encode(_ value: UInt8) throws { try element(); sink.writeInteger(value) }
    mutating func encode(_ value: UInt16) throws { try element(); sink.writeInteger(value) }
    mutating func encode(_ value: UInt32) throws { try element(); sink.writeInteger(value) }
    mutating func encode(_ value: UInt64) throws { try element(); sink.writeInteger(value) }
    mutating func encode<T: Encodable>(_ value: T) throws { try element(); try sink.encodeValue(value) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        guard (try? element()) != nil else { return KeyedEncodingContainer(KeyedSink<NestedKey>(sink: sink, index: -1, id: -1)) }
        let frame = sink.open(isObject: true)
        return KeyedEncodingContainer(KeyedSink<NestedKey>(sink: sink, index: frame.index, id: frame.id))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        guard (try? element()) != nil else { return UnkeyedSink(sink: sink, index: -1, id: -1) }
        let frame = sink.open(isObject: false)
        return UnkeyedSink(sink: sink, index: frame.index, id: frame.id)
    }

    mutating func superEncoder() -> any Encoder {
        sink.failed = true
        return SinkEncoder(sink: sink, token: -1)
    }
}

private struct SingleSink: SingleValueEncodingContainer {
    let sink: JSONSink
    let token: Int
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil() throws { try sink.singleValue(token) { sink.writeNull() } }
    mutating func encode(_ value: Bool) throws { try sink.singleValue(token) { sink.writeBool(value) } }
    mutating func encode(_ value: String) throws { try sink.singleValue(token) { sink.writeString(value) } }
    mutating func encode(_ value: Double) throws { try sink.singleValue(token) { try sink.writeFloat(value) } }
    mutating func encode(_ value: Float) throws { try sink.singleValue(token) { try sink.writeFloat(value) } }
    mutating func encode(_ value: Int) throws { try sink.singleValue(token) { sink.writeInteger(value) } }
    mutating func encode(_ value: Int8) throws { try sink.singleValue(token) { sink.writeInteger(value) } }
    mutating func encode(_ value: Int16) throws { try sink.singleValue(token) { sink.writeInteger(value) } }
    mutating func encode(_ value: Int32) throws { try sink.singleValue(token) { sink.writeInteger(value) } }
    mutating func encode(_ value: Int64) throws { try sink.singleValue(token) { sink.writeInteger(value) } }
    mutating func encode(_ value: UInt) throws { try sink.singleValue(token) { sink.writeInteger(value) } }
    mutating func encode(_ value: UInt8) throws { try sink.singleValue(token) { sink.writeInteger(value) } }
    mutating func encode(_ value: UInt16) throws { try sink.singleValue(token) { sink.writeInteger(value) } }
    mutating func encode(_ value: UInt32) throws { try sink.singleValue(token) { sink.writeInteger(value) } }
    mutating func encode(_ value: UInt64) throws { try sink.singleValue(token) { sink.writeInteger(value) } }
    mutating func encode<T: Encodable>(_ value: T) throws { try sink.singleGeneric(token, value) }
}
