import FaceSealCrypto
import FaceSealHTTP
import FaceSealWire
import Foundation
import Testing
@testable import FaceSealAuthority

@Suite("Device API trust boundaries: a key acts only for its application, the download binds the completion, amr")
struct DeviceBoundaryTests {
    @Test("a key enrolled for app-1 learns and does nothing about app-2's request of the same user, also after app-2's enrolment ended",
          arguments: StoreBackend.underTest)
    func keyActsOnlyForItsApplication(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            let (other, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            let (own, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-2")
            try await createPendingRequest(harness, "req-b", clientID: "app-2")
            let ownEnrolment = try await harness.store.deviceKey(keyID: own.userPresentKID).enrolmentID

            // The owner's download gives a well-formed completion for the other key to replay.
            let completion = try TestDevice.completion(rid: "req-b", from: try await downloadToken(own, "req-b"), receipt: receipt("b"))
            let before = try await harness.store.request(authReqID: "req-b")
            for status in [nil, DeviceKeyStatus.revoked] {
                if let status { _ = try await harness.store.endEnrolment(id: ownEnrolment, status: status) }
                let unknown = try await other.send(.get, DevicePaths.request("req-none"))
                expectDeviceError(unknown, .unknownRequest)
                let answers = [
                    try await other.send(.get, DevicePaths.request("req-b")),
                    try await other.send(.get, DevicePaths.request("req-b"), as: .userPresent),
                    try await other.send(.get, DevicePaths.requestToken("req-b"), as: .userPresent),
                    try await other.post(DevicePaths.completion("req-b"), completion),
                    try await other.post(DevicePaths.abort("req-b"), AbortRequest(rid: "req-b", reason: .userCancelled)),
                ]
                for answer in answers {
                    expectDeviceError(answer, .unknownRequest)
                    #expect(answer.body == unknown.body)
                }
                #expect(try await harness.store.request(authReqID: "req-b") == before)
                #expect(try await harness.store.faceToken(subject: "user-1").generation == 1)
            }
            // The request's own key, once its enrolment is revoked, is told so.
            expectDeviceError(try await own.send(.get, DevicePaths.request("req-b")), .deviceKeyRevoked)
        }
    }

    @Test("the face token and the server share go only to the user-present key", arguments: StoreBackend.underTest)
    func tokenDownloadNeedsTheUserPresentKey(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            let (device, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            try await createPendingRequest(harness, "req-1")
            let ambient = try await device.send(.get, DevicePaths.requestToken("req-1"), as: .ambient)
            expectDeviceError(ambient, .userPresenceRequired)
            #expect(!ambient.body.contains(subsequence: Array("server_share".utf8)))
            #expect(try await harness.store.tokenDownloads(authReqID: "req-1").isEmpty)
            let download = try await downloadToken(device, "req-1")
            _ = try TestDevice.open(download)
        }
    }

    @Test("a completion is accepted only from the key that downloaded, at the generation it downloaded",
          arguments: StoreBackend.underTest)
    func completionIsBoundToTheDownload(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            let (first, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            let (second, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            try await createPendingRequest(harness, "req-1")
            let before = try await harness.store.request(authReqID: "req-1")
            let tokenBefore = try await harness.store.faceToken(subject: "user-1")

            // The second device downloads; the first, which never did, posts a completion from that download.
            let download = try await downloadToken(second, "req-1")
            let completion = try TestDevice.completion(rid: "req-1", from: download, receipt: receipt("one"))
            expectDeviceError(try await first.post(DevicePaths.completion("req-1"), completion), .invalidRequest)
            // A key that downloaded generation 1 cannot complete from another generation (nor claim a later one).
            var later = try TestDevice.completion(rid: "req-1", from: download, receipt: receipt("one"))
            let (envelope, share) = try TestDevice.sealToken(subject: "user-1", tenant: "acme", generation: 3)
            later.baseGeneration = 2
            later.token = envelope
            later.serverShare = Base64URLSecret(share)
            expectDeviceError(try await second.post(DevicePaths.completion("req-1"), later), .invalidRequest)
            // base_generation at the top of the integer range is refused, not trapped on.
            var huge = completion
            huge.baseGeneration = Int.max
            expectDeviceError(try await second.post(DevicePaths.completion("req-1"), huge), .invalidRequest)
            #expect(try await harness.store.request(authReqID: "req-1") == before)
            #expect(try await harness.store.faceToken(subject: "user-1") == tokenBefore)

            // Every download is kept against its key: the first device's later download does not void the second's.
            _ = try await downloadToken(first, "req-1")
            let downloads = try await harness.store.tokenDownloads(authReqID: "req-1")
            #expect(Set(downloads.map(\.keyID)) == [first.userPresentKID, second.userPresentKID])
            #expect(downloads.allSatisfy { $0.generation == 1 })
            #expect(try await second.post(DevicePaths.completion("req-1"), completion).status == 200)
            #expect(try await harness.store.faceToken(subject: "user-1").generation == 2)
        }
    }

    @Test("amr carries pwd only when the stored token needs a password; a device's claim of one is refused",
          arguments: StoreBackend.underTest)
    func amrIsTheAuthoritysWord(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            try await TestApplication.register(harness)
            let (device, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: TestApplication.clientID)
            let rid = try await TestApplication.start(harness, ceremony: false)
            let download = try await downloadToken(device, rid)
            let claimed = try TestDevice.completion(rid: rid, from: download, receipt: nil, passwordUsed: true)
            expectDeviceError(try await device.post(DevicePaths.completion(rid), claimed), .invalidRequest)
            #expect(try await harness.store.request(authReqID: rid).state == .pending)

            let honest = try TestDevice.completion(rid: rid, from: download, receipt: nil)
            #expect(try await device.post(DevicePaths.completion(rid), honest).status == 200)
            let idToken = try #require(try await TestApplication.token(harness, rid).idToken)
            let claims = try JWTClaims(payload: try JWS.parse(idToken).payload)
            #expect(claims["amr"] == .array([.string("face"), .string("hwk")]))
        }
    }

    @Test("a password token's completion must say so, and its ID token carries pwd", arguments: StoreBackend.underTest)
    func amrOfAPasswordToken(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness, policy: TenantPolicy(passwordPolicy: PasswordPolicy(mode: .optional)))
            try await TestApplication.register(harness)
            let (device, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: TestApplication.clientID,
                                                            tokenPassword: "correct horse")
            let rid = try await TestApplication.start(harness, ceremony: false)
            let download = try await downloadToken(device, rid)
            let denied = try TestDevice.completion(rid: rid, from: download, receipt: nil, passwordUsed: false, password: "correct horse")
            expectDeviceError(try await device.post(DevicePaths.completion(rid), denied), .invalidRequest)
            let completion = try TestDevice.completion(rid: rid, from: download, receipt: nil, password: "correct horse")
            #expect(try await device.post(DevicePaths.completion(rid), completion).status == 200)
            let idToken = try #require(try await TestApplication.token(harness, rid).idToken)
            let claims = try JWTClaims(payload: try JWS.parse(idToken).payload)
            #expect(claims["amr"] == .array([.string("face"), .string("hwk"), .string("pwd")]))
        }
    }
}
