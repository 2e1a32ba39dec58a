public import FaceSealCrypto

/// Free-form JSON inside a typed document (audit details, a JWKS).
public struct JSONDocument: Codable, Sendable, Hashable {
    /// The value.
    public var value: JSONValue

    /// Wraps `value`.
    public init(_ value: JSONValue) { self.value = value }

    public init(from decoder: any Decoder) throws {
        if var array = try? decoder.unkeyedContainer() {
            var values: [JSONValue] = []
            while !array.isAtEnd { values.append(try array.decode(JSONDocument.self).value) }
            value = .array(values)
        } else if let object = try? decoder.container(keyedBy: MemberKey.self) {
            var members: [String: JSONValue] = [:]
            for key in object.allKeys { members[key.stringValue] = try object.decode(JSONDocument.self, forKey: key).value }
            value = .object(members)
        } else {
            let single = try decoder.singleValueContainer()
            if single.decodeNil() {
                value = .null
            } else if let flag = try? single.decode(Bool.self) {
                value = .bool(flag)
            } else if let integer = try? single.decode(Int64.self) {
                value = .integer(integer)
            } else if let number = try? single.decode(Double.self) {
                value = .double(number)
            } else {
                value = .string(try single.decode(String.self))
            }
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch value {
        case .null:
            var single = encoder.singleValueContainer()
            try single.encodeNil()
        case .bool(let flag):
            var single = encoder.singleValueContainer()
            try single.encode(flag)
        case .integer(let integer):
            var single = encoder.singleValueContainer()
            try single.encode(integer)
        case .double(let number):
            var single = encoder.singleValueContainer()
            try single.encode(number)
        case .string(let text):
            var single = encoder.singleValueContainer()
            try single.encode(text)
        case .array(let values):
            var array = encoder.unkeyedContainer()
            for element in values { try array.encode(JSONDocument(element)) }
        case .object(let members):
            var object = encoder.container(keyedBy: MemberKey.self)
            for (key, element) in members { try object.encode(JSONDocument(element), forKey: MemberKey(stringValue: key)) }
        }
    }
}
