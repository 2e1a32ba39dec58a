import FaceSealHTTP
import FaceSealWire

/// A `GET /authorize` request of the authorization code flow (OIDC Core §3.1.2.1, PKCE S256 required), checked in
/// the order the specifications give: first what identifies the client and where to answer it — a failure there is
/// shown on an error page and never redirected (RFC 6749 §4.1.2.1) — then everything else, whose failures go to the
/// registered redirect URI with the request's `state`.
struct AuthorizationRequest: Sendable, Equatable {
    let clientID: String
    let redirectURI: String
    let scope: String
    let codeChallenge: String
    let state: String?
    let nonce: String?
    let loginHint: String?

    /// The longest `state`, `nonce` or `login_hint` accepted.
    static let maxValueBytes = 1024

    /// Why the request was refused.
    enum Refusal: Error, Equatable {
        /// No usable client or redirect URI: an error page, no redirect.
        case page(String)
        /// Anything else: an error response at the (registered) redirect URI.
        case redirect(AuthorizationResponse, to: String)
    }

    /// Parameters that may appear once at most (RFC 6749 §3.1).
    static let singleParameters: Set<String> = [
        "response_type", "client_id", "redirect_uri", "scope", "state", "nonce", "code_challenge", "code_challenge_method",
        "login_hint", "prompt", "response_mode", "request", "request_uri", "registration", "max_age", "display", "id_token_hint",
        "acr_values", "ui_locales", "claims_locales", "claims",
    ]

    /// Parses `query` for `application` (looked up by the caller from `client_id`; nil when there is none).
    /// - Throws: `Refusal`.
    init(query: FormParameters, application: ApplicationRecord?, issuer: String) throws(Refusal) {
        for name in Self.singleParameters where query.values(for: name).count > 1 {
            // A repeated client_id or redirect_uri leaves no redirect URI to trust.
            throw .page("The sign-in request repeats the parameter \(name).")
        }
        guard let clientID = query["client_id"], !clientID.isEmpty else {
            throw .page("The sign-in request names no application (client_id is missing).")
        }
        guard let application, application.clientID == clientID else {
            throw .page("The sign-in request names an application this authority does not know.")
        }
        guard let redirectURI = query["redirect_uri"], !redirectURI.isEmpty else {
            throw .page("The sign-in request has no redirect_uri.")
        }
        // Exact string comparison with a registered value (OIDC Core §3.1.2.1; no prefix or pattern matching).
        guard application.redirectURIs.contains(redirectURI) else {
            throw .page("The sign-in request's redirect_uri is not registered for this application.")
        }
        let state = query["state"]
        func refuse(_ error: String, _ description: String) -> Refusal {
            .redirect(AuthorizationResponse(.error(error, description: description), state: state, issuer: issuer), to: redirectURI)
        }
        for (name, value) in [("state", state), ("nonce", query["nonce"]), ("login_hint", query["login_hint"])] {
            guard let value else { continue }
            guard !value.isEmpty, value.utf8.count <= Self.maxValueBytes, !value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                if name == "state" { throw .page("The sign-in request's state is empty, longer than \(Self.maxValueBytes) bytes or not printable.") }
                throw refuse("invalid_request", "\(name) must be 1–\(Self.maxValueBytes) printable bytes")
            }
        }
        guard let responseType = query["response_type"] else { throw refuse("invalid_request", "response_type is required") }
        guard responseType == AuthorizationCodeNames.responseType else {
            throw refuse("unsupported_response_type", "only response_type=code is supported")
        }
        if let mode = query["response_mode"], mode != "query" { throw refuse("invalid_request", "only response_mode=query is supported") }
        if query["request"] != nil { throw refuse("request_not_supported", "request objects are not supported") }
        if query["request_uri"] != nil { throw refuse("request_uri_not_supported", "request_uri is not supported") }
        if query["registration"] != nil { throw refuse("registration_not_supported", "registration is not supported") }
        guard let scope = query["scope"], scope.split(separator: " ").contains("openid") else {
            throw refuse("invalid_scope", "scope must contain openid")
        }
        guard scope.utf8.count <= Authority.maxScopeBytes, !scope.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw refuse("invalid_scope", "scope must be at most \(Authority.maxScopeBytes) printable bytes")
        }
        // A sign-in always needs the user at the phone; a silent one is impossible.
        if let prompt = query["prompt"], prompt.split(separator: " ").contains("none") {
            throw refuse("login_required", "a FaceSeal sign-in always needs the user's face")
        }
        guard let challenge = query["code_challenge"] else { throw refuse("invalid_request", "code_challenge is required (PKCE)") }
        guard query["code_challenge_method"] == AuthorizationCodeNames.challengeMethod else {
            throw refuse("invalid_request", "code_challenge_method must be S256")
        }
        guard PKCE.isValidChallenge(challenge) else {
            throw refuse("invalid_request", "code_challenge must be 43 base64url characters (S256)")
        }
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.scope = scope
        self.codeChallenge = challenge
        self.state = state
        nonce = query["nonce"]
        loginHint = query["login_hint"]
    }
}
