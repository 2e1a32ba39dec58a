import FaceSealTestSupport
import Foundation
import Testing
@testable import FaceSealAuthority

@Suite("Storage: tenants, applications, users, API keys, audit, signing keys")
struct ManagementStoreTests {
    @Test("tenants: create, read, list, update policy; duplicates and unknown ids are typed", arguments: StoreBackend.underTest)
    func tenants(backend: StoreBackend) async throws {
        try await withStore(backend) { store, clock in
            let policy = TenantPolicy(
                keyAlgorithms: ["ML-DSA-65", "ML-KEM-1024"], attemptsMax: 5, livenessRequired: false,
                passwordPolicy: PasswordPolicy(mode: .required, minimumLength: 12), oneDevicePerUser: true, requestLifetimeSeconds: 120
            )
            let created = try await store.createTenant(StoreFixtures.tenant("acme", policy: policy))
            #expect(created.policy == policy)
            #expect(created.createdAt == clock.now())
            #expect(try await store.tenant(id: "acme") == created)

            await expectStoreError(.conflict(.tenant, id: "acme")) { try await store.createTenant(StoreFixtures.tenant("acme")) }
            await expectStoreError(.notFound(.tenant, id: "nope")) { try await store.tenant(id: "nope") }
            await expectStoreError(.notFound(.tenant, id: "nope")) { try await store.updateTenantPolicy(tenantID: "nope", policy: TenantPolicy()) }

            _ = try await store.createTenant(StoreFixtures.tenant("beta"))
            #expect(try await store.tenants().map(\.id) == ["acme", "beta"])

            let updated = try await store.updateTenantPolicy(tenantID: "beta", policy: policy)
            #expect(updated.policy == policy)
            #expect(try await store.tenant(id: "beta").policy == policy)
        }
    }

    @Test("bad tenant input is refused before anything is stored", arguments: StoreBackend.underTest)
    func badTenantInput(backend: StoreBackend) async throws {
        try await withStore(backend) { store, _ in
            await expectStoreError(.invalidInput(field: "id", reason: "empty")) { try await store.createTenant(StoreFixtures.tenant("")) }
            await expectStoreError(.invalidInput(field: "attemptsMax", reason: "outside 1…100")) {
                try await store.createTenant(StoreFixtures.tenant("x", policy: TenantPolicy(attemptsMax: 0)))
            }
            await expectStoreError(.invalidInput(field: "keyAlgorithms", reason: "empty")) {
                try await store.createTenant(StoreFixtures.tenant("x", policy: TenantPolicy(keyAlgorithms: [])))
            }
            await expectStoreError(.invalidInput(field: "id", reason: "contains control characters")) {
                try await store.createTenant(StoreFixtures.tenant("a\u{0}b"))
            }
            let tenants = try await store.tenants()
            #expect(tenants.isEmpty)
        }
    }

    @Test("applications: secret or JWKS, list, update; duplicate client id is a conflict", arguments: StoreBackend.underTest)
    func applications(backend: StoreBackend) async throws {
        try await withStore(backend) { store, _ in
            _ = try await store.createTenant(StoreFixtures.tenant())
            let first = try await store.createApplication(StoreFixtures.application("app-1"))
            #expect(first.credential == .secretHash(Array(repeating: 0xA5, count: 32)))
            #expect(first.idTokenSignedResponseAlg == "EdDSA")

            var second = StoreFixtures.application("app-2")
            second.credential = .jwks(#"{"keys":[]}"#)
            second.deliveryMode = .ping
            second.notificationEndpoint = "https://rp.example/ping"
            let storedSecond = try await store.createApplication(second)
            #expect(storedSecond.credential == .jwks(#"{"keys":[]}"#))
            #expect(storedSecond.deliveryMode == .ping)
            #expect(storedSecond.notificationEndpoint == "https://rp.example/ping")

            await expectStoreError(.conflict(.application, id: "app-1")) { try await store.createApplication(StoreFixtures.application("app-1")) }
            await expectStoreError(.notFound(.tenant, id: "ghost")) { try await store.createApplication(StoreFixtures.application("app-3", tenantID: "ghost")) }
            await expectStoreError(.notFound(.application, id: "app-9")) { try await store.application(clientID: "app-9") }

            var ping = StoreFixtures.application("app-4")
            ping.deliveryMode = .ping
            await expectStoreError(.invalidInput(field: "notificationEndpoint", reason: "required for ping delivery")) {
                try await store.createApplication(ping)
            }

            #expect(try await store.applications(tenantID: "acme").map(\.clientID) == ["app-1", "app-2"])

            var changed = first
            changed.label = "Renamed"
            changed.credential = .jwks(#"{"keys":[{"kty":"OKP"}]}"#)
            changed.idTokenSignedResponseAlg = "ML-DSA-65"
            let updated = try await store.updateApplication(changed)
            #expect(updated.label == "Renamed")
            #expect(updated.credential == .jwks(#"{"keys":[{"kty":"OKP"}]}"#))
            #expect(updated.idTokenSignedResponseAlg == "ML-DSA-65")
            #expect(updated.createdAt == first.createdAt)
        }
    }

    @Test("users: unique subject, unique email per tenant, lookups", arguments: StoreBackend.underTest)
    func users(backend: StoreBackend) async throws {
        try await withStore(backend) { store, _ in
            _ = try await store.createTenant(StoreFixtures.tenant("acme"))
            _ = try await store.createTenant(StoreFixtures.tenant("beta"))
            let alice = try await store.createUser(UserRecord(subject: "s-alice", tenantID: "acme", email: "alice@example.com"))
            #expect(try await store.user(subject: "s-alice") == alice)
            #expect(try await store.user(tenantID: "acme", email: "alice@example.com") == alice)

            await expectStoreError(.conflict(.user, id: "s-alice2")) {
                try await store.createUser(UserRecord(subject: "s-alice2", tenantID: "acme", email: "alice@example.com"))
            }
            await expectStoreError(.conflict(.user, id: "s-alice")) {
                try await store.createUser(UserRecord(subject: "s-alice", tenantID: "beta", email: "other@example.com"))
            }
            // The same email in another tenant is another user.
            _ = try await store.createUser(UserRecord(subject: "s-alice-beta", tenantID: "beta", email: "alice@example.com"))
            await expectStoreError(.notFound(.user, id: "bob@example.com")) { try await store.user(tenantID: "acme", email: "bob@example.com") }
            await expectStoreError(.notFound(.user, id: "nobody")) { try await store.user(subject: "nobody") }
            await expectStoreError(.notFound(.tenant, id: "ghost")) { try await store.users(tenantID: "ghost") }
            #expect(try await store.users(tenantID: "acme").map(\.subject) == ["s-alice"])
        }
    }

    @Test("API keys are found by hash only and revocation keeps its first time", arguments: StoreBackend.underTest)
    func apiKeys(backend: StoreBackend) async throws {
        try await withStore(backend) { store, clock in
            _ = try await store.createTenant(StoreFixtures.tenant())
            let hash = Array(repeating: UInt8(0x42), count: 32)
            let key = try await store.createAPIKey(APIKeyRecord(id: "key-1", tenantID: "acme", keyHash: hash, label: "ops"))
            #expect(try await store.apiKey(hash: hash) == key)
            #expect(try await store.apiKey(hash: Array(repeating: 0x43, count: 32)) == nil)
            await expectStoreError(.conflict(.apiKey, id: "key-2")) {
                try await store.createAPIKey(APIKeyRecord(id: "key-2", tenantID: "acme", keyHash: hash, label: "dup"))
            }
            await expectStoreError(.notFound(.tenant, id: "ghost")) {
                try await store.createAPIKey(APIKeyRecord(id: "key-3", tenantID: "ghost", keyHash: [1], label: "x"))
            }
            let operatorKey = try await store.createAPIKey(APIKeyRecord(id: "root", tenantID: nil, keyHash: [9, 9], label: "operator"))
            #expect(operatorKey.tenantID == nil)
            #expect(try await store.apiKeys(tenantID: "acme").map(\.id) == ["key-1"])
            #expect(try await store.apiKeys(tenantID: nil).map(\.id) == ["root"])
            await expectStoreError(.notFound(.tenant, id: "ghost")) { try await store.apiKeys(tenantID: "ghost") }

            let revokedAt = clock.now()
            #expect(try await store.revokeAPIKey(id: "key-1").revokedAt == revokedAt)
            clock.advance(by: 60)
            #expect(try await store.revokeAPIKey(id: "key-1").revokedAt == revokedAt)
            #expect(try await store.apiKey(hash: hash)?.revokedAt == revokedAt)
            await expectStoreError(.notFound(.apiKey, id: "nope")) { try await store.revokeAPIKey(id: "nope") }
        }
    }

    @Test("audit events: newest first, per tenant, paged by sequence", arguments: StoreBackend.underTest)
    func auditEvents(backend: StoreBackend) async throws {
        try await withStore(backend) { store, clock in
            var sequences: [Int64] = []
            for index in 0..<5 {
                clock.advance(by: 1)
                let event = try await store.appendAudit(AuditEvent(tenantID: "acme", kind: "device.revoked", actor: "key-1", target: "enr-\(index)", detailJSON: #"{"i":\#(index)}"#))
                #expect(event.at == clock.now())
                sequences.append(event.sequence)
            }
            _ = try await store.appendAudit(AuditEvent(tenantID: nil, kind: "tenant.created"))
            #expect(sequences == sequences.sorted())
            let newest = try await store.auditEvents(tenantID: "acme", beforeSequence: nil, limit: 2)
            #expect(newest.map(\.target) == ["enr-4", "enr-3"])
            let older = try await store.auditEvents(tenantID: "acme", beforeSequence: newest.last?.sequence, limit: 10)
            #expect(older.map(\.target) == ["enr-2", "enr-1", "enr-0"])
            #expect(try await store.auditEvents(tenantID: nil, beforeSequence: nil, limit: 10).map(\.kind) == ["tenant.created"])
            await expectStoreError(.invalidInput(field: "limit", reason: "outside 1…1000")) {
                try await store.auditEvents(tenantID: nil, beforeSequence: nil, limit: 0)
            }
        }
    }

    @Test("the audit retention deletes the oldest events of every tenant, up to its limit, and stops at a younger one",
          arguments: StoreBackend.underTest)
    func auditPurge(backend: StoreBackend) async throws {
        try await withStore(backend) { store, clock in
            // Recorded at 1, 2, …, 6 s: acme, the operator's, acme, …
            for index in 0..<6 {
                clock.advance(by: 1)
                _ = try await store.appendAudit(AuditEvent(tenantID: index % 2 == 0 ? "acme" : nil, kind: "k", target: "e\(index)"))
            }
            func left() async throws -> [String] {
                let events = try await store.auditEvents(tenantID: "acme", beforeSequence: nil, limit: 10)
                    + store.auditEvents(tenantID: nil, beforeSequence: nil, limit: 10)
                return events.compactMap(\.target).sorted()
            }
            // At 10 s with a 6.5 s retention, events recorded at 3.5 s or before go: the first three, two at most a call.
            clock.advance(by: 4)
            #expect(try await store.purgeAuditEvents(olderThan: 6.5, limit: 2) == 2)
            #expect(try await left() == ["e2", "e3", "e4", "e5"])
            #expect(try await store.purgeAuditEvents(olderThan: 6.5, limit: 2) == 1)
            #expect(try await store.purgeAuditEvents(olderThan: 6.5, limit: 2) == 0)
            #expect(try await left() == ["e3", "e4", "e5"])
            // Exactly the retention old is old enough.
            #expect(try await store.purgeAuditEvents(olderThan: 6, limit: 1_000) == 1)
            #expect(try await left() == ["e4", "e5"])
            for (retention, limit, field) in [(-1.0, 10, "retention"), (.infinity, 10, "retention"), (1, 0, "limit"), (1, 1_001, "limit")] {
                await expectStoreError(.invalidInput(field: field, reason: "retention ≥ 0 seconds, limit 1…1000")) {
                    try await store.purgeAuditEvents(olderThan: retention, limit: limit)
                }
            }
            #expect(try await left() == ["e4", "e5"])
        }
    }

    @Test("signing keys: add, list, retire; duplicate key id is a conflict", arguments: StoreBackend.underTest)
    func signingKeys(backend: StoreBackend) async throws {
        try await withStore(backend) { store, clock in
            let key = SigningKeyRecord(keyID: "sk-1", algorithm: "EdDSA", publicJWK: #"{"kty":"OKP"}"#, encryptedPrivateKey: [1, 2, 3])
            let stored = try await store.addSigningKey(key)
            #expect(stored.retiredAt == nil)
            await expectStoreError(.conflict(.signingKey, id: "sk-1")) { try await store.addSigningKey(key) }
            clock.advance(by: 10)
            _ = try await store.addSigningKey(SigningKeyRecord(keyID: "sk-2", algorithm: "RS256", publicJWK: #"{"kty":"RSA"}"#, encryptedPrivateKey: [4]))
            #expect(try await store.signingKeys().map(\.keyID) == ["sk-1", "sk-2"])
            let retired = try await store.retireSigningKey(keyID: "sk-1")
            #expect(retired.retiredAt == clock.now())
            #expect(retired.encryptedPrivateKey == [1, 2, 3])
            await expectStoreError(.notFound(.signingKey, id: "sk-9")) { try await store.retireSigningKey(keyID: "sk-9") }
        }
    }
}
