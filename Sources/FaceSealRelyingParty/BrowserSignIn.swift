import FaceSealCrypto
import FaceSealWire
public import Foundation

/// A browser sign-in the application started (the authorization code flow with PKCE): what it keeps on its side,
/// bound to the user's browser (a session cookie), until the browser comes back to `redirectURI`.
public struct BrowserSignInStart: Sendable, Equatable {
    /// Where to send the browser: the authority's `/authorize` with every parameter.
    public let authorizationURL: URL
    /// The registered redirect URI the authority sends the browser back to.
    public let redirectURI: String
    /// `state` (256 bits): the callback must carry exactly this.
    public let state: String
    /// `nonce` (256 bits): the ID token must carry exactly this.
    public let nonce: String
    /// The PKCE verifier (256 bits); only its S256 challenge is in the URL.
    public let verifier: String
}

extension RelyingParty {
    /// Starts a browser sign-in: fresh `state`, `nonce` and PKCE verifier, and the authorization URL (`scope=openid`,
    /// `response_type=code`, S256). `loginHint` (an email) also sends the request to that user's phone.
    public func startBrowserSignIn(redirectURI: String, loginHint: String? = nil) async throws(RelyingPartyError) -> BrowserSignInStart {
        let metadata = try await authority.metadata()
        guard let endpoint = metadata.authorizationEndpoint else {
            throw .discovery("the authority has no authorization endpoint")
        }
        let state = Base64URL.encode(SecureRandom.bytes(count: 32))
        let nonce = Base64URL.encode(SecureRandom.bytes(count: 32))
        let verifier = PKCE.newVerifier()
        var items = [
            ("response_type", AuthorizationCodeNames.responseType), ("client_id", configuration.clientID), ("redirect_uri", redirectURI),
            ("scope", "openid"), ("state", state), ("nonce", nonce), ("code_challenge", PKCE.challenge(for: verifier)),
            ("code_challenge_method", AuthorizationCodeNames.challengeMethod),
        ]
        if let loginHint { items.append(("login_hint", loginHint)) }
        let query = items.map { "\($0.0)=\(FormEncoding.encode($0.1))" }.joined(separator: "&")
        let base = endpoint.absoluteString
        guard let url = URL(string: base + (base.contains("?") ? "&" : "?") + query) else {
            throw .invalidConfiguration("cannot build the authorization URL")
        }
        return BrowserSignInStart(authorizationURL: url, redirectURI: redirectURI, state: state, nonce: nonce, verifier: verifier)
    }

    /// Finishes a browser sign-in from the callback's query parameters (percent-decoded): `state` must equal the
    /// started one (else nothing is sent anywhere), `iss` — when present — the authority's issuer (RFC 9207); an
    /// error response is `.refused`; the code is redeemed with the verifier and the ID token verified like every
    /// other (signature, `iss`, `aud`, `exp`, `iat`, `sub`) and must carry this sign-in's `nonce` and no ceremony
    /// claims.
    public func finishBrowserSignIn(_ start: BrowserSignInStart, callback parameters: [(String, String)])
        async throws(RelyingPartyError) -> VerifiedResult {
        guard let response = AuthorizationResponse(parameters: parameters) else {
            throw .unexpectedResponse("the callback carries neither exactly one code nor one error")
        }
        guard let state = response.state, constantTimeEquals(Array(state.utf8), Array(start.state.utf8)) else {
            throw .invalidRequest("the callback's state is not this browser's sign-in")
        }
        let metadata = try await authority.metadata()
        if let issuer = response.issuer, issuer != metadata.issuer {
            throw .unexpectedResponse("the callback comes from issuer \(issuer), not \(metadata.issuer)")
        }
        let code: String
        switch response.outcome {
        case .error(let error, let description):
            throw .refused(CIBAErrorCode(rawValue: error) ?? .accessDenied, description ?? error)
        case .code(let value):
            code = value
        }
        let tokens = try await authority.token(code: code, redirectURI: start.redirectURI, verifier: start.verifier)
        var checks = ["callback: state is this browser's sign-in" + (response.issuer == nil ? "" : ", iss is \(metadata.issuer)")]
        let (verified, subject) = try await verifyIDTokenSignature(tokens.idToken, checks: &checks)
        let claims = verified.claims
        guard let nonce = claims[AuthorizationCodeNames.nonceClaim]?.stringValue,
              constantTimeEquals(Array(nonce.utf8), Array(start.nonce.utf8)) else {
            throw .invalidIDToken("nonce is not this sign-in's")
        }
        guard claims[CIBANames.pkiKindClaim] == nil, claims[CIBANames.receiptClaim] == nil else {
            throw .invalidIDToken("a sign-in token carries ceremony claims")
        }
        checks.append("id_token: nonce is this sign-in's")
        let amr = claims["amr"]?.arrayValue?.compactMap(\.stringValue) ?? []
        let idToken = IDTokenClaims(rawToken: tokens.idToken, algorithm: verified.header.algorithm, keyID: verified.header.keyID,
                                    subject: subject, authTime: try? claims.date("auth_time"), amr: amr, claims: claims)
        let authReqId = claims[CIBANames.authReqIdClaim]?.stringValue ?? ""
        return VerifiedResult(authReqId: authReqId, value: .signIn, idToken: idToken, checks: checks)
    }
}
