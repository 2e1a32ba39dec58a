import FaceSealTestSupport
import Foundation
import Testing
@testable import FaceSealAuthority

@Suite("Storage: enrolment, device keys, rotation, revocation")
struct EnrolmentStoreTests {
    @Test("enrolment stores the device, both keys, the face token, and consumes the invitation", arguments: StoreBackend.underTest)
    func enrolmentStoresEverything(backend: StoreBackend) async throws {
        try await withStore(backend) { store, clock in
            let outcome = try await StoreFixtures.seedEnrolled(store, clock: clock)
            #expect(outcome.enrolment.status == .active)
            #expect(outcome.enrolment.subject == "user-1")
            #expect(outcome.enrolment.clientID == "app-1")
            #expect(outcome.keys.map(\.role) == [.ambient, .userPresent])
            #expect(outcome.keys.map(\.keyID) == ["k1-ambient", "k1-present"])
            #expect(outcome.replacedKeyIDs.isEmpty)

            let key = try await store.deviceKey(keyID: "k1-present")
            #expect(key.deviceID == "device-1")
            #expect(key.subject == "user-1")
            #expect(key.acceptance(at: clock.now()) == .accepted)

            let token = try await store.faceToken(subject: "user-1")
            #expect(token == StoreFixtures.faceToken().with(updatedAt: clock.now()))
            #expect(try await store.invitation(id: "inv-1").consumedAt == clock.now())
            #expect(try await store.device(id: "device-1").label == "Phone device-1")
            #expect(try await store.enrolments(subject: "user-1").map(\.id) == ["enr-1"])
            #expect(try await store.enrolments(deviceID: "device-1").map(\.id) == ["enr-1"])
            #expect(try await store.enrolments(tenantID: "acme").map(\.id) == ["enr-1"])
            await expectStoreError(.notFound(.tenant, id: "ghost")) { try await store.enrolments(tenantID: "ghost") }
            await expectStoreError(.notFound(.device, id: "device-9")) { try await store.enrolments(deviceID: "device-9") }
            await expectStoreError(.notFound(.user, id: "ghost")) { try await store.enrolments(subject: "ghost") }
        }
    }

    @Test("an invitation works once and not after it expires", arguments: StoreBackend.underTest)
    func invitationIsSingleUse(backend: StoreBackend) async throws {
        try await withStore(backend) { store, clock in
            try await StoreFixtures.seedEnrolled(store, clock: clock)
            await expectStoreError(.invitationUnusable(id: "inv-1", reason: "already used")) {
                try await store.enrol(StoreFixtures.enrolmentRequest(invitationID: "inv-1", enrolmentID: "enr-2", deviceID: "device-2", keyPrefix: "k2", token: nil))
            }
            _ = try await store.createInvitation(StoreFixtures.invitation("inv-2", clock: clock))
            clock.advance(by: 3601)
            await expectStoreError(.invitationUnusable(id: "inv-2", reason: "expired")) {
                try await store.enrol(StoreFixtures.enrolmentRequest(invitationID: "inv-2", enrolmentID: "enr-2", deviceID: "device-2", keyPrefix: "k2", token: nil))
            }
            await expectStoreError(.notFound(.invitation, id: "inv-9")) {
                try await store.enrol(StoreFixtures.enrolmentRequest(invitationID: "inv-9", enrolmentID: "enr-2", deviceID: "device-2", keyPrefix: "k2", token: nil))
            }
            await expectStoreError(.notFound(.device, id: "device-2")) { try await store.device(id: "device-2") }
        }
    }

    @Test("invitations only for a user and application of the tenant", arguments: StoreBackend.underTest)
    func invitationReferencesAreChecked(backend: StoreBackend) async throws {
        try await withStore(backend) { store, clock in
            try await StoreFixtures.seedBasics(store)
            await expectStoreError(.notFound(.user, id: "ghost")) {
                try await store.createInvitation(StoreFixtures.invitation("inv-x", clock: clock, subject: "ghost"))
            }
            await expectStoreError(.notFound(.application, id: "ghost-app")) {
                try await store.createInvitation(StoreFixtures.invitation("inv-x", clock: clock, clientID: "ghost-app"))
            }
            await expectStoreError(.notFound(.invitation, id: "inv-x")) { try await store.invitation(id: "inv-x") }
        }
    }

    @Test("a failed enrolment leaves nothing behind: no device, keys, token, and the invitation stays usable", arguments: StoreBackend.underTest)
    func enrolmentIsAllOrNothing(backend: StoreBackend) async throws {
        try await withStore(backend) { store, clock in
            try await StoreFixtures.seedEnrolled(store, clock: clock)
            _ = try await store.createUser(StoreFixtures.user("user-2"))
            _ = try await store.createInvitation(StoreFixtures.invitation("inv-2", clock: clock, subject: "user-2"))

            // The user-present key id collides with an existing key: the ambient key was already written.
            var clashing = StoreFixtures.enrolmentRequest(invitationID: "inv-2", enrolmentID: "enr-2", deviceID: "device-2", keyPrefix: "k2", token: StoreFixtures.faceToken(subject: "user-2"))
            clashing.userPresentKey.keyID = "k1-present"
            await expectStoreError(.conflict(.deviceKey, id: "k1-present")) { try await store.enrol(clashing) }

            await expectStoreError(.notFound(.device, id: "device-2")) { try await store.device(id: "device-2") }
            await expectStoreError(.notFound(.enrolment, id: "enr-2")) { try await store.enrolment(id: "enr-2") }
            await expectStoreError(.notFound(.deviceKey, id: "k2-ambient")) { try await store.deviceKey(keyID: "k2-ambient") }
            await expectStoreError(.notFound(.faceToken, id: "user-2")) { try await store.faceToken(subject: "user-2") }
            #expect(try await store.invitation(id: "inv-2").consumedAt == nil)
            #expect(try await store.deviceKey(keyID: "k1-present").enrolmentID == "enr-1")

            // The same enrolment without the clash goes through.
            clashing.userPresentKey.keyID = "k2-present"
            let outcome = try await store.enrol(clashing)
            #expect(outcome.keys.map(\.keyID) == ["k2-ambient", "k2-present"])
        }
    }

    @Test("first device must bring the face token; a further device must not replace it", arguments: StoreBackend.underTest)
    func faceTokenRules(backend: StoreBackend) async throws {
        try await withStore(backend) { store, clock in
            try await StoreFixtures.seedBasics(store)
            _ = try await store.createInvitation(StoreFixtures.invitation("inv-1", clock: clock))
            await expectStoreError(.invalidInput(field: "initialFaceToken", reason: "the user's first device must create the face token")) {
                try await store.enrol(StoreFixtures.enrolmentRequest(invitationID: "inv-1", enrolmentID: "enr-1", deviceID: "device-1", keyPrefix: "k1", token: nil))
            }
            await expectStoreError(.invalidInput(field: "initialFaceToken.subject", reason: "not the invited user")) {
                try await store.enrol(StoreFixtures.enrolmentRequest(invitationID: "inv-1", enrolmentID: "enr-1", deviceID: "device-1", keyPrefix: "k1", token: StoreFixtures.faceToken(subject: "user-9")))
            }
            _ = try await store.enrol(StoreFixtures.enrolmentRequest(invitationID: "inv-1", enrolmentID: "enr-1", deviceID: "device-1", keyPrefix: "k1", token: StoreFixtures.faceToken()))

            _ = try await store.createInvitation(StoreFixtures.invitation("inv-2", clock: clock))
            await expectStoreError(.conflict(.faceToken, id: "user-1")) {
                try await store.enrol(StoreFixtures.enrolmentRequest(invitationID: "inv-2", enrolmentID: "enr-2", deviceID: "device-2", keyPrefix: "k2", token: StoreFixtures.faceToken(marker: 9)))
            }
            let second = try await store.enrol(StoreFixtures.enrolmentRequest(invitationID: "inv-2", enrolmentID: "enr-2", deviceID: "device-2", keyPrefix: "k2", token: nil))
            #expect(second.replacedKeyIDs.isEmpty)
            #expect(try await store.faceToken(subject: "user-1").sealedBody == Array(repeating: 1, count: 48))
            // Several devices are allowed by default: the first stays active.
            #expect(try await store.deviceKey(keyID: "k1-ambient").status == .active)
        }
    }

    @Test("identical key ids in one enrolment are refused", arguments: StoreBackend.underTest)
    func keysNeedDistinctIDs(backend: StoreBackend) async throws {
        try await withStore(backend) { store, clock in
            try await StoreFixtures.seedBasics(store)
            _ = try await store.createInvitation(StoreFixtures.invitation("inv-1", clock: clock))
            var request = StoreFixtures.enrolmentRequest(invitationID: "inv-1", enrolmentID: "enr-1", deviceID: "device-1", keyPrefix: "k1", token: StoreFixtures.faceToken())
            request.userPresentKey.keyID = request.ambientKey.keyID
            await expectStoreError(.invalidInput(field: "userPresentKey.keyID", reason: "the two keys need different ids")) { try await store.enrol(request) }
        }
    }

    @Test("one device per user: a new enrolment replaces the app's keys on the old device", arguments: StoreBackend.underTest)
    func oneDevicePerUserReplaces(backend: StoreBackend) async throws {
        try await withStore(backend) { store, clock in
            try await StoreFixtures.seedEnrolled(store, clock: clock, policy: TenantPolicy(oneDevicePerUser: true))
            // Another application on the old device is not affected.
            _ = try await store.createApplication(StoreFixtures.application("app-2"))
            _ = try await store.createInvitation(StoreFixtures.invitation("inv-app2", clock: clock, clientID: "app-2"))
            _ = try await store.enrol(StoreFixtures.enrolmentRequest(invitationID: "inv-app2", enrolmentID: "enr-app2", deviceID: "device-1", keyPrefix: "k1b", token: nil))

            clock.advance(by: 30)
            _ = try await store.createInvitation(StoreFixtures.invitation("inv-2", clock: clock))
            let outcome = try await store.enrol(StoreFixtures.enrolmentRequest(invitationID: "inv-2", enrolmentID: "enr-2", deviceID: "device-2", keyPrefix: "k2", token: nil))
            #expect(outcome.replacedKeyIDs == ["k1-ambient", "k1-present"])

            let old = try await store.enrolment(id: "enr-1")
            #expect(old.status == .replaced)
            #expect(old.statusChangedAt == clock.now())
            for keyID in ["k1-ambient", "k1-present"] {
                let key = try await store.deviceKey(keyID: keyID)
                #expect(key.status == .replaced)
                #expect(key.acceptance(at: clock.now()) == .replaced)
            }
            #expect(try await store.deviceKey(keyID: "k1b-ambient").status == .active)
            #expect(try await store.deviceKey(keyID: "k2-ambient").status == .active)
        }
    }

    @Test("rotation: the previous keys are accepted with a hint until the overlap ends", arguments: StoreBackend.underTest)
    func rotationOverlap(backend: StoreBackend) async throws {
        try await withStore(backend) { store, clock in
            try await StoreFixtures.seedEnrolled(store, clock: clock)
            let deadline = clock.now().addingTimeInterval(600)
            let keys = try await store.rotateKeys(
                enrolmentID: "enr-1", replacing: "k1-present",
                ambient: NewDeviceKey(keyID: "k1r-ambient", publicKeyJWK: "{}"),
                userPresent: NewDeviceKey(keyID: "k1r-present", publicKeyJWK: "{}"),
                overlapUntil: deadline
            )
            #expect(Set(keys.map(\.keyID)) == ["k1-ambient", "k1-present", "k1r-ambient", "k1r-present"])
            let previous = try await store.deviceKey(keyID: "k1-present")
            #expect(previous.status == .superseded)
            #expect(previous.supersededBy == "k1r-present")
            #expect(previous.overlapUntil == deadline)
            #expect(previous.acceptance(at: clock.now()) == .acceptedWithRotationHint(successorKeyID: "k1r-present"))
            #expect(try await store.deviceKey(keyID: "k1r-present").acceptance(at: clock.now()) == .accepted)

            clock.advance(by: 600)
            #expect(try await store.deviceKey(keyID: "k1-present").acceptance(at: clock.now()) == .overlapEnded)

            // A second rotation ends the first overlap at once and opens a new one.
            clock.set(deadline.addingTimeInterval(-300))
            // A second rotation signed by the key already rotated loses: the store re-checks the signer.
            await expectStoreError(.deviceKeyNotActive(keyID: "k1-present", status: .superseded)) {
                try await store.rotateKeys(enrolmentID: "enr-1", replacing: "k1-present", ambient: NewDeviceKey(keyID: "x-ambient", publicKeyJWK: "{}"),
                                           userPresent: NewDeviceKey(keyID: "x-present", publicKeyJWK: "{}"), overlapUntil: clock.now().addingTimeInterval(60))
            }
            #expect(try await store.deviceKey(keyID: "k1r-present").status == .active)
            _ = try await store.rotateKeys(
                enrolmentID: "enr-1", replacing: "k1r-present",
                ambient: NewDeviceKey(keyID: "k1s-ambient", publicKeyJWK: "{}"),
                userPresent: NewDeviceKey(keyID: "k1s-present", publicKeyJWK: "{}"),
                overlapUntil: clock.now().addingTimeInterval(600)
            )
            #expect(try await store.deviceKey(keyID: "k1-present").acceptance(at: clock.now()) == .overlapEnded)
            #expect(try await store.deviceKey(keyID: "k1r-present").acceptance(at: clock.now()) == .acceptedWithRotationHint(successorKeyID: "k1s-present"))

            // A key id already in use fails the whole rotation.
            await expectStoreError(.conflict(.deviceKey, id: "k1-ambient")) {
                try await store.rotateKeys(enrolmentID: "enr-1", replacing: "k1s-present", ambient: NewDeviceKey(keyID: "k1-ambient", publicKeyJWK: "{}"), userPresent: NewDeviceKey(keyID: "k1t-present", publicKeyJWK: "{}"), overlapUntil: clock.now().addingTimeInterval(60))
            }
            #expect(try await store.deviceKey(keyID: "k1s-present").status == .active)
            await expectStoreError(.notFound(.enrolment, id: "enr-9")) {
                try await store.rotateKeys(enrolmentID: "enr-9", replacing: "k1s-present", ambient: NewDeviceKey(keyID: "a", publicKeyJWK: "{}"), userPresent: NewDeviceKey(keyID: "b", publicKeyJWK: "{}"), overlapUntil: clock.now().addingTimeInterval(60))
            }
        }
    }

    @Test("revoke and terminate: keys follow the enrolment; ended enrolments stay ended", arguments: StoreBackend.underTest)
    func revokeAndTerminate(backend: StoreBackend) async throws {
        try await withStore(backend) { store, clock in
            try await StoreFixtures.seedEnrolled(store, clock: clock)
            let revoked = try await store.endEnrolment(id: "enr-1", status: .revoked)
            #expect(revoked.status == .revoked)
            #expect(try await store.deviceKey(keyID: "k1-ambient").acceptance(at: clock.now()) == .revoked)
            #expect(try await store.endEnrolment(id: "enr-1", status: .revoked) == revoked)
            await expectStoreError(.enrolmentNotActive(id: "enr-1", status: .revoked)) { try await store.endEnrolment(id: "enr-1", status: .terminated) }
            await expectStoreError(.enrolmentNotActive(id: "enr-1", status: .revoked)) {
                try await store.rotateKeys(enrolmentID: "enr-1", replacing: "k1-present", ambient: NewDeviceKey(keyID: "a", publicKeyJWK: "{}"), userPresent: NewDeviceKey(keyID: "b", publicKeyJWK: "{}"), overlapUntil: clock.now().addingTimeInterval(60))
            }
            await expectStoreError(.invalidInput(field: "status", reason: "an enrolment ends as revoked, terminated or replaced")) {
                try await store.endEnrolment(id: "enr-1", status: .active)
            }

            _ = try await store.createInvitation(StoreFixtures.invitation("inv-2", clock: clock))
            _ = try await store.enrol(StoreFixtures.enrolmentRequest(invitationID: "inv-2", enrolmentID: "enr-2", deviceID: "device-2", keyPrefix: "k2", token: nil))
            let ended = try await store.endDevice(id: "device-2", status: .terminated)
            #expect(ended.map(\.id) == ["enr-2"])
            #expect(try await store.deviceKey(keyID: "k2-present").acceptance(at: clock.now()) == .terminated)
            #expect(try await store.endDevice(id: "device-2", status: .terminated).isEmpty)
            await expectStoreError(.notFound(.device, id: "device-9")) { try await store.endDevice(id: "device-9", status: .revoked) }
        }
    }
}

extension FaceTokenRecord {
    func with(updatedAt: Date) -> FaceTokenRecord {
        var copy = self
        copy.updatedAt = updatedAt
        return copy
    }
}
