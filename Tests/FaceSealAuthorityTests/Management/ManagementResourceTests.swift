import FaceSealCrypto
import FaceSealHTTP
import FaceSealTestSupport
import FaceSealWire
import Foundation
import Testing
@testable import FaceSealAuthority

@Suite("Management API: applications, users, invitations")
struct ManagementResourceTests {
    @Test("applications: create returns the secret once (stored as SHA-256), get, list, update, rotate", arguments: StoreBackend.underTest)
    func applications(backend: StoreBackend) async throws {
        try await withManagement(backend) { admin in
            try await admin.createTenant("acme")
            let created = try await admin.createApplication("acme", extra: ##","branding":{"name":"Shop","logo_url":"https://cdn.example/logo.png","primary_color":"#112233"},"id_token_signed_response_alg":"EdDSA""##)
            let clientID = try #require(created["client_id"]?.stringValue)
            let secret = try #require(created["client_secret"]?.stringValue)
            #expect(created["client_auth"]?.stringValue == "client_secret")
            #expect(created["delivery_mode"]?.stringValue == "poll")
            let stored = try await admin.harness.store.application(clientID: clientID)
            #expect(stored.credential == .secretHash(SHA256.hash(data: Array(secret.utf8)).bytes))
            #expect(stored.credential == .secretHash(ClientSecret.hash(secret)))
            #expect(stored.idTokenSignedResponseAlg == "EdDSA")
            #expect(try JSONDecoder().decode(BrandingInfo.self, from: Data(stored.brandingJSON.utf8))
                    == BrandingInfo(name: "Shop", logoURL: "https://cdn.example/logo.png", primaryColor: "#112233"))

            let shown = try await admin.expect(200, .get, "/tenants/acme/applications/\(clientID)")
            #expect(shown["client_secret"] == nil)
            #expect(shown["branding"]?["primary_color"]?.stringValue == "#112233")
            let list = try await admin.expect(200, .get, "/tenants/acme/applications")
            #expect(list["applications"]?.arrayValue?.count == 1)
            #expect(!list.serializedString.contains(secret))

            let updated = try await admin.expect(200, .patch, "/tenants/acme/applications/\(clientID)", body: """
                {"delivery_mode":"ping","notification_endpoint":"http://127.0.0.1:9000/ping","label":"Shop 2",
                 "branding":{"logo_url":"data:image/png;base64,iVBORw0KGgo=","secondary_color":"#abcdef"}}
                """)
            #expect(updated["label"]?.stringValue == "Shop 2")
            #expect(updated["branding"]?["name"]?.stringValue == "Shop 2")
            let afterUpdate = try await admin.harness.store.application(clientID: clientID)
            #expect(afterUpdate.deliveryMode == .ping)
            #expect(afterUpdate.notificationEndpoint == "http://127.0.0.1:9000/ping")
            #expect(afterUpdate.deliveryEndpoint == "https://rp.example/deliver")
            #expect(afterUpdate.credential == stored.credential)

            let cleared = try await admin.expect(200, .patch, "/tenants/acme/applications/\(clientID)",
                                                 body: #"{"delivery_endpoint":null,"delivery_mode":"poll"}"#)
            #expect(cleared["delivery_endpoint"] == nil)

            let rotated = try await admin.expect(200, .post, "/tenants/acme/applications/\(clientID)/secret")
            let newSecret = try #require(rotated["client_secret"]?.stringValue)
            #expect(newSecret != secret)
            #expect(try await admin.harness.store.application(clientID: clientID).credential == .secretHash(ClientSecret.hash(newSecret)))

            try await admin.createTenant("beta")
            try await admin.expectError(404, "not_found", .get, "/tenants/beta/applications/\(clientID)")
            try await admin.expectError(404, "not_found", .get, "/tenants/acme/applications/app_ghost")
        }
    }

    @Test("an application may register a JWKS for private_key_jwt instead of a secret", arguments: StoreBackend.underTest)
    func jwksApplication(backend: StoreBackend) async throws {
        try await withManagement(backend) { admin in
            try await admin.createTenant("acme")
            let key = Curve25519.Signing.PrivateKey()
            let jwks = JWKSet(keys: [JWK(publicKey: key.publicKey, keyID: "rp-1")])
            let jwksText = String(decoding: jwks.jsonData, as: UTF8.self)
            let created = try await admin.createApplication("acme", extra: #","jwks":\#(jwksText)"#)
            #expect(created["client_secret"] == nil)
            #expect(created["client_auth"]?.stringValue == "private_key_jwt")
            #expect(created["jwks"]?["keys"]?[0]?["kid"]?.stringValue == "rp-1")
            let clientID = try #require(created["client_id"]?.stringValue)
            guard case .jwks(let stored) = try await admin.harness.store.application(clientID: clientID).credential else {
                Issue.record("expected a JWKS credential")
                return
            }
            #expect(try JWKSet(json: Array(stored.utf8)).keys.first?.keyID == "rp-1")

            let withPrivate = #"{"keys":[{"kty":"OKP","crv":"Ed25519","x":"\#(Base64URL.encode(key.publicKey.rawRepresentation))","d":"\#(Base64URL.encode(key.rawRepresentation))"}]}"#
            try await admin.expectError(400, "invalid_field", .post, "/tenants/acme/applications", body: #"{"label":"x","jwks":\#(withPrivate)}"#)
            try await admin.expectError(400, "invalid_field", .post, "/tenants/acme/applications", body: #"{"label":"x","jwks":{"keys":[]}}"#)
            try await admin.expectError(400, "invalid_field", .post, "/tenants/acme/applications", body: #"{"label":"x","jwks":"keys"}"#)
            // Refusals read as sentences (found by schemathesis: they printed Swift values).
            let noAlgorithm = try await admin.expectError(400, "invalid_field", .post, "/tenants/acme/applications",
                                                          body: #"{"label":"x","jwks":{"keys":[{"kty":"AKP","pub":"AAAA"}]}}"#)
            #expect(noAlgorithm == "field 'jwks': not a valid public JWKS: a key lacks 'alg'")
            #expect(try await admin.harness.store.applications(tenantID: "acme").count == 1)
        }
    }

    @Test("bad application input is refused with a typed 400 and stores nothing", arguments: StoreBackend.underTest)
    func badApplications(backend: StoreBackend) async throws {
        try await withManagement(backend) { admin in
            try await admin.createTenant("acme")
            let cases: [(String, String)] = [
                (#"{"label":"x","delivery_mode":"ping"}"#, "invalid_field"),
                (#"{"label":"x","delivery_mode":"push"}"#, "invalid_field"),
                (#"{"label":"x","delivery_endpoint":"http://rp.example/deliver"}"#, "invalid_field"),
                (#"{"label":"x","delivery_endpoint":"ftp://rp.example/deliver"}"#, "invalid_field"),
                (#"{"label":"x","delivery_endpoint":"https://user:pw@rp.example/deliver"}"#, "invalid_field"),
                (#"{"label":"x","delivery_endpoint":"/relative"}"#, "invalid_field"),
                (#"{"label":"x","notification_endpoint":"http://10.0.0.1/ping"}"#, "invalid_field"),
                (#"{"label":"x","id_token_signed_response_alg":"HS256"}"#, "invalid_field"),
                (#"{"label":"x","id_token_signed_response_alg":"none"}"#, "invalid_field"),
                (#"{"label":"x","branding":{"primary_color":"red"}}"#, "invalid_field"),
                (##"{"label":"x","branding":{"primary_color":"#12345G"}}"##, "invalid_field"),
                (#"{"label":"x","branding":{"logo_url":"http://cdn.example/logo.png"}}"#, "invalid_field"),
                (#"{"label":"x","branding":{"logo_url":"data:image/svg+xml;base64,PHN2Zz4="}}"#, "invalid_field"),
                (#"{"label":"x","branding":{"logo_url":"data:image/png;base64,***"}}"#, "invalid_field"),
                (#"{"label":"x","branding":{"font":"serif"}}"#, "unknown_field"),
                (#"{"label":"x","client_secret":"mine"}"#, "unknown_field"),
                (#"{"label":"x","redirect_uris":["javascript:alert(1)"]}"#, "invalid_field"),
                (#"{"label":"x","redirect_uris":["http://rp.example/cb"]}"#, "invalid_field"),
                (#"{"label":"x","redirect_uris":["https://rp.example/cb#top"]}"#, "invalid_field"),
                (#"{"label":"x","redirect_uris":["/cb"]}"#, "invalid_field"),
                (#"{"label":"x","redirect_uris":"https://rp.example/cb"}"#, "invalid_request"),
                ("{\"label\":\"x\",\"redirect_uris\":[\(Array(repeating: "\"https://rp.example/cb\"", count: 17).joined(separator: ","))]}", "invalid_field"),
                (#"{"label":"","delivery_mode":"poll"}"#, "invalid_field"),
                (#"{"delivery_mode":"poll"}"#, "invalid_request"),
            ]
            for (body, code) in cases {
                try await admin.expectError(400, code, .post, "/tenants/acme/applications", body: body)
            }
            #expect(try await admin.harness.store.applications(tenantID: "acme").isEmpty)
            #expect(try await admin.harness.store.auditEvents(tenantID: "acme", beforeSequence: nil, limit: 50).map(\.kind) == ["tenant.created"])

            // Loopback http is allowed (a local application), on IPv4, IPv6 and localhost.
            for host in ["127.0.0.1:9000", "[::1]:9000", "localhost:9000"] {
                try await admin.expect(201, .post, "/tenants/acme/applications", body: #"{"label":"x","delivery_endpoint":"http://\#(host)/d"}"#)
            }

            let app = try #require(try await admin.harness.store.applications(tenantID: "acme").first)
            try await admin.expectError(400, "invalid_field", .patch, "/tenants/acme/applications/\(app.clientID)", body: #"{"delivery_mode":"ping"}"#)
            try await admin.expectError(400, "invalid_field", .patch, "/tenants/acme/applications/\(app.clientID)", body: #"{"jwks":null}"#)
            try await admin.expectError(400, "unknown_field", .patch, "/tenants/acme/applications/\(app.clientID)", body: #"{"tenant_id":"beta"}"#)
            #expect(try await admin.harness.store.application(clientID: app.clientID) == app)
        }
    }

    @Test("a ping endpoint the authority could not call under public-only destinations is refused at registration and update",
          arguments: StoreBackend.underTest)
    func pingEndpointFollowsCallbackDestinations(backend: StoreBackend) async throws {
        try await withManagement(backend, configure: { $0.callbackDestinations = .publicOnly }) { admin in
            try await admin.createTenant("acme")
            for endpoint in ["http://127.0.0.1:9000/ping", "https://127.0.0.1/ping", "https://0x7f000001/ping", "https://localhost/ping",
                             "https://[::1]/ping", "https://192.168.0.10/ping", "https://169.254.169.254/ping", "https://[fe80::1]/ping",
                             "https://\(String(repeating: "0", count: 80))177.0.0.1/ping"] {
                let reason = try await admin.expectError(400, "invalid_field", .post, "/tenants/acme/applications",
                                                         body: #"{"label":"x","delivery_mode":"ping","notification_endpoint":"\#(endpoint)"}"#)
                #expect(reason.contains("notification_endpoint"))
            }
            #expect(try await admin.harness.store.applications(tenantID: "acme").isEmpty)
            // A public name or address is accepted (its resolved addresses are judged at each send); the device's
            // delivery endpoint is not the authority's egress and keeps its own rule.
            try await admin.expect(201, .post, "/tenants/acme/applications",
                                   body: #"{"label":"x","delivery_mode":"ping","notification_endpoint":"https://rp.example/ping","delivery_endpoint":"http://127.0.0.1:9/d"}"#)
            try await admin.expect(201, .post, "/tenants/acme/applications",
                                   body: #"{"label":"y","delivery_mode":"ping","notification_endpoint":"https://203.0.113.7/ping"}"#)
            let app = try #require(try await admin.harness.store.applications(tenantID: "acme").first { $0.label == "x" })
            try await admin.expectError(400, "invalid_field", .patch, "/tenants/acme/applications/\(app.clientID)",
                                        body: #"{"notification_endpoint":"https://10.1.2.3/ping"}"#)
            #expect(try await admin.harness.store.application(clientID: app.clientID) == app)
        }
    }

    @Test("users: email lower-cased, get, list, filter by email, conflicts and bad emails refused", arguments: StoreBackend.underTest)
    func users(backend: StoreBackend) async throws {
        try await withManagement(backend) { admin in
            try await admin.createTenant("acme")
            try await admin.createTenant("beta")
            let alice = try await admin.createUser("acme", email: " Alice@Example.COM ")
            #expect(alice["email"]?.stringValue == "alice@example.com")
            let subject = try #require(alice["subject"]?.stringValue)
            try await admin.createUser("acme", email: "bob@example.com")
            try await admin.createUser("beta", email: "alice@example.com")

            try await admin.expectError(409, "conflict", .post, "/tenants/acme/users", body: #"{"email":"ALICE@example.com"}"#)
            for bad in ["alice", "@example.com", "a@b", "a b@example.com", "a@@example.com", "a@example..com"] {
                try await admin.expectError(400, "invalid_field", .post, "/tenants/acme/users", body: #"{"email":"\#(bad)"}"#)
            }
            try await admin.expectError(400, "unknown_field", .post, "/tenants/acme/users", body: #"{"email":"c@example.com","subject":"mine"}"#)
            #expect(try await admin.harness.store.users(tenantID: "acme").map(\.email) == ["alice@example.com", "bob@example.com"])

            let shown = try await admin.expect(200, .get, "/tenants/acme/users/\(subject)")
            #expect(shown["email"]?.stringValue == "alice@example.com")
            try await admin.expectError(404, "not_found", .get, "/tenants/beta/users/\(subject)")
            let list = try await admin.expect(200, .get, "/tenants/acme/users")
            #expect(list["users"]?.arrayValue?.count == 2)
            let filtered = try await admin.expect(200, .get, "/tenants/acme/users?email=ALICE%40example.com")
            #expect(filtered["users"]?[0]?["subject"]?.stringValue == subject)
            let none = try await admin.expect(200, .get, "/tenants/acme/users?email=nobody%40example.com")
            #expect(none["users"]?.arrayValue?.isEmpty == true)
            try await admin.expectError(400, "unknown_field", .get, "/tenants/acme/users?mail=x")
        }
    }

    @Test("an invitation's enrolment link verifies with the authority key, carries akey, and names the invitation", arguments: StoreBackend.underTest)
    func invitations(backend: StoreBackend) async throws {
        try await withManagement(backend) { admin in
            try await admin.createTenant("acme")
            let app = try await admin.createApplication("acme")
            let clientID = try #require(app["client_id"]?.stringValue)
            let user = try await admin.createUser("acme", email: "alice@example.com")
            let subject = try #require(user["subject"]?.stringValue)

            let invitation = try await admin.expect(201, .post, "/tenants/acme/invitations",
                                                    body: #"{"email":"alice@example.com","client_id":"\#(clientID)","expires_in":3600}"#)
            let id = try #require(invitation["id"]?.stringValue)
            #expect(try Base64URL.decode(id.dropFirst(4)).count == 32)
            #expect(invitation["status"]?.stringValue == "pending")
            let link = try #require(invitation["link"]?.stringValue)
            let universal = try #require(invitation["universal_link"]?.stringValue)
            let authority = admin.harness.authority
            #expect(universal == authority.configuration.issuer + "/l/" + link)

            let now = Int64(admin.harness.clock.now().timeIntervalSince1970)
            let publicKey = authority.keys.deviceKey.publicKey
            for candidate in [link, universal] {
                let claims = try LinkSignature.parse(Array(candidate.utf8)).verify(with: publicKey, now: now)
                #expect(claims.kind == .enrolment)
                #expect(claims.rid == id)
                #expect(claims.iss == authority.configuration.issuer)
                #expect(claims.exp == now + 3600)
                #expect(claims.akey?.bytes == Array(publicKey.rawRepresentation))
                #expect(claims.nonce == authority.linkNonce(for: id))
            }
            #expect(throws: LinkError.self) {
                try LinkSignature.parse(Array(link.utf8)).verify(with: Curve25519.Signing.PrivateKey().publicKey, now: now)
            }

            let stored = try await admin.harness.store.invitation(id: id)
            #expect(stored.subject == subject && stored.clientID == clientID && stored.tenantID == "acme")
            #expect(stored.secretHash == SHA256.hash(data: Array(id.utf8)).bytes)
            #expect(Int64(stored.expiresAt.timeIntervalSince1970) == now + 3600)

            let shown = try await admin.expect(200, .get, "/tenants/acme/invitations/\(id)")
            #expect(shown["link"]?.stringValue == link)
            admin.harness.clock.advance(by: 3601)
            #expect(try await admin.expect(200, .get, "/tenants/acme/invitations/\(id)")["status"]?.stringValue == "expired")

            // By subject, default lifetime (7 days).
            let bySubject = try await admin.expect(201, .post, "/tenants/acme/invitations", body: #"{"subject":"\#(subject)","client_id":"\#(clientID)"}"#)
            let defaultClaims = try LinkSignature.parse(Array(try #require(bySubject["link"]?.stringValue).utf8))
                .verify(with: publicKey, now: now + 3601)
            #expect(defaultClaims.exp == now + 3601 + 7 * 24 * 3600)
        }
    }

    @Test("refused invitations store nothing", arguments: StoreBackend.underTest)
    func badInvitations(backend: StoreBackend) async throws {
        try await withManagement(backend) { admin in
            try await admin.createTenant("acme")
            try await admin.createTenant("beta")
            let clientID = try #require(try await admin.createApplication("acme")["client_id"]?.stringValue)
            let betaClient = try #require(try await admin.createApplication("beta")["client_id"]?.stringValue)
            let subject = try #require(try await admin.createUser("acme", email: "alice@example.com")["subject"]?.stringValue)
            let path = "/tenants/acme/invitations"
            try await admin.expectError(404, "not_found", .post, path, body: #"{"subject":"\#(subject)","client_id":"app_ghost"}"#)
            try await admin.expectError(404, "not_found", .post, path, body: #"{"subject":"\#(subject)","client_id":"\#(betaClient)"}"#)
            try await admin.expectError(404, "not_found", .post, path, body: #"{"subject":"usr_ghost","client_id":"\#(clientID)"}"#)
            try await admin.expectError(404, "not_found", .post, path, body: #"{"email":"bob@example.com","client_id":"\#(clientID)"}"#)
            try await admin.expectError(400, "invalid_request", .post, path, body: #"{"client_id":"\#(clientID)"}"#)
            try await admin.expectError(400, "invalid_request", .post, path, body: #"{"subject":"\#(subject)","email":"alice@example.com","client_id":"\#(clientID)"}"#)
            try await admin.expectError(400, "invalid_field", .post, path, body: #"{"subject":"\#(subject)","client_id":"\#(clientID)","expires_in":10}"#)
            try await admin.expectError(400, "invalid_field", .post, path, body: #"{"subject":"\#(subject)","client_id":"\#(clientID)","kind":"login"}"#)
            try await admin.expectError(400, "unknown_field", .post, path, body: #"{"subject":"\#(subject)","client_id":"\#(clientID)","role":"x"}"#)
            let events = try await admin.harness.store.auditEvents(tenantID: "acme", beforeSequence: nil, limit: 50)
            #expect(!events.contains { $0.kind == "invitation.created" })
        }
    }
}
