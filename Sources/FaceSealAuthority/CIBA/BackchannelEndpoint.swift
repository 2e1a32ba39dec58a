import FaceSealCrypto
import FaceSealHTTP
import FaceSealWire
import Foundation

extension Authority {
    /// Form limits of the backchannel endpoint: room for `pki_data` (64 KiB as base64url) and a client assertion.
    static let backchannelFormLimits = FormParameters.Limits(maxBytes: 128 * 1024, maxParameters: 32)
    /// The longest `scope` kept with a request.
    static let maxScopeBytes = 2048
    /// Bytes of randomness in an `auth_req_id` (CIBA Core §7.3 asks for at least 128 bits).
    static let authReqIDByteCount = 24

    /// `POST /backchannel` (CIBA Core §7): authenticates the client, parses the request with every SPEC §4.3 rule,
    /// finds the user, stores the pending request, announces its link to the user's devices and acknowledges it.
    ///
    /// FaceSeal-specific decisions: `login_hint_token` is refused with `invalid_request` (there is no hint-token
    /// issuer to trust); FaceSeal has no user codes (`backchannel_user_code_parameter_supported: false`), so a request
    /// carrying `user_code` gets `invalid_user_code` — no code can be right — and `missing_user_code` is never
    /// answered; a signed request object (`request`) is refused with `invalid_request`.
    func backchannelAuthentication(_ httpRequest: HTTPRequest) async throws -> HTTPResponse {
        let form = try Self.parseForm(httpRequest, limits: Self.backchannelFormLimits)
        let client = try await authenticateClient(httpRequest, form: form)
        let application = client.application

        var parameters: [String: String] = [:]
        for item in form where !Self.clientAuthenticationParameters.contains(item.name) { parameters[item.name] = item.value }
        guard parameters["request"] == nil, parameters["request_uri"] == nil else {
            throw CIBAFailure(.invalidRequest, "signed authentication requests are not supported; send the parameters in the form")
        }
        let request: BackchannelAuthenticationRequest
        do {
            request = try BackchannelAuthenticationRequest(form: parameters)
        } catch {
            throw CIBAFailure(error.code, error.description)
        }
        guard request.scope.utf8.count <= Self.maxScopeBytes, !request.scope.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw CIBAFailure(.invalidRequest, "scope must be at most \(Self.maxScopeBytes) bytes of printable characters")
        }
        guard request.userCode == nil else {
            throw CIBAFailure(.invalidUserCode, "this provider has no user codes (backchannel_user_code_parameter_supported is false)")
        }
        if request.loginHintToken != nil {
            throw CIBAFailure(.invalidRequest, "login_hint_token is not supported; identify the user with login_hint or id_token_hint")
        }
        if application.deliveryMode == .ping {
            guard application.notificationEndpoint != nil else {
                throw CIBAFailure(.unauthorizedClient, "the client is in ping mode but has no notification endpoint registered")
            }
            guard request.clientNotificationToken != nil else {
                throw CIBAFailure(.invalidRequest, "client_notification_token is required in ping mode")
            }
        }
        if request.pkiKind != nil, application.deliveryEndpoint == nil {
            throw CIBAFailure(.unauthorizedClient, "face-PKI ceremonies need a delivery endpoint registered for the client")
        }

        let hint = try await userHint(request, clientID: application.clientID, tenantID: application.tenantID)
        // At once rather than a request that would expire unanswered. The same answer as for nobody: the client learns
        // only whether the hint names a user who can approve its requests (docs/PROTOCOL.md §3, "User enumeration").
        let audience: RequestAudience
        do {
            audience = try await store.requestAudience(hint, clientID: application.clientID, tenantID: application.tenantID)
        } catch AuthorityStoreError.notFound(.user, _) {
            throw CIBAFailure(.unknownUserId, Self.noSuchUser)
        }
        let (subject, tenant) = (audience.subject, audience.tenant)
        guard audience.hasActiveDevice else { throw CIBAFailure(.unknownUserId, Self.noSuchUser) }
        let lifetime = tenant.policy.requestLifetimeSeconds > 0 ? tenant.policy.requestLifetimeSeconds : configuration.defaultRequestLifetime
        let expiresIn = min(request.requestedExpiry ?? lifetime, lifetime)
        let expiresAt = clock.now().addingTimeInterval(TimeInterval(expiresIn))
        let authReqID = Base64URL.encode(SecureRandom.bytes(count: Self.authReqIDByteCount))
        let record = CIBARequestRecord(
            authReqID: authReqID, tenantID: application.tenantID, clientID: application.clientID, subject: subject,
            kind: request.pkiKind == nil ? .login : .ceremony, pkiKind: request.pkiKind?.rawValue,
            pkiContext: request.pkiKind == nil ? nil : request.pkiContext, pkiData: request.pkiData,
            bindingMessage: request.bindingMessage, clientNotificationToken: request.clientNotificationToken,
            scope: request.scope, expiresAt: expiresAt, intervalSeconds: configuration.pollInterval
        )
        // The link is signed first, so the request and its links are stored in one transaction.
        let claims = LinkClaims(iss: issuer, rid: authReqID, kind: request.pkiKind == nil ? .login : .ceremony,
                                exp: Int64(expiresAt.timeIntervalSince1970), nonce: linkNonce(for: authReqID))
        try? await refreshDeviceResponseKey()
        let link = try LinkSignature.make(claims, key: deviceKey)
        let limit = configuration.rateLimits.pendingRequestsPerUser
        let stored: AnnouncedRequest
        do {
            stored = try await store.createRequest(record, pendingLimit: limit > 0 ? limit : nil, announcing: link)
        } catch let full as PendingRequestLimitReached {
            metrics.rateLimitHit(.pendingRequests)
            let limited = RateLimited(until: full.retryAt, now: clock.now())
            throw CIBAFailure(.accessDenied, "the user already has \(limit) pending requests of this client; retry after \(limited.retryAfter) s",
                              headers: limited.headers)
        }
        metrics.requestCreated(kind: stored.request.pkiKind ?? stored.request.kind.rawValue)
        try await announceQueued(stored, link: link, webhook: audience.webhook)
        let body = BackchannelAuthenticationResponse(authReqId: authReqID, expiresIn: expiresIn, interval: stored.request.intervalSeconds)
        return HTTPResponse(jsonBytes: body.encoded(), headers: ["Cache-Control": "no-store", "Pragma": "no-cache"])
    }

    /// The `error_description` of every `unknown_user_id` about the user: no user, a user of another tenant or application,
    /// one without a device enrolled for the client, a deleted one — the same words, so none of them is told apart.
    static let noSuchUser = "the hint names no user with a device enrolled for this client"

    /// Whom the request names, in the client's tenant: `login_hint` is an email or a subject (looked up with the
    /// request's audience, `requestAudience`); `id_token_hint` an ID token this authority issued to this client. A hint
    /// naming nobody is `unknown_user_id`.
    private func userHint(_ request: BackchannelAuthenticationRequest, clientID: String, tenantID: String) async throws -> UserHint {
        if let hint = request.loginHint {
            guard Self.isPlausibleIdentifier(hint, maxBytes: 320) else {
                throw CIBAFailure(.unknownUserId, Self.noSuchUser)
            }
            return .loginHint(hint)
        }
        if let hint = request.idTokenHint {
            return .subject(try await subject(ofIDTokenHint: hint, clientID: clientID, tenantID: tenantID))
        }
        // The parser guarantees exactly one hint; login_hint_token was refused before.
        throw CIBAFailure(.invalidRequest, "a login_hint or id_token_hint is required")
    }

    /// `id_token_hint`: it must verify against this authority's keys (expired tokens are accepted, as OIDC Core §3.1.2.1
    /// allows), name this issuer and this client as audience, and be exactly the ID token stored for the request its
    /// `auth_req_id` claim names — which gives the user without inverting the pairwise subject.
    private func subject(ofIDTokenHint hint: String, clientID: String, tenantID: String) async throws -> String {
        let ring = try await idTokenKeyRing()
        let unknown = CIBAFailure(.unknownUserId, "id_token_hint is not an ID token this provider issued to this client")
        let claims: JWTClaims
        do {
            let verified = try JWS.verify(hint, keySet: ring.published, factory: .includingMLDSA65)
            claims = try JWTClaims(payload: verified.payload)
        } catch {
            throw unknown
        }
        guard claims.issuer == issuer, (try? claims.audience())?.contains(clientID) == true,
              let authReqID = claims[CIBANames.authReqIdClaim]?.stringValue, Self.isPlausibleIdentifier(authReqID) else { throw unknown }
        let request: CIBARequestRecord
        do {
            request = try await store.request(authReqID: authReqID)
        } catch AuthorityStoreError.notFound {
            throw unknown
        }
        guard request.clientID == clientID, request.tenantID == tenantID, let issued = request.idToken,
              constantTimeEquals(Array(issued.utf8), Array(hint.utf8)) else { throw unknown }
        // Whether the user still exists is `requestAudience`'s (a deleted one is `unknown_user_id`, as any missing user).
        return request.subject
    }

    /// The form body, or `invalid_request` (400) naming what is wrong with it.
    static func parseForm(_ request: HTTPRequest, limits: FormParameters.Limits) throws -> FormParameters {
        do {
            return try request.formParameters(limits: limits)
        } catch {
            let reason = switch error {
            case .unsupportedContentType: "the body must be application/x-www-form-urlencoded"
            case .tooLarge(let limit): "the form exceeds \(limit) bytes"
            case .tooManyParameters(let limit): "the form has more than \(limit) parameters"
            case .invalidPercentEncoding: "the form has a malformed percent-encoding"
            case .invalidUTF8: "a form parameter is not valid UTF-8"
            case .emptyName: "the form has a parameter with an empty name"
            case .duplicateParameter: "a form parameter is repeated"
            case .missingParameter: "a required form parameter is missing"
            }
            throw CIBAFailure(.invalidRequest, reason)
        }
    }
}
