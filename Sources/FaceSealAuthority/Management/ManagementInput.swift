import FaceSealCrypto
import FaceSealHTTP
import Foundation

/// A JSON object from a management request, read field by field: the set of allowed member names is
/// closed (anything else is `unknown_field`), every accessor checks type and size, and absent is told
/// apart from `null` (PATCH clears a field with `null`).
struct JSONObjectReader {
    let members: [String: JSONValue]
    /// The object's path in the body (`""` at the top, `policy.` inside `policy`).
    let path: String

    /// Parses a request body: JSON content type, at most `maxBytes`, a strict parse (duplicate member names,
    /// bad UTF-8 and trailing bytes are refused), an object at the top with only `allowed` members.
    static func body(of request: HTTPRequest, maxBytes: Int, allowed: Set<String>) throws(ManagementError) -> JSONObjectReader {
        guard isJSON(request.headers["Content-Type"]) else {
            throw .invalidRequest(status: 415, "body must be application/json")
        }
        guard request.body.count <= maxBytes else { throw .invalidRequest(status: 413, "body exceeds \(maxBytes) bytes") }
        guard !request.body.isEmpty else { throw .invalidRequest(status: 400, "body is empty") }
        let value: JSONValue
        do {
            value = try JSONValue.parse(request.body, part: "body", maximumDepth: 8)
        } catch {
            throw .invalidRequest(status: 400, "body is not valid JSON")
        }
        return try JSONObjectReader(value, path: "", allowed: allowed)
    }

    /// Wraps `value`, which must be an object with only `allowed` members.
    init(_ value: JSONValue, path: String, allowed: Set<String>) throws(ManagementError) {
        guard case .object(let members) = value else {
            throw .invalidRequest(status: 400, path.isEmpty ? "body must be a JSON object" : "field '\(path.dropLast())' must be an object")
        }
        if let unknown = members.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw .unknownField(path + unknown)
        }
        self.members = members
        self.path = path
    }

    /// Whether the member is present (possibly `null`).
    func contains(_ key: String) -> Bool { members[key] != nil }

    /// Whether the member is present and `null`.
    func isNull(_ key: String) -> Bool { members[key] == .null }

    private func wrongType(_ key: String, _ expected: String) -> ManagementError {
        .invalidRequest(status: 400, "field '\(path + key)' must be \(expected)")
    }

    /// A string member; nil when absent. `null` is refused unless `nullable` (then also nil).
    func string(_ key: String, maxBytes: Int, nullable: Bool = false) throws(ManagementError) -> String? {
        guard let value = members[key] else { return nil }
        if value == .null, nullable { return nil }
        guard case .string(let text) = value else { throw wrongType(key, "a string") }
        guard text.utf8.count <= maxBytes else { throw .invalidField(field: path + key, reason: "longer than \(maxBytes) bytes") }
        return text
    }

    /// A string member that must be present.
    func requiredString(_ key: String, maxBytes: Int) throws(ManagementError) -> String {
        guard let text = try string(key, maxBytes: maxBytes) else {
            throw .invalidRequest(status: 400, "missing field '\(path + key)'")
        }
        return text
    }

    /// An integer member within `range`; nil when absent. A number with a zero fraction (`3.0`, `3e0`) is that integer,
    /// as JSON Schema's `integer` has it; anything not exactly an `Int64` is refused before any conversion.
    func integer(_ key: String, in range: ClosedRange<Int>) throws(ManagementError) -> Int? {
        guard let value = members[key] else { return nil }
        let number: Int64?
        switch value {
        case .integer(let integer): number = integer
        case .double(let double) where double.isFinite && double.rounded(.towardZero) == double: number = Int64(exactly: double)
        default: throw wrongType(key, "an integer")
        }
        guard let number, number >= Int64(range.lowerBound), number <= Int64(range.upperBound) else {
            throw .invalidField(field: path + key, reason: "must be within \(range.lowerBound)…\(range.upperBound)")
        }
        return Int(number)
    }

    /// A number member (integer or fraction) within `range`; nil when absent.
    func number(_ key: String, in range: ClosedRange<Double>) throws(ManagementError) -> Double? {
        guard let value = members[key] else { return nil }
        let number: Double
        switch value {
        case .integer(let integer): number = Double(integer)
        case .double(let double): number = double
        default: throw wrongType(key, "a number")
        }
        guard range.contains(number) else {
            throw .invalidField(field: path + key, reason: "must be within \(range.lowerBound)…\(range.upperBound)")
        }
        return number
    }

    /// A boolean member; nil when absent.
    func bool(_ key: String) throws(ManagementError) -> Bool? {
        guard let value = members[key] else { return nil }
        guard case .bool(let flag) = value else { throw wrongType(key, "true or false") }
        return flag
    }

    /// An array of strings, at most `maxCount` of at most `maxBytes` each; nil when absent.
    func strings(_ key: String, maxCount: Int, maxBytes: Int) throws(ManagementError) -> [String]? {
        guard let value = members[key] else { return nil }
        guard case .array(let elements) = value else { throw wrongType(key, "an array of strings") }
        guard elements.count <= maxCount else { throw .invalidField(field: path + key, reason: "more than \(maxCount) entries") }
        var result: [String] = []
        for element in elements {
            guard case .string(let text) = element else { throw wrongType(key, "an array of strings") }
            guard text.utf8.count <= maxBytes else { throw .invalidField(field: path + key, reason: "an entry is longer than \(maxBytes) bytes") }
            result.append(text)
        }
        return result
    }

    /// A nested object with only `allowed` members; nil when absent (or `null` when `nullable`).
    func object(_ key: String, allowed: Set<String>, nullable: Bool = false) throws(ManagementError) -> JSONObjectReader? {
        guard let value = members[key] else { return nil }
        if value == .null, nullable { return nil }
        return try JSONObjectReader(value, path: path + key + ".", allowed: allowed)
    }

    /// A member kept as raw JSON (e.g. a JWKS), with no further checks here.
    func raw(_ key: String) -> JSONValue? { members[key] }

    /// `application/json` or any `…/…+json` type, parameters ignored.
    static func isJSON(_ contentType: String?) -> Bool {
        guard let contentType else { return false }
        let essence = (contentType.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
            .trimmingCharacters(in: .whitespaces).lowercased()
        return essence == "application/json" || (essence.hasPrefix("application/") && essence.hasSuffix("+json"))
    }
}

/// Query parameters of list endpoints.
extension HTTPRequest {
    /// A query parameter given at most once, at most `maxBytes`; nil when absent.
    func queryValue(_ name: String, maxBytes: Int = 256) throws(ManagementError) -> String? {
        let values = query.values(for: name)
        guard values.count <= 1 else { throw .invalidRequest(status: 400, "query parameter '\(name)' is repeated") }
        guard let value = values.first else { return nil }
        guard value.utf8.count <= maxBytes else { throw .invalidField(field: name, reason: "longer than \(maxBytes) bytes") }
        return value
    }

    /// Refuses query parameters the endpoint does not know.
    func allowQuery(_ names: Set<String>) throws(ManagementError) {
        if let unknown = query.items.map(\.name).sorted().first(where: { !names.contains($0) }) {
            throw .unknownField(unknown)
        }
    }

    /// An integer query parameter within `range`; nil when absent.
    func queryInteger(_ name: String, in range: ClosedRange<Int64>) throws(ManagementError) -> Int64? {
        guard let text = try queryValue(name, maxBytes: 20) else { return nil }
        guard let number = Int64(text), range.contains(number) else {
            throw .invalidField(field: name, reason: "must be an integer within \(range.lowerBound)…\(range.upperBound)")
        }
        return number
    }
}
