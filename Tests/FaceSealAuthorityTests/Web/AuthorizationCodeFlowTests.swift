import FaceSealCrypto
import FaceSealHTTP
import FaceSealTestSupport
import FaceSealWire
import Foundation
import Testing
@testable import FaceSealAuthority

/// A browser of these tests: the authority's page, its cookie, and the pieces a browser would follow by hand.
struct TestBrowser {
    static let clientID = "web-app"
    static let secret = "web-app-secret-0123456789"
    static let redirectURI = "https://rp.example/callback?from=faceseal"

    let harness: AuthorityHarness
    let verifier = PKCE.newVerifier()
    var cookie: String?
    var page = ""

    static func register(_ harness: AuthorityHarness, clientID: String = clientID) async throws {
        _ = try await harness.store.createApplication(ApplicationRecord(
            clientID: clientID, tenantID: "acme", label: "Web App", credential: .secretHash(ClientSecret.hash(secret)),
            brandingJSON: ##"{"name":"Web <App>","primary_color":"#123456"}"##, idTokenSignedResponseAlg: "EdDSA",
            redirectURIs: [redirectURI]))
    }

    /// The authorization request's query: valid unless `changes` say otherwise (nil removes a parameter).
    func query(_ changes: [String: String?] = [:]) -> String {
        var parameters: [String: String?] = [
            "response_type": "code", "client_id": Self.clientID, "redirect_uri": Self.redirectURI, "scope": "openid",
            "state": "state-1", "nonce": "nonce-1", "code_challenge": PKCE.challenge(for: verifier), "code_challenge_method": "S256",
        ]
        for (name, value) in changes { parameters[name] = value }
        let items = parameters.compactMap { name, value in value.map { FormParameters.Item(name: name, value: $0) } }
        return FormParameters(items.sorted { $0.name < $1.name }).encoded
    }

    func get(_ path: String, cookie: String? = nil) async throws -> HTTPClientResponse {
        var headers: HTTPHeaders = [:]
        if let cookie { headers["Cookie"] = "other=1; \(Authority.signInCookie)=\(cookie)" }
        return try await harness.client.send(HTTPClientRequest(url: harness.url(path), headers: headers))
    }

    /// Opens the page; keeps its cookie and HTML.
    mutating func open(_ changes: [String: String?] = [:]) async throws -> HTTPClientResponse {
        let response = try await get(CIBAPaths.authorize + "?" + query(changes))
        page = String(decoding: response.body, as: UTF8.self)
        if let header = response.headers["Set-Cookie"] { cookie = Authority.cookie(Authority.signInCookie, in: header.components(separatedBy: ";").first) }
        return response
    }

    /// The sign-in link the page shows (the `href` of `#signin-link`).
    var link: String {
        get throws {
            let marker = #"id="signin-link" href=""#
            let start = try #require(page.range(of: marker)).upperBound
            let end = try #require(page[start...].firstIndex(of: "\""))
            return String(page[start..<end]).replacingOccurrences(of: "&amp;", with: "&")
        }
    }

    var signInID: String { get throws { try LinkSignature.parse(Array(try link.utf8)).claims.rid } }

    func status() async throws -> String? {
        let response = try await get(WebPaths.status(try signInID), cookie: cookie)
        guard response.status == 200, case .object(let members)? = try? JSONValue.parse(response.body) else { return nil }
        return members["status"]?.stringValue
    }

    /// Follows the continue link: the redirect's parameters (nil when it was no redirect).
    func finish() async throws -> (status: Int, parameters: [String: String]?) {
        let response = try await get(WebPaths.continue(try signInID), cookie: cookie)
        return (response.status.code, try Self.redirectParameters(response))
    }

    static func redirectParameters(_ response: HTTPClientResponse) throws -> [String: String]? {
        guard response.status == .seeOther, let location = response.headers["Location"] else { return nil }
        #expect(location.hasPrefix(redirectURI + "&"))
        let query = String(try #require(location.split(separator: "?", maxSplits: 1).last))
        let form = try FormParameters(parsing: Array(query.utf8), limits: .init(), allowDuplicates: false)
        return Dictionary(uniqueKeysWithValues: form.items.map { ($0.name, $0.value) })
    }

    /// `POST /token` with the CIBA grant for `authReqID`: the error code (nil for success).
    func redeemAsCIBA(_ authReqID: String) async throws -> String? {
        let response = try await ApplicationHarness(authority: harness.baseURL, clientID: Self.clientID, secret: Self.secret,
                                                    authentication: .post).token(authReqID)
        return response.status.code == 200 ? nil : try OAuthErrorResponse.decode(response.body).error.rawValue
    }

    /// `POST /token` with the code: the error code or the ID token.
    func redeem(_ code: String, verifier: String? = nil, redirectURI: String = redirectURI, clientID: String = clientID)
        async throws -> (error: String?, idToken: String?) {
        let form = FormParameters([
            ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURI), ("code_verifier", verifier ?? self.verifier),
            ("client_id", clientID), ("client_secret", Self.secret),
        ].map { FormParameters.Item(name: $0.0, value: $0.1) })
        let response = try await harness.client.send(.form(url: harness.url(CIBAPaths.token), form: form))
        if response.status.code == 200 { return (nil, try TokenResponse.decode(response.body).idToken) }
        return (try OAuthErrorResponse.decode(response.body).error.rawValue, nil)
    }
}

/// A device approves the sign-in `rid` (claims it with its details, then completes with a rotated token).
func approve(_ device: TestDevice, _ rid: String) async throws {
    let details = try await device.send(.get, DevicePaths.request(rid))
    guard details.status == 200 else { throw TestDeviceError.refused(details.status, details.error) }
    let completion = try TestDevice.completion(rid: rid, from: try await downloadToken(device, rid), receipt: nil)
    let response = try await device.post(DevicePaths.completion(rid), completion)
    guard response.status == 200 else { throw TestDeviceError.refused(response.status, response.error) }
}

@Suite("Browser sign-in: the authorization code flow with PKCE")
struct AuthorizationCodeFlowTests {
    @Test("page → QR link → the phone claims and approves → redirect with code and state → ID token with nonce, once",
          arguments: StoreBackend.underTest)
    func codeFlowEndToEnd(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            try await TestBrowser.register(harness)
            let (device, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: TestBrowser.clientID)
            var browser = TestBrowser(harness: harness)
            let page = try await browser.open()
            #expect(page.status == 200)
            #expect(page.headers["Content-Security-Policy"]?.contains("frame-ancestors 'none'") == true)
            #expect(page.headers["X-Frame-Options"] == "DENY")
            #expect(browser.page.contains("Sign in to Web &lt;App&gt;"))
            #expect(browser.page.contains("<svg"))
            #expect(!browser.page.contains("<script>"))
            let link = try LinkSignature.parse(Array(try browser.link.utf8)).verify(with: device.authorityKey, now: device.now)
            #expect(link.kind == .login)
            #expect(link.rid.hasPrefix(WebPaths.signInIDPrefix))
            #expect(try await browser.status() == "pending")

            let details = try await device.send(.get, DevicePaths.request(link.rid)).decode(RequestDetails.self)
            #expect(details.clientId == TestBrowser.clientID)
            #expect(details.nonce == link.nonce)
            #expect(browser.page.contains(try #require(details.bindingMessage)))
            #expect(try await browser.status() == "claimed")
            #expect(try await browser.finish().status == 409)

            try await approve(device, link.rid)
            #expect(try await browser.status() == "finished")
            let redirect = try await browser.finish()
            let parameters = try #require(redirect.parameters)
            #expect(parameters["state"] == "state-1")
            #expect(parameters["iss"] == harness.authority.issuer)
            #expect(parameters["from"] == "faceseal")
            let code = try #require(parameters["code"])

            let (error, idToken) = try await browser.redeem(code)
            #expect(error == nil)
            let claims = try JWTClaims(payload: try JWS.parse(try #require(idToken)).payload)
            #expect(claims["nonce"]?.stringValue == "nonce-1")
            #expect(try claims.audience() == [TestBrowser.clientID])
            #expect(claims.subject == harness.authority.pairwiseSubject(userSubject: "user-1", clientID: TestBrowser.clientID))
            #expect(claims[CIBANames.authReqIdClaim]?.stringValue == link.rid)
            #expect(claims["amr"] == .array([.string("face"), .string("hwk")]))

            #expect(try await browser.redeem(code).error == "invalid_grant")
            #expect(try await browser.finish().status == 409)
        }
    }

    @Test("a wrong verifier, redirect_uri or client burns the code; the CIBA grant cannot redeem a sign-in",
          arguments: StoreBackend.underTest)
    func codeRedemptionRules(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            try await TestBrowser.register(harness)
            try await TestBrowser.register(harness, clientID: "web-app-2")
            let (device, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: TestBrowser.clientID)
            for attempt in 0..<3 {
                var browser = TestBrowser(harness: harness)
                _ = try await browser.open()
                try await approve(device, try browser.signInID)
                let code = try #require(try await browser.finish().parameters?["code"])
                let refused = switch attempt {
                case 0: try await browser.redeem(code, verifier: PKCE.newVerifier())
                case 1: try await browser.redeem(code, redirectURI: "https://rp.example/callback")
                default: try await browser.redeem(code, clientID: "web-app-2")
                }
                #expect(refused.error == "invalid_grant")
                #expect(try await browser.redeem(code).error == "invalid_grant")
                #expect(try await browser.redeemAsCIBA(try browser.signInID) == "invalid_grant")
            }
            let browser = TestBrowser(harness: harness)
            #expect(try await browser.redeem("ac_unknown").error == "invalid_grant")
        }
    }

    @Test("the code expires after a minute", arguments: StoreBackend.underTest)
    func codeExpiry(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            try await TestBrowser.register(harness)
            let (device, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: TestBrowser.clientID)
            var browser = TestBrowser(harness: harness)
            _ = try await browser.open()
            try await approve(device, try browser.signInID)
            let code = try #require(try await browser.finish().parameters?["code"])
            harness.clock.advance(by: TimeInterval(Authority.authorizationCodeLifetime))
            #expect(try await browser.redeem(code).error == "invalid_grant")
        }
    }

    @Test("no client or an unregistered redirect_uri is an error page, never a redirect; other errors go to the redirect URI",
          arguments: StoreBackend.underTest)
    func requestErrors(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            try await TestBrowser.register(harness)
            var browser = TestBrowser(harness: harness)
            for changes: [String: String?] in [
                ["client_id": nil], ["client_id": "nobody"], ["redirect_uri": nil], ["redirect_uri": "https://evil.example/callback"],
                ["redirect_uri": "https://rp.example/callback"], ["redirect_uri": TestBrowser.redirectURI + "&x=1"],
            ] {
                let response = try await browser.open(changes)
                #expect(response.status == .badRequest, "\(changes)")
                #expect(response.headers["Location"] == nil)
                #expect(response.headers["Set-Cookie"] == nil)
                #expect(browser.page.contains("id=\"error-message\""))
            }
            let repeated = try await browser.get(CIBAPaths.authorize + "?" + browser.query() + "&redirect_uri=https%3A%2F%2Fevil.example%2F")
            #expect(repeated.status == .badRequest)
            #expect(repeated.headers["Location"] == nil)

            let cases: [([String: String?], String)] = [
                (["code_challenge": nil], "invalid_request"), (["code_challenge_method": "plain"], "invalid_request"),
                (["code_challenge_method": nil], "invalid_request"), (["code_challenge": "short"], "invalid_request"),
                (["response_type": "token"], "unsupported_response_type"), (["response_type": nil], "invalid_request"),
                (["scope": "profile"], "invalid_scope"), (["prompt": "none"], "login_required"),
                (["request": "eyJ"], "request_not_supported"), (["nonce": String(repeating: "n", count: 2000)], "invalid_request"),
            ]
            for (changes, expected) in cases {
                let response = try await browser.open(changes)
                let parameters = try #require(try TestBrowser.redirectParameters(response), "\(changes)")
                #expect(parameters["error"] == expected, "\(changes)")
                #expect(parameters["state"] == "state-1")
                #expect(response.headers["Set-Cookie"] == nil)
            }
        }
    }

    @Test("a denial and an expiry are access_denied at the redirect URI; an expired sign-in cannot be claimed",
          arguments: StoreBackend.underTest)
    func denialAndExpiry(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            try await TestBrowser.register(harness)
            let (device, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: TestBrowser.clientID)
            var denied = TestBrowser(harness: harness)
            _ = try await denied.open()
            let rid = try denied.signInID
            #expect(try await device.send(.get, DevicePaths.request(rid)).status == 200)
            #expect(try await device.post(DevicePaths.abort(rid), AbortRequest(rid: rid, reason: .userCancelled)).status == 204)
            #expect(try await denied.status() == "finished")
            let refusal = try #require(try await denied.finish().parameters)
            #expect(refusal["error"] == "access_denied")
            #expect(refusal["error_description"] == "user_cancelled")
            #expect(refusal["state"] == "state-1")

            var late = TestBrowser(harness: harness)
            _ = try await late.open()
            harness.clock.advance(by: TimeInterval(Authority.browserSignInLifetime))
            #expect(try await late.status() == "finished")
            #expect(try #require(try await late.finish().parameters)["error"] == "access_denied")
            expectDeviceError(try await device.send(.get, DevicePaths.request(try late.signInID)), .requestExpired)
        }
    }

    @Test("the page's routes answer only the browser with its cookie; another application's key cannot claim",
          arguments: StoreBackend.underTest)
    func browserAndApplicationBinding(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            try await TestBrowser.register(harness)
            let (other, _) = try await TestDevice.enrolled(in: harness, subject: "user-2", clientID: "app-1")
            var browser = TestBrowser(harness: harness)
            _ = try await browser.open()
            let rid = try browser.signInID
            let real = try #require(browser.cookie)
            let altered = String(real.dropLast()) + (real.hasSuffix("A") ? "B" : "A")
            for cookie in [nil, "wrong", altered] {
                #expect(try await browser.get(WebPaths.status(rid), cookie: cookie).status == .notFound)
                #expect(try await browser.get(WebPaths.continue(rid), cookie: cookie).status == .notFound)
            }
            expectDeviceError(try await other.send(.get, DevicePaths.request(rid)), .unknownRequest)
            #expect(try await browser.status() == "pending")
        }
    }

    @Test("a login_hint asks the user's phone at once; an unknown hint shows the same page", arguments: StoreBackend.underTest)
    func loginHint(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            try await TestBrowser.register(harness)
            let (device, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: TestBrowser.clientID)
            var browser = TestBrowser(harness: harness)
            _ = try await browser.open(["login_hint": "user-1@example.com"])
            #expect(browser.page.contains("id=\"hint-notice\""))
            let links = try await device.send(.get, DevicePaths.outbox + "?wait=0").decode(OutboxResponse.self).links
            #expect(try links.map { try LinkSignature.parse(Array($0.utf8)).claims.rid } == [try browser.signInID])
            #expect(try await browser.status() == "claimed")
            try await approve(device, try browser.signInID)
            #expect(try await browser.finish().parameters?["code"] != nil)

            var unknown = TestBrowser(harness: harness)
            _ = try await unknown.open(["login_hint": "nobody@example.com"])
            #expect(unknown.page.contains("id=\"hint-notice\""))
            #expect(try await unknown.status() == "pending")
        }
    }

    @Test("discovery advertises the code flow with S256 only")
    func discovery() async throws {
        try await withAuthority(.sqlite) { harness in
            let response = try await harness.client.send(HTTPClientRequest(url: harness.url(CIBAPaths.discovery)))
            guard case .object(let members) = try JSONValue.parse(response.body) else { Issue.record("not an object"); return }
            #expect(members["response_types_supported"] == .array([.string("code")]))
            #expect(members["code_challenge_methods_supported"] == .array([.string("S256")]))
            #expect(members["grant_types_supported"] == .array([.string("authorization_code"), .string(CIBANames.grantType)]))
            #expect(members["authorization_endpoint"]?.stringValue == harness.authority.issuer + "/authorize")
        }
    }
}
