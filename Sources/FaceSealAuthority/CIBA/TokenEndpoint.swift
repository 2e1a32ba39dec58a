import FaceSealCrypto
import FaceSealHTTP
import FaceSealWire
import Foundation

extension Authority {
    /// Form limits of the token endpoint (room for an ML-DSA-signed client assertion).
    static let tokenFormLimits = FormParameters.Limits(maxBytes: 32 * 1024, maxParameters: 16)

    /// `POST /token` with the CIBA grant (CIBA Core §10–11): authenticates the client, records the poll and answers
    /// from the request's state. A completed request is redeemed once: its ID token is stored and any later token
    /// request for it answers `invalid_grant`, as an authorization code would (RFC 6749 §4.1.2).
    func tokenRequest(_ httpRequest: HTTPRequest) async throws -> HTTPResponse {
        let form = try Self.parseForm(httpRequest, limits: Self.tokenFormLimits)
        let client = try await authenticateClient(httpRequest, form: form)
        guard let grantType = form["grant_type"] else { throw CIBAFailure(.invalidRequest, "grant_type is required") }
        if grantType == AuthorizationCodeNames.grantType {
            return try await redeemAuthorizationCode(form, application: client.application)
        }
        guard grantType == CIBANames.grantType else {
            throw CIBAFailure(.unsupportedGrantType, "the grants are \(AuthorizationCodeNames.grantType) and \(CIBANames.grantType)")
        }
        guard let authReqID = form["auth_req_id"], !authReqID.isEmpty else {
            throw CIBAFailure(.invalidRequest, "auth_req_id is required")
        }
        guard Self.isPlausibleIdentifier(authReqID) else { throw CIBAFailure(.invalidGrant, "auth_req_id is unknown") }
        let outcome: PollOutcome
        do {
            outcome = try await store.recordPoll(authReqID: authReqID, clientID: client.application.clientID)
        } catch AuthorityStoreError.notFound {
            // Unknown, or another client's: the same answer, so a client learns nothing about others' requests.
            throw CIBAFailure(.invalidGrant, "auth_req_id is unknown")
        }
        switch outcome {
        case .slowDown(let interval):
            throw CIBAFailure(.slowDown, "polling too fast: wait at least \(interval) seconds between token requests")
        case .expired(let request):
            countOutcome(request)
            throw CIBAFailure(.expiredToken, "the request expired; start a new one")
        case .recorded(let request):
            switch request.state {
            case .pending:
                throw CIBAFailure(.authorizationPending, "the user has not answered yet")
            case .expired:
                throw CIBAFailure(.expiredToken, "the request expired; start a new one")
            case .denied:
                // The reason (`DenialReason`: `attempts_exhausted`, `user_cancelled`, …) is the description: the application learns why.
                throw CIBAFailure(.accessDenied, DenialReason(stored: request.denyReason).rawValue)
            case .stale:
                throw CIBAFailure(.staleToken, "the token was rotated by another completion; start a new request")
            case .completed:
                // A browser sign-in's request is redeemed only with its code and verifier: the store answered it unknown.
                guard request.idToken == nil else { throw CIBAFailure(.invalidGrant, "auth_req_id was already redeemed") }
                return try await issueTokens(for: request, application: client.application)
            }
        }
    }

    /// `grant_type=authorization_code` (RFC 6749 §4.1.3, RFC 7636 §4.6): the code is spent first, so every failure
    /// after that (another client, a wrong `redirect_uri` or verifier) also burns it; a code presented twice is
    /// `invalid_grant`. Then the sign-in's request, completed by the phone, gets its ID token with the `nonce`.
    private func redeemAuthorizationCode(_ form: FormParameters, application: ApplicationRecord) async throws -> HTTPResponse {
        let invalid = CIBAFailure(.invalidGrant, "the code is unknown, expired, already used or not this client's")
        guard let code = form["code"], !code.isEmpty else { throw CIBAFailure(.invalidRequest, "code is required") }
        guard let redirectURI = form["redirect_uri"], !redirectURI.isEmpty else {
            throw CIBAFailure(.invalidRequest, "redirect_uri is required")
        }
        guard let verifier = form["code_verifier"] else { throw CIBAFailure(.invalidRequest, "code_verifier is required (PKCE)") }
        guard Self.isPlausibleIdentifier(code) else { throw invalid }
        let redemption: CodeRedemption
        do {
            redemption = try await store.redeemBrowserSignInCode(codeHash: SHA256.hash(data: Array(code.utf8)).bytes)
        } catch AuthorityStoreError.notFound {
            throw invalid
        }
        guard case .redeemed(let signIn) = redemption, signIn.clientID == application.clientID,
              let expiresAt = signIn.codeExpiresAt, clock.now() < expiresAt, signIn.redirectURI == redirectURI,
              PKCE.verifies(verifier, challenge: signIn.codeChallenge) else { throw invalid }
        let request = try await store.request(authReqID: signIn.id)
        guard RequestLifecycle.decide(.issueIDToken, request, now: clock.now()) == .storeIDToken else { throw invalid }
        return try await issueTokens(for: request, application: application, nonce: signIn.nonce)
    }

    /// Signs the ID token, stores it (the first of concurrent redemptions wins; the others get `invalid_grant`) and
    /// answers it with a fresh access token.
    private func issueTokens(for request: CIBARequestRecord, application: ApplicationRecord, nonce: String? = nil) async throws -> HTTPResponse {
        let idToken = try await makeIDToken(for: request, application: application, nonce: nonce)
        let stored = try await store.storeIDToken(authReqID: request.authReqID, idToken: idToken)
        guard stored.idToken == idToken else { throw CIBAFailure(.invalidGrant, "auth_req_id was already redeemed") }
        // The access token is opaque and not kept: FaceSeal has no userinfo or resource endpoint it would unlock.
        let accessToken = "at_" + Base64URL.encode(SecureRandom.bytes(count: 32))
        let body = TokenResponse(accessToken: accessToken, expiresIn: configuration.tokenLifetime, idToken: idToken)
        return HTTPResponse(jsonBytes: body.encoded(), headers: ["Cache-Control": "no-store", "Pragma": "no-cache"])
    }
}
