import FaceSealHTTP
import FaceSealWire

/// Request bodies and query parameters of the management API.
extension HTTPRequest {
    /// The body as the management message `T` (FaceSealWire): a JSON content type, then `T.decode`, the strict parse
    /// every wire message has (size limit, duplicate member names, invalid UTF-8, deep nesting and unknown members
    /// refused; every member's type, size and range checked).
    func managementBody<T: WireMessage>(_ type: T.Type) throws(ManagementError) -> T {
        guard MediaType.isJSON(headers["Content-Type"]) else { throw .invalidRequest(status: 415, "body must be application/json") }
        guard !body.isEmpty else { throw .invalidRequest(status: 400, "body is empty") }
        do {
            return try T.decode(body)
        } catch {
            throw ManagementError(error)
        }
    }

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

extension ManagementError {
    /// A refused body: too large (413), not a JSON object or a member of the wrong type or missing (400
    /// `invalid_request`), an unknown member (400 `unknown_field`), a value out of its limits (400 `invalid_field`).
    init(_ error: WireError) {
        switch error {
        case .tooLarge(let limit):
            self = .invalidRequest(status: 413, "body exceeds \(limit) bytes")
        case .unknownField(let field):
            self = .unknownField(field)
        case .missingField(let field):
            self = .invalidRequest(status: 400, "missing field '\(field)'")
        case .invalidValue(let field, WireJSON.wrongType):
            self = .invalidRequest(status: 400, "field '\(field)' has the wrong type")
        case .invalidValue(let field, let reason):
            self = .invalidField(field: field, reason: reason)
        case .malformed, .unsupportedVersion, .badSignature, .expired:
            self = .invalidRequest(status: 400, "body must be a JSON object")
        }
    }
}
