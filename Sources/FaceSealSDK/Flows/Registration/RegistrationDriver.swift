import Foundation
import Synchronization

/// Performs the actions of a ``RegistrationStateMachine`` through the seams. Holds the secrets the
/// machine must not: the downloaded envelope, the opened token, the enrolment templates, the user's
/// presence proof (the new user-present key is created and first used under it: one prompt per enrolment) and the
/// new user-present signer (needed if the registration must be withdrawn).
final class RegistrationDriver: Sendable {
    private struct Session {
        var details: EnrolmentDetails?
        var envelope: FaceTokenEnvelope?
        var opened: (any OpenedFaceToken)?
        var templates: FaceTemplates?
        var presence: UserPresenceProof?
        var userPresentSigner: (any DeviceRequestSigner)?
        var nextCapture = 0
    }

    private let core: FlowCore<RegistrationStateMachine>
    private let ring: KeyRing
    private let session = Mutex(Session())

    init(ring: KeyRing, publish: @escaping @Sendable (RegistrationStateMachine.View, Bool) -> Void) {
        self.ring = ring
        core = FlowCore(RegistrationStateMachine(deviceProtocol: ring.environment.deviceProtocol)) { publish($0.view, $0.isTerminal) }
    }

    private var environment: AuthenticatorEnvironment { ring.environment }

    func submitLink(_ payload: [UInt8]) { send { $0.submitLink(payload) } }
    func submitPassword(_ password: String) { send { $0.submitPassword(password) } }
    func cancel() { send { $0.cancel() } }

    func submitFaceCapture(_ session: any FaceCaptureSession) {
        let sequence = self.session.withLock { s in
            s.nextCapture += 1
            return s.nextCapture
        }
        let capture = CapturedFace(sequence: sequence, session: session)
        send { $0.submitFaceCapture(capture) }
    }

    func waitUntilIdle() async { await core.waitUntilIdle() }

    private func send(_ event: (inout RegistrationStateMachine) -> RegistrationStateMachine.Action) {
        var wasLive = false
        let terminal = core.send({ machine in
            wasLive = !machine.isTerminal
            return event(&machine)
        }, perform: { [self] action in await perform(action) })
        if terminal && wasLive { finish() }
    }

    private func finish() {
        let details = session.withLock { s -> EnrolmentDetails? in
            s.envelope = nil
            s.opened = nil
            s.templates = nil
            s.presence = nil
            return s.details
        }
        switch core.read({ $0.view }) {
        case .succeeded(let key):
            ring.audit(.enrolment, identityId: key.identityId, note: "enrolled \(key.email) at \(key.appLabel)")
        case .failed(let reason):
            ring.audit(.flowFailed, identityId: details?.identityId, note: "enrolment failed: \(reason)")
        default:
            break
        }
    }

    private func perform(_ action: RegistrationStateMachine.Action) async {
        switch action {
        case .none:
            return
        case .verifyLink(let payload):
            do {
                let link = try await environment.authority.verifyLink(payload)
                send { $0.linkVerified(link) }
            } catch {
                send { $0.linkRefused(ApprovalDriver.refusal(for: error)) }
            }
        case .fetchEnrolmentDetails(let link):
            do {
                let details = try await environment.authority.enrolmentDetails(requestId: link.requestId)
                session.withLock { $0.details = details }
                let challenge = environment.faceVerifier.makeLivenessChallenge()
                send { $0.enrolmentDetailsReceived(details, challenge: challenge) }
            } catch {
                send { $0.authorityFailed(error) }
            }
        case .awaitApproval(let requestId):
            await awaitApproval(requestId: requestId)
        case .provePassword(let requestId, let password, let tokenHeader):
            guard let signer = session.withLock({ $0.userPresentSigner }) else { preconditionFailure("provePassword before registration") }
            do {
                let outcome = try await environment.authority.provePassword(requestId: requestId, password: password.value,
                                                                            tokenHeader: tokenHeader, signer: signer)
                send { $0.passwordProved(outcome) }
            } catch {
                send { $0.authorityFailed(error) }
            }
        case .openFaceToken(let password):
            guard let envelope = session.withLock({ $0.envelope }) else { preconditionFailure("openFaceToken without a token") }
            do {
                let opened = try await environment.faceTokens.open(envelope, password: password?.value)
                session.withLock {
                    $0.opened = opened
                    $0.envelope = nil
                }
                let challenge = environment.faceVerifier.makeLivenessChallenge()
                send { $0.faceTokenOpened(challenge: challenge) }
            } catch {
                send { $0.faceTokenOpenFailed(error) }
            }
        case .checkLiveness(let capture, let challenge):
            let outcome = await environment.faceVerifier.checkLiveness(capture.session, challenge: challenge)
            let next = outcome == .passed ? nil : environment.faceVerifier.makeLivenessChallenge()
            send { $0.livenessChecked(outcome, nextChallenge: next) }
        case .matchFace(let capture):
            guard let opened = session.withLock({ $0.opened }) else { preconditionFailure("matchFace without an opened token") }
            let outcome = await environment.faceVerifier.match(capture.session, templates: opened.templates, threshold: opened.matchThreshold)
            let next = outcome == .passed ? nil : environment.faceVerifier.makeLivenessChallenge()
            send { $0.faceMatchChecked(outcome, nextChallenge: next) }
        case .extractTemplates(let capture):
            switch await environment.faceVerifier.enrolmentTemplates(from: capture.session) {
            case .templates(let templates):
                session.withLock { $0.templates = templates }
                send { $0.templatesExtracted(retry: nil, nextChallenge: nil) }
            case .retry(let reason):
                let next = environment.faceVerifier.makeLivenessChallenge()
                send { $0.templatesExtracted(retry: reason, nextChallenge: next) }
            }
        case .createDeviceKeys(let requestId):
            await createDeviceKeys(requestId: requestId)
        case .registerEnrolment(let details, let keys, let password, let isFirstDevice):
            await register(details, keys, password: password, isFirstDevice: isFirstDevice)
        case .storeKeyRecord(let key, let keys, let issuer):
            let branding = session.withLock { $0.details?.branding }
            let record = KeyRecord(
                key: key, issuer: issuer, ambient: DeviceKeyRecord(keys.ambient), userPresent: DeviceKeyRecord(keys.userPresent),
                branding: branding
            )
            do {
                try ring.updateRecords { records in
                    records.removeAll { $0.key.id == key.id }
                    records.append(record)
                }
                send { $0.keyRecordStored() }
            } catch {
                send { $0.keyRecordStoreFailed(String(describing: error)) }
            }
        case .discardDeviceKeys(let ids):
            ring.deleteDeviceKeys(ids)
        case .withdrawEnrolment(let requestId, let keys):
            await withdraw(requestId: requestId, keys: keys)
        }
    }

    /// Waits for a further device's approval with long polls of the token download (signed with the registration's
    /// user-present key, so one presence prompt covers the whole enrolment) until the token comes or the authority
    /// says the approval will not (denied, ran out). Stops when the flow ended meanwhile (cancelled).
    private func awaitApproval(requestId: String) async {
        guard let signer = session.withLock({ $0.userPresentSigner }) else { preconditionFailure("awaitApproval before registration") }
        while !core.read({ $0.isTerminal }) {
            do {
                let envelope = try await environment.authority.enrolmentFaceToken(requestId: requestId, signer: signer,
                                                                                  wait: Self.approvalPollSeconds)
                session.withLock { $0.envelope = envelope }
                send { $0.faceTokenReleased(passwordRequired: envelope.passwordRequired, livenessRequired: envelope.livenessRequired) }
                return
            } catch .approvalPending {
                continue
            } catch {
                send { $0.authorityFailed(error) }
                return
            }
        }
    }

    /// How long one approval long poll waits on the authority, seconds.
    static let approvalPollSeconds = 25

    /// Asks for the user (the user-present key is created under the proof), then creates the ambient key, then the
    /// user-present key; reports what exists if one fails.
    private func createDeviceKeys(requestId: String) async {
        let vault = environment.vault
        let proof: UserPresenceProof
        do {
            proof = try await vault.userPresence.confirm(reason: "Enrol this device")
        } catch {
            send { $0.userPresenceFailed(error.code) }
            return
        }
        session.withLock { $0.presence = proof }
        let ambient: DeviceKeyDescriptor
        do {
            ambient = try vault.createKey(protection: .ambient, alias: "faceseal.\(requestId).ambient")
        } catch {
            send { $0.deviceKeyCreationFailed(created: [], description: String(describing: error)) }
            return
        }
        do {
            let userPresent = try vault.createKey(protection: .userPresent, alias: "faceseal.\(requestId).user-present", presence: proof)
            send { $0.deviceKeysCreated(.init(ambient: ambient, userPresent: userPresent)) }
        } catch {
            send { $0.deviceKeyCreationFailed(created: [ambient.deviceKeyId], description: String(describing: error)) }
        }
    }

    private func register(_ details: EnrolmentDetails, _ keys: RegistrationStateMachine.DeviceKeys, password: EnrolmentPassword?, isFirstDevice: Bool) async {
        do {
            var newToken: NewFaceToken?
            if isFirstDevice {
                guard let templates = session.withLock({ $0.templates }) else { preconditionFailure("first enrolment without templates") }
                do {
                    newToken = try await environment.faceTokens.create(templates: templates, password: password?.value, keyPolicy: details.keyPolicy,
                                                                       subject: details.subject, tenant: details.tenant,
                                                                       livenessRequired: details.livenessRequired)
                } catch {
                    throw AuthorityFailure.refused(code: "face_token_not_created", message: String(describing: error))
                }
            }
            let ambient = try ring.signer(deviceKeyId: keys.ambient.deviceKeyId, presence: nil)
            guard let proof = session.withLock({ $0.presence }) else { preconditionFailure("registering before the user was asked") }
            let userPresent = try ring.signer(deviceKeyId: keys.userPresent.deviceKeyId, presence: proof)
            session.withLock { $0.userPresentSigner = userPresent }
            let submission = EnrolmentSubmission(requestId: details.requestId, ambient: keys.ambient, userPresent: keys.userPresent, newFaceToken: newToken)
            let receipt = ring.absorb(try await environment.authority.registerEnrolment(submission, ambient: ambient, userPresent: userPresent))
            let key = Key(
                id: receipt.keyId, identityId: receipt.identityId ?? details.identityId, email: details.email, clientId: details.clientId,
                appLabel: details.appLabel, createdAt: receipt.enrolledAt
            )
            if let approval = receipt.approval {
                send { $0.enrolmentPending(key, approval: approval) }
            } else {
                send { $0.enrolmentRegistered(key) }
            }
        } catch let failure as AuthorityFailure {
            send { $0.enrolmentFailed(failure) }
        } catch {
            send { $0.enrolmentFailed(.invalidResponse(String(describing: error))) }
        }
    }

    /// Withdraws on the authority, then deletes the local keys whatever the answer: a key the
    /// device deletes can never sign, so an unwithdrawn registration is left unusable.
    private func withdraw(requestId: String, keys: RegistrationStateMachine.DeviceKeys) async {
        if let signer = session.withLock({ $0.userPresentSigner }) {
            do {
                try await environment.authority.withdrawEnrolment(requestId: requestId, userPresent: signer)
            } catch {
                ring.audit(.flowFailed, identityId: nil, note: "enrolment \(requestId) could not be withdrawn: \(error)")
            }
        }
        ring.deleteDeviceKeys(keys.ids)
    }
}
