import FaceSealCrypto
import FaceSealHTTP
import FaceSealWire
import Foundation

/// The paths of the browser sign-in (the authorization code flow's front channel).
public enum WebPaths {
    /// The page's status (JSON), polled by its script.
    public static func status(_ id: String) -> String { "\(CIBAPaths.authorize)/\(id)/status" }
    /// Where the page goes once the sign-in is over: a redirect to the application.
    public static func `continue`(_ id: String) -> String { "\(CIBAPaths.authorize)/\(id)/continue" }
    /// The prefix of every browser sign-in id (ids stay base64url characters: devices put them in a path segment).
    public static let signInIDPrefix = "ws_"
}

/// Why the sign-in page cannot go on: an error page for the browser, never a redirect.
struct BrowserSignInFailure: Error, HTTPResponseConvertible {
    let status: HTTPStatus
    let message: String

    var httpResponse: HTTPResponse { HTML.errorPage(status: status, title: "Sign-in failed", message: message) }
}

extension Authority {
    /// How long a browser sign-in can be approved, seconds (capped by the tenant's request lifetime).
    static let browserSignInLifetime = 300
    /// How long an authorization code can be redeemed, seconds (RFC 6749 §4.1.2 recommends at most ten minutes).
    static let authorizationCodeLifetime = 60
    /// Unexpired browser sign-ins per application: the page is unauthenticated, so this bounds what anyone can
    /// make the authority keep.
    static let liveBrowserSignInsPerApplication = 1000
    /// Form limits of `POST /authorize` (the same parameters as the query).
    static let authorizeFormLimits = FormParameters.Limits(maxBytes: 16 * 1024, maxParameters: 64)
    /// The cookie that ties a sign-in to the browser that opened it (path-scoped to that sign-in).
    static let signInCookie = "faceseal_signin"

    /// Installs `/authorize` (GET and POST, OIDC Core §3.1.2.1), the page's status and continue routes, the assets and
    /// the console.
    func installWebRoutes(into router: inout Router) {
        router.get(CIBAPaths.authorize) { [self] request in await authorize(request.query) }
        router.post(CIBAPaths.authorize) { [self] request in
            do {
                return await authorize(try request.formParameters(limits: Self.authorizeFormLimits, allowDuplicates: true))
            } catch {
                return HTML.errorPage(status: .badRequest, title: "Sign-in failed", message: "The sign-in form is malformed.")
            }
        }
        router.get("\(CIBAPaths.authorize)/:sid/status") { [self] request in try await signInStatus(request) }
        router.get("\(CIBAPaths.authorize)/:sid/continue") { [self] request in try await continueSignIn(request) }
        WebAssets.install(into: &router)
        installConsoleRoutes(into: &router)
    }

    /// `/authorize`: checks the request, stores a browser sign-in and answers its page (with the browser cookie). A
    /// `login_hint` naming a user of the tenant also sends the sign-in link to that user's phones; the page says so
    /// whether or not the user exists, so the page reveals nobody's account.
    func authorize(_ parameters: FormParameters) async -> HTTPResponse {
        do {
            let application = try await authorizingApplication(parameters["client_id"])
            let request: AuthorizationRequest
            do {
                request = try AuthorizationRequest(query: parameters, application: application, issuer: issuer)
            } catch {
                switch error {
                case .page(let message):
                    return HTML.errorPage(status: .badRequest, title: "Sign-in failed", message: message)
                case .redirect(let response, let uri):
                    return Self.redirect(to: uri, with: response)
                }
            }
            // The parser succeeded, so the application exists.
            guard let application else { throw BrowserSignInFailure(status: .badRequest, message: "Unknown application.") }
            return try await startBrowserSignIn(request, application: application)
        } catch let failure as BrowserSignInFailure {
            return failure.httpResponse
        } catch {
            log.event(.error, "authorize.failed", ["error": .string(String(reflecting: type(of: error)))])
            return HTML.errorPage(status: .internalServerError, title: "Sign-in failed", message: "The authority could not start the sign-in. Try again.")
        }
    }

    /// The application `client_id` names, or nil for none (the parser then shows an error page).
    private func authorizingApplication(_ clientID: String?) async throws -> ApplicationRecord? {
        guard let clientID, Self.isPlausibleIdentifier(clientID) else { return nil }
        do {
            return try await store.application(clientID: clientID)
        } catch AuthorityStoreError.notFound {
            return nil
        }
    }

    private func startBrowserSignIn(_ request: AuthorizationRequest, application: ApplicationRecord) async throws -> HTTPResponse {
        let tenant = try await store.tenant(id: application.tenantID)
        let lifetime = min(Self.browserSignInLifetime,
                           tenant.policy.requestLifetimeSeconds > 0 ? tenant.policy.requestLifetimeSeconds : configuration.defaultRequestLifetime)
        let expiresAt = clock().addingTimeInterval(TimeInterval(lifetime))
        let id = WebPaths.signInIDPrefix + Base64URL.encode(SecureRandom.bytes(count: Self.authReqIDByteCount))
        let browserSecret = Base64URL.encode(SecureRandom.bytes(count: 32))
        let record = BrowserSignInRecord(
            id: id, tenantID: application.tenantID, clientID: application.clientID, redirectURI: request.redirectURI,
            state: request.state, nonce: request.nonce, codeChallenge: request.codeChallenge, scope: request.scope,
            bindingMessage: Self.newBindingCode(), browserHash: SHA256.hash(data: Array(browserSecret.utf8)).bytes, expiresAt: expiresAt)
        let signIn: BrowserSignInRecord
        do {
            signIn = try await store.createBrowserSignIn(record, liveLimit: Self.liveBrowserSignInsPerApplication)
        } catch is BrowserSignInLimitReached {
            throw BrowserSignInFailure(status: .tooManyRequests, message: "Too many sign-ins are waiting for this application. Try again in a few minutes.")
        }
        try? await refreshDeviceResponseKey()
        let link = try LinkSignature.make(
            LinkClaims(iss: issuer, rid: id, kind: .login, exp: Int64(expiresAt.timeIntervalSince1970), nonce: linkNonce(for: id)),
            key: deviceKey)
        if let hint = request.loginHint { try await askPhone(of: hint, signIn: signIn, link: link) }
        var cookie = "\(Self.signInCookie)=\(browserSecret); Path=\(CIBAPaths.authorize)/\(id); Max-Age=\(lifetime); HttpOnly; SameSite=Strict"
        if issuer.hasPrefix("https://") { cookie += "; Secure" }
        return try SignInPage.render(signIn, application: application, universalLink: issuer + LinkLimits.universalLinkPath + link,
                                     loginHint: request.loginHint, headers: ["Set-Cookie": cookie])
    }

    /// With a `login_hint` naming a user of the tenant, the sign-in becomes that user's request at once and its link
    /// goes to the user's phones; a hint naming nobody does nothing (the page looks the same).
    private func askPhone(of hint: String, signIn: BrowserSignInRecord, link: String) async throws {
        guard Self.isPlausibleIdentifier(hint, maxBytes: 320) else { return }
        var user: UserRecord?
        do {
            user = try await store.user(tenantID: signIn.tenantID, email: hint)
        } catch AuthorityStoreError.notFound {
            if let bySubject = try? await store.user(subject: hint), bySubject.tenantID == signIn.tenantID { user = bySubject }
        }
        guard let user else { return }
        do {
            let request = try await createSignInRequest(signIn, subject: user.subject)
            try await announce(link: link, for: request)
        } catch is PendingRequestLimitReached {
            // The user's phone already has as many requests of this application as allowed; the QR still works.
        }
    }

    /// The sign-in request (a CIBA login request with the sign-in's id) of `subject`.
    private func createSignInRequest(_ signIn: BrowserSignInRecord, subject: String) async throws -> CIBARequestRecord {
        let record = CIBARequestRecord(
            authReqID: signIn.id, tenantID: signIn.tenantID, clientID: signIn.clientID, subject: subject, kind: .login,
            pkiKind: nil, pkiContext: nil, pkiData: nil, bindingMessage: signIn.bindingMessage, clientNotificationToken: nil,
            scope: signIn.scope, expiresAt: signIn.expiresAt, intervalSeconds: configuration.pollInterval)
        let limit = configuration.rateLimits.pendingRequestsPerUser
        return try await store.createRequest(record, pendingLimit: limit > 0 ? limit : nil)
    }

    /// A device asked for the details of `rid` and no request has that id: when it is an unexpired, unclaimed browser
    /// sign-in of the key's application, the key's user claims it (the first device wins; the sign-in is then that
    /// user's request). Anything else is `unknown_request`, as for any other id.
    func claimBrowserSignIn(_ rid: String, device: AuthenticatedDevice) async throws -> CIBARequestRecord? {
        guard rid.hasPrefix(WebPaths.signInIDPrefix) else { return nil }
        let signIn: BrowserSignInRecord
        do {
            signIn = try await store.browserSignIn(id: rid)
        } catch AuthorityStoreError.notFound {
            return nil
        }
        guard signIn.clientID == device.key.clientID else { return nil }
        guard clock() < signIn.expiresAt else { throw DeviceFailure(.requestExpired, "the request expired") }
        do {
            return try await createSignInRequest(signIn, subject: device.key.subject)
        } catch AuthorityStoreError.conflict {
            // Another device claimed it first; the caller's ownership check decides.
            return try await store.request(authReqID: rid)
        } catch let full as PendingRequestLimitReached {
            let limited = RateLimited(until: full.retryAt, now: clock())
            var failure = DeviceFailure(.rateLimited, "the user has too many pending requests; retry after \(limited.retryAfter) s")
            failure.headers = limited.headers
            throw failure
        }
    }

    /// The sign-in of the path, only for the browser holding its cookie: anything else is the same 404, so the id
    /// alone (which the QR code shows to anyone looking at the screen) reveals and releases nothing.
    private func browserSignIn(_ request: HTTPRequest) async throws -> BrowserSignInRecord {
        let id = request.pathParameter("sid")
        let unknown = BrowserSignInFailure(status: .notFound, message: "This sign-in does not exist or belongs to another browser. Start again at the application.")
        guard id.hasPrefix(WebPaths.signInIDPrefix), Self.isPlausibleIdentifier(id),
              let secret = Self.cookie(Self.signInCookie, in: request.headers["Cookie"]) else { throw unknown }
        let signIn: BrowserSignInRecord
        do {
            signIn = try await store.browserSignIn(id: id)
        } catch AuthorityStoreError.notFound {
            throw unknown
        }
        guard constantTimeEquals(SHA256.hash(data: Array(secret.utf8)).bytes, signIn.browserHash) else { throw unknown }
        return signIn
    }

    /// The request a device made of the sign-in, if any.
    private func signInRequest(_ signIn: BrowserSignInRecord) async throws -> CIBARequestRecord? {
        do {
            return try await store.request(authReqID: signIn.id)
        } catch AuthorityStoreError.notFound {
            return nil
        }
    }

    /// `GET /authorize/{sid}/status` → `{"status": "pending" | "claimed" | "finished"}`.
    func signInStatus(_ request: HTTPRequest) async throws -> HTTPResponse {
        let status: String
        do {
            let signIn = try await browserSignIn(request)
            let record = try await signInRequest(signIn)
            if signIn.codeHash != nil || clock() >= signIn.expiresAt || (record.map { $0.state != .pending } ?? false) {
                status = "finished"
            } else {
                status = record == nil ? "pending" : "claimed"
            }
        } catch let failure as BrowserSignInFailure {
            return HTTPResponse(jsonBytes: Array(#"{"error":"not_found"}"#.utf8), status: failure.status, headers: ["Cache-Control": "no-store"])
        }
        return HTTPResponse(jsonBytes: Array(#"{"status":"\#(status)"}"#.utf8), headers: ["Cache-Control": "no-store"])
    }

    /// `GET /authorize/{sid}/continue`: once the phone approved, issues the sign-in's one authorization code and
    /// redirects to the registered redirect URI with it and `state` (RFC 6749 §4.1.2); a denial, an expiry or a stale
    /// token is an `access_denied` error there. Before that, and after the code was issued, an error page.
    func continueSignIn(_ request: HTTPRequest) async throws -> HTTPResponse {
        let signIn = try await browserSignIn(request)
        guard signIn.codeHash == nil else {
            throw BrowserSignInFailure(status: .conflict, message: "This sign-in was already completed. Start again at the application.")
        }
        func error(_ description: String) -> HTTPResponse {
            Self.redirect(to: signIn.redirectURI, with: AuthorizationResponse(
                .error("access_denied", description: description), state: signIn.state, issuer: issuer))
        }
        guard let record = try await signInRequest(signIn) else {
            guard clock() >= signIn.expiresAt else {
                throw BrowserSignInFailure(status: .conflict, message: "The sign-in has not been approved yet.")
            }
            return error("expired")
        }
        switch record.state {
        case .pending:
            guard clock() >= record.expiresAt else {
                throw BrowserSignInFailure(status: .conflict, message: "The sign-in has not been approved yet.")
            }
            return error("expired")
        case .expired: return error("expired")
        case .denied: return error(record.denyReason ?? "denied")
        case .stale: return error("stale_token")
        case .completed:
            let code = "ac_" + Base64URL.encode(SecureRandom.bytes(count: 32))
            do {
                _ = try await store.issueBrowserSignInCode(
                    id: signIn.id, codeHash: SHA256.hash(data: Array(code.utf8)).bytes,
                    expiresAt: clock().addingTimeInterval(TimeInterval(Self.authorizationCodeLifetime)))
            } catch AuthorityStoreError.conflict {
                throw BrowserSignInFailure(status: .conflict, message: "This sign-in was already completed. Start again at the application.")
            }
            return Self.redirect(to: signIn.redirectURI, with: AuthorizationResponse(.code(code), state: signIn.state, issuer: issuer))
        }
    }

    /// 303 to `uri` with the response's parameters appended to its query (RFC 6749 §3.1.2 keeps an existing query).
    static func redirect(to uri: String, with response: AuthorizationResponse) -> HTTPResponse {
        let query = FormParameters(response.queryItems.map { FormParameters.Item(name: $0.0, value: $0.1) }).encoded
        let location = uri + (uri.contains("?") ? "&" : "?") + query
        var headers = HTML.securityHeaders()
        headers["Location"] = location
        return HTTPResponse(status: .seeOther, headers: headers)
    }

    /// The value of cookie `name` in a `Cookie` header (RFC 6265 §5.4), or nil; a header over 4 KiB names none.
    static func cookie(_ name: String, in header: String?) -> String? {
        guard let header, header.utf8.count <= 4096 else { return nil }
        for pair in header.split(separator: ";") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == name {
                return parts[1].trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }

    /// The code shown on the page and on the phone (`Browser code K7Q-4MX`): the user checks that the phone shows the
    /// code of the page in front of them, so two sign-ins at once cannot be mixed up.
    static func newBindingCode() -> String {
        // 32 symbols: every byte maps to one without bias.
        let alphabet = Array("ABCDEFGHJKLMNPQRSTUVWXYZ23456789")
        let characters = SecureRandom.bytes(count: 6).map { alphabet[Int($0) % 32] }
        return "Browser code " + String(characters[0..<3]) + "-" + String(characters[3...])
    }
}
