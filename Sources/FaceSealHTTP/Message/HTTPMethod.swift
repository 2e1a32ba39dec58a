/// An HTTP request method (RFC 9110 §9). Methods are case-sensitive tokens; the common ones are constants.
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible, Comparable {
    /// The method token exactly as it appears on the request line.
    public let rawValue: String

    /// Wraps a method token. No validation: libmicrohttpd has already rejected malformed request lines.
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let get = HTTPMethod(rawValue: "GET")
    public static let head = HTTPMethod(rawValue: "HEAD")
    public static let post = HTTPMethod(rawValue: "POST")
    public static let put = HTTPMethod(rawValue: "PUT")
    public static let patch = HTTPMethod(rawValue: "PATCH")
    public static let delete = HTTPMethod(rawValue: "DELETE")
    public static let options = HTTPMethod(rawValue: "OPTIONS")

    public var description: String { rawValue }

    /// Orders methods by token, so an `Allow` header lists them in a stable order.
    public static func < (lhs: HTTPMethod, rhs: HTTPMethod) -> Bool { lhs.rawValue < rhs.rawValue }
}
