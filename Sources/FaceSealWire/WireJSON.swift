import Foundation
public import FaceSealCrypto

/// A message that crosses a process boundary: a size limit, a closed set of top-level fields, and one
/// canonical encoding (sorted keys) so that the bytes that are signed or hashed are reproducible.
public protocol WireMessage: Codable, Sendable, Equatable {
    /// The field names of the message, as `CodingKeys`; any other top-level field is refused. `init(stringValue:)`
    /// must accept exactly the names of `allCases` (as a `String`-backed enum's does): ``decode(_:)`` asks it whether a
    /// member is a field.
    associatedtype CodingKeys: CodingKey & CaseIterable
    /// The largest encoding accepted, in bytes.
    static var maxBytes: Int { get }
    /// The deepest nesting accepted.
    static var maxDepth: Int { get }
    /// Refuses an integer outside its field's ``WireRange``. ``decode(_:)`` runs it before anyone reads the message,
    /// so no value from another process reaches arithmetic that could overflow. Every message with an integer
    /// field implements it.
    func checkRanges() throws(WireError)
}

extension WireMessage {
    /// The default limit: 64 KiB.
    public static var maxBytes: Int { 64 * 1024 }

    /// The parser's default nesting limit.
    public static var maxDepth: Int { JSONValue.defaultMaximumDepth }

    /// No integer fields: nothing to check.
    public func checkRanges() throws(WireError) {}

    /// Parses `bytes`, refusing oversized input, unknown top-level fields, integers out of range and every
    /// malformed value.
    public static func decode(_ bytes: some Collection<UInt8>) throws(WireError) -> Self {
        let message = try WireJSON.decode(Self.self, from: Array(bytes), limit: maxBytes,
                                          isField: { CodingKeys(stringValue: $0) != nil }, maximumDepth: maxDepth)
        try message.checkRanges()
        return message
    }

    /// The canonical encoding: JSON with sorted keys, no insignificant whitespace.
    public func encoded() -> [UInt8] { WireJSON.encode(self) }
}

/// Canonical JSON for wire messages.
public enum WireJSON {
    /// The `reason` of ``WireError/invalidValue(field:reason:)`` when a member has the wrong JSON type (or is `null`).
    public static let wrongType = "wrong type"

    /// JSON with sorted keys and unescaped slashes: the bytes Foundation's `JSONEncoder` with `.sortedKeys` and
    /// `.withoutEscapingSlashes` gives, written by FaceSeal's own encoder (``CanonicalJSONEncoder``, several times
    /// faster); a value that encoder cannot reproduce with certainty goes through `JSONEncoder` itself.
    public static func encode<T: Encodable>(_ value: T) -> [UInt8] {
        if let bytes = CanonicalJSONEncoder.encode(value) { return bytes }
        return foundationEncode(value)
    }

    /// The encoding by Foundation's `JSONEncoder` (the reference ``encode(_:)`` reproduces; the tests compare them).
    static func foundationEncode<T: Encodable>(_ value: T) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding value types made only of strings, numbers, arrays and bools cannot fail.
        guard let data = try? encoder.encode(value) else { return Array("null".utf8) }
        return Array(data)
    }

    /// Decodes `bytes` as `T`, with a size limit and (when `fields` is given) a closed set of top-level fields. The
    /// bytes are parsed once, by the strict parser (`JSONValue`: duplicate member names, invalid UTF-8 and nesting
    /// deeper than `maximumDepth` are refused, so two readers can never see two different messages in one text), then
    /// read through `Codable` (`JSONValueDecoder`: integers only from integer literals that fit).
    public static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8], limit: Int, fields: Set<String>? = nil,
                                            maximumDepth: Int = JSONValue.defaultMaximumDepth) throws(WireError) -> T {
        try decode(type, from: bytes, limit: limit, isField: fields.map { fields in { fields.contains($0) } }, maximumDepth: maximumDepth)
    }

    /// ``decode(_:from:limit:fields:maximumDepth:)`` with the closed set of top-level fields given as a membership test.
    static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8], limit: Int, isField: ((String) -> Bool)?,
                                     maximumDepth: Int) throws(WireError) -> T {
        guard bytes.count <= limit else { throw WireError.tooLarge(limit: limit) }
        let tree: JSONValue
        do {
            tree = try JSONValue.parse(bytes, part: "message", maximumDepth: maximumDepth)
        } catch {
            throw WireError.malformed(isField == nil ? "not valid JSON" : "expected a JSON object")
        }
        if let isField {
            guard case .object(let members) = tree else { throw WireError.malformed("expected a JSON object") }
            // The first unknown member in sorted order is named, so the error does not depend on the hash order.
            if let unknown = members.keys.filter({ !isField($0) }).min() {
                throw WireError.unknownField(unknown)
            }
        }
        do {
            return try JSONValueDecoder().decode(T.self, from: tree)
        } catch let error as WireError {
            throw error
        } catch let DecodingError.keyNotFound(key, context) {
            throw WireError.missingField(path(context.codingPath + [key]))
        } catch let DecodingError.typeMismatch(_, context) {
            throw WireError.invalidValue(field: path(context.codingPath), reason: wrongType)
        } catch let DecodingError.valueNotFound(_, context) {
            throw WireError.missingField(path(context.codingPath))
        } catch let DecodingError.dataCorrupted(context) {
            if let underlying = context.underlyingError as? WireError { throw underlying }
            throw context.codingPath.isEmpty
                ? WireError.malformed("not valid JSON")
                : WireError.invalidValue(field: path(context.codingPath), reason: context.debugDescription)
        } catch {
            throw WireError.malformed("undecodable")
        }
    }

    private static func path(_ keys: [any CodingKey]) -> String {
        keys.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
    }
}

/// Bytes that travel as an unpadded base64url string (RFC 4648 §5).
public struct Base64URLBytes: Codable, Sendable, Hashable {
    /// The bytes.
    public var bytes: [UInt8]

    /// Wraps `bytes`.
    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        do {
            bytes = try Base64URL.decode(text)
        } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "invalid base64url")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(Base64URL.encode(bytes))
    }
}

/// Secret bytes (a server share) that travel as unpadded base64url: decoded straight into ``SecretBytes`` and encoded
/// from them, so no plain array of the secret is ever made. The JSON text of the message still holds the encoded form.
public struct Base64URLSecret: Codable, Sendable, Hashable {
    /// The secret.
    public let secret: SecretBytes

    /// Wraps `secret`.
    public init(_ secret: SecretBytes) { self.secret = secret }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        do {
            secret = try Base64URL.decodeSecret(utf8: text.utf8)
        } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "invalid base64url")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(Base64URL.encode(secret))
    }
}
