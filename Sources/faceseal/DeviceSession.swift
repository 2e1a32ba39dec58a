import FaceSealCrypto
import FaceSealSDK
import FaceSealWire
import Foundation
import Synchronization

/// Why a `faceseal device` command did not succeed (exit 1), or could not start (exit 64 for usage).
enum DeviceCommandError: Error, CustomStringConvertible {
    case usage(String)
    case image(path: String, reason: String)
    case faceModels(String)
    case state(String)
    case refused(String)

    var description: String {
        switch self {
        case .usage(let text): text
        case .image(let path, let reason): "\(path): \(reason)"
        case .faceModels(let text): text
        case .state(let text): text
        case .refused(let text): text
        }
    }
}

/// One device's state directory opened with the SDK's real seams: the file vault (AES-GCM-sealed records and keys,
/// 0600), the pinned authority key, the HTTP authority client and delivery poster, face tokens, and the face engine.
///
/// Layout of the directory: `vault/` (keys, records, authority pin), `secrets/vault.key`, `installed`,
/// `authority-url` (learned from the enrolment link), `ambient-keys` (the ambient device-key ids, to read the outbox).
final class DeviceSession: Sendable {
    let directory: URL
    let authenticator: Authenticator
    let client: HTTPAuthorityClient
    let say: @Sendable (String) -> Void

    private init(directory: URL, authenticator: Authenticator, client: HTTPAuthorityClient,
                 say: @escaping @Sendable (String) -> Void) {
        self.directory = directory
        self.authenticator = authenticator
        self.client = client
        self.say = say
    }

    /// Opens (creating if needed) the state directory. `authority` overrides the stored authority URL; an enrolment
    /// passes the URL from its link. `faces` is the engine (nil for commands that need no face step).
    static func open(directory path: String, authority: String?, presence: DeviceOptions.Presence, deviceName: String?,
                     faceEngine: DeviceFaceEngine?, say: @escaping @Sendable (String) -> Void) async throws(DeviceCommandError) -> DeviceSession {
        let directory = URL(fileURLWithPath: path)
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw .state("cannot create \(directory.path): \(error.localizedDescription)")
        }
        let urlFile = directory.appendingPathComponent("authority-url")
        let stored = (try? String(contentsOf: urlFile, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let base = authority ?? stored, let baseURL = URL(string: base), baseURL.scheme == "http" || baseURL.scheme == "https" else {
            throw .state("no authority known in \(directory.path): enrol first (or pass --authority URL)")
        }
        if stored != base {
            do { try Data((base + "\n").utf8).write(to: urlFile, options: .atomic) } catch {
                throw .state("cannot write \(urlFile.path)")
            }
        }
        // The device passphrase: the Linux stand-in for a biometric prompt, sealing the user-present keys (SPEC §6.1).
        let passphrase = FileBackedDevice.devicePassphrase(vaultDirectory: directory)
        let userPresence: any UserPresence
        switch presence {
        case .scripted:
            say("presence: scripted — user-present keys are used without asking anyone, under the scripted passphrase "
                + "(for tests and the demo only)")
            userPresence = ScriptedUserPresence(passphrase: passphrase)
        case .terminal:
            userPresence = TerminalUserPresence(passphrase: passphrase)
        }
        do {
            let verifier: any FaceVerifier = faceEngine == nil ? NoFaceVerifier() : ReportingFaceVerifier(report: say)
            let device = try FileBackedDevice(
                vaultDirectory: directory, appDataDirectory: directory.appendingPathComponent("app"), authorityURL: baseURL,
                faceVerifier: verifier, userPresence: userPresence, deviceName: deviceName ?? ProcessInfo.processInfo.hostName)
            let authenticator = try await Authenticator.open(environment: device.environment)
            return DeviceSession(directory: directory, authenticator: authenticator, client: device.authority, say: say)
        } catch let error as DeviceCommandError {
            throw error
        } catch {
            throw .state("cannot open the device state in \(directory.path): \(error)")
        }
    }

    // MARK: Outbox

    /// The links waiting in the outbox of every enrolment, long-polling up to `wait` seconds when there is one (notices
    /// go to the audit log only).
    func pendingLinks(wait: Int) async throws(DeviceCommandError) -> [String] {
        try await pendingEntries(wait: wait).filter { !NoticeSignature.isNotice(Array($0.utf8)) }
    }

    /// Every outbox entry — links and notices — of every enrolment; the SDK records the notices in its audit log.
    private func pendingEntries(wait: Int) async throws(DeviceCommandError) -> [String] {
        guard !authenticator.keys.isEmpty else { throw .state("this device holds no key: enrol first") }
        do {
            let outbox = try await authenticator.pendingOutbox(from: client, wait: wait)
            return (outbox.links + outbox.notices.map(\.payload)).map { String(decoding: $0, as: UTF8.self) }
        } catch {
            throw .refused("cannot read the outbox: \(error)")
        }
    }

    /// The inbox: entries fetched from the outbox (which hands each out once) and kept in `<state-dir>/inbox`, one a
    /// line, until they are approved, taken or expire, so `inbox` shows them and a later `approve --next` still finds
    /// the links. Polls the outbox (waiting up to `wait` seconds only when the inbox holds no link) and answers every link
    /// kept and every notice (verified again with the pinned key; information, nothing to approve).
    func inbox(wait: Int, now: Date = Date()) async throws(DeviceCommandError) -> (links: [String], notices: [DeviceNotice]) {
        var entries = keptEntries(now: now)
        let hasLink = entries.contains { !NoticeSignature.isNotice(Array($0.utf8)) }
        for entry in try await pendingEntries(wait: hasLink ? 0 : wait) where !entries.contains(entry) { entries.append(entry) }
        var links: [String] = []
        var notices: [DeviceNotice] = []
        var kept: [String] = []
        for entry in entries {
            if !NoticeSignature.isNotice(Array(entry.utf8)) {
                links.append(entry)
                kept.append(entry)
            } else if let notice = await client.verifyNotice(Array(entry.utf8)) {
                notices.append(notice)
                kept.append(entry)
            }
        }
        try keep(kept)
        return (links, notices)
    }

    /// Removes `entries` from the inbox.
    func removeFromInbox(_ entries: [String], now: Date = Date()) throws(DeviceCommandError) {
        try keep(keptEntries(now: now).filter { !entries.contains($0) })
    }

    private var inboxFile: URL { directory.appendingPathComponent("inbox") }

    /// The unexpired links and notices of the inbox file (at most 100 of at most the link size each; anything else is
    /// dropped).
    private func keptEntries(now: Date) -> [String] {
        guard let data = FileManager.default.contents(atPath: inboxFile.path), data.count <= 100 * (LinkLimits.maxBytes + 1) else { return [] }
        let unix = Int64(now.timeIntervalSince1970)
        return String(decoding: data, as: UTF8.self).split(separator: "\n").prefix(100).map(String.init).filter { entry in
            let bytes = Array(entry.utf8)
            if let claims = try? LinkSignature.parse(bytes).claims { return claims.exp > unix }
            if let notice = try? NoticeSignature.parse(bytes) { return notice.claims.exp > unix }
            return false
        }
    }

    private func keep(_ links: [String]) throws(DeviceCommandError) {
        do {
            try Data(links.map { $0 + "\n" }.joined().utf8).write(to: inboxFile, options: .atomic)
        } catch {
            throw .state("cannot write \(inboxFile.path)")
        }
    }

    // MARK: Enrolment

    /// Runs the registration flow with `link` and the capture; answers the new key.
    func enrol(link: [UInt8], capture: ImageCapture, password: String?) async throws(DeviceCommandError) -> Key {
        let flow = authenticator.startRegistrationFlow()
        let stream = flow.stateStream()
        flow.submitLinkPayload(payload: link)
        var printer = StatePrinter(say: say)
        var lastCapture: FaceCaptureRetryReason??
        for await state in stream {
            printer.show(DeviceStates.describe(state))
            switch state {
            case .awaitingLink(let refusal?):
                flow.cancel()
                throw .refused(Self.invitationRefused(refusal))
            case .downloadingFaceToken(true, let error), .choosingPassword(let error):
                guard let password, error == nil else {
                    flow.cancel()
                    throw .refused(error == nil ? "a password is required (--password-file)" : "the password was refused: \(error!)")
                }
                say("progress: deriving the password key (scrypt)…")
                flow.submitPassword(password: password)
            case .awaitingFaceCapture(_, _, _, _, _, let reason, let challenge):
                guard challenge == nil else {
                    flow.cancel()
                    throw .refused(Self.livenessRequired)
                }
                if lastCapture != nil, let reason, reason != .faceMismatch {
                    flow.cancel()
                    throw .refused("the capture was refused: \(reason.rawValue)")
                }
                lastCapture = .some(reason)
                say("progress: matching \(capture.paths.count) image(s) (embedding faces)…")
                flow.submitFaceCapture(captureSession: capture.session)
            case .awaitingApproval(.enrolledDevice, let code, _):
                say("approval: awaiting approval on an enrolled device of this user (`faceseal device approve` there); check that it names code \(code)")
            case .awaitingApproval(let method, _, _):
                say("approval: awaiting the authority's release of the face token (\(method.rawValue))")
            case .succeeded(let key):
                await flow.waitUntilIdle()
                return key
            case .failed(let reason):
                await flow.waitUntilIdle()
                throw .refused("enrolment failed: \(reason.explanation)")
            default:
                break
            }
        }
        throw .refused("the enrolment ended without a result")
    }

    // MARK: Approval

    /// How an approval ended.
    enum Approval: Sendable, Equatable {
        case signedIn(rpLabel: String)
        case ceremony(rpLabel: String, kind: PkiCeremonyKind)
    }

    /// Approves a link: a login flow first; a link it refuses as a ceremony link goes to a ceremony flow
    /// (as the reference authenticator does). A face mismatch is retried with the same capture until the
    /// request's attempts are spent; the SDK then signs the abort.
    func approve(link: [UInt8], capture: ImageCapture, password: String?) async throws(DeviceCommandError) -> Approval {
        say("approve: submitting the link to a login flow")
        if let result = try await approveLogin(link: link, capture: capture, password: password) { return result }
        say("approve: the login flow names it a ceremony link; submitting it to a ceremony flow")
        return try await approveCeremony(link: link, capture: capture, password: password)
    }

    private func approveLogin(link: [UInt8], capture: ImageCapture, password: String?) async throws(DeviceCommandError) -> Approval? {
        let flow = authenticator.startLoginFlow()
        let stream = flow.stateStream()
        flow.submitLinkPayload(payload: link)
        var printer = StatePrinter(say: say)
        var steps = ApprovalSteps(capture: capture, password: password, say: say)
        // One way out on every refusal, so the flow has stopped before the command reports it.
        func abort(_ error: DeviceCommandError) async -> DeviceCommandError {
            flow.cancel()
            await flow.waitUntilIdle()
            return error
        }
        for await state in stream {
            printer.show(DeviceStates.describe(state))
            switch state {
            case .awaitingLink(.isPkiCeremonyLink?):
                flow.cancel()
                await flow.waitUntilIdle()
                return nil
            case .awaitingLink(let refusal?):
                throw await abort(.refused("the link was refused: \(refusal.explanation)"))
            case .downloadingFaceToken(true, let error):
                switch steps.password(after: error) {
                case .success(let password): flow.submitPassword(password: password)
                case .failure(let refusal): throw await abort(refusal)
                }
            case .awaitingFaceCapture(_, _, _, _, let attemptsLeft, let reason, let challenge):
                if let refusal = steps.capture(attemptsLeft: attemptsLeft, reason: reason, challenge: challenge) { throw await abort(refusal) }
                flow.submitFaceCapture(captureSession: capture.session)
            case .postingResultFailed(let reason):
                if let refusal = steps.completionFailed(reason) { throw await abort(refusal) }
                flow.retry()
            case .succeeded(let label, _):
                await flow.waitUntilIdle()
                return .signedIn(rpLabel: label)
            case .failed(let reason):
                await flow.waitUntilIdle()
                throw .refused(Self.failureText(reason))
            default:
                break
            }
        }
        throw .refused("the sign-in ended without a result")
    }

    private func approveCeremony(link: [UInt8], capture: ImageCapture, password: String?) async throws(DeviceCommandError) -> Approval {
        let flow = authenticator.startPkiCeremonyFlow()
        let stream = flow.stateStream()
        flow.submitLinkPayload(payload: link)
        var printer = StatePrinter(say: say)
        var steps = ApprovalSteps(capture: capture, password: password, say: say)
        // A ceremony the user got as far as seeing is aborted at the authority (signed), not only here.
        func abort(_ error: DeviceCommandError) async -> DeviceCommandError {
            flow.cancelCeremony()
            await flow.waitUntilIdle()
            return error
        }
        for await state in stream {
            printer.show(DeviceStates.describe(state))
            switch state {
            case .awaitingLink(let refusal?):
                flow.cancel()
                throw .refused("the link was refused: \(refusal.explanation)")
            case .downloadingFaceToken(true, let error):
                switch steps.password(after: error) {
                case .success(let password): flow.submitPassword(password: password)
                case .failure(let refusal): throw await abort(refusal)
                }
            case .awaitingFaceCapture(_, _, _, _, _, let attemptsLeft, let reason, let challenge):
                if let refusal = steps.capture(attemptsLeft: attemptsLeft, reason: reason, challenge: challenge) { throw await abort(refusal) }
                flow.submitFaceCapture(captureSession: capture.session)
            case .deliveryFailed(let status):
                if let refusal = steps.deliveryFailed(status) { throw await abort(refusal) }
                flow.retry()
            case .postingResultFailed(let reason):
                if let refusal = steps.completionFailed(reason) { throw await abort(refusal) }
                flow.retry()
            case .succeeded(let label, let kind, _):
                await flow.waitUntilIdle()
                return .ceremony(rpLabel: label, kind: kind)
            case .failed(let reason):
                await flow.waitUntilIdle()
                throw .refused(Self.failureText(reason))
            default:
                break
            }
        }
        throw .refused("the ceremony ended without a result")
    }

    /// A tenant that requires liveness sends a challenge with the capture step; image files cannot answer it.
    static let livenessRequired = """
        the tenant requires liveness: a live capture that follows a challenge (blink, turn, open mouth), which still \
        photos cannot pass. Use an authenticator with a camera, or have an administrator switch it off \
        (`faceseal admin tenant policy TENANT --liveness-required false`)
        """

    /// An enrolment link's refusal, said of the invitation.
    static func invitationRefused(_ refusal: LinkRefusal) -> String {
        switch refusal {
        case .alreadyAnswered: "the invitation was already used: ask the administrator for a new one"
        case .expired: "the invitation has expired or was cancelled: ask the administrator for a new one"
        default: "the link was refused: \(refusal.explanation)"
        }
    }

    static func failureText(_ reason: FailureReason) -> String {
        switch reason {
        case .attemptsExhausted: "face mismatch: every attempt was spent; the authority denied the request (attempts_exhausted)"
        default: reason.explanation
        }
    }
}

/// Prints a state line only when it differs from the previous one.
struct StatePrinter {
    let say: @Sendable (String) -> Void
    private var last: String?

    init(say: @escaping @Sendable (String) -> Void) { self.say = say }

    mutating func show(_ line: String) {
        guard line != last else { return }
        last = line
        say("state: " + line)
    }
}

/// A face verifier for commands that never reach a face step (keys, rotate, revoke, …): refuses any capture.
struct NoFaceVerifier: FaceVerifier {
    func makeLivenessChallenge() -> LivenessChallenge { LivenessChallenge(steps: [.blink]) }
    func checkLiveness(_ session: any FaceSealSDK.FaceCaptureSession, challenge: LivenessChallenge?) async -> FaceCheckOutcome { .retry(.noFaceDetected) }
    func match(_ session: any FaceSealSDK.FaceCaptureSession, templates: FaceTemplates, threshold: Float) async -> FaceCheckOutcome { .retry(.noFaceDetected) }
    func enrolmentTemplates(from session: any FaceSealSDK.FaceCaptureSession) async -> EnrolmentCaptureOutcome { .retry(.noFaceDetected) }
}

/// The command line's answers to the steps a sign-in and a ceremony share: the password from `--password-file`, the
/// same images at every face step (a mismatch is tried again while the request has attempts; any other refusal of
/// the capture, or a liveness challenge, ends it), and two more tries of a failed delivery or completion.
private struct ApprovalSteps {
    let capture: ImageCapture
    let password: String?
    let say: @Sendable (String) -> Void
    private var submitted = false
    private var retries = 0

    init(capture: ImageCapture, password: String?, say: @escaping @Sendable (String) -> Void) {
        self.capture = capture
        self.password = password
        self.say = say
    }

    /// The password for the face token, or why there is none to give.
    func password(after error: PasswordError?) -> Result<String, DeviceCommandError> {
        guard let password, error == nil else {
            return .failure(.refused(error.map { "the password was refused: \($0)" } ?? "the face token needs a password (--password-file)"))
        }
        say("progress: deriving the password key (scrypt)…")
        return .success(password)
    }

    /// Nil when the capture is to be submitted (again); else why the approval ends here.
    mutating func capture(attemptsLeft: Int, reason: FaceCaptureRetryReason?, challenge: FaceSealSDK.LivenessChallenge?) -> DeviceCommandError? {
        guard challenge == nil else { return .refused(DeviceSession.livenessRequired) }
        if submitted, let reason, reason != .faceMismatch { return .refused("the capture was refused: \(reason.rawValue)") }
        if reason == .faceMismatch { say("face: mismatch — \(attemptsLeft) attempt(s) left") }
        submitted = true
        say("progress: matching \(capture.paths.count) image(s) (embedding faces)…")
        return nil
    }

    /// Nil when the delivery is to be sent again; else why the ceremony ends here.
    mutating func deliveryFailed(_ status: DeliveryFailureStatus) -> DeviceCommandError? {
        guard retries < 2 else { return .refused("the application did not accept the delivery: \(status.explanation)") }
        retries += 1
        say("retry: the application did not accept the delivery (\(status.explanation)); sending the same bytes again")
        return nil
    }

    /// Nil when the completion is to be posted again; else why the approval ends here.
    mutating func completionFailed(_ reason: CompletionFailureReason) -> DeviceCommandError? {
        guard reason.isRetryable && retries < 2 else { return .refused("the completion failed: \(reason.explanation)") }
        retries += 1
        say("retry: the completion failed (\(reason.explanation)); posting it again")
        return nil
    }
}
