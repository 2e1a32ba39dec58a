import FaceSealWire
import Foundation
@testable import FaceSealAuthority

/// Builders for the records the storage tests need. Values are fixed so failures are reproducible.
enum StoreFixtures {
    static func tenant(_ id: String = "acme", policy: TenantPolicy = TenantPolicy()) -> TenantRecord {
        TenantRecord(id: id, name: "Acme \(id)", policy: policy)
    }

    static func application(_ clientID: String = "app-1", tenantID: String = "acme") -> ApplicationRecord {
        ApplicationRecord(
            clientID: clientID, tenantID: tenantID, label: "App \(clientID)", credential: .secretHash(Array(repeating: 0xA5, count: 32)),
            brandingJSON: ##"{"colour":"#123456"}"##, deliveryMode: .poll, deliveryEndpoint: "https://rp.example/deliver",
            idTokenSignedResponseAlg: "EdDSA"
        )
    }

    static func user(_ subject: String = "user-1", tenantID: String = "acme") -> UserRecord {
        UserRecord(subject: subject, tenantID: tenantID, email: "\(subject)@example.com")
    }

    static func faceToken(subject: String = "user-1", generation: Int64 = 1, marker: UInt8 = 1) -> FaceTokenRecord {
        FaceTokenRecord(
            subject: subject, tokenID: "token-\(subject)", generation: generation,
            headerJSON: Array(#"{"v":1,"generation":\#(generation)}"#.utf8),
            sealedBody: Array(repeating: marker, count: 48), encryptedServerShare: Array(repeating: marker &+ 100, count: 60)
        )
    }

    static func receipt(_ marker: UInt8) -> [UInt8] { Array(repeating: marker, count: 32) }

    /// A tenant, an application and a user.
    static func seedBasics(_ store: some AuthorityStore, policy: TenantPolicy = TenantPolicy()) async throws {
        _ = try await store.createTenant(tenant(policy: policy))
        _ = try await store.createApplication(application())
        _ = try await store.createUser(user())
    }

    static func invitation(_ id: String, clock: ManualClock, subject: String = "user-1", clientID: String = "app-1") -> InvitationRecord {
        InvitationRecord(
            id: id, tenantID: "acme", subject: subject, clientID: clientID, secretHash: Array(repeating: 7, count: 32),
            expiresAt: clock.now().addingTimeInterval(3600)
        )
    }

    static func enrolmentRequest(
        invitationID: String, enrolmentID: String, deviceID: String, keyPrefix: String, token: FaceTokenRecord?
    ) -> EnrolmentInsert {
        EnrolmentInsert(
            invitationID: invitationID, enrolmentID: enrolmentID, device: DeviceRecord(id: deviceID, label: "Phone \(deviceID)"),
            ambientKey: NewDeviceKey(keyID: "\(keyPrefix)-ambient", publicKeyJWK: #"{"kty":"EC","crv":"P-256","x":"a","y":"b"}"#),
            userPresentKey: NewDeviceKey(keyID: "\(keyPrefix)-present", publicKeyJWK: #"{"kty":"EC","crv":"P-256","x":"c","y":"d"}"#),
            initialFaceToken: token
        )
    }

    /// Basics plus one enrolled device (`device-1`, enrolment `enr-1`, keys `k1-*`) and a face token at generation 1.
    @discardableResult
    static func seedEnrolled(_ store: some AuthorityStore, clock: ManualClock, policy: TenantPolicy = TenantPolicy()) async throws -> EnrolmentOutcome {
        try await seedBasics(store, policy: policy)
        _ = try await store.createInvitation(invitation("inv-1", clock: clock))
        return try await store.enrol(enrolmentRequest(invitationID: "inv-1", enrolmentID: "enr-1", deviceID: "device-1", keyPrefix: "k1", token: faceToken()))
    }

    static func pendingRequest(_ id: String, clock: ManualClock, kind: CIBARequestKind = .ceremony, lifetime: TimeInterval = 300) -> CIBARequestRecord {
        CIBARequestRecord(
            authReqID: id, tenantID: "acme", clientID: "app-1", subject: "user-1", kind: kind,
            pkiKind: kind == .ceremony ? "sign" : nil, pkiContext: kind == .ceremony ? Array("ctx".utf8) : nil,
            pkiData: kind == .ceremony ? [1, 2, 3] : nil, bindingMessage: "Pay 12 EUR", clientNotificationToken: "bearer-\(id)",
            expiresAt: clock.now().addingTimeInterval(lifetime), intervalSeconds: 5
        )
    }

    /// Stores `request` and downloads its face token with `k1-present` (the key `completion` completes with).
    @discardableResult
    static func createDownloaded(_ store: some AuthorityStore, _ request: CIBARequestRecord) async throws -> CIBARequestRecord {
        let created = try await store.createRequest(request)
        _ = try await store.downloadFaceToken(authReqID: request.authReqID, keyID: "k1-present")
        return created
    }

    static func completion(_ id: String, expected: Int64, marker: UInt8) -> CompletionCommit {
        CompletionCommit(
            authReqID: id, keyID: "k1-present", expectedGeneration: expected,
            rotatedToken: faceToken(generation: expected + 1, marker: marker), receiptSHA256: receipt(marker)
        )
    }
}
