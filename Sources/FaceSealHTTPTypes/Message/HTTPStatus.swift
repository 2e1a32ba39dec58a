/// An HTTP status code. libmicrohttpd writes the reason phrase itself, so only the code travels.
public struct HTTPStatus: Hashable, Sendable, CustomStringConvertible, ExpressibleByIntegerLiteral {
    /// The three-digit status code (RFC 9110 §15), 100...999.
    public let code: Int

    /// Creates a status from its code. A code that is not three digits is a programming error.
    public init(code: Int) {
        precondition((100...999).contains(code), "HTTP status \(code) is not a three-digit code")
        self.code = code
    }

    /// `let status: HTTPStatus = 409`.
    public init(integerLiteral value: Int) { self.init(code: value) }

    /// True for 2xx.
    public var isSuccess: Bool { (200..<300).contains(code) }

    /// The code as digits.
    public var description: String { String(code) }

    /// 200.
    public static let ok: HTTPStatus = 200
    /// 201.
    public static let created: HTTPStatus = 201
    /// 202.
    public static let accepted: HTTPStatus = 202
    /// 204.
    public static let noContent: HTTPStatus = 204
    /// 301.
    public static let movedPermanently: HTTPStatus = 301
    /// 302.
    public static let found: HTTPStatus = 302
    /// 303.
    public static let seeOther: HTTPStatus = 303
    /// 304.
    public static let notModified: HTTPStatus = 304
    /// 400.
    public static let badRequest: HTTPStatus = 400
    /// 401.
    public static let unauthorized: HTTPStatus = 401
    /// 403.
    public static let forbidden: HTTPStatus = 403
    /// 404.
    public static let notFound: HTTPStatus = 404
    /// 405.
    public static let methodNotAllowed: HTTPStatus = 405
    /// 406.
    public static let notAcceptable: HTTPStatus = 406
    /// 408.
    public static let requestTimeout: HTTPStatus = 408
    /// 409.
    public static let conflict: HTTPStatus = 409
    /// 410.
    public static let gone: HTTPStatus = 410
    /// 413.
    public static let contentTooLarge: HTTPStatus = 413
    /// 415.
    public static let unsupportedMediaType: HTTPStatus = 415
    /// 422.
    public static let unprocessableContent: HTTPStatus = 422
    /// 429.
    public static let tooManyRequests: HTTPStatus = 429
    /// 500.
    public static let internalServerError: HTTPStatus = 500
    /// 501.
    public static let notImplemented: HTTPStatus = 501
    /// 502.
    public static let badGateway: HTTPStatus = 502
    /// 503.
    public static let serviceUnavailable: HTTPStatus = 503
    /// 504.
    public static let gatewayTimeout: HTTPStatus = 504
}
