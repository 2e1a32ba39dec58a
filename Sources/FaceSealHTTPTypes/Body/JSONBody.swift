public import Foundation

/// JSON encoding and size-limited decoding shared by the server, the client and their callers.
public enum JSONBody {
    /// Default decode limit: 1 MiB, the server's default body limit.
    public static let defaultMaxBytes = 1 << 20

    /// An encoder with `.sortedKeys` (stable bytes across runs, so they can be hashed or signed) and
    /// unescaped slashes (URLs stay readable).
    public static func makeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// Encodes `value` to bytes.
    public static func encode(_ value: some Encodable, encoder: JSONEncoder = makeEncoder()) throws -> [UInt8] {
        Array(try encoder.encode(value))
    }

    /// Decodes `bytes` as `T`, refusing more than `maxBytes`. Errors name what was wrong and where
    /// (the coding path), never the offending value.
    public static func decode<T: Decodable>(
        _ type: T.Type,
        from bytes: some Collection<UInt8>,
        maxBytes: Int = defaultMaxBytes,
        decoder: JSONDecoder = JSONDecoder()
    ) throws(JSONDecodingError) -> T {
        guard bytes.count <= maxBytes else { throw .tooLarge(limit: maxBytes) }
        guard !bytes.isEmpty else { throw .empty }
        do {
            return try decoder.decode(T.self, from: Data(bytes))
        } catch let error as DecodingError {
            throw JSONDecodingError(error)
        } catch {
            throw .invalidJSON
        }
    }
}

/// Why a JSON body was refused. Messages name the field path, never the value received.
public enum JSONDecodingError: Error, Sendable, Equatable, HTTPResponseConvertible {
    /// The request's `Content-Type` is not JSON (the value received).
    case unsupportedContentType(String?)
    /// More bytes than the limit allowed.
    case tooLarge(limit: Int)
    /// No bytes at all.
    case empty
    /// Not syntactically valid JSON.
    case invalidJSON
    /// A required field is absent (its coding path).
    case missingField(String)
    /// A field has the wrong JSON type (its coding path).
    case typeMismatch(String)
    /// A field is `null` where a value is required (its coding path).
    case nullValue(String)
    /// A field is well-typed but its value is not acceptable (its coding path).
    case invalidValue(String)

    init(_ error: DecodingError) {
        func path(_ context: DecodingError.Context, appending key: (any CodingKey)? = nil) -> String {
            let keys = context.codingPath + (key.map { [$0] } ?? [])
            let rendered = keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
            return rendered.isEmpty ? "$" : String(rendered.prefix(200))
        }
        switch error {
        case .keyNotFound(let key, let context): self = .missingField(path(context, appending: key))
        case .typeMismatch(_, let context): self = .typeMismatch(path(context))
        case .valueNotFound(_, let context): self = .nullValue(path(context))
        case .dataCorrupted(let context):
            // An empty coding path means the bytes themselves did not parse as JSON.
            self = context.codingPath.isEmpty ? .invalidJSON : .invalidValue(path(context))
        @unknown default: self = .invalidJSON
        }
    }

    /// 415, 413 or 400 `invalid_request`, naming the field path but never its value.
    public var httpResponse: HTTPResponse {
        switch self {
        case .unsupportedContentType:
            HTTPError(.unsupportedMediaType, code: "invalid_request", description: "body must be application/json").httpResponse
        case .tooLarge(let limit):
            HTTPError(.contentTooLarge, code: "invalid_request", description: "JSON body exceeds \(limit) bytes").httpResponse
        case .empty:
            HTTPError.badRequest("JSON body is empty").httpResponse
        case .invalidJSON:
            HTTPError.badRequest("body is not valid JSON").httpResponse
        case .missingField(let path):
            HTTPError.badRequest("missing field \(HTTPError.quoted(path))").httpResponse
        case .typeMismatch(let path):
            HTTPError.badRequest("field \(HTTPError.quoted(path)) has the wrong type").httpResponse
        case .nullValue(let path):
            HTTPError.badRequest("field \(HTTPError.quoted(path)) is null").httpResponse
        case .invalidValue(let path):
            HTTPError.badRequest("field \(HTTPError.quoted(path)) has an invalid value").httpResponse
        }
    }
}
