public import Foundation

/// The claims of a JWT (RFC 7519): a JSON object, with typed access to the registered claims.
public struct JWTClaims: Sendable, Hashable {
    /// All members as parsed or set.
    public var members: [String: JSONValue]

    /// Claims from members.
    public init(members: [String: JSONValue] = [:]) { self.members = members }

    /// Claims with the registered members set; times are written as whole seconds (NumericDate).
    /// One audience is written as a string, several as an array.
    public init(
        issuer: String? = nil, subject: String? = nil, audience: [String] = [], issuedAt: Date? = nil,
        expiresAt: Date? = nil, notBefore: Date? = nil, jwtID: String? = nil, additionalMembers: [String: JSONValue] = [:]
    ) {
        var members = additionalMembers
        if let issuer { members["iss"] = .string(issuer) }
        if let subject { members["sub"] = .string(subject) }
        if audience.count == 1 { members["aud"] = .string(audience[0]) }
        if audience.count > 1 { members["aud"] = .array(audience.map(JSONValue.string)) }
        if let issuedAt { members["iat"] = .integer(Self.numericDate(issuedAt)) }
        if let expiresAt { members["exp"] = .integer(Self.numericDate(expiresAt)) }
        if let notBefore { members["nbf"] = .integer(Self.numericDate(notBefore)) }
        if let jwtID { members["jti"] = .string(jwtID) }
        self.members = members
    }

    /// Parses a JWS payload as claims: it must be a JSON object.
    public init<D: DataProtocol>(payload: D, maximumSize: Int = JWS.defaultMaximumSize) throws(JOSEError) {
        guard payload.count <= maximumSize else { throw .inputTooLarge(limit: maximumSize) }
        guard case .object(let members) = try JSONValue.parse(payload, part: "claims") else {
            throw .malformedJSON(part: "claims", reason: "not a JSON object")
        }
        self.members = members
    }

    private static func numericDate(_ date: Date) -> Int64 { Int64(date.timeIntervalSince1970.rounded(.down)) }

    /// The claims' JSON (members sorted): the bytes to sign.
    public var jsonData: Data { Data(JSONValue.object(members).serialized) }

    /// Member `name`.
    public subscript(name: String) -> JSONValue? {
        get { members[name] }
        set { members[name] = newValue }
    }

    /// `iss`, if it is a string.
    public var issuer: String? { members["iss"]?.stringValue }
    /// `sub`, if it is a string.
    public var subject: String? { members["sub"]?.stringValue }
    /// `jti`, if it is a string.
    public var jwtID: String? { members["jti"]?.stringValue }

    /// `aud` as a list (a single string is a list of one).
    /// - Throws: ``JOSEError/invalidField(_:)`` if `aud` is neither a string nor an array of strings.
    public func audience() throws(JOSEError) -> [String] {
        switch members["aud"] {
        case nil: return []
        case .string(let single)?: return [single]
        case .array(let values)?:
            var out: [String] = []
            for value in values {
                guard case .string(let s) = value else { throw .invalidField("aud") }
                out.append(s)
            }
            return out
        default: throw .invalidField("aud")
        }
    }

    /// A NumericDate claim (`exp`, `nbf`, `iat`) as a date.
    /// - Throws: ``JOSEError/invalidField(_:)`` if it is present but not a finite number.
    public func date(_ name: String) throws(JOSEError) -> Date? {
        guard let value = members[name] else { return nil }
        guard let seconds = value.doubleValue, seconds.isFinite else { throw .invalidField(name) }
        return Date(timeIntervalSince1970: seconds)
    }

    /// Checks the registered claims against `validation` (see ``JWTValidation``).
    /// - Throws: ``JOSEError/missingField(_:)``, ``JOSEError/invalidField(_:)``, ``JOSEError/expired``,
    ///   ``JOSEError/notYetValid``, ``JOSEError/issuedInFuture``, ``JOSEError/issuedTooLongAgo``,
    ///   ``JOSEError/invalidIssuer``, ``JOSEError/invalidAudience``.
    public func validate(_ validation: JWTValidation) throws(JOSEError) {
        let now = validation.now
        let leeway = validation.leeway
        let expiresAt = try date("exp")
        let notBefore = try date("nbf")
        let issuedAt = try date("iat")
        if validation.requireExpiration, expiresAt == nil { throw .missingField("exp") }
        if validation.requireIssuedAt, issuedAt == nil { throw .missingField("iat") }
        // RFC 7519 §4.1.4: the token is valid only *before* exp.
        if let expiresAt, now >= expiresAt.addingTimeInterval(leeway) { throw .expired }
        if let notBefore, now < notBefore.addingTimeInterval(-leeway) { throw .notYetValid }
        if let issuedAt {
            if issuedAt > now.addingTimeInterval(leeway) { throw .issuedInFuture }
            if let maximumAge = validation.maximumAge, now.timeIntervalSince(issuedAt) > maximumAge + leeway {
                throw .issuedTooLongAgo
            }
        }
        if let expectedIssuer = validation.issuer {
            guard let value = members["iss"] else { throw .missingField("iss") }
            guard case .string(let issuer) = value else { throw .invalidField("iss") }
            guard issuer == expectedIssuer else { throw .invalidIssuer }
        }
        if let expectedAudience = validation.audience {
            guard members["aud"] != nil else { throw .missingField("aud") }
            guard try audience().contains(expectedAudience) else { throw .invalidAudience }
        }
    }
}

/// What ``JWTClaims/validate(_:)`` checks. Time is injected (`now`), never read from the clock here.
public struct JWTValidation: Sendable, Hashable {
    /// The current time.
    public var now: Date
    /// Clock skew tolerated on `exp`, `nbf` and `iat`, in seconds (default 60).
    public var leeway: TimeInterval
    /// The required `iss`, or `nil` not to check it.
    public var issuer: String?
    /// An audience `aud` must contain (string or array), or `nil` not to check it.
    public var audience: String?
    /// Whether `exp` must be present (default true).
    public var requireExpiration: Bool
    /// Whether `iat` must be present (default false).
    public var requireIssuedAt: Bool
    /// The oldest `iat` accepted, in seconds before `now`, or `nil` for no limit.
    public var maximumAge: TimeInterval?

    /// A validation at `now`.
    public init(
        now: Date, leeway: TimeInterval = 60, issuer: String? = nil, audience: String? = nil,
        requireExpiration: Bool = true, requireIssuedAt: Bool = false, maximumAge: TimeInterval? = nil
    ) {
        self.now = now
        self.leeway = leeway
        self.issuer = issuer
        self.audience = audience
        self.requireExpiration = requireExpiration
        self.requireIssuedAt = requireIssuedAt
        self.maximumAge = maximumAge
    }
}

/// Signed JWTs: JWS compact serialisations whose payload is a claims object.
public enum JWT {
    /// Signs `claims` (serialised with sorted members) with header `typ: JWT`.
    public static func sign(_ claims: JWTClaims, signer: any JWSSigner, keyID: String? = nil, type: String? = "JWT") throws(JOSEError) -> String {
        try JWS.sign(payload: claims.jsonData, signer: signer, keyID: keyID, type: type)
    }

    /// Verifies the signature with `verifier`, parses the claims and validates them.
    public static func verify<S: StringProtocol>(
        _ compact: S, verifier: any JWSVerifier, validation: JWTValidation, options: JWSParsingOptions = .init()
    ) throws(JOSEError) -> (header: JWSHeader, claims: JWTClaims) {
        let verified = try JWS.verify(compact, verifier: verifier, options: options)
        let claims = try JWTClaims(payload: verified.payload, maximumSize: options.maximumSize)
        try claims.validate(validation)
        return (verified.header, claims)
    }

    /// Verifies against a key set (see ``JWS/verify(_:keySet:factory:options:)``), then parses and validates the claims.
    public static func verify<S: StringProtocol>(
        _ compact: S, keySet: JWKSet, factory: JWSVerifierFactory = .builtIn, validation: JWTValidation,
        options: JWSParsingOptions = .init()
    ) throws(JOSEError) -> (header: JWSHeader, claims: JWTClaims) {
        let verified = try JWS.verify(compact, keySet: keySet, factory: factory, options: options)
        let claims = try JWTClaims(payload: verified.payload, maximumSize: options.maximumSize)
        try claims.validate(validation)
        return (verified.header, claims)
    }
}
