import FaceSealCrypto
import protocol FaceSealWire.WallClock
import struct FaceSealWire.AttemptBudget
import Foundation
import Synchronization
@testable import FaceSealSDK

// In-test fakes of the seams the SDK's drivers use. The real implementations (wire, HTTP, crypto,
// face engine, file vault) are integrated later; these let the drivers be tested now.

/// One ordered log shared by the fake authority and the fake delivery endpoint, so a test can
/// assert "deliver before complete".
final class EventLog: Sendable {
    private let events = Mutex<[String]>([])
    func append(_ event: String) { events.withLock { $0.append(event) } }
    var all: [String] { events.withLock { $0 } }
}

final class FixedClock: WallClock {
    private let date: Mutex<Date>
    init(_ date: Date = Date(timeIntervalSince1970: 1_800_000_000)) { self.date = Mutex(date) }
    func now() -> Date { date.withLock { $0 } }
    func advance(_ seconds: TimeInterval) { date.withLock { $0 += seconds } }
}

struct FakeSigner: DeviceRequestSigner {
    let deviceKeyId: String
    let protection: KeyProtection
    let invalidated: Bool
    func sign(_ message: [UInt8]) async throws(SignKeypairError) -> [UInt8] {
        if invalidated { throw SignKeypairError(code: .keyInvalidated) }
        return Array(deviceKeyId.utf8) + message
    }
}

final class FakeVault: KeyVault {
    struct State {
        var keys: [String: DeviceKeyDescriptor] = [:]
        var aliases: [String: String] = [:]
        var invalidated: Set<String> = []
        var recordFile: [UInt8]?
        var auditFile: [UInt8]?
        var freshInstall = false
        var nextId = 0
        /// Number of further keys that may be created before creation fails (nil: no limit).
        var createBudget: Int?
        var failWrites = false
    }

    let state = Mutex(State())
    let presence: ScriptedUserPresence
    var userPresence: any UserPresence { presence }

    init(clock: FixedClock) { presence = ScriptedUserPresence(clock: clock) }

    func createKey(protection: KeyProtection, alias: String, presence: UserPresenceProof?) throws(VaultError) -> DeviceKeyDescriptor {
        try state.withLock { s throws(VaultError) -> DeviceKeyDescriptor in
            if let budget = s.createBudget {
                guard budget > 0 else { throw .storageFailed("secure hardware refused") }
                s.createBudget = budget - 1
            }
            s.nextId += 1
            let descriptor = DeviceKeyDescriptor(deviceKeyId: "dk-\(s.nextId)", protection: protection, publicKey: [UInt8(s.nextId)])
            s.keys[descriptor.deviceKeyId] = descriptor
            s.aliases[descriptor.deviceKeyId] = alias
            return descriptor
        }
    }

    func deleteKey(deviceKeyId: String) throws(VaultError) {
        state.withLock { _ = $0.keys.removeValue(forKey: deviceKeyId) }
    }

    func hasKeyMaterial(deviceKeyId: String) -> Bool {
        state.withLock { $0.keys[deviceKeyId] != nil }
    }

    func signer(deviceKeyId: String, presence: UserPresenceProof?) throws(VaultError) -> any DeviceRequestSigner {
        try state.withLock { s throws(VaultError) -> any DeviceRequestSigner in
            guard let key = s.keys[deviceKeyId] else { throw .keyNotFound(deviceKeyId) }
            if key.protection == .userPresent && presence == nil { throw .userPresenceRequired }
            return FakeSigner(deviceKeyId: deviceKeyId, protection: key.protection, invalidated: s.invalidated.contains(deviceKeyId))
        }
    }

    func readRecordFile() throws(VaultError) -> [UInt8]? { state.withLock { $0.recordFile } }

    func writeRecordFile(_ bytes: [UInt8]) throws(VaultError) {
        try state.withLock { s throws(VaultError) in
            if s.failWrites { throw .storageFailed("disk full") }
            s.recordFile = bytes
        }
    }

    func readAuditFile() throws(VaultError) -> [UInt8]? { state.withLock { $0.auditFile } }

    func writeAuditFile(_ bytes: [UInt8]) throws(VaultError) {
        try state.withLock { s throws(VaultError) in
            if s.failWrites { throw .storageFailed("disk full") }
            s.auditFile = bytes
        }
    }

    func isFreshInstall() -> Bool { state.withLock { $0.freshInstall } }
    func markInstalled() throws(VaultError) { state.withLock { $0.freshInstall = false } }

    var keyIds: Set<String> { state.withLock { Set($0.keys.keys) } }
    func wipe(_ id: String) { state.withLock { _ = $0.keys.removeValue(forKey: id) } }
    /// A biometric enrolment change: only user-present keys are invalidated.
    func changeBiometricEnrolment() {
        state.withLock { s in
            for (id, key) in s.keys where key.protection == .userPresent { s.invalidated.insert(id) }
        }
    }
}

/// Test-only sealing: a magic prefix, so a damaged or foreign file is refused.
struct FakeSealer: RecordSealer {
    static let magic: [UInt8] = Array("SEALED1:".utf8)
    func seal(_ plaintext: [UInt8]) throws(VaultError) -> [UInt8] { Self.magic + plaintext }
    func open(_ sealed: [UInt8]) throws(VaultError) -> [UInt8] {
        guard sealed.starts(with: Self.magic) else { throw .sealFailure("not sealed by this key") }
        return Array(sealed.dropFirst(Self.magic.count))
    }
}

/// Decides by the capture's label: "spoof" fails liveness, "noface" has no face, "stranger" is a mismatch.
final class FakeFaceVerifier: FaceVerifier {
    private let counters = Mutex((challenges: 0, liveness: 0, matches: 0, thresholds: [Float]()))
    var livenessCalls: Int { counters.withLock { $0.liveness } }
    var matchCalls: Int { counters.withLock { $0.matches } }
    /// The threshold of every match, in order.
    var thresholds: [Float] { counters.withLock { $0.thresholds } }

    func makeLivenessChallenge() -> LivenessChallenge {
        let n = counters.withLock { c in
            c.challenges += 1
            return c.challenges
        }
        let steps = LivenessChallenge.Step.allCases
        return LivenessChallenge(steps: [steps[n % steps.count], .blink])
    }

    func checkLiveness(_ session: any FaceCaptureSession, challenge: LivenessChallenge?) async -> FaceCheckOutcome {
        counters.withLock { $0.liveness += 1 }
        switch (session as? FakeCaptureSession)?.label {
        case "spoof": return .retry(.livenessFailed)
        case "noface": return .retry(.noFaceDetected)
        default: return .passed
        }
    }

    func match(_ session: any FaceCaptureSession, templates: FaceTemplates, threshold: Float) async -> FaceCheckOutcome {
        counters.withLock {
            $0.matches += 1
            $0.thresholds.append(threshold)
        }
        return (session as? FakeCaptureSession)?.label == "stranger" ? .retry(.faceMismatch) : .passed
    }

    func enrolmentTemplates(from session: any FaceCaptureSession) async -> EnrolmentCaptureOutcome {
        (session as? FakeCaptureSession)?.label == "noface" ? .retry(.noFaceDetected) : .templates(FaceTemplates(embeddings: [[0.1, 0.2]]))
    }
}

struct FakeOpenedToken: OpenedFaceToken {
    let templates = FaceTemplates(embeddings: [[0.1, 0.2]])
    let matchThreshold: Float = 0.6
    let generation: Int

    func openKeys() async throws(KeyOperationError) -> any FaceTokenKeys { FakeTokenKeys(generation: generation) }
}

struct FakeTokenKeys: FaceTokenKeys {
    let generation: Int

    func prepareCompletion(for request: RequestDetails, issuedAt: Date) async throws(KeyOperationError) -> PreparedCompletion {
        let rotated: [UInt8] = [UInt8(generation + 1)]
        guard let kind = request.pkiKind else {
            return PreparedCompletion(deliveryBody: nil, deliverySignature: nil, deliverySHA256: nil, rotatedToken: rotated)
        }
        if kind == .decapsulate && request.pkiData.count != 4 { throw .invalidData("ciphertext length") }
        let body = Array(#"{"auth_req_id":"\#(request.requestId)","iat":\#(Int(issuedAt.timeIntervalSince1970)),"kind":"\#(kind.rawValue)"}"#.utf8)
        let digest = body.reduce(into: [UInt8](repeating: 0, count: 4)) { acc, byte in acc[Int(byte) % 4] &+= byte }
        return PreparedCompletion(deliveryBody: body, deliverySignature: "sig-\(body.count)", deliverySHA256: digest, rotatedToken: rotated)
    }
}

/// Opens a token whose password is "pw".
struct FakeFaceTokens: FaceTokenOpener {
    func open(_ envelope: FaceTokenEnvelope, password: String?) async throws(FaceTokenOpenError) -> any OpenedFaceToken {
        if envelope.token == [0xDE, 0xAD] { throw .unusable("damaged") }
        if envelope.passwordRequired {
            guard let password else { throw .passwordRequired }
            guard password == "pw" else { throw .wrongPassword }
        }
        return FakeOpenedToken(generation: envelope.generation)
    }

    func create(templates: FaceTemplates, password: String?, keyPolicy: [String], subject: String,
                tenant: String, livenessRequired: Bool) async throws(KeyOperationError) -> NewFaceToken {
        NewFaceToken(token: [1, UInt8(keyPolicy.count)], serverShare: SecretBytes([2] as [UInt8]))
    }
}

final class FakeDelivery: DeliveryPoster {
    private let script = Mutex<[DeliveryOutcome]>([])
    private let sent = Mutex<[DeliveryRequest]>([])
    let log: EventLog
    init(log: EventLog) { self.log = log }
    func enqueue(_ outcome: DeliveryOutcome) { script.withLock { $0.append(outcome) } }
    var deliveries: [DeliveryRequest] { sent.withLock { $0 } }
    func deliver(_ delivery: DeliveryRequest) async -> DeliveryOutcome {
        sent.withLock { $0.append(delivery) }
        log.append("deliver")
        return script.withLock { $0.isEmpty ? .accepted : $0.removeFirst() }
    }
}

/// A scripted authority. Links are looked up by their payload text.
final class FakeAuthority: AuthorityClient {
    struct Script {
        var links: [String: VerifiedLink] = [:]
        var details: [String: RequestDetails] = [:]
        var detailsFailure: AuthorityFailure?
        var passwordRequired = false
        var livenessRequired = true
        var damagedToken = false
        var generation = 4
        var completionResults: [AuthorityFailure?] = []
        /// What each request has left, counted down by reports (starts from its details).
        var remaining: [String: AttemptBudget] = [:]
        var reportFailure: AuthorityFailure?
        var hintOnNextReply = false
        /// A hint carried by an error answer (what `takeRotationHint()` reports).
        var hintOnError = false
        var enrolments: [String: EnrolmentDetails] = [:]
        var registrationFailure: AuthorityFailure?
        /// A further device's approval: its method, how many long polls answer `approval_pending` first, and a refusal.
        var approvalMethod: FurtherDeviceApproval = .enrolledDevice
        var approvalPendingPolls = 0
        var approvalFailure: AuthorityFailure?
        /// The answers to password proofs, in order (accepted when empty).
        var passwordProofs: [PasswordProofOutcome] = []
        var rotationFailure: AuthorityFailure?
        var revokedOnRotation: [String: (terminated: Bool, replaced: Bool)] = [:]
        var keyStatus: [String: DeviceKeyStatus] = [:]
        var keyStatusFailure: AuthorityFailure?
        var branding: [String: Branding] = [:]
        var revokedOnSync: [String: DeviceKeyStatus] = [:]
        var revokedDeviceKeys: Set<String> = []
        var terminatedDeviceKeys: Set<String> = []
        var replacedDeviceKeys: Set<String> = []
    }

    struct Recorded {
        var completions: [CompletionSubmission] = []
        var aborts: [(requestId: String, reason: AbortReason)] = []
        var registeredDeviceKeys: Set<String> = []
        var withdrawn: [String] = []
        var revoked: [String] = []
        var rotations: [[KeyRotationSubmission]] = []
        var completionSigners: [KeyProtection] = []
        var completionKeyIds: [String] = []
        var downloadSigners: [KeyProtection] = []
        var reports: [AttemptKind] = []
        var approvalPolls = 0
        var passwordsProved: [String] = []
        /// The signing key ids of each branding sync request.
        var brandingSigners: [[String]] = []
    }

    let script = Mutex(Script())
    let recorded = Mutex(Recorded())
    let log: EventLog
    let recordedAt = Date(timeIntervalSince1970: 1_800_000_100)

    init(log: EventLog) { self.log = log }

    private func reply<T>(_ value: T) -> AuthorityReply<T> {
        let hint = script.withLock { s in
            defer { s.hintOnNextReply = false }
            return s.hintOnNextReply
        }
        return AuthorityReply(value, rotationHint: hint)
    }

    /// Signs as the real client would (so an invalidated key fails here), then checks the key's status.
    private func check(_ signer: any DeviceRequestSigner) async throws(AuthorityFailure) {
        do {
            _ = try await signer.sign([0])
        } catch {
            throw .signing(error)
        }
        let (revoked, terminated, replaced) = script.withLock { ($0.revokedDeviceKeys, $0.terminatedDeviceKeys, $0.replacedDeviceKeys) }
        if revoked.contains(signer.deviceKeyId) { throw .deviceKeyRevoked(deviceKeyId: signer.deviceKeyId) }
        if terminated.contains(signer.deviceKeyId) { throw .deviceKeyTerminated(deviceKeyId: signer.deviceKeyId) }
        if replaced.contains(signer.deviceKeyId) { throw .deviceKeyReplaced(deviceKeyId: signer.deviceKeyId) }
    }

    func verifyLink(_ payload: [UInt8]) async throws(AuthorityFailure) -> VerifiedLink {
        let text = String(decoding: payload, as: UTF8.self)
        switch text {
        case "forged": throw .linkRefused(.badSignature)
        case "expired": throw .linkRefused(.expired)
        case "garbage": throw .linkRefused(.malformed)
        default: break
        }
        guard let link = script.withLock({ $0.links[text] }) else { throw .linkRefused(.malformed) }
        return link
    }

    func requestDetails(requestId: String, signer: any DeviceRequestSigner) async throws(AuthorityFailure) -> AuthorityReply<RequestDetails> {
        try await check(signer)
        log.append("details")
        let (details, failure) = script.withLock { ($0.details[requestId], $0.detailsFailure) }
        if let failure { throw failure }
        guard let details else { throw .requestNotPending }
        return reply(details)
    }

    func downloadFaceToken(requestId: String, signer: any DeviceRequestSigner) async throws(AuthorityFailure) -> AuthorityReply<FaceTokenEnvelope> {
        try await check(signer)
        log.append("token")
        recorded.withLock { $0.downloadSigners.append(signer.protection) }
        if signer.protection != .userPresent { throw .refused(code: "user_presence_required", message: "") }
        let s = script.withLock { $0 }
        return reply(FaceTokenEnvelope(
            token: s.damagedToken ? [0xDE, 0xAD] : [7], serverShare: SecretBytes([8] as [UInt8]), passwordRequired: s.passwordRequired,
            livenessRequired: s.livenessRequired, generation: s.generation
        ))
    }

    func complete(_ completion: CompletionSubmission, signer: any DeviceRequestSigner) async throws(AuthorityFailure) -> AuthorityReply<Date> {
        try await check(signer)
        log.append("complete")
        recorded.withLock {
            $0.completions.append(completion)
            $0.completionSigners.append(signer.protection)
            $0.completionKeyIds.append(signer.deviceKeyId)
        }
        if signer.protection != .userPresent { throw .refused(code: "user_present_key_required", message: "") }
        let next = script.withLock { $0.completionResults.isEmpty ? nil : $0.completionResults.removeFirst() }
        if let failure = next { throw failure }
        return reply(recordedAt)
    }

    func reportAttempt(requestId: String, kind: AttemptKind, signer: any DeviceRequestSigner) async throws(AuthorityFailure) -> AuthorityReply<AttemptBudget> {
        try await check(signer)
        log.append("report:\(kind.rawValue)")
        recorded.withLock { $0.reports.append(kind) }
        let outcome = script.withLock { s -> Result<AttemptBudget, AuthorityFailure> in
            if let failure = s.reportFailure { return .failure(failure) }
            guard let details = s.details[requestId] else { return .failure(.requestNotPending) }
            let before = s.remaining[requestId]
                ?? AttemptBudget(attemptsLeft: details.attemptsLeft, captureRetriesLeft: details.captureRetriesLeft)
            let after = AttemptBudget(attemptsLeft: before.attemptsLeft - (kind == .faceMismatch ? 1 : 0),
                                          captureRetriesLeft: before.captureRetriesLeft - (kind == .captureRetry ? 1 : 0))
            s.remaining[requestId] = after
            return .success(after)
        }
        return reply(try outcome.get())
    }

    func abort(requestId: String, reason: AbortReason, signer: any DeviceRequestSigner) async throws(AuthorityFailure) -> AuthorityReply<Void> {
        try await check(signer)
        log.append("abort:\(reason.rawValue)")
        recorded.withLock { $0.aborts.append((requestId, reason)) }
        return reply(())
    }

    func enrolmentDetails(requestId: String) async throws(AuthorityFailure) -> EnrolmentDetails {
        guard let details = script.withLock({ $0.enrolments[requestId] }) else { throw .requestNotPending }
        return details
    }

    func enrolmentFaceToken(requestId: String, signer: any DeviceRequestSigner, wait: Int) async throws(AuthorityFailure) -> FaceTokenEnvelope {
        recorded.withLock { r in
            r.approvalPolls += 1
            r.downloadSigners.append(signer.protection)
        }
        let s = script.withLock { s -> Script in
            defer { s.approvalPendingPolls = max(0, s.approvalPendingPolls - 1) }
            return s
        }
        if s.approvalPendingPolls > 0 { throw .approvalPending }
        if let failure = s.approvalFailure { throw failure }
        log.append("approval-released")
        return FaceTokenEnvelope(token: [7], serverShare: SecretBytes([8] as [UInt8]), passwordRequired: s.passwordRequired, livenessRequired: s.livenessRequired, generation: s.generation)
    }

    func provePassword(requestId: String, password: String, tokenHeader: [UInt8],
                       signer: any DeviceRequestSigner) async throws(AuthorityFailure) -> PasswordProofOutcome {
        recorded.withLock { $0.passwordsProved.append(password) }
        return script.withLock { s in s.passwordProofs.isEmpty ? PasswordProofOutcome(accepted: true, attemptsLeft: 3) : s.passwordProofs.removeFirst() }
    }

    func registerEnrolment(_ submission: EnrolmentSubmission, ambient: any DeviceRequestSigner, userPresent: any DeviceRequestSigner) async throws(AuthorityFailure) -> AuthorityReply<EnrolmentReceipt> {
        if let failure = script.withLock({ $0.registrationFailure }) {
            if case .transient = failure {
                // The authority stored the keys but the answer was lost.
                recorded.withLock { $0.registeredDeviceKeys.formUnion([submission.ambient.deviceKeyId, submission.userPresent.deviceKeyId]) }
            }
            throw failure
        }
        recorded.withLock { $0.registeredDeviceKeys.formUnion([submission.ambient.deviceKeyId, submission.userPresent.deviceKeyId]) }
        let method = script.withLock { $0.approvalMethod }
        let approval = submission.newFaceToken == nil
            ? PendingEnrolmentApproval(method: method, code: "123456", expiresAtUnix: 1_800_000_700, tokenHeader: method == .password ? [1] : nil)
            : nil
        return reply(EnrolmentReceipt(keyId: "key-\(submission.requestId)", enrolledAt: recordedAt, approval: approval))
    }

    func withdrawEnrolment(requestId: String, userPresent: any DeviceRequestSigner) async throws(AuthorityFailure) {
        recorded.withLock { r in
            r.withdrawn.append(requestId)
            r.registeredDeviceKeys = []
        }
    }

    func rotateKeys(_ rotations: [KeyRotationSubmission]) async throws(AuthorityFailure) -> AuthorityReply<[KeyRotationOutcome]> {
        recorded.withLock { $0.rotations.append(rotations) }
        let (failure, revoked) = script.withLock { ($0.rotationFailure, $0.revokedOnRotation) }
        if let failure { throw failure }
        return reply(rotations.map { submission in
            if let dead = revoked[submission.keyId] {
                return .revoked(keyId: submission.keyId, terminated: dead.terminated, replaced: dead.replaced)
            }
            return .rotated(keyId: submission.keyId)
        })
    }

    func deviceKeyStatus(keyId: String, signer: any DeviceRequestSigner) async throws(AuthorityFailure) -> AuthorityReply<DeviceKeyStatus> {
        if let failure = script.withLock({ $0.keyStatusFailure }) { throw failure }
        return reply(script.withLock { $0.keyStatus[keyId] ?? .unknown })
    }

    func revokeKey(keyId: String, signer: any DeviceRequestSigner) async throws(AuthorityFailure) -> AuthorityReply<Void> {
        try await check(signer)
        recorded.withLock { $0.revoked.append(keyId) }
        return reply(())
    }

    func syncBranding(_ keys: [SignedKey]) async throws(AuthorityFailure) -> AuthorityReply<BrandingSyncResult> {
        for key in keys { try await check(key.signer) }
        recorded.withLock { $0.brandingSigners.append(keys.map(\.signer.deviceKeyId)) }
        let s = script.withLock { $0 }
        let asked = Set(keys.map(\.key.id))
        return reply(BrandingSyncResult(branding: s.branding.filter { asked.contains($0.key) }, revoked: s.revokedOnSync.filter { asked.contains($0.key) }))
    }

    func takeRotationHint() -> Bool {
        script.withLock { s in
            defer { s.hintOnError = false }
            return s.hintOnError
        }
    }
}
