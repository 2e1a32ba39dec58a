/// `application/x-www-form-urlencoded` name/value pairs, as used by form bodies and query strings.
///
/// Parsing follows the WHATWG URL standard's form parser (split on `&`, first `=` separates name
/// and value, `+` is a space, percent-decoding) but is strict where the standard is lenient:
/// malformed percent escapes, invalid UTF-8 and empty names are errors, not silently repaired.
public struct FormParameters: Sendable, Equatable, Sequence {
    /// Bounds applied while parsing, so a hostile body costs at most this much work.
    public struct Limits: Sendable, Equatable {
        /// Maximum encoded size in bytes.
        public var maxBytes: Int
        /// Maximum number of name/value pairs.
        public var maxParameters: Int

        /// Defaults: 64 KiB and 64 pairs, ample for OAuth/CIBA forms.
        public init(maxBytes: Int = 64 * 1024, maxParameters: Int = 64) {
            self.maxBytes = maxBytes
            self.maxParameters = maxParameters
        }
    }

    /// One decoded name/value pair.
    public struct Item: Sendable, Equatable {
        /// The decoded name.
        public var name: String
        /// The decoded value (empty when the pair had no `=`).
        public var value: String

        /// A pair built in code.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The pairs, in order.
    public let items: [Item]

    /// Pairs built in code (e.g. by a client composing a form body).
    public init(_ items: [Item]) { self.items = items }

    /// Parses encoded pairs.
    /// - Parameter allowDuplicates: false (the default, as OAuth 2.0 §3.1 requires for its
    ///   endpoints) turns a repeated name into `FormDecodingError.duplicateParameter`.
    public init(
        parsing encoded: some Collection<UInt8>,
        limits: Limits = Limits(),
        allowDuplicates: Bool = false
    ) throws(FormDecodingError) {
        guard encoded.count <= limits.maxBytes else { throw .tooLarge(limit: limits.maxBytes) }
        var items: [Item] = []
        var seen = Set<String>()
        for piece in encoded.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            guard items.count < limits.maxParameters else { throw .tooManyParameters(limit: limits.maxParameters) }
            let equals = piece.firstIndex(of: UInt8(ascii: "="))
            let rawName = piece[piece.startIndex..<(equals ?? piece.endIndex)]
            let rawValue = equals.map { piece[piece.index(after: $0)...] } ?? piece[piece.endIndex...]
            let name = try Self.decode(rawName)
            guard !name.isEmpty else { throw .emptyName }
            let value = try Self.decode(rawValue)
            if !allowDuplicates {
                guard seen.insert(name).inserted else { throw .duplicateParameter(name) }
            }
            items.append(Item(name: name, value: value))
        }
        self.items = items
    }

    /// Number of pairs.
    public var count: Int { items.count }

    /// The first value of `name`.
    public subscript(name: String) -> String? { items.first { $0.name == name }?.value }

    /// Every value of `name`, in order.
    public func values(for name: String) -> [String] { items.filter { $0.name == name }.map(\.value) }

    /// The value of a parameter that must be present exactly once.
    public func required(_ name: String) throws(FormDecodingError) -> String {
        let values = values(for: name)
        guard let value = values.first else { throw .missingParameter(name) }
        guard values.count == 1 else { throw .duplicateParameter(name) }
        return value
    }

    /// The value of a parameter that may be absent but never repeated.
    public func optional(_ name: String) throws(FormDecodingError) -> String? {
        let values = values(for: name)
        guard values.count <= 1 else { throw .duplicateParameter(name) }
        return values.first
    }

    /// Iterates the pairs in order.
    public func makeIterator() -> IndexingIterator<[Item]> { items.makeIterator() }

    /// The encoded form (`a=1&b=x+y`), escaping everything outside the WHATWG form's safe set.
    public var encoded: String {
        items.map { Self.encode($0.name) + "=" + Self.encode($0.value) }.joined(separator: "&")
    }

    package static func decode(_ raw: some Collection<UInt8>) throws(FormDecodingError) -> String {
        // Most names and values have nothing to decode: no intermediate copy then.
        if !raw.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) {
            guard let string = String(validating: raw, as: UTF8.self) else { throw .invalidUTF8 }
            return string
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(raw.count)
        var index = raw.startIndex
        while index != raw.endIndex {
            let byte = raw[index]
            switch byte {
            case UInt8(ascii: "+"):
                bytes.append(UInt8(ascii: " "))
                index = raw.index(after: index)
            case UInt8(ascii: "%"):
                let high = raw.index(after: index)
                guard high != raw.endIndex else { throw .invalidPercentEncoding }
                let low = raw.index(after: high)
                guard low != raw.endIndex, let h = hexValue(raw[high]), let l = hexValue(raw[low]) else {
                    throw .invalidPercentEncoding
                }
                bytes.append(h << 4 | l)
                index = raw.index(after: low)
            default:
                bytes.append(byte)
                index = raw.index(after: index)
            }
        }
        guard let string = String(validating: bytes, as: UTF8.self) else { throw .invalidUTF8 }
        return string
    }

    package static func encode(_ string: String) -> String {
        var out: [UInt8] = []
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "*"), UInt8(ascii: "-"),
                UInt8(ascii: "."), UInt8(ascii: "_"):
                out.append(byte)
            case UInt8(ascii: " "):
                out.append(UInt8(ascii: "+"))
            default:
                let digits = Array("0123456789ABCDEF".utf8)
                out.append(contentsOf: [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// Why a form body or query string was refused. Each case maps to a client error response.
public enum FormDecodingError: Error, Sendable, Equatable, HTTPResponseConvertible {
    /// The body's `Content-Type` is not `application/x-www-form-urlencoded` (the value received).
    case unsupportedContentType(String?)
    /// The encoded form exceeds `Limits.maxBytes`.
    case tooLarge(limit: Int)
    /// More than `Limits.maxParameters` pairs.
    case tooManyParameters(limit: Int)
    /// A `%` not followed by two hex digits.
    case invalidPercentEncoding
    /// A decoded name or value is not valid UTF-8.
    case invalidUTF8
    /// A pair with an empty name (`=x`).
    case emptyName
    /// A name that appears more than once where it must not.
    case duplicateParameter(String)
    /// A required parameter is absent.
    case missingParameter(String)

    /// 415, 413 or 400 `invalid_request` with a short description.
    public var httpResponse: HTTPResponse {
        switch self {
        case .unsupportedContentType:
            HTTPError(.unsupportedMediaType, code: "invalid_request",
                      description: "body must be application/x-www-form-urlencoded").httpResponse
        case .tooLarge(let limit):
            HTTPError(.contentTooLarge, code: "invalid_request", description: "form exceeds \(limit) bytes").httpResponse
        case .tooManyParameters(let limit):
            HTTPError(.badRequest, code: "invalid_request", description: "more than \(limit) parameters").httpResponse
        case .invalidPercentEncoding:
            HTTPError(.badRequest, code: "invalid_request", description: "malformed percent-encoding").httpResponse
        case .invalidUTF8:
            HTTPError(.badRequest, code: "invalid_request", description: "parameter is not valid UTF-8").httpResponse
        case .emptyName:
            HTTPError(.badRequest, code: "invalid_request", description: "parameter with an empty name").httpResponse
        case .duplicateParameter(let name):
            HTTPError(.badRequest, code: "invalid_request",
                      description: "parameter \(HTTPError.quoted(name)) is repeated").httpResponse
        case .missingParameter(let name):
            HTTPError(.badRequest, code: "invalid_request",
                      description: "parameter \(HTTPError.quoted(name)) is required").httpResponse
        }
    }
}
