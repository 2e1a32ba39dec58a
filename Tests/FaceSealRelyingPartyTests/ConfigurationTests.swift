import Foundation
import FaceSealCrypto
import FaceSealHTTP
import FaceSealWire
import Testing
@testable import FaceSealRelyingParty

/// Client authentication, discovery and the key-pin stores.
@Suite struct ConfigurationTests {
    @Test func clientSecretBasicFormEncodesTheCredentials() async throws {
        let h = try Harness(authentication: .clientSecretBasic(secret: SecretBytes(Array("s3cret:/+ é".utf8))))
        defer { Task { await h.authority.stop() } }
        _ = try await h.rp.start(.signIn, user: "ada@example.com", context: "", bindingMessage: "Sign in")
        let header = try #require(h.authority.backchannelAuthorization.last ?? nil)
        #expect(header.hasPrefix("Basic "))
        let decoded = String(decoding: try #require(Data(base64Encoded: String(header.dropFirst(6)))), as: UTF8.self)
        #expect(decoded == "app-123:s3cret%3A%2F%2B+%C3%A9")
        #expect(h.authority.backchannelForms.last?["client_secret"] == nil)
    }

    @Test func clientSecretPostSendsTheSecretInTheForm() async throws {
        let h = try Harness(authentication: .clientSecretPost(secret: SecretBytes(Array("topsecret".utf8))))
        defer { Task { await h.authority.stop() } }
        _ = try await h.rp.start(.signIn, user: "ada@example.com", context: "", bindingMessage: "Sign in")
        let form = try #require(h.authority.backchannelForms.last)
        #expect(form["client_id"] == "app-123")
        #expect(form["client_secret"] == "topsecret")
        #expect(h.authority.backchannelAuthorization.last == .some(nil))
    }

    @Test(arguments: ["p256", "ed25519", "rsa"])
    func privateKeyJWTSendsAShortLivedAssertionWithAFreshJTI(_ keyType: String) async throws {
        let signer: any JWSSigner
        let jwk: JWK
        switch keyType {
        case "p256":
            let key = P256.Signing.PrivateKey()
            (signer, jwk) = (key, JWK(publicKey: key.publicKey, keyID: "client-key"))
        case "ed25519":
            let key = Curve25519.Signing.PrivateKey()
            (signer, jwk) = (key, JWK(publicKey: key.publicKey, keyID: "client-key"))
        default:
            let key = try RSA.Signing.PrivateKey(keySize: 2048)
            (signer, jwk) = (key, JWK(publicKey: key.publicKey, keyID: "client-key"))
        }
        let h = try Harness(authentication: .privateKeyJWT(signer: signer, keyID: "client-key", lifetime: 60))
        defer { Task { await h.authority.stop() } }
        _ = try await h.rp.start(.signIn, user: "ada@example.com", context: "", bindingMessage: "Sign in")
        _ = try await h.rp.start(.signIn, user: "ada@example.com", context: "", bindingMessage: "Sign in")
        var jtis: [String] = []
        for form in h.authority.backchannelForms {
            #expect(form["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
            #expect(form["client_id"] == "app-123")
            let assertion = try #require(form["client_assertion"])
            let (_, claims) = try JWT.verify(assertion, keySet: JWKSet(keys: [jwk]),
                                             validation: JWTValidation(now: h.clock.now(), leeway: 0, issuer: "app-123", audience: h.authority.issuer))
            #expect(claims.subject == "app-123")
            let lifetime = try #require(try claims.date("exp")).timeIntervalSince(try #require(try claims.date("iat")))
            #expect(lifetime == 60)
            jtis.append(try #require(claims.jwtID))
        }
        #expect(jtis.count == 2)
        #expect(Set(jtis).count == 2)
        #expect(jtis.allSatisfy { $0.count >= 22 })
    }

    @Test func backchannelRefusalsAreTyped() async throws {
        let h = try Harness()
        defer { Task { await h.authority.stop() } }
        h.authority.setBackchannelError(OAuthErrorResponse(.unknownUserId, "no such user"))
        await #expect(throws: RelyingPartyError.refused(.unknownUserId, "no such user")) {
            _ = try await h.rp.start(.signIn, user: "nobody@example.com", context: "", bindingMessage: "Sign in")
        }
        #expect(h.pending.count == 0)
    }

    @Test func badBindingMessagesAreRefusedLocally() async throws {
        let h = try Harness()
        defer { Task { await h.authority.stop() } }
        for message in ["", String(repeating: "x", count: 65), "line\nbreak"] {
            await #expect(throws: RelyingPartyError.self) {
                _ = try await h.rp.start(.publicKeys, user: "ada@example.com", context: "mail", bindingMessage: message)
            }
        }
        #expect(h.authority.backchannelForms.isEmpty)
    }

    @Test func missingIntervalDefaultsToFiveSeconds() async throws {
        let h = try Harness()
        defer { Task { await h.authority.stop() } }
        h.authority.setInterval(nil)
        let handle = try await h.rp.start(.signIn, user: "ada@example.com", context: "", bindingMessage: "Sign in")
        #expect(handle.interval == 5)
    }

    @Test func discoveryRefusesAnotherIssuer() throws {
        let document = Array("""
        {"issuer":"https://evil.example","token_endpoint":"https://evil.example/token",
         "backchannel_authentication_endpoint":"https://evil.example/backchannel","jwks_uri":"https://evil.example/jwks"}
        """.utf8)
        #expect(throws: RelyingPartyError.self) {
            _ = try ProviderMetadata.parse(document, expectedIssuer: "https://auth.example", authenticationMethod: "private_key_jwt", mode: .poll)
        }
        let good = try ProviderMetadata.parse(Array(String(decoding: document, as: UTF8.self).replacingOccurrences(of: "evil", with: "auth").utf8),
                                              expectedIssuer: "https://auth.example", authenticationMethod: "private_key_jwt", mode: .poll)
        #expect(good.tokenEndpoint.absoluteString == "https://auth.example/token")
        let noCIBA = Array("""
        {"issuer":"https://auth.example","token_endpoint":"https://auth.example/token","grant_types_supported":["authorization_code"],
         "backchannel_authentication_endpoint":"https://auth.example/backchannel","jwks_uri":"https://auth.example/jwks"}
        """.utf8)
        #expect(throws: RelyingPartyError.self) {
            _ = try ProviderMetadata.parse(noCIBA, expectedIssuer: "https://auth.example", authenticationMethod: "private_key_jwt", mode: .poll)
        }
        #expect(throws: RelyingPartyError.self) {
            _ = try ProviderMetadata.parse(Array("not json".utf8), expectedIssuer: "https://auth.example", authenticationMethod: "x", mode: .poll)
        }
    }

    @Test func discoveryIsCached() async throws {
        let h = try Harness()
        defer { Task { await h.authority.stop() } }
        let first = try await h.rp.providerMetadata()
        await h.authority.stop()
        // The authority is gone; the cached document still answers.
        #expect(try await h.rp.providerMetadata() == first)
    }

    @Test func filePinStorePersistsWithMode0600() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rp-pins-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("pins.json")
        let store = try FileKeyPinStore(url: url)
        let device = try TestDevice()
        let keys = PinnedKeys(keys: device.publicKeys)
        let key = PinKey(user: "ada@example.com", context: "mail")
        #expect(try await store.pin(keys, for: key) == .pinned)
        #expect(try await store.pin(keys, for: key) == .alreadyPinned)
        let other = PinnedKeys(keys: try TestDevice().publicKeys)
        #expect(try await store.pin(other, for: key) == .conflict(existing: keys))
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let reopened = try FileKeyPinStore(url: url)
        #expect(try await reopened.pinnedKeys(for: key) == keys)
        try await reopened.removePin(for: key, ifEqualTo: other)
        #expect(try await reopened.pinnedKeys(for: key) == keys)
        try await reopened.removePin(for: key, ifEqualTo: keys)
        #expect(try await FileKeyPinStore(url: url).pinnedKeys(for: key) == nil)
        // A corrupt file is a clear error, not an empty store.
        try Data("garbage".utf8).write(to: url)
        #expect(throws: RelyingPartyError.self) { _ = try FileKeyPinStore(url: url) }
    }

    @Test func routerAdapterServesDeliveryAndPing() async throws {
        let h = try Harness()
        defer { Task { await h.authority.stop() } }
        var router = Router()
        h.rp.mount(on: &router)
        let wrong = try HTTPRequest(method: .post, path: "/faceseal/delivery", headers: ["Authorization": "Bearer x"], body: Array("{}".utf8))
        #expect(try await router.respond(to: wrong).status.code == 400)
        let ping = try HTTPRequest(method: .post, path: "/faceseal/ping", headers: ["Authorization": "Bearer x"],
                                   body: PingCallback(authReqId: "req-unknown-0123456789").encoded())
        #expect(try await router.respond(to: ping).status.code == 404)
        // Two Authorization headers are never read as one bearer.
        try await h.pinDeviceKeys()
        let message = Array("m".utf8)
        let handle = try await h.rp.start(.sign(data: message), user: "ada@example.com", context: "mail", bindingMessage: "Sign")
        let delivered = try h.device.deliver(h.body(for: handle, signature: Array(try h.device.signingKey.signature(for: message))))
        let doubled = try HTTPRequest(method: .post, path: "/faceseal/delivery",
                                      headers: HTTPHeaders([("Authorization", "Bearer \(h.authority.lastBearer)"), ("Authorization", "Bearer x"),
                                                            (DeliveryNames.signatureHeader, delivered.signature)]),
                                      body: delivered.body)
        #expect(try await router.respond(to: doubled).status.code == 401)
        let good = try HTTPRequest(method: .post, path: "/faceseal/delivery",
                                   headers: HTTPHeaders([("Authorization", "Bearer \(h.authority.lastBearer)"),
                                                         (DeliveryNames.signatureHeader, delivered.signature)]),
                                   body: delivered.body)
        #expect(try await router.respond(to: good).status.code == 204)
    }
}

@Suite struct PendingRequestStoreTests {
    @Test func abandonedRequestsAreDroppedAnHourAfterExpiry() async throws {
        let clock = TestClock()
        let store = InMemoryPendingRequestStore(clock: clock)
        func request(_ id: String, lifetime: TimeInterval) -> PendingRequest {
            PendingRequest(authReqId: id, user: "u", context: "c", bindingMessage: "m", bearer: SecretBytes([1]), expected: .publicKeys,
                           expiresAt: clock.now().addingTimeInterval(lifetime), interval: 5)
        }
        try await store.insert(request("old", lifetime: 300))
        clock.advance(300 + InMemoryPendingRequestStore.retentionAfterExpiry - 1)
        try await store.insert(request("new", lifetime: 300))
        #expect(store.count == 2)
        clock.advance(2)
        try await store.insert(request("newer", lifetime: 300))
        #expect(try await store.request("old") == nil)
        #expect(try await store.request("new") != nil)
        #expect(store.count == 2)
    }

    @Test func onlyOneDeliveryIsEverRecorded() async throws {
        let store = InMemoryPendingRequestStore()
        try await store.insert(PendingRequest(authReqId: "r", user: "u", context: "c", bindingMessage: "m", bearer: SecretBytes([1]),
                                              expected: .publicKeys, expiresAt: Date().addingTimeInterval(300), interval: 5))
        let delivery = AcceptedDelivery(bodySHA256: [1], result: .signature([1]), keyID: "k", createdPin: false, checks: [])
        let results = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<16 { group.addTask { (try? await store.recordDelivery(delivery, for: "r")) ?? false } }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results.filter { $0 }.count == 1)
        #expect(try await store.recordDelivery(delivery, for: "unknown") == false)
    }
}
