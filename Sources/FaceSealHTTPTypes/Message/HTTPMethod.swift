/// An HTTP request method (RFC 9110 §9). Methods are case-sensitive tokens; the common ones are constants.
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible, Comparable {
    /// The method token exactly as it appears on the request line.
    public let rawValue: String

    /// Wraps a method token. No validation: libmicrohttpd has already rejected malformed request lines.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// `GET`.
    public static let get = HTTPMethod(rawValue: "GET")
    /// `HEAD`.
    public static let head = HTTPMethod(rawValue: "HEAD")
    /// `POST`.
    public static let post = HTTPMethod(rawValue: "POST")
    /// `PUT`.
    public static let put = HTTPMethod(rawValue: "PUT")
    /// `PATCH`.
    public static let patch = HTTPMethod(rawValue: "PATCH")
    /// `DELETE`.
    public static let delete = HTTPMethod(rawValue: "DELETE")
    /// `OPTIONS`.
    public static let options = HTTPMethod(rawValue: "OPTIONS")

    /// The method token.
    public var description: String { rawValue }

    /// Orders methods by token, so an `Allow` header lists them in a stable order.
    public static func < (lhs: HTTPMethod, rhs: HTTPMethod) -> Bool { lhs.rawValue < rhs.rawValue }
}
