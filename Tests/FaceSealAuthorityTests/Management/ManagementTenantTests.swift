import FaceSealCrypto
import FaceSealHTTP
import FaceSealTestSupport
import Foundation
import Testing
@testable import FaceSealAuthority

@Suite("Management API: tenants, policy, API keys, authentication")
struct ManagementTenantTests {
    @Test("tenant create, get, list and policy update; the stored policy is what was asked", arguments: StoreBackend.underTest)
    func tenantLifecycle(backend: StoreBackend) async throws {
        try await withManagement(backend) { admin in
            let created = try await admin.createTenant("acme", policy: #"{"attempts_max":5,"key_algorithms":["ML-DSA-65"]}"#)
            #expect(created["id"]?.stringValue == "acme")
            #expect(created["policy"]?["attempts_max"]?.integerValue == 5)
            #expect(created["policy"]?["liveness_required"]?.boolValue == true)
            try await admin.createTenant("beta")

            let shown = try await admin.expect(200, .get, "/tenants/acme")
            #expect(shown["name"]?.stringValue == "Tenant acme")
            #expect(shown["created_at"]?.stringValue == "2027-01-15T08:00:00Z")
            let list = try await admin.expect(200, .get, "/tenants")
            #expect(list["tenants"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["acme", "beta"])

            #expect(created["policy"]?["match_threshold"]?.doubleValue == 0.52)
            #expect(created["policy"]?["capture_retries_max"]?.integerValue == 10)
            let updated = try await admin.expect(200, .patch, "/tenants/acme/policy", body: """
                {"liveness_required":false,"one_device_per_user":true,"request_lifetime_seconds":600,
                 "password_policy":{"mode":"required","minimum_length":10},"key_algorithms":["ML-DSA-65","ML-KEM-768"],
                 "match_threshold":0.4500004,"capture_retries_max":4}
                """)
            #expect(updated["policy"]?["attempts_max"]?.integerValue == 5)
            let stored = try await admin.harness.store.tenant(id: "acme").policy
            // The threshold is kept to millionths, as stored.
            #expect(stored == TenantPolicy(keyAlgorithms: ["ML-DSA-65", "ML-KEM-768"], attemptsMax: 5, captureRetriesMax: 4,
                                           livenessRequired: false, matchThreshold: 0.45,
                                           passwordPolicy: PasswordPolicy(mode: .required, minimumLength: 10),
                                           oneDevicePerUser: true, requestLifetimeSeconds: 600))
            #expect(updated["policy"]?["match_threshold"]?.doubleValue == 0.45)

            try await admin.expectError(409, "conflict", .post, "/tenants", body: #"{"id":"acme","name":"again"}"#)
            try await admin.expectError(404, "not_found", .get, "/tenants/ghost")
            try await admin.expectError(404, "not_found", .patch, "/tenants/ghost/policy", body: #"{"attempts_max":2}"#)
        }
    }

    @Test("bad policies are refused, each with a typed 400, and change nothing", arguments: StoreBackend.underTest)
    func badPoliciesChangeNothing(backend: StoreBackend) async throws {
        try await withManagement(backend) { admin in
            try await admin.createTenant("acme")
            let before = try await admin.harness.store.tenant(id: "acme")
            let cases: [(String, String)] = [
                (#"{"attempts_max":11}"#, "invalid_field"),
                (#"{"attempts_max":0}"#, "invalid_field"),
                (#"{"attempts_max":3.5}"#, "invalid_request"),
                (#"{"capture_retries_max":0}"#, "invalid_field"),
                (#"{"capture_retries_max":101}"#, "invalid_field"),
                (#"{"match_threshold":0.05}"#, "invalid_field"),
                (#"{"match_threshold":2}"#, "invalid_field"),
                (#"{"match_threshold":1e400}"#, "invalid_request"),
                (#"{"match_threshold":"0.5"}"#, "invalid_request"),
                (#"{"request_lifetime_seconds":29}"#, "invalid_field"),
                (#"{"request_lifetime_seconds":3601}"#, "invalid_field"),
                (#"{"key_algorithms":["ML-DSA-65","RSA"]}"#, "invalid_field"),
                (#"{"key_algorithms":[]}"#, "invalid_field"),
                (#"{"key_algorithms":["ML-DSA-65","ML-DSA-65"]}"#, "invalid_field"),
                (#"{"key_algorithms":["ML-KEM-768"]}"#, "invalid_field"),
                (#"{"liveness_required":"no"}"#, "invalid_request"),
                (#"{"password_policy":{"mode":"sometimes"}}"#, "invalid_field"),
                (#"{"password_policy":{"mode":"none","colour":1}}"#, "unknown_field"),
                (#"{"attempts_max":4,"surprise":true}"#, "unknown_field"),
                (#"[]"#, "invalid_request"),
                (#"{"attempts_max":4,"attempts_max":5}"#, "invalid_request"),
            ]
            for (body, code) in cases {
                try await admin.expectError(400, code, .patch, "/tenants/acme/policy", body: body)
            }
            try await admin.expectError(415, "invalid_request", .patch, "/tenants/acme/policy", body: #"{"attempts_max":4}"#, contentType: "text/plain")
            try await admin.expectError(413, "invalid_request", .patch, "/tenants/acme/policy",
                                        body: #"{"key_algorithms":[""# + String(repeating: " ", count: 20_000) + #"]}"#)
            try await admin.expectError(400, "invalid_request", .patch, "/tenants/acme/policy", body: "{")
            #expect(try await admin.harness.store.tenant(id: "acme") == before)

            let badTenants = [
                (#"{"id":"bad id","name":"x"}"#, "invalid_field"),
                (#"{"id":"","name":"x"}"#, "invalid_field"),
                (#"{"id":"ok","name":""}"#, "invalid_field"),
                (#"{"id":"ok"}"#, "invalid_request"),
                (#"{"id":"ok","name":"x","extra":1}"#, "unknown_field"),
                (#"{"id":"ok","name":"x","policy":{"attempts_max":99}}"#, "invalid_field"),
            ]
            for (body, code) in badTenants {
                try await admin.expectError(400, code, .post, "/tenants", body: body)
            }
            #expect(try await admin.harness.store.tenants().map(\.id) == ["acme"])
        }
    }

    @Test("authentication: missing, malformed, unknown and revoked keys get 401 with WWW-Authenticate: Bearer", arguments: StoreBackend.underTest)
    func authentication(backend: StoreBackend) async throws {
        try await withManagement(backend) { admin in
            let anonymous = admin.with(key: nil)
            let missing = try await anonymous.send(.get, "/tenants")
            #expect(missing.status.code == 401)
            #expect(missing.headers["WWW-Authenticate"]?.hasPrefix("Bearer") == true)
            #expect(try JSONValue.parse(missing.body)["error"]?.stringValue == "unauthorized")

            for header in ["Basic YWRtaW46YWRtaW4=", "Bearer", "Bearer fsk_" + Base64URL.encode(SecureRandom.bytes(count: 32)),
                           "Bearer not-a-key", "Bearer " + String(admin.key!.dropFirst(4))] {
                let response = try await anonymous.send(.get, "/tenants", headers: ["Authorization": header])
                #expect(response.status.code == 401, "\(header)")
                #expect(response.headers["WWW-Authenticate"]?.contains(#"error="invalid_token""#) == true)
                #expect(try JSONValue.parse(response.body)["error"]?.stringValue == "invalid_token")
            }
            // Refused before the body is read: nothing created.
            let refused = try await anonymous.send(.post, "/tenants", body: #"{"id":"x","name":"x"}"#)
            #expect(refused.status.code == 401)
            #expect(try await admin.harness.store.tenants().isEmpty)

            // A second administrator key works; once revoked it does not.
            let second = try await admin.expect(201, .post, "/api-keys", body: #"{"label":"second admin"}"#)
            let secondKey = try #require(second["key"]?.stringValue)
            #expect(secondKey.hasPrefix("fsk_") && secondKey.count >= 4 + 43)
            let secondID = try #require(second["id"]?.stringValue)
            try await admin.with(key: secondKey).expect(200, .get, "/tenants")
            let stored = try #require(try await admin.harness.store.apiKey(hash: SHA256.hash(data: Array(secondKey.utf8)).bytes))
            #expect(stored.id == secondID && stored.tenantID == nil)
            try await admin.expect(200, .post, "/api-keys/\(secondID)/revoke")
            try await admin.with(key: secondKey).expectError(401, "invalid_token", .get, "/tenants")
        }
    }

    @Test("API keys: a tenant key manages its tenant only (403 elsewhere), lists carry no secrets, revocation works", arguments: StoreBackend.underTest)
    func tenantKeys(backend: StoreBackend) async throws {
        try await withManagement(backend) { admin in
            try await admin.createTenant("acme")
            try await admin.createTenant("beta")
            let (keyID, secret) = try await admin.createTenantKey("acme")
            let tenantAdmin = admin.with(key: secret)

            try await tenantAdmin.expect(200, .get, "/tenants/acme")
            let visible = try await tenantAdmin.expect(200, .get, "/tenants")
            #expect(visible["tenants"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["acme"])
            try await tenantAdmin.expect(201, .post, "/tenants/acme/users", body: #"{"email":"a@acme.example"}"#)

            try await tenantAdmin.expectError(403, "forbidden", .get, "/tenants/beta")
            try await tenantAdmin.expectError(403, "forbidden", .get, "/tenants/ghost")
            try await tenantAdmin.expectError(403, "forbidden", .post, "/tenants/beta/users", body: #"{"email":"a@beta.example"}"#)
            try await tenantAdmin.expectError(403, "forbidden", .patch, "/tenants/beta/policy", body: #"{"attempts_max":2}"#)
            try await tenantAdmin.expectError(403, "forbidden", .post, "/tenants", body: #"{"id":"gamma","name":"G"}"#)
            try await tenantAdmin.expectError(403, "forbidden", .get, "/api-keys")
            try await tenantAdmin.expectError(403, "forbidden", .post, "/api-keys", body: #"{"label":"escalate"}"#)
            try await tenantAdmin.expectError(403, "forbidden", .get, "/audit")
            #expect(try await admin.harness.store.users(tenantID: "beta").isEmpty)
            #expect(try await admin.harness.store.tenants().map(\.id) == ["acme", "beta"])

            let list = try await tenantAdmin.expect(200, .get, "/tenants/acme/api-keys")
            let entries = try #require(list["api_keys"]?.arrayValue)
            #expect(entries.count == 1)
            #expect(entries[0]["id"]?.stringValue == keyID)
            #expect(entries[0]["key"] == nil)
            #expect(!list.serializedString.contains(secret))

            try await admin.expectError(404, "not_found", .post, "/tenants/beta/api-keys/\(keyID)/revoke")
            try await admin.expectError(404, "not_found", .post, "/api-keys/\(keyID)/revoke")
            let revoked = try await admin.expect(200, .post, "/tenants/acme/api-keys/\(keyID)/revoke")
            #expect(revoked["revoked_at"]?.stringValue != nil)
            try await tenantAdmin.expectError(401, "invalid_token", .get, "/tenants/acme")
            try await admin.expect(200, .post, "/tenants/acme/api-keys/\(keyID)/revoke")

            // The only administrator key cannot be revoked.
            let adminKeys = try await admin.expect(200, .get, "/api-keys")
            let adminID = try #require(adminKeys["api_keys"]?[0]?["id"]?.stringValue)
            try await admin.expectError(409, "conflict", .post, "/api-keys/\(adminID)/revoke")
            try await admin.expectError(400, "unknown_field", .post, "/api-keys/\(adminID)/revoke", body: #"{"force":true}"#)
            try await admin.expectError(400, "invalid_field", .post, "/tenants/acme/api-keys", body: #"{"label":"  "}"#)
            #expect(try await admin.harness.store.apiKeys(tenantID: "acme").count == 1)
        }
    }

    @Test("bootstrap creates exactly one administrator key, once", arguments: StoreBackend.underTest)
    func bootstrap(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            let key = try #require(try await harness.authority.bootstrapAdminKey())
            #expect(key.hasPrefix("fsk_"))
            #expect(try Base64URL.decode(key.dropFirst(4)).count == 32)
            #expect(try await harness.authority.bootstrapAdminKey() == nil)
            #expect(try await harness.authority.bootstrapAdminKey() == nil)
            let keys = try await harness.store.apiKeys(tenantID: nil)
            #expect(keys.count == 1)
            #expect(keys.first?.keyHash == SHA256.hash(data: Array(key.utf8)).bytes)
            try await AdminSession(harness: harness, key: key).expect(200, .get, "/tenants")
        }
    }

    @Test("bootstrap does nothing when only tenant keys exist", arguments: StoreBackend.underTest)
    func bootstrapWithTenantKeys(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            _ = try await harness.store.createTenant(TenantRecord(id: "acme", name: "Acme"))
            _ = try await harness.store.createAPIKey(APIKeyRecord(id: "k1", tenantID: "acme", keyHash: Array(repeating: 1, count: 32), label: "t"))
            #expect(try await harness.authority.bootstrapAdminKey() == nil)
            #expect(try await harness.store.apiKeys(tenantID: nil).isEmpty)
        }
    }
}
