import FaceSealCrypto
import FaceSealHTTP
import FaceSealWire
import Foundation
import Testing
@testable import FaceSealAuthority
@testable import FaceSealRelyingParty

/// The relying party's browser sign-in against the real authority: the test plays the browser (the page, its cookie,
/// the continue link) and the device (its claim and completion at the store).
extension AuthorityIntegrationTests {
    static let redirectURI = "https://rp.example/callback"

    /// Opens the authorization URL as a browser would, lets the phone approve, follows the continue link: the callback's
    /// query parameters.
    func browserCallback(_ world: World, _ start: BrowserSignInStart, approve: Bool = true) async throws -> [(String, String)] {
        let client = HTTPClient()
        let page = try await client.send(HTTPClientRequest(url: start.authorizationURL))
        #expect(page.status == .ok)
        let html = String(decoding: page.body, as: UTF8.self)
        let cookie = try #require(page.headers["Set-Cookie"]?.split(separator: ";").first.map(String.init))
        let marker = #"data-continue-url=""#
        let from = try #require(html.range(of: marker)).upperBound
        let continuePath = String(html[from...].prefix { $0 != "\"" })
        let id = try #require(continuePath.split(separator: "/").dropFirst().first.map(String.init))
        // The phone's claim, then its approval or denial, at the store.
        _ = try await world.store.createRequest(CIBARequestRecord(
            authReqID: id, tenantID: "acme", clientID: "rp", subject: "user-1", kind: .login, pkiKind: nil, pkiContext: nil,
            pkiData: nil, bindingMessage: "Browser code AAA-AAA", clientNotificationToken: nil, scope: "openid",
            expiresAt: world.clock.now().addingTimeInterval(300), intervalSeconds: 5), pendingLimit: nil)
        if approve {
            _ = try await world.store.downloadFaceToken(authReqID: id, keyID: "k-present")
            let generation = try await world.store.faceToken(subject: "user-1").generation
            _ = try await world.store.complete(CompletionCommit(authReqID: id, keyID: "k-present", expectedGeneration: generation,
                                                                rotatedToken: World.faceToken(generation: generation + 1), receiptSHA256: nil))
        } else {
            _ = try await world.store.denyRequest(authReqID: id, reason: "user_cancelled")
        }
        let base = world.authority.issuer
        let redirect = try await client.send(HTTPClientRequest(url: URL(string: base + continuePath)!, headers: ["Cookie": cookie]))
        #expect(redirect.status == .seeOther)
        let location = try #require(redirect.headers["Location"])
        #expect(location.hasPrefix(start.redirectURI + "?"))
        let query = String(location.dropFirst(start.redirectURI.count + 1))
        return try FormParameters(parsing: Array(query.utf8), limits: .init(), allowDuplicates: true).items.map { ($0.name, $0.value) }
    }

    func registerRedirect(_ world: World) async throws {
        var application = try await world.store.application(clientID: "rp")
        application.redirectURIs = [Self.redirectURI]
        _ = try await world.store.updateApplication(application)
    }

    @Test("browser sign-in: the ID token verifies with this sign-in's nonce; state, iss, nonce and errors are checked")
    func browserSignIn() async throws {
        try await withWorld { world in
            try await registerRedirect(world)
            let hinted = try await world.rp.startBrowserSignIn(redirectURI: Self.redirectURI, loginHint: "ada@example.com")
            let items = try #require(URLComponents(url: hinted.authorizationURL, resolvingAgainstBaseURL: false)?.queryItems)
            #expect(items.contains(URLQueryItem(name: "code_challenge", value: PKCE.challenge(for: hinted.verifier))))
            #expect(items.contains(URLQueryItem(name: "code_challenge_method", value: "S256")))
            #expect(items.contains(URLQueryItem(name: "login_hint", value: "ada@example.com")))
            #expect(!items.contains { $0.value == hinted.verifier })

            let start = try await world.rp.startBrowserSignIn(redirectURI: Self.redirectURI)
            let callback = try await browserCallback(world, start)
            // Another browser's state: refused before anything is sent.
            let other = try await world.rp.startBrowserSignIn(redirectURI: Self.redirectURI)
            await #expect(throws: RelyingPartyError.invalidRequest("the callback's state is not this browser's sign-in")) {
                try await world.rp.finishBrowserSignIn(other, callback: callback)
            }
            // Another issuer named in the callback (a mix-up).
            let forged = callback.map { $0.0 == "iss" ? ($0.0, "https://evil.example") : $0 }
            await #expect(throws: RelyingPartyError.self) { try await world.rp.finishBrowserSignIn(start, callback: forged) }

            let result = try await world.rp.finishBrowserSignIn(start, callback: callback)
            #expect(result.idToken.claims["nonce"]?.stringValue == start.nonce)
            #expect(result.idToken.amr == ["face", "hwk"])
            #expect(result.checks.contains("id_token: nonce is this sign-in's"))
            // The code is spent.
            await #expect(throws: RelyingPartyError.refused(.invalidGrant, "the code is unknown, expired, already used or not this client's")) {
                try await world.rp.finishBrowserSignIn(start, callback: callback)
            }

            // A token for another nonce (the same state and verifier, as if the nonce had been swapped) is refused.
            let second = try await world.rp.startBrowserSignIn(redirectURI: Self.redirectURI)
            let secondCallback = try await browserCallback(world, second)
            let swapped = BrowserSignInStart(authorizationURL: second.authorizationURL, redirectURI: second.redirectURI, state: second.state,
                                             nonce: "another-nonce", verifier: second.verifier)
            await #expect(throws: RelyingPartyError.invalidIDToken("nonce is not this sign-in's")) {
                try await world.rp.finishBrowserSignIn(swapped, callback: secondCallback)
            }

            // A denial arrives as an error at the callback.
            let denied = try await world.rp.startBrowserSignIn(redirectURI: Self.redirectURI)
            let deniedCallback = try await browserCallback(world, denied, approve: false)
            await #expect(throws: RelyingPartyError.refused(.accessDenied, "user_cancelled")) {
                try await world.rp.finishBrowserSignIn(denied, callback: deniedCallback)
            }
        }
    }
}
