import FaceSealCrypto
import FaceSealHTTP
import FaceSealTestSupport
import Foundation
import Testing
@testable import FaceSealAuthority

@Suite("Management API: every body through the strict wire parser")
struct ManagementBodyTests {
    @Test("duplicate member names and unknown members, at the top or nested, are refused with a typed 400; nothing changes",
          arguments: StoreBackend.underTest)
    func duplicatesAndUnknownMembers(backend: StoreBackend) async throws {
        try await withManagement(backend) { admin in
            try await admin.createTenant("acme")
            let app = try #require(try await admin.createApplication("acme")["client_id"]?.stringValue)
            let user = try #require(try await admin.createUser("acme", email: "ada@example.com")["subject"]?.stringValue)
            let store = admin.harness.store
            let before = (try await store.tenants(), try await store.applications(tenantID: "acme"), try await store.users(tenantID: "acme"),
                          try await store.apiKeys(tenantID: nil), try await store.webhook(tenantID: "acme"))
            let invitations = "/tenants/acme/invitations"
            // (method, path, the body with one member twice, the body with an unknown member)
            let cases: [(HTTPMethod, String, String, String)] = [
                (.post, "/tenants", #"{"id":"beta","name":"B","id":"gamma"}"#, #"{"id":"beta","name":"B","owner":"x"}"#),
                (.post, "/tenants", #"{"id":"beta","name":"B","policy":{"attempts_max":2,"attempts_max":3}}"#,
                 #"{"id":"beta","name":"B","policy":{"password_policy":{"mode":"none","hint":"x"}}}"#),
                (.patch, "/tenants/acme/policy", #"{"attempts_max":2,"attempts_max":3}"#, #"{"attempts_max":2,"admin":true}"#),
                (.post, "/tenants/acme/applications", #"{"label":"A","label":"B"}"#, #"{"label":"A","branding":{"name":"A","font":"x"}}"#),
                (.patch, "/tenants/acme/applications/\(app)", #"{"branding":{"name":"A","name":"B"}}"#, #"{"client_id":"mine"}"#),
                (.post, "/tenants/acme/users", #"{"email":"b@example.com","email":"c@example.com"}"#, #"{"email":"b@example.com","role":"x"}"#),
                (.post, invitations, #"{"subject":"\#(user)","client_id":"\#(app)","client_id":"other"}"#,
                 #"{"subject":"\#(user)","client_id":"\#(app)","note":"x"}"#),
                (.post, "/api-keys", #"{"label":"a","label":"b"}"#, #"{"label":"a","tenant_id":"acme"}"#),
                (.put, "/tenants/acme/webhook", #"{"url":"https://hooks.example/a","url":"https://hooks.example/b"}"#,
                 #"{"url":"https://hooks.example/a","secret":"x"}"#),
                (.post, "/keys/rotate", #"{"device":true,"device":false}"#, #"{"device":true,"all":true}"#),
                (.post, "/tenants/acme/applications/\(app)/secret", #"{"a":1,"a":2}"#, #"{"reason":"x"}"#),
            ]
            for (method, path, duplicate, unknown) in cases {
                try await admin.expectError(400, "invalid_request", method, path, body: duplicate)
                try await admin.expectError(400, "unknown_field", method, path, body: unknown)
            }
            let nested = try await admin.expectError(400, "unknown_field", .post, "/tenants",
                                                     body: #"{"id":"beta","name":"B","policy":{"password_policy":{"hint":"x"}}}"#)
            #expect(nested == "unknown field 'policy.password_policy.hint'")
            let after = (try await store.tenants(), try await store.applications(tenantID: "acme"), try await store.users(tenantID: "acme"),
                         try await store.apiKeys(tenantID: nil), try await store.webhook(tenantID: "acme"))
            #expect(after.0 == before.0 && after.1 == before.1 && after.2 == before.2 && after.3 == before.3 && after.4 == before.4)
            #expect(try await store.invitations(tenantID: "acme", subject: nil, clientID: nil, status: nil, limit: 10).isEmpty)
        }
    }

    @Test("hostile bytes in a body: invalid UTF-8, nesting beyond 8, a null where a value is required, a fraction for an integer",
          arguments: StoreBackend.underTest)
    func hostileBodies(backend: StoreBackend) async throws {
        try await withManagement(backend) { admin in
            try await admin.createTenant("acme")
            let before = try await admin.harness.store.tenant(id: "acme")
            let response = try await admin.harness.client.send(HTTPClientRequest(
                method: .patch, url: admin.harness.url("/manage/v1/tenants/acme/policy"),
                headers: ["Authorization": "Bearer \(admin.key ?? "")", "Content-Type": "application/json"],
                body: Array(#"{"further_device_approval":""#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8)))
            #expect(response.status.code == 400)
            let deep = #"{"jwks":"# + String(repeating: "[", count: 9) + String(repeating: "]", count: 9) + "}"
            try await admin.expectError(400, "invalid_request", .patch, "/tenants/acme/policy", body: deep)
            try await admin.expectError(400, "invalid_request", .patch, "/tenants/acme/policy", body: #"{"liveness_required":null}"#)
            try await admin.expectError(400, "invalid_request", .patch, "/tenants/acme/policy", body: #"{"attempts_max":2.5}"#)
            try await admin.expectError(400, "invalid_field", .patch, "/tenants/acme/policy", body: #"{"attempts_max":99999999999999999999}"#)
            #expect(try await admin.harness.store.tenant(id: "acme") == before)
        }
    }
}
