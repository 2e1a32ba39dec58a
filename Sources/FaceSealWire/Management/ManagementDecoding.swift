import FaceSealCrypto

// How management bodies are read: through `WireJSON.decode` like every wire message (one strict parse), with each
// member's type, size and range checked as it is decoded, so a body is refused before any of it is used.

/// A JSON Schema `integer` as a management body carries it (docs/openapi.yaml): an integer literal, or a number with a
/// zero fraction (`4.0`, `2e1`), which schema-driven clients send for `integer`. A fraction is the wrong type; an
/// integral number beyond 64 bits is kept as out of range, so the range check refuses it as a value.
public struct SchemaInteger: Codable, Sendable, Hashable {
    /// The number; nil when it is integral but does not fit `Int64`.
    private let number: Int64?

    /// Wraps `value`.
    public init(_ value: Int) { number = Int64(value) }

    public init(from decoder: any Decoder) throws {
        let single = try decoder.singleValueContainer()
        if let integer = try? single.decode(Int64.self) {
            number = integer
            return
        }
        let double = try single.decode(Double.self)
        guard double.isFinite, double.rounded(.towardZero) == double else {
            throw DecodingError.typeMismatch(Int64.self, DecodingError.Context(codingPath: decoder.codingPath, debugDescription: "not an integer"))
        }
        number = Int64(exactly: double)
    }

    public func encode(to encoder: any Encoder) throws {
        var single = encoder.singleValueContainer()
        if let number { try single.encode(number) } else { try single.encodeNil() }
    }

    /// The value if it lies within `range` (compared before any conversion).
    public func within(_ range: ClosedRange<Int>) -> Int? {
        guard let number, number >= Int64(range.lowerBound), number <= Int64(range.upperBound) else { return nil }
        return Int(number)
    }
}

/// A member a PATCH may clear: absent keeps the current value, `null` clears it, a value replaces it.
public enum FieldChange<Value: Sendable & Hashable>: Sendable, Hashable {
    /// Absent: unchanged.
    case keep
    /// `null`: cleared.
    case clear
    /// A new value.
    case set(Value)

    /// The change with a new value transformed (checked) by `transform`.
    public func map<T: Sendable & Hashable, E: Error>(_ transform: (Value) throws(E) -> T) throws(E) -> FieldChange<T> {
        switch self {
        case .keep: .keep
        case .clear: .clear
        case .set(let value): .set(try transform(value))
        }
    }

    /// The value after the change, given the current one.
    public func applied(to current: Value?) -> Value? {
        switch self {
        case .keep: current
        case .clear: nil
        case .set(let value): value
        }
    }
}

/// Any member name: for objects whose members are data (a list's name, free-form JSON, members to refuse).
struct MemberKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// Refuses a member of the object at `decoder` that `Keys` does not name. `WireJSON.decode` closes the top level;
/// nested objects close themselves with this.
func refuseUnknownMembers<Keys: CodingKey & CaseIterable>(_ decoder: any Decoder, _ keys: Keys.Type) throws {
    let known = Set(Keys.allCases.map(\.stringValue))
    let members = try decoder.container(keyedBy: MemberKey.self).allKeys.map(\.stringValue)
    if let unknown = members.sorted().first(where: { !known.contains($0) }) {
        throw WireError.unknownField((decoder.codingPath.map(\.stringValue) + [unknown]).joined(separator: "."))
    }
}

extension KeyedDecodingContainer {
    /// The dotted path of `key` (`policy.attempts_max`), as errors name it.
    func path(_ key: Key) -> String { (codingPath.map(\.stringValue) + [key.stringValue]).joined(separator: ".") }

    private func wrongType<T>(_ type: T.Type, _ key: Key) -> DecodingError {
        DecodingError.typeMismatch(type, DecodingError.Context(codingPath: codingPath + [key], debugDescription: "null"))
    }

    /// A member that may be absent; when present it must not be `null`.
    func member<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T? {
        guard contains(key) else { return nil }
        if try decodeNil(forKey: key) { throw wrongType(type, key) }
        return try decode(type, forKey: key)
    }

    /// A string member of at most `maxBytes` bytes of UTF-8; `null` is refused unless `nullable` (then it is absent).
    func string(_ key: Key, maxBytes: Int, nullable: Bool = false) throws -> String? {
        let text = try nullable ? decodeIfPresent(String.self, forKey: key) : member(String.self, key)
        if let text, text.utf8.count > maxBytes { throw WireError.invalidValue(field: path(key), reason: "longer than \(maxBytes) bytes") }
        return text
    }

    /// A string member that must be present.
    func requiredString(_ key: Key, maxBytes: Int) throws -> String {
        guard contains(key) else {
            throw DecodingError.keyNotFound(key, DecodingError.Context(codingPath: codingPath, debugDescription: "missing"))
        }
        return try string(key, maxBytes: maxBytes) ?? ""
    }

    /// A string member PATCH may clear with `null`.
    func stringChange(_ key: Key, maxBytes: Int) throws -> FieldChange<String> {
        guard contains(key) else { return .keep }
        guard let text = try string(key, maxBytes: maxBytes, nullable: true) else { return .clear }
        return .set(text)
    }

    /// An array of at most `maxCount` strings of at most `maxBytes` bytes each.
    func strings(_ key: Key, maxCount: Int, maxBytes: Int) throws -> [String]? {
        guard let texts = try member([String].self, key) else { return nil }
        guard texts.count <= maxCount else { throw WireError.invalidValue(field: path(key), reason: "more than \(maxCount) entries") }
        guard texts.allSatisfy({ $0.utf8.count <= maxBytes }) else {
            throw WireError.invalidValue(field: path(key), reason: "an entry is longer than \(maxBytes) bytes")
        }
        return texts
    }

    /// A JSON Schema integer within `range`.
    func integer(_ key: Key, in range: ClosedRange<Int>) throws -> Int? {
        guard let number = try member(SchemaInteger.self, key) else { return nil }
        guard let value = number.within(range) else {
            throw WireError.invalidValue(field: path(key), reason: "must be within \(range.lowerBound)…\(range.upperBound)")
        }
        return value
    }

    /// A number (integer or fraction) within `range`.
    func number(_ key: Key, in range: ClosedRange<Double>) throws -> Double? {
        guard let number = try member(Double.self, key) else { return nil }
        guard range.contains(number) else {
            throw WireError.invalidValue(field: path(key), reason: "must be within \(range.lowerBound)…\(range.upperBound)")
        }
        return number
    }

    /// One of an enumeration's raw values, refused as a value (naming the allowed ones) otherwise.
    func oneOf<T: RawRepresentable & CaseIterable>(_ type: T.Type, _ key: Key) throws -> T? where T.RawValue == String {
        guard let text = try string(key, maxBytes: 64) else { return nil }
        guard let value = T(rawValue: text) else {
            let names = T.allCases.map(\.rawValue)
            let list = names.count > 1 ? names.dropLast().joined(separator: ", ") + " or " + names[names.count - 1] : names.joined()
            throw WireError.invalidValue(field: path(key), reason: "must be \(list)")
        }
        return value
    }
}

extension KeyedEncodingContainer {
    /// Encodes a change: nothing for `keep`, `null` for `clear`.
    mutating func encode<Value: Encodable>(_ change: FieldChange<Value>, forKey key: Key) throws {
        switch change {
        case .keep: break
        case .clear: try encodeNil(forKey: key)
        case .set(let value): try encode(value, forKey: key)
        }
    }
}

extension WireMessage {
    /// The member names the message carries (its canonical encoding's), sorted: what a PATCH changed.
    public var memberNames: [String] {
        guard case .object(let members)? = try? JSONValue.parse(encoded()) else { return [] }
        return members.keys.sorted()
    }
}
