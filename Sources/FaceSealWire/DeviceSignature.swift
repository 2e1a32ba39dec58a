/// The claims a device signs for every request it sends to the authority (SPEC §4.2): a compact JWS (ES256)
/// in the `FaceSeal-Device-Signature` header, made with one of the enrolment's two device keys.
public struct DeviceRequestClaims: WireMessage {
    /// The HTTP method, upper case.
    public var method: String
    /// The request path including the query string.
    public var path: String
    /// base64url SHA-256 of the exact body bytes (of the empty string for a body-less request).
    public var bsha: String
    /// Issued at, Unix seconds; the authority accepts ±120 s.
    public var iat: Int64
    /// A unique id (≥ 128 bits, base64url); the authority refuses one it has seen.
    public var jti: String
    /// The device key id that signs.
    public var kid: String

    public enum CodingKeys: String, CodingKey, CaseIterable { case method, path, bsha, iat, jti, kid }
    public static var maxBytes: Int { 4096 }

    /// Builds the claims.
    public init(method: String, path: String, bsha: String, iat: Int64, jti: String, kid: String) {
        self.method = method
        self.path = path
        self.bsha = bsha
        self.iat = iat
        self.jti = jti
        self.kid = kid
    }
}

/// The claims the authority signs (Ed25519) over every response to a device, in `FaceSeal-Authority-Signature`,
/// so that a man in the middle cannot forge a revocation, a rotation hint or a token.
public struct AuthorityResponseClaims: WireMessage {
    /// base64url SHA-256 of the exact response body bytes.
    public var bsha: String
    /// The `jti` of the request this answers.
    public var jti: String
    /// The HTTP status of the response.
    public var status: Int
    /// Issued at, Unix seconds.
    public var iat: Int64
    /// Set when the request was signed with the previous key of a rotation overlap: the device should rotate.
    public var hint: Bool?

    public enum CodingKeys: String, CodingKey, CaseIterable { case bsha, jti, status, iat, hint }
    public static var maxBytes: Int { 4096 }

    /// Builds the claims.
    public init(bsha: String, jti: String, status: Int, iat: Int64, hint: Bool? = nil) {
        self.bsha = bsha
        self.jti = jti
        self.status = status
        self.iat = iat
        self.hint = hint
    }
}

/// Header names and limits of device-request signing.
public enum DeviceSigning {
    /// The request header carrying the device's compact JWS.
    public static let requestHeader = "FaceSeal-Device-Signature"
    /// The response header carrying the authority's compact JWS.
    public static let responseHeader = "FaceSeal-Authority-Signature"
    /// The header carrying the device protocol version the SDK speaks.
    public static let protocolHeader = "FaceSeal-Protocol"
    /// How far `iat` may be from the authority's clock, in seconds.
    public static let clockSkew: Int64 = 120

    /// Whether `iat` is within ±``clockSkew`` of `now`. Only `now` (the checker's own clock) enters arithmetic:
    /// `iat` comes from the sender and may be any `Int64`.
    public static func isWithinSkew(_ iat: Int64, of now: Int64) -> Bool {
        let (low, lowOverflow) = now.subtractingReportingOverflow(clockSkew)
        let (high, highOverflow) = now.addingReportingOverflow(clockSkew)
        return (lowOverflow || iat >= low) && (highOverflow || iat <= high)
    }
}

extension DeviceRequestClaims {
    public func checkRanges() throws(WireError) { try WireRange.check(iat, WireRange.unixTime, "iat") }
}

extension AuthorityResponseClaims {
    public func checkRanges() throws(WireError) {
        try WireRange.check(status, WireRange.httpStatus, "status")
        try WireRange.check(iat, WireRange.unixTime, "iat")
    }
}
