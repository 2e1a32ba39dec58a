import FaceSealCrypto
import FaceSealTestSupport
import FaceSealWire
import Foundation
import Testing
@testable import FaceSealSDK

/// A user enrolled on one device with one application, ready for requests.
struct Enrolled {
    let system: LiveSystem
    let client: LiveSystem.Client
    let email: String
    let subject: String
    let device: Device
    let authn: Authenticator
    let key: Key

    static func make(policy: LiveSystem.Policy = .init(), deviceProtocol: Int = 7, email: String = "ada@example.com",
                     password: String? = nil, backend: StoreBackend = .sqlite, faceVerifier: any FaceVerifier = FakeFaceVerifier()) async throws -> Enrolled {
        let system = try await LiveSystem.start(policy: policy, backend: backend)
        let client = try await system.createApplication(label: "Acme Billing")
        let subject = try await system.createUser(email: email)
        let device = try system.device(deviceProtocol: deviceProtocol, faceVerifier: faceVerifier)
        let authn = try await device.open()
        let key = try await device.enrol(authn, link: try await system.invitation(email: email, client: client), password: password)
        return Enrolled(system: system, client: client, email: email, subject: subject, device: device, authn: authn, key: key)
    }

    /// Starts a request from the application and hands its link (from the device's outbox).
    func request(_ kind: String? = nil, context: String = "invoices", data: [UInt8]? = nil, client: LiveSystem.Client? = nil) async throws -> (rid: String, link: [UInt8]) {
        let rid = try await system.backchannel(client ?? self.client, email: email, pkiKind: kind, context: Array(context.utf8), data: data)
        return (rid, try await device.link(authn, rid: rid))
    }

    /// The delivery body the application accepted for `rid`.
    func delivered(_ rid: String) throws -> DeliveryBody {
        guard let bytes = system.application.accepted(rid) else { throw SetupError("nothing delivered for \(rid)") }
        return try DeliveryBody.decode(bytes)
    }

    /// The public keys delivered for `rid`.
    func deliveredKeys(_ rid: String) throws -> [String: Base64URLBytes] {
        guard let keys = try delivered(rid).publicKeys else { throw SetupError("no public keys for \(rid)") }
        return keys
    }

    /// Registers new keys for the first key behind the SDK's back (as after a lost answer): the device keeps signing with
    /// its previous key. Answers the record before and the new keys.
    @discardableResult
    func rotateBehindTheSDK(register: Bool = true) async throws -> (record: KeyRecord, ambient: DeviceKeyDescriptor, userPresent: DeviceKeyDescriptor) {
        let record = try #require(authn.keyRing().records.first)
        let vault = device.vault
        let proof = try await device.presence.confirm(reason: "rotate")
        let newAmbient = try vault.createKey(protection: .ambient, alias: "next-a")
        let newUserPresent = try vault.createKey(protection: .userPresent, alias: "next-u", presence: proof)
        if register {
            let submission = KeyRotationSubmission(
                keyId: record.key.id, currentUserPresent: try vault.signer(deviceKeyId: record.userPresent.deviceKeyId, presence: proof),
                newAmbient: newAmbient, newUserPresent: newUserPresent,
                newAmbientSigner: try vault.signer(deviceKeyId: newAmbient.deviceKeyId, presence: nil),
                newUserPresentSigner: try vault.signer(deviceKeyId: newUserPresent.deviceKeyId, presence: proof))
            #expect(try await device.client.rotateKeys([submission]).value == [.rotated(keyId: record.key.id)])
        }
        return (record, newAmbient, newUserPresent)
    }

    /// Runs a ceremony link to its end with one good capture; answers the states seen.
    func runCeremony(_ link: [UInt8], capture label: String = "ada") async -> [PkiCeremonyFlow.State] {
        let flow = authn.startPkiCeremonyFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: link)
        guard let ready = await states.until({ $0.isAwaitingFaceCapture || $0.isTerminal }), ready.isAwaitingFaceCapture else { return states.seen }
        flow.submitFaceCapture(captureSession: capture(label))
        _ = await states.rest()
        return states.seen
    }
}

extension PkiCeremonyFlow.State {
    var isSucceeded: Bool {
        if case .succeeded = self { return true }
        return false
    }
}

@Suite(.serialized, .timeLimit(.minutes(1))) struct ScenarioTests {
    @Test func scenario05_publicKeysSignDecapsulateDeliverThenComplete() async throws {
        let e = try await Enrolled.make()
        defer { Task { await e.system.stop() } }
        #expect(e.authn.keys == [e.key])

        // public_keys: the application pins the delivered ML-DSA key.
        let keys = try await e.request("public_keys")
        let keyStates = await e.runCeremony(keys.link)
        #expect(keyStates.last?.isSucceeded == true, "\(keyStates)")
        let keysBody = try DeliveryBody.decode(try #require(e.system.application.accepted(keys.rid)))
        let delivered = try #require(keysBody.publicKeys)
        let token = try await e.system.token(e.client, rid: keys.rid)
        #expect(token.status == 200)
        let claims = try LiveSystem.claims(ofIDToken: try #require(token.body["id_token"] as? String))
        #expect(claims["pki_result_sha256"] as? String == Base64URL.encode(SHA256.hash(data: try #require(e.system.application.accepted(keys.rid))).bytes))
        #expect(claims["pki_kind"] as? String == "public_keys")

        // sign: verified against the pinned key with the empty context.
        let message = Array("invoice 2026-114 total 120.00 EUR".utf8)
        let sign = try await e.request("sign", data: message)
        #expect(await e.runCeremony(sign.link).last?.isSucceeded == true)
        let signBody = try DeliveryBody.decode(try #require(e.system.application.accepted(sign.rid)))
        let mldsa = try MLDSA65.PublicKey(rawRepresentation: try #require(delivered["ML-DSA-65"]).bytes)
        #expect(mldsa.isValidSignature(try #require(signBody.signature).bytes, for: message))
        let signToken = try await e.system.token(e.client, rid: sign.rid)
        let signClaims = try LiveSystem.claims(ofIDToken: try #require(signToken.body["id_token"] as? String))
        #expect(signClaims["pki_result_sha256"] as? String == Base64URL.encode(SHA256.hash(data: try #require(e.system.application.accepted(sign.rid))).bytes))

        // decapsulate: the application encapsulates to the delivered ML-KEM key and gets the same secret.
        let kem = try MLKEM768.PublicKey(rawRepresentation: try #require(delivered["ML-KEM-768"]).bytes)
        let encapsulated = try kem.encapsulate()
        let decap = try await e.request("decapsulate", data: Array(encapsulated.encapsulated))
        #expect(await e.runCeremony(decap.link).last?.isSucceeded == true)
        let decapBody = try DeliveryBody.decode(try #require(e.system.application.accepted(decap.rid)))
        #expect(decapBody.sharedSecret?.bytes == encapsulated.sharedSecret.secret.copyBytes())
        #expect(try await e.system.token(e.client, rid: decap.rid).status == 200)
        #expect(e.system.application.failures.isEmpty)
    }

    @Test func scenario01_eachFlowRefusesTheOtherFlowsLinkAndBadLinks() async throws {
        let e = try await Enrolled.make()
        defer { Task { await e.system.stop() } }
        let login = try await e.request()
        let ceremony = try await e.request("public_keys")

        let ceremonyFlow = e.authn.startPkiCeremonyFlow()
        var ceremonyStates = Observed(ceremonyFlow.stateStream())
        ceremonyFlow.submitLinkPayload(payload: login.link)
        #expect(await ceremonyStates.until { $0 == .awaitingLink(refusal: .isLoginLink) } != nil)

        let loginFlow = e.authn.startLoginFlow()
        var loginStates = Observed(loginFlow.stateStream())
        loginFlow.submitLinkPayload(payload: ceremony.link)
        #expect(await loginStates.until { $0 == .awaitingLink(refusal: .isPkiCeremonyLink) } != nil)

        // Malformed, forged, expired and unknown-identity links stay on awaitingLink with their own refusals.
        let keys = e.system.authority.keys
        let issuer = e.system.authority.configuration.issuer
        let now = Int64(Date().timeIntervalSince1970)
        loginFlow.submitLinkPayload(payload: Array("not a link".utf8))
        #expect(await loginStates.until { $0 == .awaitingLink(refusal: .malformed) } != nil)
        let forged = try LinkSignature.make(LinkClaims(iss: issuer, rid: login.rid, kind: .login, exp: now + 300, nonce: "n"),
                                            key: Curve25519.Signing.PrivateKey())
        loginFlow.submitLinkPayload(payload: Array(forged.utf8))
        #expect(await loginStates.until { $0 == .awaitingLink(refusal: .badSignature) } != nil)
        let expired = try LinkSignature.make(LinkClaims(iss: issuer, rid: login.rid, kind: .login, exp: now - 10, nonce: "n"), key: keys.deviceKey)
        loginFlow.submitLinkPayload(payload: Array(expired.utf8))
        #expect(await loginStates.until { $0 == .awaitingLink(refusal: .expired) } != nil)
        let unknown = try LinkSignature.make(LinkClaims(iss: issuer, rid: "rid_unknown_0000000000", kind: .login, exp: now + 300, nonce: "n"),
                                             key: keys.deviceKey)
        loginFlow.submitLinkPayload(payload: Array(unknown.utf8))
        #expect(await loginStates.until { $0 == .awaitingLink(refusal: .unknownIdentity) } != nil)

        // Re-submitted to the right flow, each proceeds (the sign-in up to its approval screen: both requests staged
        // the same token generation, so only one of them can complete — scenario 9).
        loginFlow.submitLinkPayload(payload: login.link)
        #expect(await loginStates.until { if case .awaitingFaceCapture = $0 { true } else { false } } != nil)
        loginFlow.cancel()
        ceremonyFlow.submitLinkPayload(payload: ceremony.link)
        #expect(await ceremonyStates.until(\.isAwaitingFaceCapture) != nil)
        ceremonyFlow.submitFaceCapture(captureSession: capture("ada"))
        #expect(await ceremonyStates.until(\.isTerminal)?.isSucceeded == true)
        #expect(try await e.system.token(e.client, rid: ceremony.rid).status == 200)
    }

    @Test func scenario02_aWrongPasswordKeepsTheDownloadStep() async throws {
        var policy = LiveSystem.Policy()
        policy.passwordMode = "required"
        let e = try await Enrolled.make(policy: policy, password: "correct horse battery")
        defer { Task { await e.system.stop() } }
        let request = try await e.request("public_keys")
        let flow = e.authn.startPkiCeremonyFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: request.link)
        #expect(await states.until { $0 == .downloadingFaceToken(passwordRequired: true, lastPasswordError: nil) } != nil)
        flow.submitPassword(password: "wrong")
        #expect(await states.until { $0 == .downloadingFaceToken(passwordRequired: true, lastPasswordError: .incorrect) } != nil)
        flow.submitPassword(password: "correct horse battery")
        #expect(await states.until(\.isAwaitingFaceCapture) != nil)
        flow.submitFaceCapture(captureSession: capture("ada"))
        #expect(await states.until(\.isTerminal)?.isSucceeded == true)
        // The completion said the password was used: the ID token's `amr` carries `pwd`.
        #expect(try await e.system.authority.store.request(authReqID: request.rid).passwordUsed)
        let token = try await e.system.token(e.client, rid: request.rid)
        let claims = try LiveSystem.claims(ofIDToken: try #require(token.body["id_token"] as? String))
        #expect(claims["amr"] as? [String] == ["face", "hwk", "pwd"])
    }

    @Test func scenario03_theApprovalScreenCarriesEverything() async throws {
        let e = try await Enrolled.make()
        defer { Task { await e.system.stop() } }
        let before = Int64(Date().timeIntervalSince1970)
        let request = try await e.request("sign", data: [7])
        let flow = e.authn.startPkiCeremonyFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: request.link)
        guard case .awaitingFaceCapture(let binding, let kind, let label, let branding, let expires, let left, _, _) = await states.until(\.isAwaitingFaceCapture) else {
            Issue.record("no approval screen: \(states.seen)")
            return
        }
        #expect(binding == "Sign invoice 2026-114")
        #expect(kind == .sign)
        #expect(label == "Acme Billing")
        #expect(branding == Branding(displayName: "Acme Billing", primaryColor: "#0A84FF"))
        #expect((before + 295...before + 305).contains(expires))
        #expect(left == 3)
        flow.cancel()
    }

    @Test func scenario04_livenessFailureSpendsNoAttempt() async throws {
        let e = try await Enrolled.make()
        defer { Task { await e.system.stop() } }
        let request = try await e.request("sign", data: [7])
        let flow = e.authn.startPkiCeremonyFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: request.link)
        #expect(await states.until(\.isAwaitingFaceCapture)?.attemptsLeft == 3)
        flow.submitFaceCapture(captureSession: capture("spoof"))
        let afterSpoof = await states.until { $0.isAwaitingFaceCapture && $0.lastRetryReason != nil }
        #expect(afterSpoof?.lastRetryReason == .livenessFailed && afterSpoof?.attemptsLeft == 3)
        for left in [2, 1] {
            flow.submitFaceCapture(captureSession: capture("stranger"))
            let state = await states.until { $0.isAwaitingFaceCapture && $0.attemptsLeft == left }
            #expect(state?.lastRetryReason == .faceMismatch)
        }
        flow.submitFaceCapture(captureSession: capture("stranger"))
        #expect(await states.rest().last == .failed(reason: .attemptsExhausted))
        await flow.waitUntilIdle()
        let token = try await e.system.token(e.client, rid: request.rid)
        #expect(token.status == 403 && token.body["error"] as? String == "access_denied")
        #expect(e.system.application.posts == 0)
    }

    @Test func scenario06_aRefusedDeliveryIsRetriedWithTheSameBytesOrCancelled() async throws {
        let verifier = FakeFaceVerifier()
        let e = try await Enrolled.make()
        defer { Task { await e.system.stop() } }
        let counting = try e.system.device(name: "phone", faceVerifier: verifier)
        let authn = try await counting.open()
        let app = e.system.application

        let first = try await e.request("public_keys")
        app.refuse(with: 409)
        let flow = authn.startPkiCeremonyFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: first.link)
        _ = await states.until(\.isAwaitingFaceCapture)
        flow.submitFaceCapture(captureSession: capture("ada"))
        #expect(await states.until(\.isDeliveryFailed) == .deliveryFailed(status: .refused(httpStatus: 409)))
        app.refuse(with: nil)
        flow.retry()
        #expect(await states.until(\.isTerminal)?.isSucceeded == true, "\(states.seen) \(app.failures)")
        #expect(verifier.matchCalls == 1)
        let bodies = app.received
        #expect(bodies.count == 2 && bodies[0] == bodies[1])
        #expect(try await e.system.token(e.client, rid: first.rid).status == 200)

        let second = try await e.request("public_keys")
        app.refuse(with: 500)
        let other = authn.startPkiCeremonyFlow()
        var otherStates = Observed(other.stateStream())
        other.submitLinkPayload(payload: second.link)
        _ = await otherStates.until(\.isAwaitingFaceCapture)
        other.submitFaceCapture(captureSession: capture("ada"))
        _ = await otherStates.until(\.isDeliveryFailed)
        other.cancelCeremony()
        #expect(await otherStates.rest().last == .failed(reason: .deliveryFailed))
        await other.waitUntilIdle()
        let token = try await e.system.token(e.client, rid: second.rid)
        #expect(token.status == 403 && token.body["error"] as? String == "access_denied")
    }

    @Test func scenario12_anOlderSDKIsToldToUpgradeForACeremony() async throws {
        let e = try await Enrolled.make(deviceProtocol: 6)
        defer { Task { await e.system.stop() } }
        let request = try await e.request("sign", data: [1])
        let flow = e.authn.startPkiCeremonyFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: request.link)
        #expect(await states.rest().last == .failed(reason: .upgradeRequired))
    }

    @Test func scenario09_theSecondCompletionFromOneTokenIsStale() async throws {
        let e = try await Enrolled.make()
        defer { Task { await e.system.stop() } }
        let first = try await e.request("public_keys")
        let second = try await e.request("public_keys", context: "other")
        let a = e.authn.startPkiCeremonyFlow()
        let b = e.authn.startPkiCeremonyFlow()
        var aStates = Observed(a.stateStream())
        var bStates = Observed(b.stateStream())
        a.submitLinkPayload(payload: first.link)
        _ = await aStates.until(\.isAwaitingFaceCapture)
        b.submitLinkPayload(payload: second.link)
        _ = await bStates.until(\.isAwaitingFaceCapture)
        b.submitFaceCapture(captureSession: capture("ada"))
        #expect(await bStates.until(\.isTerminal)?.isSucceeded == true)
        a.submitFaceCapture(captureSession: capture("ada"))
        #expect(await aStates.until(\.isPostingResultFailed) == .postingResultFailed(reason: .staleToken))
        let stale = try await e.system.token(e.client, rid: first.rid)
        #expect(stale.body["error"] as? String == "stale_token")
        #expect(try await e.system.token(e.client, rid: second.rid).status == 200)
        a.cancel()
        // A new request stages the current token and succeeds.
        let again = try await e.request("public_keys")
        #expect(await e.runCeremony(again.link).last?.isSucceeded == true)
        #expect(try await e.system.token(e.client, rid: again.rid).status == 200)
    }

    @Test func scenario10_keysArriveWithThePolicyFillOnly() async throws {
        var policy = LiveSystem.Policy()
        policy.algorithms = ["ML-DSA-65"]
        let e = try await Enrolled.make(policy: policy)
        defer { Task { await e.system.stop() } }
        let before = try await e.request("public_keys")
        #expect(await e.runCeremony(before.link).last?.isSucceeded == true)
        let dsaOnly = try e.deliveredKeys(before.rid)
        #expect(Set(dsaOnly.keys) == ["ML-DSA-65"])

        try await e.system.manage("PATCH", "/tenants/acme/policy", ["key_algorithms": ["ML-DSA-65", "ML-KEM-768"]])
        let filled = try await e.request("public_keys")
        #expect(await e.runCeremony(filled.link).last?.isSucceeded == true)
        let both = try e.deliveredKeys(filled.rid)
        #expect(Set(both.keys) == ["ML-DSA-65", "ML-KEM-768"])
        #expect(both["ML-DSA-65"] == dsaOnly["ML-DSA-65"])

        let later = try await e.request("public_keys")
        #expect(await e.runCeremony(later.link).last?.isSucceeded == true)
        let same = try e.deliveredKeys(later.rid)
        #expect(same == both)
    }

    @Test func scenario11_keysAreSpecificToApplicationAndContext() async throws {
        let e = try await Enrolled.make()
        defer { Task { await e.system.stop() } }
        let other = try await e.system.createApplication(label: "Acme Payroll")
        _ = try await e.device.enrol(e.authn, link: try await e.system.invitation(email: e.email, client: other))
        #expect(e.authn.keys.count == 2)
        func deliveredKey(_ client: LiveSystem.Client, context: String) async throws -> String {
            let request = try await e.request("public_keys", context: context, client: client)
            #expect(await e.runCeremony(request.link).last?.isSucceeded == true)
            return try e.delivered(request.rid).keyId
        }
        let billing = try await deliveredKey(e.client, context: "shared")
        let payroll = try await deliveredKey(other, context: "shared")
        #expect(billing != payroll)
        #expect(try await deliveredKey(e.client, context: "shared") == billing)
        #expect(try await deliveredKey(e.client, context: "elsewhere") != billing)
    }

    func devices(_ e: Enrolled) async throws -> [[String: Any]] {
        let listed = try await e.system.manage("GET", "/tenants/acme/devices")
        return try #require(listed["devices"] as? [[String: Any]] ?? listed["items"] as? [[String: Any]])
    }

    @Test func scenario15_revocationOnBothSidesAndByAnAdministrator() async throws {
        // Re-enrolling after the only device was revoked is a further device with no approver: `none` here (custody
        // has its own tests).
        var policy = LiveSystem.Policy()
        policy.furtherDeviceApproval = "none"
        let e = try await Enrolled.make(policy: policy)
        defer { Task { await e.system.stop() } }
        #expect(throws: AuthnRuntimeError.UnknownKey("nope")) { try e.authn.startRevocationFlow(keyId: "nope") }
        let flow = try e.authn.startRevocationFlow(keyId: e.key.id)
        var states = Observed(flow.stateStream())
        #expect(await states.until { _ in true } == .confirming(key: e.key))
        flow.approve()
        #expect(await states.rest().last == .succeeded(key: e.key))
        #expect(e.authn.keys.isEmpty)
        #expect(try await devices(e).allSatisfy { $0["status"] as? String == "revoked" })

        // Enrol again; an administrator revokes; the next signed request fails and removes the key.
        for (action, reason) in [("revoke", FailureReason.deviceKeyRevoked), ("terminate", .deviceKeyTerminated)] {
            let key = try await e.device.enrol(e.authn, link: try await e.system.invitation(email: e.email, client: e.client))
            #expect(e.authn.keys == [key])
            let request = try await e.request()
            let active = try #require(try await devices(e).first { $0["status"] as? String == "active" }?["id"] as? String)
            try await e.system.manage("POST", "/tenants/acme/devices/\(active)/\(action)")
            let login = e.authn.startLoginFlow()
            var loginStates = Observed(login.stateStream())
            login.submitLinkPayload(payload: request.link)
            #expect(await loginStates.rest().last == .failed(reason: reason))
            #expect(e.authn.keys.isEmpty)
        }
    }

    @Test func scenario17_keysBrandingAuditAndReinstall() async throws {
        // The re-enrolment after the key material is gone has no device to approve it: `none` here.
        var policy = LiveSystem.Policy()
        policy.furtherDeviceApproval = "none"
        let e = try await Enrolled.make(policy: policy)
        defer { Task { await e.system.stop() } }
        #expect(e.authn.brandingFor(keyId: e.key.id) == Branding(displayName: "Acme Billing", primaryColor: "#0A84FF"))
        #expect(e.authn.brandingFor(keyId: "unknown") == nil)
        let request = try await e.request("public_keys")
        #expect(await e.runCeremony(request.link).last?.isSucceeded == true)
        let all = e.authn.auditLog()
        #expect(all.count >= 2 && all.count <= 50)
        #expect(e.authn.auditLog(limit: 1).count == 1)
        #expect(e.authn.auditLog(limit: 1).first == all.first)
        #expect(zip(all, all.dropFirst()).allSatisfy { $0.timestamp >= $1.timestamp })
        #expect(all.first?.kind == .ceremony)

        // A record whose key material is gone is not listed.
        let record = try #require(e.authn.keyRing().records.first)
        try e.device.vault.deleteKey(deviceKeyId: record.ambient.deviceKeyId)
        #expect(e.authn.keys.isEmpty)

        // A reinstall (the app's own data gone, the vault kept) clears the surviving records.
        let second = try await e.device.enrol(e.authn, link: try await e.system.invitation(email: e.email, client: e.client))
        let reopened = try await e.device.open()
        #expect(reopened.keys == [second], "\(reopened.keys) \(second) \(reopened.auditLog())")
        try FileManager.default.removeItem(at: e.device.directory.appendingPathComponent("installed"))
        #expect(try await e.device.open().keys.isEmpty)
        #expect(try await e.device.open().keys.isEmpty)
    }

    @Test func scenario13_rotationReplacesEveryKeyAndReportsDeadOnes() async throws {
        let e = try await Enrolled.make()
        defer { Task { await e.system.stop() } }
        let other = try await e.system.createApplication(label: "Acme Payroll")
        let second = try await e.device.enrol(e.authn, link: try await e.system.invitation(email: e.email, client: other))
        // The administrator ends the second enrolment: the rotation drops it and reports it.
        let payrollDevice = try #require(try await devices(e).first { $0["client_id"] as? String == other.clientId }?["id"] as? String)
        try await e.system.manage("POST", "/tenants/acme/devices/\(payrollDevice)/terminate")

        let flow = try e.authn.startKeyRotationFlow()
        var states = Observed(flow.stateStream())
        guard case .confirming(let listed) = await states.until({ _ in true }) else { Issue.record("no confirmation"); return }
        #expect(Set(listed) == Set([e.key, second]))
        let presenceBefore = e.device.presence.callCount
        flow.approve()
        let end = await states.rest().last
        #expect(end == .succeeded(revokedKeys: [RevokedKeyNotice(key: second, terminated: true, replaced: false)]), "\(states.seen)")
        #expect(e.device.presence.callCount > presenceBefore)
        #expect(e.authn.keys.map(\.id) == [e.key.id])

        // The device signs in with the new keys.
        let login = try await e.request()
        let signIn = e.authn.startLoginFlow()
        var signInStates = Observed(signIn.stateStream())
        signIn.submitLinkPayload(payload: login.link)
        _ = await signInStates.until { if case .awaitingFaceCapture = $0 { true } else { false } }
        signIn.submitFaceCapture(captureSession: capture("ada"))
        #expect(await signInStates.rest().last.map { if case .succeeded = $0 { true } else { false } } == true)
        #expect(!e.authn.takeKeyRotationHint())
    }

    @Test func scenario07_aTransientCompletionFailureIsRetried() async throws {
        let e = try await Enrolled.make()
        defer { Task { await e.system.stop() } }
        let proxy = try FlakyProxy(target: e.system.baseURL)
        defer { Task { await proxy.server.stop() } }
        var environment = e.device.environment
        environment.authority = HTTPAuthorityClient(
            baseURL: try #require(proxy.server.baseURL),
            pin: try AuthorityKeyPin(file: e.device.directory.appendingPathComponent("vault/authority.pin")))
        let authn = try await Authenticator.open(environment: environment)
        let request = try await e.request("public_keys")
        proxy.failNextCompletions(1)
        let flow = authn.startPkiCeremonyFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: request.link)
        _ = await states.until(\.isAwaitingFaceCapture)
        flow.submitFaceCapture(captureSession: capture("ada"))
        guard case .postingResultFailed(let reason) = await states.until(\.isPostingResultFailed), case .transient = reason, reason.isRetryable else {
            Issue.record("no transient completion failure: \(states.seen)")
            return
        }
        #expect(e.system.application.accepted(request.rid) != nil)
        flow.retry()
        guard case .succeeded(let label, let kind, _) = await states.until(\.isTerminal) else {
            Issue.record("the retry did not succeed: \(states.seen)")
            return
        }
        #expect(label == "Acme Billing" && kind == .publicKeys)
        #expect(e.system.application.posts == 1)
        #expect(try await e.system.token(e.client, rid: request.rid).status == 200)
    }

    @Test func scenario14_theRotationHintIsOneShotAndComesBack() async throws {
        let e = try await Enrolled.make()
        defer { Task { await e.system.stop() } }
        // New keys are registered while this device keeps using the previous ones (as after a lost promotion).
        try await e.rotateBehindTheSDK()
        #expect(!e.authn.takeKeyRotationHint())

        _ = try await e.authn.syncBranding()
        #expect(e.authn.takeKeyRotationHint())
        #expect(!e.authn.takeKeyRotationHint())
        _ = try await e.authn.syncBranding()
        #expect(e.authn.takeKeyRotationHint())
        #expect(!e.authn.takeKeyRotationHint())
    }

    @Test func scenario16_twoKeysPerEnrolmentAllOrNothingAndPresenceFailures() async throws {
        let e = try await Enrolled.make()
        defer { Task { await e.system.stop() } }
        let record = try #require(e.authn.keyRing().records.first)
        #expect(record.ambient.deviceKeyId != record.userPresent.deviceKeyId)
        #expect(record.ambient.protection == .ambient && record.userPresent.protection == .userPresent)
        let listed = try #require(try await devices(e).first)
        let kids = Set(try #require(listed["keys"] as? [[String: Any]]).compactMap { $0["key_id"] as? String })
        #expect(kids == [record.ambient.deviceKeyId, record.userPresent.deviceKeyId])

        // The authority refuses a completion signed with the ambient key.
        let pending = try await e.request("public_keys")
        let dummy = FaceSealWire.FaceTokenEnvelope(header: [1], nonce: [UInt8](repeating: 0, count: 12), sealed: [UInt8](repeating: 0, count: 16))
        let completion = CompletionSubmission(requestId: pending.rid, resultSHA256: [UInt8](repeating: 0, count: 32), rotatedToken: dummy.encoded(),
                                              downloadedGeneration: 1, serverShare: SecretBytes(randomCount: 32))
        await #expect(throws: AuthorityFailure.refused(code: "user_presence_required", message: "this endpoint needs the user-present key")) {
            _ = try await e.device.client.complete(completion, signer: try e.device.vault.signer(deviceKeyId: record.ambient.deviceKeyId, presence: nil))
        }

        // Cancelled and not-available presence: the one prompt of the approval comes before the token and share are
        // released, so the flow stops there, keys kept; the same link in a new flow then succeeds with one prompt.
        for code in [SignKeypairError.Code.userCancelled, .notAvailable] {
            let request = try await e.request("public_keys")
            e.device.presence.enqueue(SignKeypairError(code: code))
            let refused = e.authn.startPkiCeremonyFlow()
            var refusedStates = Observed(refused.stateStream())
            refused.submitLinkPayload(payload: request.link)
            #expect(await refusedStates.until(\.isTerminal) == .failed(reason: .userPresence(code)))
            #expect(e.authn.keys == [e.key])
            let prompts = e.device.presence.callCount
            #expect(await e.runCeremony(request.link).last?.isSucceeded == true)
            #expect(e.device.presence.callCount == prompts + 1)
        }

        // A biometric enrolment change invalidates the user-present key only: reads still work, the token cannot be
        // released to it, nothing is removed.
        e.device.epoch.value.withLock { $0 = "epoch-2" }
        let request = try await e.request("public_keys")
        let flow = e.authn.startPkiCeremonyFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: request.link)
        #expect(await states.until(\.isTerminal) == .failed(reason: .userPresence(.keyInvalidated)))
        #expect(e.authn.keys.isEmpty && e.authn.unusableKeys == [e.key], "an invalidated key is not listed as usable, and not removed")
        e.device.epoch.value.withLock { $0 = "epoch-1" }

        // An enrolment that fails after its first key leaves neither key on either side.
        let other = try await e.system.createApplication(label: "Acme Payroll")
        var environment = e.device.environment
        environment.vault = BudgetedVault(e.device.vault, budget: 1)
        let budgeted = try await Authenticator.open(environment: environment)
        let keyFiles = { (try? FileManager.default.contentsOfDirectory(atPath: e.device.directory.appendingPathComponent("vault/keys").path)) ?? [] }
        let filesBefore = Set(keyFiles())
        let enrolment = budgeted.startRegistrationFlow()
        var enrolmentStates = Observed(enrolment.stateStream())
        enrolment.submitLinkPayload(payload: try await e.system.invitation(email: e.email, client: other))
        // A further device creates its keys first: the second key fails before anything reaches the authority.
        guard case .failed = await enrolmentStates.until(\.isTerminal) else { Issue.record("\(enrolmentStates.seen)"); return }
        await enrolment.waitUntilIdle()
        #expect(Set(keyFiles()) == filesBefore)
        #expect(try await devices(e).allSatisfy { $0["client_id"] as? String != other.clientId })
        #expect(budgeted.keys == [e.key])
    }

    @Test func scenario08_cancelEndsLocallyCancelCeremonyTellsTheAuthority() async throws {
        let e = try await Enrolled.make()
        defer { Task { await e.system.stop() } }
        let local = try await e.request("public_keys")
        let told = try await e.request("public_keys", context: "other")

        let flow = e.authn.startPkiCeremonyFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: local.link)
        _ = await states.until(\.isAwaitingFaceCapture)
        flow.cancel()
        #expect(await states.rest().last == .failed(reason: .cancelled))
        await flow.waitUntilIdle()
        #expect(try await e.system.token(e.client, rid: local.rid).body["error"] as? String == "authorization_pending")

        let other = e.authn.startPkiCeremonyFlow()
        var otherStates = Observed(other.stateStream())
        other.submitLinkPayload(payload: told.link)
        _ = await otherStates.until(\.isAwaitingFaceCapture)
        other.cancelCeremony()
        #expect(await otherStates.rest().last == .failed(reason: .cancelled))
        await other.waitUntilIdle()
        let denied = try await e.system.token(e.client, rid: told.rid)
        #expect(denied.status == 403 && denied.body["error"] as? String == "access_denied")

        // The locally cancelled request answers expired_token only once it expired.
        e.system.clock.advance(by: 400)
        #expect(try await e.system.token(e.client, rid: local.rid).body["error"] as? String == "expired_token")
    }

    /// Signs in on `authn` with a fresh request; answers whether it succeeded.
    func signIn(_ e: Enrolled, _ authn: Authenticator) async throws -> Bool {
        let rid = try await e.system.backchannel(e.client, email: e.email)
        let flow = authn.startLoginFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: try await e.device.link(authn, rid: rid))
        _ = await states.until { if case .awaitingFaceCapture = $0 { true } else { if case .failed = $0 { true } else { false } } }
        flow.submitFaceCapture(captureSession: capture("ada"))
        guard case .succeeded = await states.rest().last else { return false }
        return try await e.system.token(e.client, rid: rid).status == 200
    }

    @Test(arguments: ["created", "registeredUnrecorded", "registeredRecorded"])
    func scenario13_anInterruptedRotationIsReconciledByOpen(_ crashPoint: String) async throws {
        let e = try await Enrolled.make()
        defer { Task { await e.system.stop() } }
        let ring = e.authn.keyRing()
        let vault = e.device.vault
        let (record, newAmbient, newUserPresent) = try await e.rotateBehindTheSDK(register: crashPoint != "created")
        try ring.updateRecords { records in
            records[0].pendingRotation = PendingRotation(ambient: DeviceKeyRecord(newAmbient), userPresent: DeviceKeyRecord(newUserPresent),
                                                         registered: crashPoint == "registeredRecorded")
        }

        // The next process start reconciles, and the device still signs in.
        let reopened = try await e.device.open()
        let after = try #require(reopened.keyRing().records.first)
        if crashPoint == "created" {
            // Never sent: its outcome stays unknown until the same rotation is sent again, which needs the user, so
            // open() keeps it pending (never discarding a successor the authority may hold) and the old keys sign.
            #expect(after.pendingRotation?.ambient.deviceKeyId == newAmbient.deviceKeyId)
            #expect(after.ambient.deviceKeyId == record.ambient.deviceKeyId)
            #expect(vault.hasKeyMaterial(deviceKeyId: newAmbient.deviceKeyId))
        } else {
            #expect(after.pendingRotation == nil)
            #expect(after.ambient.deviceKeyId == newAmbient.deviceKeyId && after.userPresent.deviceKeyId == newUserPresent.deviceKeyId)
            #expect(!vault.hasKeyMaterial(deviceKeyId: record.ambient.deviceKeyId))
        }
        #expect(reopened.keys.map(\.id) == [e.key.id])
        #expect(try await signIn(e, reopened))
        #expect(!reopened.takeKeyRotationHint())
        guard crashPoint == "created" else { return }
        // The next rotation (with the user) sends the pending successor again; the authority registers it.
        let flow = try reopened.startKeyRotationFlow()
        var states = Observed(flow.stateStream())
        _ = await states.until { _ in true }
        flow.approve()
        #expect(await states.rest().last == .succeeded(revokedKeys: []))
        let rotated = try #require(reopened.keyRing().records.first)
        #expect(rotated.pendingRotation == nil && rotated.ambient.deviceKeyId == newAmbient.deviceKeyId)
        #expect(try await signIn(e, reopened))
    }

    @Test func scenario13_aKeyReplacedByAnotherDeviceComesBackAsReplaced() async throws {
        var policy = LiveSystem.Policy()
        policy.oneDevicePerUser = true
        let e = try await Enrolled.make(policy: policy)
        defer { Task { await e.system.stop() } }
        // The user adds the application on a second device: the first device's enrolment is replaced.
        let laptop = try e.system.device(name: "laptop")
        let laptopAuthn = try await laptop.open()
        _ = try await laptop.enrol(laptopAuthn, link: try await e.system.invitation(email: e.email, client: e.client),
                                   approver: (e.device, e.authn))

        let flow = try e.authn.startKeyRotationFlow()
        var states = Observed(flow.stateStream())
        #expect(await states.until { _ in true } == .confirming(keys: [e.key]))
        flow.approve()
        #expect(await states.rest().last == .succeeded(revokedKeys: [RevokedKeyNotice(key: e.key, terminated: false, replaced: true)]))
        #expect(e.authn.keys.isEmpty)
        #expect(laptopAuthn.keys.count == 1)
    }

    @Test func aFileBackedDeviceEnrolsAndFindsItsLinksInTheOutbox() async throws {
        let system = try await LiveSystem.start()
        defer { Task { await system.stop() } }
        let client = try await system.createApplication(label: "Acme Billing")
        _ = try await system.createUser(email: "grace@example.com")
        let vaultDirectory = system.root.appendingPathComponent("fb/vault")
        let presence = ScriptedUserPresence(passphrase: FileBackedDevice.devicePassphrase(vaultDirectory: vaultDirectory))
        let device = try FileBackedDevice(
            vaultDirectory: vaultDirectory, appDataDirectory: system.root.appendingPathComponent("fb/app"),
            authorityURL: system.baseURL, faceVerifier: FakeFaceVerifier(), userPresence: presence, deviceName: "grace-laptop")
        let authn = try await Authenticator.open(environment: device.environment)
        let registration = authn.startRegistrationFlow()
        var states = Observed(registration.stateStream())
        registration.submitLinkPayload(payload: try await system.invitation(email: "grace@example.com", client: client))
        _ = await states.until(\.isAwaitingFaceCapture)
        registration.submitFaceCapture(captureSession: capture("grace"))
        guard case .succeeded = await states.rest().last else { Issue.record("\(states.seen)"); return }

        let rid = try await system.backchannel(client, email: "grace@example.com", pkiKind: "public_keys")
        let links = try await authn.pendingLinks(from: device.authority, wait: 5)
        #expect(links.count == 1)
        let flow = authn.startPkiCeremonyFlow()
        var ceremony = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: try #require(links.first))
        _ = await ceremony.until(\.isAwaitingFaceCapture)
        flow.submitFaceCapture(captureSession: capture("grace"))
        #expect(await ceremony.until(\.isTerminal)?.isSucceeded == true)
        #expect(try await system.token(client, rid: rid).status == 200)
    }
}
