/// HTTP header fields in arrival order, looked up case-insensitively (RFC 9110 §5.1).
///
/// Names keep the spelling they were given; lookups compare ASCII case-insensitively, so
/// `headers["content-type"]` finds `Content-Type`.
public struct HTTPHeaders: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    /// One header field.
    public struct Field: Sendable, Equatable {
        /// The field name as given.
        public var name: String
        /// The field value as given (no folding, no trimming beyond what the parser did).
        public var value: String

        /// A field as given.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The fields, in order.
    public private(set) var fields: [Field]

    /// An empty set of headers.
    public init() { fields = [] }

    /// Headers from `(name, value)` pairs, in order.
    public init(_ pairs: [(String, String)]) {
        fields = pairs.map { Field(name: $0.0, value: $0.1) }
    }

    /// Headers from fields already made, in order.
    package init(fields: [Field]) {
        self.fields = fields
    }

    /// `["Content-Type": "application/json"]`, in literal order.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    /// Number of fields.
    public var count: Int { fields.count }

    /// The first value of `name`; setting replaces every field of that name (nil removes them).
    public subscript(name: String) -> String? {
        get { fields.first { Self.namesEqual($0.name, name) }?.value }
        set {
            if let newValue {
                replaceOrAdd(name: name, value: newValue)
            } else {
                remove(name: name)
            }
        }
    }

    /// Every value of `name`, in order.
    public func values(for name: String) -> [String] {
        fields.filter { Self.namesEqual($0.name, name) }.map(\.value)
    }

    /// True if a field named `name` exists.
    public func contains(_ name: String) -> Bool {
        fields.contains { Self.namesEqual($0.name, name) }
    }

    /// Makes room for `count` fields in all (a server that knows how many it is about to add).
    package mutating func reserveCapacity(_ count: Int) {
        fields.reserveCapacity(count)
    }

    /// Appends a field, keeping any existing field of the same name.
    public mutating func add(name: String, value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Replaces the first field named `name` and removes the others, or appends one.
    public mutating func replaceOrAdd(name: String, value: String) {
        if let index = fields.firstIndex(where: { Self.namesEqual($0.name, name) }) {
            fields[index] = Field(name: name, value: value)
            var seen = false
            fields.removeAll { field in
                guard Self.namesEqual(field.name, name) else { return false }
                defer { seen = true }
                return seen
            }
        } else {
            add(name: name, value: value)
        }
    }

    /// Removes every field named `name`.
    public mutating func remove(name: String) {
        fields.removeAll { Self.namesEqual($0.name, name) }
    }

    /// Iterates the fields in order.
    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }

    /// `Retry-After` as delay-seconds (RFC 9110 §10.2.3), when it is one from 0 to 86,400; an HTTP date or anything
    /// else is nil (a client then does not wait on the server's word).
    public var retryAfterSeconds: Int? {
        guard let value = self["Retry-After"] else { return nil }
        let digits = value.utf8[...].trimmingHTTPWhitespace()
        guard (1...5).contains(digits.count), digits.allSatisfy({ (0x30...0x39).contains($0) }),
              let seconds = Int(String(decoding: digits, as: UTF8.self)), seconds <= 86_400 else { return nil }
        return seconds
    }

    /// Names and values, one per line. Callers that log headers must redact secrets themselves.
    public var description: String { fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n") }

    /// ASCII case-insensitive comparison without allocating lowercased copies, over the two names' contiguous UTF-8
    /// (iterating two `utf8` views in step checks both strings' forms at every byte; every lookup of a field compares).
    package static func namesEqual(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        var a = a, b = b
        return a.withUTF8 { x in
            b.withUTF8 { y in
                for index in 0..<x.count where x[index] != y[index] {
                    guard asciiLower(x[index]) == asciiLower(y[index]) else { return false }
                }
                return true
            }
        }
    }

    private static func asciiLower(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
    }
}

extension BidirectionalCollection where Element == UInt8, SubSequence == Self {
    /// The bytes without the spaces and horizontal tabs at either end (HTTP's optional whitespace, RFC 9110 §5.6.3),
    /// nothing else trimmed; a slice, no copy. Inlinable, so the client's and the server's callers get it specialised
    /// for their byte views rather than through the generic witnesses on every header.
    @inlinable package func trimmingHTTPWhitespace() -> Self {
        var bytes = self
        while let first = bytes.first, first == 0x20 || first == 0x09 { bytes = bytes.dropFirst() }
        while let last = bytes.last, last == 0x20 || last == 0x09 { bytes = bytes.dropLast() }
        return bytes
    }
}
