import FaceSealCrypto
import FaceSealHTTP
import FaceSealTestSupport
import FaceSealWire
import Foundation
import Testing
@testable import FaceSealAuthority

@Suite("Device API trust boundaries: a key acts only for its application, the download binds the completion, amr")
struct DeviceBoundaryTests {
    @Test("a key enrolled for app-1 learns and does nothing about app-2's request of the same user, also after app-2's enrolment ended",
          arguments: StoreBackend.underTest, [DeviceKeyStatus.revoked, .replaced, .terminated])
    func keyActsOnlyForItsApplication(backend: StoreBackend, ending: DeviceKeyStatus) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            let (other, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            let (own, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-2")
            try await createPendingRequest(harness, "req-b", clientID: "app-2")
            let ownEnrolment = try await harness.store.deviceKey(keyID: own.userPresentKID).enrolmentID

            // The owner's download gives a well-formed completion for the other key to replay.
            let completion = try TestDevice.completion(rid: "req-b", from: try await downloadToken(own, "req-b"), receipt: receipt("b"))
            let before = try await harness.store.request(authReqID: "req-b")
            for status in [nil, ending] {
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
            // The request's own key, once its enrolment ended, is told how.
            let told: [DeviceKeyStatus: DeviceErrorCode] = [.revoked: .deviceKeyRevoked, .replaced: .deviceKeyReplaced,
                                                            .terminated: .deviceKeyTerminated]
            expectDeviceError(try await own.send(.get, DevicePaths.request("req-b")), try #require(told[ending]))
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
            try await seedDeviceWorld(harness, policy: TenantPolicy(passwordPolicy: PasswordPolicy(mode: .optional), furtherDeviceApproval: .none))
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

@Suite("Device API: the authority owns the policy and counts the attempts")
struct DevicePolicyTests {
    @Test("a rotated header equals the stored one but for gen: no loosened liveness or threshold, no other field changed",
          arguments: StoreBackend.underTest)
    func theRotatedHeaderCannotLoosenThePolicy(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            let (device, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            try await createPendingRequest(harness, "req-1", kind: .login)
            let download = try await downloadToken(device, "req-1")
            let tokenBefore = try await harness.store.faceToken(subject: "user-1")
            let changes: [(String, (inout FaceTokenHeader) -> Void)] = [
                ("liveness off", { $0.livenessRequired = false }),
                ("threshold 1.99", { $0.threshold = 1.99 }),
                ("another token id", { $0.tid = "tok_other" }),
                ("another subject", { $0.sub = "user-2" }),
                ("another tenant", { $0.tenant = "globex" }),
                ("another creation time", { $0.createdAt += 1 }),
                ("scrypt parameters added", { $0.scrypt = TestDevice.testScrypt }),
            ]
            for (name, change) in changes {
                let completion = try TestDevice.completion(rid: "req-1", from: download, receipt: nil, adjust: change)
                let answer = try await device.post(DevicePaths.completion("req-1"), completion)
                #expect(answer.status == 400 && answer.error == .invalidRequest, "\(name)")
            }
            // A password switched on: sealed with one, and the completion says it was used.
            var protected = try TestDevice.open(download)
            protected.gen += 1
            protected.v = FaceTokenHeader.currentFormat
            protected.passwordRequired = true
            protected.scrypt = TestDevice.testScrypt
            let (envelope, share) = try TestDevice.seal(protected, password: "correct horse")
            let passworded = CompletionRequest(rid: "req-1", resultSHA256: nil, baseGeneration: protected.gen - 1, token: envelope,
                                               serverShare: share, passwordUsed: true)
            let refused = try await device.post(DevicePaths.completion("req-1"), passworded)
            #expect(refused.status == 400 && refused.error == .invalidRequest)
            #expect(try await harness.store.faceToken(subject: "user-1") == tokenBefore)
            #expect(try await harness.store.request(authReqID: "req-1").state == .pending)
            let unchanged = try TestDevice.completion(rid: "req-1", from: download, receipt: nil)
            #expect(try await device.post(DevicePaths.completion("req-1"), unchanged).status == 200)
        }
    }

    @Test("a stricter tenant policy reaches the request details and must be carried into the rotated header",
          arguments: StoreBackend.underTest)
    func aStricterPolicyIsCarriedIntoTheToken(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            let (device, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            // The test token says liveness on, threshold 0.5; the tenant now asks for 0.45.
            _ = try await harness.store.updateTenantPolicy(tenantID: "acme", policy: TenantPolicy(matchThreshold: 0.45))
            try await createPendingRequest(harness, "req-1", kind: .login)
            let details = try await device.send(.get, DevicePaths.request("req-1")).decode(RequestDetails.self)
            #expect(details.matchThreshold == 0.45 && details.livenessRequired)
            let download = try await downloadToken(device, "req-1")
            let kept = try TestDevice.completion(rid: "req-1", from: download, receipt: nil)
            expectDeviceError(try await device.post(DevicePaths.completion("req-1"), kept), .invalidRequest)
            let tightened = try TestDevice.completion(rid: "req-1", from: download, receipt: nil) { $0.threshold = 0.45 }
            #expect(try await device.post(DevicePaths.completion("req-1"), tightened).status == 200)
            let stored = try FaceTokenHeader.decode(try await harness.store.faceToken(subject: "user-1").headerJSON)
            #expect(stored.threshold == 0.45 && stored.gen == 2)

            // A looser policy later changes nothing: the token keeps the stricter value.
            _ = try await harness.store.updateTenantPolicy(tenantID: "acme", policy: TenantPolicy(livenessRequired: false, matchThreshold: 0.6))
            try await createPendingRequest(harness, "req-2", kind: .login)
            let next = try await downloadToken(device, "req-2")
            let loosened = try TestDevice.completion(rid: "req-2", from: next, receipt: nil) { $0.threshold = 0.6; $0.livenessRequired = false }
            expectDeviceError(try await device.post(DevicePaths.completion("req-2"), loosened), .invalidRequest)
            #expect(try await device.post(DevicePaths.completion("req-2"), try TestDevice.completion(rid: "req-2", from: next, receipt: nil)).status == 200)
        }
    }

    @Test("face-check failures are reported by the downloading key and counted; the last denies at once, for a new flow too",
          arguments: StoreBackend.underTest)
    func theAuthorityCountsTheAttempts(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness, policy: TenantPolicy(attemptsMax: 2, captureRetriesMax: 3, furtherDeviceApproval: .none))
            try await TestApplication.register(harness)
            let (device, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: TestApplication.clientID)
            let (other, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: TestApplication.clientID)
            let rid = try await TestApplication.start(harness, ceremony: false)
            let mismatch = AttemptReport(rid: rid, kind: .faceMismatch)
            // Before a download, or from a key that did not download, a report is refused and counts nothing.
            expectDeviceError(try await device.post(DevicePaths.attempts(rid), mismatch), .invalidRequest)
            _ = try await downloadToken(device, rid)
            expectDeviceError(try await other.post(DevicePaths.attempts(rid), mismatch), .invalidRequest)
            expectDeviceError(try await device.post(DevicePaths.attempts(rid), mismatch, as: .ambient), .userPresenceRequired)

            let retry = try await device.post(DevicePaths.attempts(rid), AttemptReport(rid: rid, kind: .captureRetry))
            #expect(try retry.decode(AttemptsRemaining.self) == AttemptsRemaining(rid: rid, budget: AttemptBudget(attemptsLeft: 2, captureRetriesLeft: 2)))
            let first = try await device.post(DevicePaths.attempts(rid), mismatch)
            #expect(try first.decode(AttemptsRemaining.self).budget.attemptsLeft == 1)
            // A new flow on the same link reads what is left.
            let details = try await device.send(.get, DevicePaths.request(rid)).decode(RequestDetails.self)
            #expect(details.attemptsLeft == 1 && details.captureRetriesLeft == 2 && details.captureRetriesMax == 3)
            #expect(try await TestApplication.token(harness, rid).error == "authorization_pending")

            let last = try await device.post(DevicePaths.attempts(rid), mismatch)
            #expect(try last.decode(AttemptsRemaining.self).budget.attemptsLeft == 0)
            // Denied at once, with no abort from the device.
            let token = try await TestApplication.tokenError(harness, rid)
            #expect(token?.error == .accessDenied && token?.errorDescription == "attempts_exhausted")
            expectDeviceError(try await device.post(DevicePaths.attempts(rid), mismatch), .requestNotPending)
        }
    }

    @Test("liveness and capture-quality failures spend their own budget and deny with capture_retries_exhausted",
          arguments: StoreBackend.underTest)
    func theCaptureRetryBudget(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness, policy: TenantPolicy(captureRetriesMax: 2, furtherDeviceApproval: .none))
            try await TestApplication.register(harness)
            let (device, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: TestApplication.clientID)
            let rid = try await TestApplication.start(harness, ceremony: false)
            _ = try await downloadToken(device, rid)
            let report = AttemptReport(rid: rid, kind: .captureRetry)
            #expect(try await device.post(DevicePaths.attempts(rid), report).decode(AttemptsRemaining.self).budget.captureRetriesLeft == 1)
            #expect(try await device.post(DevicePaths.attempts(rid), report).decode(AttemptsRemaining.self).budget.captureRetriesLeft == 0)
            let token = try await TestApplication.tokenError(harness, rid)
            #expect(token?.error == .accessDenied && token?.errorDescription == "capture_retries_exhausted")
        }
    }
}
