import FaceSealWire
import Foundation
import Synchronization

/// Performs the actions of an ``ApprovalStateMachine`` through the seams and feeds the results
/// back. It holds what the machine must not: the approval's user-present signer, the
/// downloaded envelope (with the authority's share) and the opened token (templates only: its keys layer is opened
/// after the match, for the completion alone), all dropped as soon as they are no longer needed.
///
/// One user-presence prompt per approval: the user-present signer obtained for the token download (which
/// needs it, SPEC §4.2) also signs the completion and a final abort (docs/PROTOCOL.md §2).
final class ApprovalDriver: Sendable {
    private struct Session {
        var issuer: String?
        var presentSigner: (any DeviceRequestSigner)?
        /// The tenant's current match threshold (from the request details).
        var policyThreshold = Float(MatchPolicy.defaultThreshold)
        /// What the one presence prompt of the approval says (names the application).
        var promptReason = "Approve the request"
        var envelope: FaceTokenEnvelope?
        var opened: (any OpenedFaceToken)?
        var nextCapture = 0
    }

    private let core: FlowCore<ApprovalStateMachine>
    private let ring: KeyRing
    private let session = Mutex(Session())

    init(mode: ApprovalStateMachine.Mode, ring: KeyRing, publish: @escaping @Sendable (ApprovalStateMachine.View, Bool) -> Void) {
        self.ring = ring
        let machine = ApprovalStateMachine(mode: mode, deviceProtocol: ring.environment.deviceProtocol)
        core = FlowCore(machine) { publish($0.view, $0.isTerminal) }
    }

    private var environment: AuthenticatorEnvironment { ring.environment }

    // MARK: Inputs

    func submitLink(_ payload: [UInt8]) { send { $0.submitLink(payload) } }
    func submitPassword(_ password: String) { send { $0.submitPassword(password) } }
    func retry() { send { $0.retry() } }
    func cancel() { send { $0.cancel() } }
    func cancelCeremony() { send { $0.cancelCeremony() } }

    func submitFaceCapture(_ session: any FaceCaptureSession) {
        let sequence = self.session.withLock { s in
            s.nextCapture += 1
            return s.nextCapture
        }
        let capture = CapturedFace(sequence: sequence, session: session)
        send { $0.submitFaceCapture(capture) }
    }

    func waitUntilIdle() async { await core.waitUntilIdle() }

    // MARK: Machine plumbing

    private func send(_ event: (inout ApprovalStateMachine) -> ApprovalStateMachine.Action) {
        core.send(event, perform: { [self] action in await perform(action) }, whenEnded: { [self] machine, last in
            var aborting = false
            if case .abort = last { aborting = true }
            finish(machine, keepingSigner: aborting)
        })
    }

    /// The flow just ended: forget the secrets (the signer only once a final abort used it) and write the audit entry.
    private func finish(_ machine: ApprovalStateMachine, keepingSigner: Bool) {
        session.withLock { s in
            s.envelope = nil
            s.opened = nil
            if !keepingSigner { s.presentSigner = nil }
        }
        let record = machine.identity
        let view = machine.view
        let mode = machine.mode
        switch view {
        case .succeeded(let label, let kind, _):
            let note = kind.map { "\($0.rawValue) for \(label)" } ?? "sign-in to \(label)"
            ring.audit(mode == .ceremony ? .ceremony : .signIn, identityId: record?.key.identityId, note: note)
        case .failed(let reason):
            ring.audit(.flowFailed, identityId: record?.key.identityId, note: "\(mode == .ceremony ? "ceremony" : "sign-in") failed: \(reason)")
        default:
            break
        }
    }

    // MARK: Actions

    private func perform(_ action: ApprovalStateMachine.Action) async {
        switch action {
        case .none:
            return
        case .verifyLink(let payload):
            await verifyLink(payload)
        case .fetchRequestDetails(let link, let candidate):
            await fetchRequestDetails(link, asking: candidate)
        case .downloadFaceToken(let requestId):
            await downloadFaceToken(requestId)
        case .openFaceToken(let password):
            await openFaceToken(password)
        case .checkLiveness(let capture, let challenge):
            let outcome = await environment.faceVerifier.checkLiveness(capture.session, challenge: challenge)
            let next = nextChallenge(after: outcome)
            send { $0.livenessChecked(outcome, nextChallenge: next) }
        case .matchFace(let capture):
            await matchFace(capture)
        case .reportAttempt(let requestId, let kind):
            await reportAttempt(requestId: requestId, kind: kind)
        case .prepareCompletion(let details):
            await prepareCompletion(details)
        case .deliver(let delivery):
            let outcome = await environment.delivery.deliver(delivery)
            send { $0.deliveryFinished(outcome) }
        case .postCompletion(let completion):
            await postCompletion(completion)
        case .abort(let requestId, let reason):
            await abort(requestId: requestId, reason: reason)
        }
    }

    private func verifyLink(_ payload: [UInt8]) async {
        do {
            let link = try await environment.authority.verifyLink(payload)
            let candidates = ring.usableRecords(issuer: link.issuer)
            send { $0.linkVerified(link, candidates: candidates) }
        } catch {
            send { $0.linkRefused(Self.refusal(for: error)) }
        }
    }

    /// One identity's read of the request; the machine decides which identity asks next or acts.
    private func fetchRequestDetails(_ link: VerifiedLink, asking candidate: KeyRecord) async {
        session.withLock { $0.issuer = link.issuer }
        do {
            let signer = try ring.signer(deviceKeyId: candidate.ambient.deviceKeyId, presence: nil)
            let details = ring.absorb(try await environment.authority.requestDetails(requestId: link.requestId, signer: signer))
            session.withLock {
                $0.policyThreshold = Float(details.matchThreshold)
                $0.promptReason = "Approve the request from \(details.rpLabel)"
            }
            let candidates = ring.usableRecords(issuer: link.issuer)
            send { $0.requestDetailsReceived(details, among: candidates) }
        } catch .linkRefused(.unknownIdentity) {
            send { $0.requestDetailsRefused(.linkRefused(.unknownIdentity), settled: nil) }
        } catch {
            // A key that only outlived its rotation overlap was settled onto its new keys (a removed one, revoked by an
            // administrator, was not).
            let removed = await ring.absorb(error)
            let settled = removed == nil ? ring.record(keyId: candidate.key.id) : nil
            send { $0.requestDetailsRefused(error, settled: settled) }
        }
    }

    /// The identity the machine chose for the request.
    private func identity(for step: String) -> KeyRecord {
        guard let record = core.read({ $0.identity }) else { preconditionFailure("\(step) before the request's identity was chosen") }
        return record
    }

    private func downloadFaceToken(_ requestId: String) async {
        let record = identity(for: "downloadFaceToken")
        do {
            let signer = try await presentSigner(record)
            let envelope = ring.absorb(try await environment.authority.downloadFaceToken(requestId: requestId, signer: signer))
            session.withLock { $0.envelope = envelope }
            send { $0.faceTokenDownloaded(passwordRequired: envelope.passwordRequired, livenessRequired: envelope.livenessRequired) }
        } catch {
            await ring.absorb(error)
            send { $0.authorityFailed(error) }
        }
    }

    private func openFaceToken(_ password: String?) async {
        guard let envelope = session.withLock({ $0.envelope }) else {
            preconditionFailure("openFaceToken without a downloaded token")
        }
        do {
            let opened = try await environment.faceTokens.open(envelope, password: password)
            session.withLock {
                $0.opened = opened
                $0.envelope = nil
            }
            let challenge = environment.faceVerifier.makeLivenessChallenge()
            send { $0.faceTokenOpened(challenge: challenge) }
        } catch {
            send { $0.faceTokenOpenFailed(error) }
        }
    }

    private func matchFace(_ capture: CapturedFace) async {
        guard let (opened, policyThreshold) = session.withLock({ s in s.opened.map { ($0, s.policyThreshold) } }) else {
            preconditionFailure("matchFace without an opened token")
        }
        // The stricter of the token's threshold and the tenant's current one.
        let threshold = min(opened.matchThreshold, policyThreshold)
        let outcome = await environment.faceVerifier.match(capture.session, templates: opened.templates, threshold: threshold)
        let next = nextChallenge(after: outcome)
        send { $0.faceMatchChecked(outcome, nextChallenge: next) }
    }

    private func reportAttempt(requestId: String, kind: AttemptKind) async {
        let record = identity(for: "reportAttempt")
        do {
            let signer = try await presentSigner(record)
            let remaining = ring.absorb(try await environment.authority.reportAttempt(requestId: requestId, kind: kind, signer: signer))
            send { $0.attemptReported(remaining) }
        } catch {
            await ring.absorb(error)
            send { $0.authorityFailed(error) }
        }
    }

    private func prepareCompletion(_ details: RequestDetails) async {
        guard let opened = session.withLock({ $0.opened }) else {
            preconditionFailure("prepareCompletion without an opened token")
        }
        let mode = core.read { $0.mode }
        do {
            // Only now, after liveness and the match, is the keys layer opened; its masters live for this call only.
            let prepared = try await opened.openKeys().prepareCompletion(for: details, issuedAt: environment.clock.now())
            // The token is re-sealed: the opened secrets are no longer needed.
            session.withLock { $0.opened = nil }
            let completion = CompletionSubmission(
                requestId: details.requestId, resultSHA256: prepared.deliverySHA256,
                rotatedToken: prepared.rotatedToken, downloadedGeneration: opened.generation,
                serverShare: prepared.rotatedServerShare, passwordUsed: prepared.passwordUsed,
                passwordVerifier: prepared.passwordVerifier
            )
            switch mode {
            case .login:
                send { $0.completionPrepared(.init(delivery: nil, completion: completion)) }
            case .ceremony:
                guard let body = prepared.deliveryBody, let signature = prepared.deliverySignature, prepared.deliverySHA256 != nil,
                    let endpoint = details.deliveryEndpoint, let bearer = details.clientNotificationToken
                else {
                    send { $0.completionPreparationFailed(.internalFailure("the token produced no signed delivery")) }
                    return
                }
                let delivery = DeliveryRequest(endpoint: endpoint, bearer: bearer, body: body, signature: signature)
                send { $0.completionPrepared(.init(delivery: delivery, completion: completion)) }
            }
        } catch {
            send { $0.completionPreparationFailed(error) }
        }
    }

    private func postCompletion(_ completion: CompletionSubmission) async {
        let record = identity(for: "postCompletion")
        do {
            let signer = try await presentSigner(record)
            let recordedAt = ring.absorb(try await environment.authority.complete(completion, signer: signer))
            send { $0.completionAccepted(timestamp: recordedAt) }
        } catch {
            // A signer that failed (prompt cancelled, key locked) is asked for again on `retry()`.
            if case .signing = error { session.withLock { $0.presentSigner = nil } }
            await ring.absorb(error)
            send { $0.authorityFailed(error) }
        }
    }

    /// Fire and forget: the flow already ended; the outcome is only audited.
    private func abort(requestId: String, reason: AbortReason) async {
        let issuer = session.withLock { $0.issuer }
        let chosen = core.read { $0.identity }
        // Cancelled before the request's identity was known: any key of the link's authority may sign.
        guard let record = chosen ?? issuer.flatMap({ ring.usableRecord(issuer: $0) }) else {
            ring.audit(.abortSent, identityId: nil, note: "abort \(reason.rawValue) not sent: no key")
            return
        }
        defer { session.withLock { $0.presentSigner = nil } }
        do {
            let signer = try await presentSigner(record, reason: "End the request")
            ring.absorb(try await environment.authority.abort(requestId: requestId, reason: reason, signer: signer))
            ring.audit(.abortSent, identityId: record.key.identityId, note: "abort \(reason.rawValue) sent")
        } catch {
            await ring.absorb(error)
            ring.audit(.abortSent, identityId: record.key.identityId, note: "abort \(reason.rawValue) failed: \(error)")
        }
    }

    /// The approval's user-present signer: the user is asked once, at the token download, and the same signer
    /// serves every later signed call of this approval.
    private func presentSigner(_ record: KeyRecord, reason: String? = nil) async throws(AuthorityFailure) -> any DeviceRequestSigner {
        let (held, prompt) = session.withLock { ($0.presentSigner, $0.promptReason) }
        if let held { return held }
        let signer = try await ring.userPresentSigner(record, reason: reason ?? prompt)
        session.withLock { $0.presentSigner = signer }
        return signer
    }

    private func nextChallenge(after outcome: FaceCheckOutcome) -> LivenessChallenge? {
        outcome == .passed ? nil : environment.faceVerifier.makeLivenessChallenge()
    }

    /// `verifyLink` should throw only `.linkRefused`; anything else means the bytes were not a usable link.
    static func refusal(for failure: AuthorityFailure) -> LinkRefusal {
        switch failure {
        case .linkRefused(let refusal): refusal
        case .requestExpired: .expired
        case .requestNotPending: .alreadyAnswered
        default: .malformed
        }
    }
}
