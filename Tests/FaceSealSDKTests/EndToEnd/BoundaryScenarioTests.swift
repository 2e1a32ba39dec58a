import FaceSealCrypto
import FaceSealFace
import FaceSealTestSupport
import FaceSealWire
import Foundation
import Testing
@testable import FaceSealAuthority
@testable import FaceSealSDK

/// The trust boundaries of the device API as the real SDK meets them over loopback HTTP, on both databases.
@Suite(.serialized, .timeLimit(.minutes(1))) struct BoundaryScenarioTests {
    /// The enrolment ids (management API `devices`) of `client`.
    func enrolments(_ e: Enrolled, client: LiveSystem.Client) async throws -> [String] {
        let listed = try await e.system.manage("GET", "/tenants/acme/devices")
        let devices = try #require(listed["devices"] as? [[String: Any]] ?? listed["items"] as? [[String: Any]])
        return devices.filter { $0["client_id"] as? String == client.clientId }.compactMap { $0["id"] as? String }
    }

    /// The stored face token's header of `e`'s user.
    func storedHeader(_ e: Enrolled) async throws -> FaceTokenHeader {
        try FaceTokenHeader.decode(try await e.system.authority.store.faceToken(subject: e.subject).headerJSON)
    }

    @Test("a key of the user's other application never approves a request, also after that application's enrolment ended",
          arguments: StoreBackend.underTest)
    func anotherApplicationsKeyNeverActs(backend: StoreBackend) async throws {
        let e = try await Enrolled.make(backend: backend)
        defer { Task { await e.system.stop() } }
        let payroll = try await e.system.createApplication(label: "Acme Payroll")
        _ = try await e.device.enrol(e.authn, link: try await e.system.invitation(email: e.email, client: payroll))
        let request = try await e.request(client: payroll)
        // The administrator ends the payroll enrolment after its link reached the device.
        for id in try await enrolments(e, client: payroll) {
            try await e.system.manage("POST", "/tenants/acme/devices/\(id)/revoke")
        }
        let flow = e.authn.startLoginFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: request.link)
        let end = await states.until { if case .awaitingFaceCapture = $0 { true } else { $0.isTerminal } }
        #expect(end == .failed(reason: .deviceKeyRevoked), "\(states.seen)")
        #expect(try await e.system.token(payroll, rid: request.rid).body["error"] as? String == "authorization_pending")
        #expect(e.authn.keys == [e.key], "the billing key stays; only the revoked payroll key is dropped")
    }

    @Test("one user-presence prompt covers the download, a mismatch report and the completion", arguments: StoreBackend.underTest)
    func onePromptPerApproval(backend: StoreBackend) async throws {
        let e = try await Enrolled.make(backend: backend)
        defer { Task { await e.system.stop() } }
        let request = try await e.request("public_keys")
        let before = e.device.presence.callCount
        let flow = e.authn.startPkiCeremonyFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: request.link)
        _ = await states.until(\.isAwaitingFaceCapture)
        flow.submitFaceCapture(captureSession: capture("stranger"))
        #expect(await states.until { $0.lastRetryReason == .faceMismatch }?.attemptsLeft == 2)
        flow.submitFaceCapture(captureSession: capture("ada"))
        #expect(await states.until(\.isTerminal)?.isSucceeded == true, "\(states.seen)")
        #expect(e.device.presence.callCount == before + 1)
        #expect(try await e.system.token(e.client, rid: request.rid).status == 200)
    }

    @Test("a stricter tenant policy reaches an existing token: liveness and threshold now, and in the rotated header",
          arguments: StoreBackend.underTest)
    func aStricterPolicyReachesTheToken(backend: StoreBackend) async throws {
        let verifier = FakeFaceVerifier()
        let e = try await Enrolled.make(policy: LiveSystem.Policy(livenessRequired: false), backend: backend, faceVerifier: verifier)
        defer { Task { await e.system.stop() } }
        #expect(try await storedHeader(e).livenessRequired == false)
        try await e.system.manage("PATCH", "/tenants/acme/policy", ["liveness_required": true, "match_threshold": 0.45])

        let request = try await e.request()
        let flow = e.authn.startLoginFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: request.link)
        guard case .awaitingFaceCapture(_, _, _, _, _, _, let challenge)? = await states.until({ if case .awaitingFaceCapture = $0 { true } else { $0.isTerminal } })
        else { Issue.record("\(states.seen)"); return }
        #expect(challenge != nil, "the tenant's liveness runs although the token does not ask for it")
        let livenessBefore = verifier.livenessCalls
        flow.submitFaceCapture(captureSession: capture("ada"))
        guard case .succeeded? = await states.until({ $0.isTerminal }) else { Issue.record("\(states.seen)"); return }
        #expect(verifier.livenessCalls == livenessBefore + 1)
        #expect(verifier.thresholds.last == Float(0.45))
        let header = try await storedHeader(e)
        #expect(header.livenessRequired && header.threshold == 0.45 && header.gen == 2)
    }

    @Test("the authority counts the attempts: a new flow on the same link goes on from what is left, and the last mismatch denies at once",
          arguments: StoreBackend.underTest)
    func theAttemptsBudgetIsTheAuthoritys(backend: StoreBackend) async throws {
        let e = try await Enrolled.make(backend: backend)
        defer { Task { await e.system.stop() } }
        let request = try await e.request("sign", data: Array("invoice".utf8))
        let first = e.authn.startPkiCeremonyFlow()
        var firstStates = Observed(first.stateStream())
        first.submitLinkPayload(payload: request.link)
        _ = await firstStates.until(\.isAwaitingFaceCapture)
        for left in [2, 1] {
            first.submitFaceCapture(captureSession: capture("stranger"))
            #expect(await firstStates.until { $0.attemptsLeft == left && $0.lastRetryReason == .faceMismatch } != nil, "\(firstStates.seen)")
        }
        first.cancel()

        let second = e.authn.startPkiCeremonyFlow()
        var secondStates = Observed(second.stateStream())
        second.submitLinkPayload(payload: request.link)
        #expect(await secondStates.until(\.isAwaitingFaceCapture)?.attemptsLeft == 1, "\(secondStates.seen)")
        second.submitFaceCapture(captureSession: capture("stranger"))
        #expect(await secondStates.until(\.isTerminal) == .failed(reason: .attemptsExhausted))
        let token = try await e.system.token(e.client, rid: request.rid)
        #expect(token.status == 403 && token.body["error"] as? String == "access_denied")
        #expect(token.body["error_description"] as? String == "attempts_exhausted")
    }

    @Test("liveness and capture-quality failures have their own budget, counted the same way", arguments: StoreBackend.underTest)
    func theCaptureRetryBudget(backend: StoreBackend) async throws {
        let e = try await Enrolled.make(backend: backend)
        defer { Task { await e.system.stop() } }
        try await e.system.manage("PATCH", "/tenants/acme/policy", ["capture_retries_max": 2])
        let request = try await e.request()
        let flow = e.authn.startLoginFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: request.link)
        _ = await states.until { if case .awaitingFaceCapture = $0 { true } else { false } }
        flow.submitFaceCapture(captureSession: capture("spoof"))
        _ = await states.until { if case .awaitingFaceCapture(_, _, _, _, 3, .livenessFailed, _) = $0 { true } else { false } }
        flow.submitFaceCapture(captureSession: capture("noface"))
        #expect(await states.until(\.isTerminal) == .failed(reason: .captureRetriesExhausted), "\(states.seen)")
        let token = try await e.system.token(e.client, rid: request.rid)
        #expect(token.body["error"] as? String == "access_denied")
        #expect(token.body["error_description"] as? String == "capture_retries_exhausted")
    }

    @Test("a declined sign-in reaches the application at once: cancelLogin(), and the spent password tries",
          arguments: StoreBackend.underTest)
    func aDeclinedSignInIsAccessDeniedAtOnce(backend: StoreBackend) async throws {
        let e = try await Enrolled.make(policy: LiveSystem.Policy(passwordMode: "required"), password: "open sesame", backend: backend)
        defer { Task { await e.system.stop() } }
        let declined = try await e.request()
        let flow = e.authn.startLoginFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: declined.link)
        let asked = await states.until { if case .downloadingFaceToken(true, _) = $0 { true } else { $0.isTerminal } }
        #expect(asked == .downloadingFaceToken(passwordRequired: true, lastPasswordError: nil), "\(states.seen)")
        flow.cancelLogin()
        #expect(await states.until(\.isTerminal) == .failed(reason: .cancelled), "\(states.seen)")
        await flow.waitUntilIdle()
        let cancelled = try await e.system.token(e.client, rid: declined.rid)
        #expect(cancelled.body["error"] as? String == "access_denied")
        #expect(cancelled.body["error_description"] as? String == "user_cancelled")

        let guessed = try await e.request()
        let guessing = e.authn.startLoginFlow()
        var guessingStates = Observed(guessing.stateStream())
        guessing.submitLinkPayload(payload: guessed.link)
        for attempt in 1...3 {
            _ = await guessingStates.until { if case .downloadingFaceToken(true, let error) = $0 { attempt == 1 ? error == nil : error == .incorrect } else { $0.isTerminal } }
            guessing.submitPassword(password: "guess \(attempt)")
        }
        #expect(await guessingStates.until(\.isTerminal) == .failed(reason: .passwordAttemptsExhausted), "\(guessingStates.seen)")
        await guessing.waitUntilIdle()
        let denied = try await e.system.token(e.client, rid: guessed.rid)
        #expect(denied.body["error_description"] as? String == "password_attempts_exhausted")
    }

    @Test func oneDefaultMatchThresholdTheFaceEnginesRecordedDecision() {
        #expect(Float(MatchPolicy.defaultThreshold) == FaceMatcher.recommendedThreshold)
        #expect(WireFaceTokens().matchThreshold == MatchPolicy.defaultThreshold)
        #expect(TenantPolicy().matchThreshold == MatchPolicy.defaultThreshold)
    }
}
