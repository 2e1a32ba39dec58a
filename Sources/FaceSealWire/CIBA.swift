import FaceSealCrypto

/// The face-PKI operation an application asks for (SPEC §4.3); no kind means a sign-in.
public enum PKIKind: String, Codable, Sendable, CaseIterable {
    /// The user's public keys for this application and context.
    case publicKeys = "public_keys"
    /// An ML-DSA signature over `pki_data`.
    case sign
    /// The ML-KEM shared secret of the ciphertext in `pki_data`.
    case decapsulate
}

/// Every error code of OpenID CIBA Core 1.0 (and OAuth's at the token endpoint), plus FaceSeal's `stale_token`.
public enum CIBAErrorCode: String, Codable, Sendable, CaseIterable, Error {
    case invalidRequest = "invalid_request"
    case invalidScope = "invalid_scope"
    case expiredLoginHintToken = "expired_login_hint_token"
    case unknownUserId = "unknown_user_id"
    case unauthorizedClient = "unauthorized_client"
    case missingUserCode = "missing_user_code"
    case invalidUserCode = "invalid_user_code"
    case invalidBindingMessage = "invalid_binding_message"
    case invalidClient = "invalid_client"
    case accessDenied = "access_denied"
    case authorizationPending = "authorization_pending"
    case slowDown = "slow_down"
    case expiredToken = "expired_token"
    case invalidGrant = "invalid_grant"
    case unsupportedGrantType = "unsupported_grant_type"
    /// The ceremony's token rotation lost to another completion (SPEC §5.3): start a new request.
    case staleToken = "stale_token"

    /// The HTTP status CIBA Core (and RFC 6749 §5.2) gives the code.
    public var httpStatus: Int {
        switch self {
        case .invalidClient: 401
        case .accessDenied: 403
        default: 400
        }
    }
}

/// An OAuth error body: `{"error": …, "error_description": …}`.
public struct OAuthErrorResponse: WireMessage {
    /// The error code.
    public var error: CIBAErrorCode
    /// A human-readable explanation (never secret).
    public var errorDescription: String?

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case error
        case errorDescription = "error_description"
    }

    /// Builds an error body.
    public init(_ error: CIBAErrorCode, _ description: String? = nil) {
        self.error = error
        self.errorDescription = description
    }
}

/// A CIBA backchannel authentication request (form-encoded), with FaceSeal's face-PKI parameters.
/// Client authentication parameters are not part of it: the authority reads them first.
public struct BackchannelAuthenticationRequest: Sendable, Equatable {
    /// Space-separated scopes; must contain `openid`.
    public var scope: String
    /// The user's email or subject.
    public var loginHint: String?
    /// A previously issued ID token naming the user.
    public var idTokenHint: String?
    /// A token naming the user (not supported by FaceSeal's authority; parsed so it can be refused clearly).
    public var loginHintToken: String?
    /// The text shown to the user (required for ceremonies).
    public var bindingMessage: String?
    /// The bearer for ping callbacks and for the delivery of a face-PKI result.
    public var clientNotificationToken: String?
    /// The lifetime asked for, seconds.
    public var requestedExpiry: Int?
    /// A user code (not supported; parsed so it can be refused with `missing_user_code`/`invalid_user_code`).
    public var userCode: String?
    /// Requested ACR values, passed through.
    public var acrValues: String?
    /// The face-PKI operation; nil for a sign-in.
    public var pkiKind: PKIKind?
    /// The opaque key context chosen by the application (≤ 256 bytes); never shown to the host app.
    public var pkiContext: [UInt8]
    /// The message to sign (≤ 64 KiB) or the ML-KEM ciphertext to decapsulate.
    public var pkiData: [UInt8]?

    /// Limits of SPEC §4.3.
    public static let maxBindingMessageCharacters = 64
    public static let maxClientNotificationTokenCharacters = 1024
    public static let maxContextBytes = 256
    public static let maxDataBytes = 64 * 1024
    /// The longest hint or other string parameter accepted.
    public static let maxParameterCharacters = 4096

    /// Builds a request.
    public init(scope: String = "openid", loginHint: String? = nil, idTokenHint: String? = nil,
                loginHintToken: String? = nil, bindingMessage: String? = nil, clientNotificationToken: String? = nil,
                requestedExpiry: Int? = nil, userCode: String? = nil, acrValues: String? = nil,
                pkiKind: PKIKind? = nil, pkiContext: [UInt8] = [], pkiData: [UInt8]? = nil) {
        self.scope = scope
        self.loginHint = loginHint
        self.idTokenHint = idTokenHint
        self.loginHintToken = loginHintToken
        self.bindingMessage = bindingMessage
        self.clientNotificationToken = clientNotificationToken
        self.requestedExpiry = requestedExpiry
        self.userCode = userCode
        self.acrValues = acrValues
        self.pkiKind = pkiKind
        self.pkiContext = pkiContext
        self.pkiData = pkiData
    }

    /// Whether `text` is an acceptable binding message: 1–64 printable characters, no control characters.
    public static func isValidBindingMessage(_ text: String) -> Bool {
        !text.isEmpty && text.count <= maxBindingMessageCharacters
            && text.unicodeScalars.allSatisfy { !$0.properties.generalCategory.isControlOrFormat }
    }

    /// Parses the form parameters of a request (client authentication parameters already removed),
    /// applying every rule of SPEC §4.3. Errors carry the CIBA code to answer with.
    public init(form: [String: String]) throws(CIBARequestError) {
        func string(_ name: String) throws(CIBARequestError) -> String? {
            guard let value = form[name] else { return nil }
            guard value.count <= Self.maxParameterCharacters else { throw CIBARequestError(.invalidRequest, "\(name) is too long") }
            return value
        }
        guard let scope = try string("scope") else { throw CIBARequestError(.invalidRequest, "scope is required") }
        guard scope.split(separator: " ").contains("openid") else { throw CIBARequestError(.invalidScope, "scope must contain openid") }
        self.scope = scope
        loginHint = try string("login_hint")
        idTokenHint = try string("id_token_hint")
        loginHintToken = try string("login_hint_token")
        let hints = [loginHint, idTokenHint, loginHintToken].compactMap { $0 }
        guard hints.count == 1 else {
            throw CIBARequestError(.invalidRequest, "exactly one of login_hint, id_token_hint, login_hint_token is required")
        }
        bindingMessage = try string("binding_message")
        if let message = bindingMessage, !Self.isValidBindingMessage(message) {
            throw CIBARequestError(.invalidBindingMessage, "binding_message must be 1–64 printable characters")
        }
        clientNotificationToken = form["client_notification_token"]
        if let token = clientNotificationToken {
            guard !token.isEmpty, token.count <= Self.maxClientNotificationTokenCharacters,
                  token.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0.value < 0x7F }) else {
                throw CIBARequestError(.invalidRequest, "client_notification_token must be 1–1024 visible ASCII characters")
            }
        }
        if let expiry = try string("requested_expiry") {
            guard let seconds = Int(expiry), seconds > 0, seconds <= 86_400 else {
                throw CIBARequestError(.invalidRequest, "requested_expiry must be 1–86400 seconds")
            }
            requestedExpiry = seconds
        } else {
            requestedExpiry = nil
        }
        userCode = try string("user_code")
        acrValues = try string("acr_values")
        if let kind = try string("pki_kind") {
            guard let parsed = PKIKind(rawValue: kind) else { throw CIBARequestError(.invalidRequest, "unknown pki_kind") }
            pkiKind = parsed
        } else {
            pkiKind = nil
        }
        pkiContext = []
        pkiData = nil
        if let context = form["pki_context"] {
            guard pkiKind != nil else { throw CIBARequestError(.invalidRequest, "pki_context without pki_kind") }
            guard context.utf8.count <= Self.maxContextBytes else { throw CIBARequestError(.invalidRequest, "pki_context exceeds 256 bytes") }
            pkiContext = Array(context.utf8)
        }
        if let data = form["pki_data"] {
            guard data.utf8.count <= (Self.maxDataBytes * 4 + 2) / 3 + 4,
                  let bytes = try? Base64URL.decode(data), bytes.count <= Self.maxDataBytes else {
                throw CIBARequestError(.invalidRequest, "pki_data must be base64url of at most 64 KiB")
            }
            pkiData = bytes
        }
        if let kind = pkiKind {
            guard bindingMessage != nil else { throw CIBARequestError(.invalidBindingMessage, "binding_message is required for a ceremony") }
            guard clientNotificationToken != nil else {
                throw CIBARequestError(.invalidRequest, "client_notification_token is required for a ceremony")
            }
            switch kind {
            case .publicKeys:
                guard pkiData == nil else { throw CIBARequestError(.invalidRequest, "public_keys takes no pki_data") }
            case .sign, .decapsulate:
                guard pkiData != nil else { throw CIBARequestError(.invalidRequest, "\(kind.rawValue) requires pki_data") }
            }
        } else if pkiData != nil {
            throw CIBARequestError(.invalidRequest, "pki_data without pki_kind")
        }
    }

    /// The request's form parameters (what an application sends).
    public var formItems: [(String, String)] {
        var items: [(String, String)] = [("scope", scope)]
        func add(_ name: String, _ value: String?) { if let value { items.append((name, value)) } }
        add("login_hint", loginHint)
        add("id_token_hint", idTokenHint)
        add("login_hint_token", loginHintToken)
        add("binding_message", bindingMessage)
        add("client_notification_token", clientNotificationToken)
        add("requested_expiry", requestedExpiry.map(String.init))
        add("user_code", userCode)
        add("acr_values", acrValues)
        add("pki_kind", pkiKind?.rawValue)
        if pkiKind != nil, !pkiContext.isEmpty { add("pki_context", String(decoding: pkiContext, as: UTF8.self)) }
        add("pki_data", pkiData.map { Base64URL.encode($0) })
        return items
    }
}

/// A refused backchannel request: the CIBA code to answer with and a description.
public struct CIBARequestError: Error, Equatable, Sendable {
    /// The CIBA error code.
    public var code: CIBAErrorCode
    /// Why, for the `error_description`.
    public var description: String

    /// Builds the error.
    public init(_ code: CIBAErrorCode, _ description: String) {
        self.code = code
        self.description = description
    }
}

/// The acknowledgement of a backchannel request.
public struct BackchannelAuthenticationResponse: WireMessage {
    /// The request id (≥ 128 bits of entropy, base64url).
    public var authReqId: String
    /// Seconds until the request expires.
    public var expiresIn: Int
    /// The minimum polling interval, seconds.
    public var interval: Int?

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case authReqId = "auth_req_id"
        case expiresIn = "expires_in"
        case interval
    }

    /// Builds the acknowledgement.
    public init(authReqId: String, expiresIn: Int, interval: Int?) {
        self.authReqId = authReqId
        self.expiresIn = expiresIn
        self.interval = interval
    }
}

/// The successful answer of the token endpoint for the CIBA grant.
public struct TokenResponse: WireMessage {
    /// An opaque access token (FaceSeal's authority issues one for the userinfo-less sign-in).
    public var accessToken: String
    /// Always `Bearer`.
    public var tokenType: String
    /// Seconds the access token is valid.
    public var expiresIn: Int
    /// The ID token (a compact JWS).
    public var idToken: String

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case accessToken = "access_token"
        case tokenType = "token_type"
        case expiresIn = "expires_in"
        case idToken = "id_token"
    }

    /// Builds the answer.
    public init(accessToken: String, tokenType: String = "Bearer", expiresIn: Int, idToken: String) {
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.expiresIn = expiresIn
        self.idToken = idToken
    }
}

/// The body of a ping callback: `{"auth_req_id": …}` with the client notification token as bearer.
public struct PingCallback: WireMessage {
    /// The request that finished.
    public var authReqId: String

    public enum CodingKeys: String, CodingKey, CaseIterable { case authReqId = "auth_req_id" }
    public static var maxBytes: Int { 1024 }

    /// Builds the callback body.
    public init(authReqId: String) { self.authReqId = authReqId }
}

/// Names of CIBA and FaceSeal claims and parameters.
public enum CIBANames {
    /// The CIBA grant type.
    public static let grantType = "urn:openid:params:grant-type:ciba"
    /// The ID token claim carrying the request id.
    public static let authReqIdClaim = "urn:openid:params:jwt:claim:auth_req_id"
    /// The ID token claim carrying the receipt: base64url SHA-256 of the delivered body.
    public static let receiptClaim = "pki_result_sha256"
    /// The ID token claim carrying the ceremony's kind.
    public static let pkiKindClaim = "pki_kind"
}

extension Unicode.GeneralCategory {
    fileprivate var isControlOrFormat: Bool {
        switch self {
        case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned: true
        default: false
        }
    }
}

extension BackchannelAuthenticationResponse {
    public func checkRanges() throws(WireError) {
        try WireRange.check(expiresIn, WireRange.seconds, "expires_in")
        if let interval { try WireRange.check(interval, WireRange.seconds, "interval") }
    }
}

extension TokenResponse {
    public func checkRanges() throws(WireError) {
        try WireRange.check(expiresIn, WireRange.seconds, "expires_in")
    }
}
