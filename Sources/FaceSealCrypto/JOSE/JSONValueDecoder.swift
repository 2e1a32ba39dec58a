/// Decodes `Decodable` values from a ``JSONValue`` tree, so a message is parsed once, by the strict parser (duplicate
/// member names, invalid UTF-8 and over-deep nesting refused), and then read through `Codable`.
///
/// Stricter than `JSONDecoder` where that matters for messages between processes: an integer type takes only an
/// integer literal that fits it (no `1.0`, no `1e2`, no rounding), a `Bool` only `true`/`false`, a `String` only a
/// string. Failures are the usual `DecodingError`s with their coding paths.
public struct JSONValueDecoder: Sendable {
    /// A decoder.
    public init() {}

    /// Decodes `type` from `value`.
    public func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        try T(from: TreeDecoder(value: value, path: LazyPath(parent: [], last: nil)))
    }
}

/// A coding path assembled only when asked for (an error, a nested container): a scalar member costs no array.
private struct LazyPath {
    let parent: [any CodingKey]
    let last: (any CodingKey)?
    var keys: [any CodingKey] { last.map { parent + [$0] } ?? parent }
}

/// One position in the tree.
private struct TreeDecoder: Decoder {
    let value: JSONValue
    let path: LazyPath
    var codingPath: [any CodingKey] { path.keys }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = value else { throw mismatch([String: JSONValue].self, value, codingPath) }
        return KeyedDecodingContainer(KeyedTree<Key>(members: members, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = value else { throw mismatch([JSONValue].self, value, codingPath) }
        return UnkeyedTree(elements: elements, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleTree(value: value, path: path) }
}

/// The index key of an array element.
private struct IndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { String(intValue ?? 0) }
    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.intValue = intValue }
}

private func mismatch(_ type: Any.Type, _ value: JSONValue, _ path: [any CodingKey]) -> DecodingError {
    let found: String = switch value {
    case .null: "null"
    case .bool: "a boolean"
    case .integer, .double: "a number"
    case .string: "a string"
    case .array: "an array"
    case .object: "an object"
    }
    return DecodingError.typeMismatch(type, DecodingError.Context(codingPath: path, debugDescription: "expected \(type), found \(found)"))
}

/// Reads scalars from one value: the rules shared by every container. The path is assembled only for an error.
private enum Scalar {
    static func bool(_ value: JSONValue, _ path: LazyPath) throws -> Bool {
        guard case .bool(let bool) = value else { throw mismatch(Bool.self, value, path.keys) }
        return bool
    }

    static func string(_ value: JSONValue, _ path: LazyPath) throws -> String {
        guard case .string(let string) = value else { throw mismatch(String.self, value, path.keys) }
        return string
    }

    static func double(_ value: JSONValue, _ path: LazyPath) throws -> Double {
        switch value {
        case .integer(let integer): return Double(integer)
        case .double(let double): return double
        default: throw mismatch(Double.self, value, path.keys)
        }
    }

    static func float(_ value: JSONValue, _ path: LazyPath) throws -> Float {
        let double = try double(value, path)
        let float = Float(double)
        guard float.isFinite || !double.isFinite else {
            throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: path.keys, debugDescription: "\(double) does not fit Float"))
        }
        return float
    }

    static func integer<T: FixedWidthInteger>(_ type: T.Type, _ value: JSONValue, _ path: LazyPath) throws -> T {
        guard case .integer(let integer) = value else { throw mismatch(T.self, value, path.keys) }
        guard let exact = T(exactly: integer) else {
            throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: path.keys, debugDescription: "\(integer) does not fit \(T.self)"))
        }
        return exact
    }

    static func decode<T: Decodable>(_ type: T.Type, _ value: JSONValue, _ path: LazyPath) throws -> T {
        guard value != .null else {
            throw DecodingError.valueNotFound(T.self, DecodingError.Context(codingPath: path.keys, debugDescription: "null"))
        }
        // The scalar types read directly (compared by metatype, no cast search); everything else (arrays, objects,
        // wrappers) through its own init(from:).
        if T.self == String.self { return try string(value, path) as! T }
        if T.self == Int.self { return try integer(Int.self, value, path) as! T }
        if T.self == Int64.self { return try integer(Int64.self, value, path) as! T }
        if T.self == Bool.self { return try bool(value, path) as! T }
        if T.self == Double.self { return try double(value, path) as! T }
        if T.self == Float.self { return try float(value, path) as! T }
        if T.self == Int8.self { return try integer(Int8.self, value, path) as! T }
        if T.self == Int16.self { return try integer(Int16.self, value, path) as! T }
        if T.self == Int32.self { return try integer(Int32.self, value, path) as! T }
        if T.self == UInt.self { return try integer(UInt.self, value, path) as! T }
        if T.self == UInt8.self { return try integer(UInt8.self, value, path) as! T }
        if T.self == UInt16.self { return try integer(UInt16.self, value, path) as! T }
        if T.self == UInt32.self { return try integer(UInt32.self, value, path) as! T }
        if T.self == UInt64.self { return try integer(UInt64.self, value, path) as! T }
        return try T(from: TreeDecoder(value: value, path: path))
    }
}

private struct KeyedTree<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let members: [String: JSONValue]
    let codingPath: [any CodingKey]

    var allKeys: [Key] { members.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { members[key.stringValue] != nil }

    private func value(_ key: Key) throws -> JSONValue {
        guard let value = members[key.stringValue] else {
            throw DecodingError.keyNotFound(key, DecodingError.Context(codingPath: codingPath, debugDescription: "no member \(key.stringValue)"))
        }
        return value
    }

    func decodeNil(forKey key: Key) throws -> Bool { try value(key) == .null }

    // The protocol asks for each scalar type by name; all go through `typed`.
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try typed(type, forKey: key) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try typed(type, forKey: key) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try typed(type, forKey: key) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try typed(type, forKey: key) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try typed(type, forKey: key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try typed(type, forKey: key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try typed(type, forKey: key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try typed(type, forKey: key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try typed(type, forKey: key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try typed(type, forKey: key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try typed(type, forKey: key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try typed(type, forKey: key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try typed(type, forKey: key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try typed(type, forKey: key) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try typed(type, forKey: key) }

    private func typed<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try Scalar.decode(T.self, value(key), LazyPath(parent: codingPath, last: key))
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try TreeDecoder(value: value(key), path: LazyPath(parent: codingPath, last: key)).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try TreeDecoder(value: value(key), path: LazyPath(parent: codingPath, last: key)).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        TreeDecoder(value: members["super"] ?? .null, path: LazyPath(parent: codingPath, last: nil))
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        TreeDecoder(value: members[key.stringValue] ?? .null, path: LazyPath(parent: codingPath, last: key))
    }
}

private struct UnkeyedTree: UnkeyedDecodingContainer {
    let elements: [JSONValue]
    let codingPath: [any CodingKey]
    var currentIndex = 0

    init(elements: [JSONValue], codingPath: [any CodingKey]) {
        self.elements = elements
        self.codingPath = codingPath
    }

    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    private var path: LazyPath { LazyPath(parent: codingPath, last: IndexKey(currentIndex)) }

    private func current<T>(_ type: T.Type) throws -> JSONValue {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, DecodingError.Context(codingPath: path.keys, debugDescription: "the array has ended"))
        }
        return elements[currentIndex]
    }

    mutating func decodeNil() throws -> Bool {
        guard try current(JSONValue.self) == .null else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try typed(type) }
    mutating func decode(_ type: String.Type) throws -> String { try typed(type) }
    mutating func decode(_ type: Double.Type) throws -> Double { try typed(type) }
    mutating func decode(_ type: Float.Type) throws -> Float { try typed(type) }
    mutating func decode(_ type: Int.Type) throws -> Int { try typed(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try typed(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try typed(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try typed(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try typed(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try typed(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try typed(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try typed(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try typed(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try typed(type) }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try typed(type) }

    private mutating func typed<T: Decodable>(_ type: T.Type) throws -> T {
        let decoded = try Scalar.decode(T.self, current(type), path)
        currentIndex += 1
        return decoded
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let container = try TreeDecoder(value: current(JSONValue.self), path: path).container(keyedBy: type)
        currentIndex += 1
        return container
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let container = try TreeDecoder(value: current(JSONValue.self), path: path).unkeyedContainer()
        currentIndex += 1
        return container
    }

    mutating func superDecoder() throws -> any Decoder {
        let decoder = TreeDecoder(value: try current(JSONValue.self), path: path)
        currentIndex += 1
        return decoder
    }
}

private struct SingleTree: SingleValueDecodingContainer {
    let value: JSONValue
    let path: LazyPath
    var codingPath: [any CodingKey] { path.keys }

    func decodeNil() -> Bool { value == .null }

    func decode(_ type: Bool.Type) throws -> Bool { try typed(type) }
    func decode(_ type: String.Type) throws -> String { try typed(type) }
    func decode(_ type: Double.Type) throws -> Double { try typed(type) }
    func decode(_ type: Float.Type) throws -> Float { try typed(type) }
    func decode(_ type: Int.Type) throws -> Int { try typed(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try typed(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try typed(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try typed(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try typed(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try typed(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try typed(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try typed(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try typed(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try typed(type) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try typed(type) }

    private func typed<T: Decodable>(_ type: T.Type) throws -> T { try Scalar.decode(T.self, value, path) }
}
