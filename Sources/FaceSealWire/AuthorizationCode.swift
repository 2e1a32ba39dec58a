import FaceSealCrypto

/// Names of the authorization code flow (OIDC Core §3.1, RFC 6749 §4.1, RFC 7636 PKCE).
public enum AuthorizationCodeNames {
    /// The grant type of the token request.
    public static let grantType = "authorization_code"
    /// The only `response_type`.
    public static let responseType = "code"
    /// The only PKCE method.
    public static let challengeMethod = "S256"
    /// The ID token claim carrying the authorization request's `nonce`.
    public static let nonceClaim = "nonce"
}

/// PKCE (RFC 7636) with S256: a verifier of 43–128 unreserved characters, its challenge base64url(SHA-256(verifier)).
public enum PKCE {
    /// The shortest and longest verifier (RFC 7636 §4.1).
    public static let verifierLengths = 43...128

    /// A fresh verifier: 32 random bytes as base64url (43 characters, 256 bits).
    public static func newVerifier() -> String { Base64URL.encode(SecureRandom.bytes(count: 32)) }

    /// Whether `verifier` is 43–128 characters of `A-Z a-z 0-9 - . _ ~`.
    public static func isValidVerifier(_ verifier: String) -> Bool {
        verifierLengths.contains(verifier.utf8.count) && verifier.utf8.allSatisfy(isUnreserved)
    }

    /// Whether `challenge` can be an S256 challenge: exactly 43 base64url characters.
    public static func isValidChallenge(_ challenge: String) -> Bool {
        challenge.utf8.count == 43 && challenge.utf8.allSatisfy { isUnreserved($0) && $0 != UInt8(ascii: ".") && $0 != UInt8(ascii: "~") }
    }

    /// The S256 challenge of `verifier`.
    public static func challenge(for verifier: String) -> String {
        Base64URL.encode(SHA256.hash(data: Array(verifier.utf8)).bytes)
    }

    /// Whether `verifier` is valid and its challenge equals `challenge` (compared in constant time).
    public static func verifies(_ verifier: String, challenge expected: String) -> Bool {
        guard isValidVerifier(verifier) else { return false }
        return constantTimeEquals(Array(challenge(for: verifier).utf8), Array(expected.utf8))
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }
}

/// What the authorization endpoint sends the browser back with (RFC 6749 §4.1.2, RFC 9207 `iss`): either a code or
/// an error, always the request's `state`. The authority builds it; the relying party parses its own callback.
public struct AuthorizationResponse: Sendable, Equatable {
    /// The outcome.
    public enum Outcome: Sendable, Equatable {
        /// The authorization code.
        case code(String)
        /// An OAuth error code (`access_denied`, `invalid_request`, …) and its description.
        case error(String, description: String?)
    }

    /// Code or error.
    public var outcome: Outcome
    /// The request's `state`, echoed exactly.
    public var state: String?
    /// The issuer that answered (RFC 9207), so a client talking to several issuers knows which one.
    public var issuer: String?

    /// The longest parameter value accepted when parsing a callback.
    public static let maxValueBytes = 2048

    /// Builds a response.
    public init(_ outcome: Outcome, state: String?, issuer: String?) {
        self.outcome = outcome
        self.state = state
        self.issuer = issuer
    }

    /// The query parameters, in a fixed order.
    public var queryItems: [(String, String)] {
        var items: [(String, String)] = []
        switch outcome {
        case .code(let code):
            items.append(("code", code))
        case .error(let error, let description):
            items.append(("error", error))
            if let description { items.append(("error_description", description)) }
        }
        if let state { items.append(("state", state)) }
        if let issuer { items.append(("iss", issuer)) }
        return items
    }

    /// Parses callback parameters (already percent-decoded, repeats included): exactly one of `code` and `error`, each
    /// parameter at most once and at most `maxValueBytes` long. Returns nil for anything else.
    public init?(parameters: [(String, String)]) {
        var values: [String: String] = [:]
        for (name, value) in parameters where ["code", "error", "error_description", "state", "iss"].contains(name) {
            guard values[name] == nil, value.utf8.count <= Self.maxValueBytes else { return nil }
            values[name] = value
        }
        switch (values["code"], values["error"]) {
        case (let code?, nil) where !code.isEmpty:
            outcome = .code(code)
        case (nil, let error?) where !error.isEmpty:
            outcome = .error(error, description: values["error_description"])
        default:
            return nil
        }
        state = values["state"]
        issuer = values["iss"]
    }
}
