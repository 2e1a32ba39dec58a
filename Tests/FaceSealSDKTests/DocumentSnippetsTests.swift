import FaceSealSDK
import Foundation
import Testing

// Written only against the reference documents' Swift snippets (../shared/seeds/: face-pki-ceremony-flow.txt,
// key-management.txt, two-key-model.txt), through the SDK's public surface alone — this file imports FaceSealSDK
// without @testable. If a name, a label or a shape the documents promise changes, this file stops compiling.

/// face-pki-ceremony-flow.txt, "States and their payloads": every state, with the documents' labels.
func handle(_ state: PkiCeremonyFlow.State) -> String {
    switch state {
    case .awaitingLink(refusal: let refusal):
        // "Each flow refuses the other flow's link, and names it."
        return refusal == .isLoginLink ? "submit it to a LoginFlow" : "awaiting a link"
    case .downloadingFaceToken(passwordRequired: let passwordRequired, lastPasswordError: let lastPasswordError):
        return passwordRequired ? "password\(lastPasswordError == nil ? "" : " (wrong)")" : "downloading"
    case .awaitingFaceCapture(bindingMessage: let bindingMessage, kind: let kind, rpLabel: let rpLabel, branding: let branding,
                              expiresAtUnix: let expiresAtUnix, attemptsLeft: let attemptsLeft, lastRetryReason: let lastRetryReason,
                              livenessChallenge: _):
        let title: String
        switch kind {
        case .publicKeys: title = "\(rpLabel) requests your public keys"
        case .sign: title = "\(rpLabel) requests your signature"
        case .decapsulate: title = "\(rpLabel) requests a shared secret"
        }
        return "\(title): \(bindingMessage) \(branding?.displayName ?? "") \(expiresAtUnix) \(attemptsLeft) \(lastRetryReason?.rawValue ?? "")"
    case .verifying:
        return "verifying"
    case .deliveringResult:
        return "delivering"
    case .deliveryFailed(status: let status):
        return "not delivered: \(status)"
    case .postingResult:
        return "posting"
    case .postingResultFailed(reason: let reason):
        // "a retry cannot succeed: offer only cancel" — whether it can belongs to the reason.
        return reason.isRetryable ? "try again" : "cancel only"
    case .succeeded(rpLabel: let rpLabel, kind: let kind, timestamp: let timestamp):
        return "\(rpLabel) \(kind) \(timestamp)"
    case .failed(reason: let reason):
        return reason == .upgradeRequired ? "update the app" : "failed: \(reason)"
    }
}

/// The login flow the ceremony mirrors, "without the key operation and delivery" (SPEC §7).
func handle(_ state: LoginFlow.State) -> String {
    switch state {
    case .awaitingLink(refusal: let refusal): return "\(String(describing: refusal))"
    case .downloadingFaceToken(passwordRequired: let passwordRequired, lastPasswordError: let lastPasswordError):
        return "\(passwordRequired) \(String(describing: lastPasswordError))"
    case .awaitingFaceCapture(bindingMessage: let bindingMessage, rpLabel: let rpLabel, branding: let branding, expiresAtUnix: let expiresAtUnix,
                              attemptsLeft: let attemptsLeft, lastRetryReason: let lastRetryReason, livenessChallenge: let livenessChallenge):
        return "\(bindingMessage ?? "") \(rpLabel) \(String(describing: branding)) \(expiresAtUnix) \(attemptsLeft) \(String(describing: lastRetryReason)) \(String(describing: livenessChallenge))"
    case .verifying: return "verifying"
    case .postingResult: return "posting"
    case .postingResultFailed(reason: let reason): return "\(reason.isRetryable)"
    case .succeeded(rpLabel: let rpLabel, timestamp: let timestamp): return "\(rpLabel) \(timestamp)"
    case .failed(reason: let reason): return "\(reason)"
    }
}

/// key-management.txt, "Rotation states".
func handle(_ state: KeyRotationFlow.State) -> String {
    switch state {
    case .confirming(keys: let keys):
        // "so your dialog can say "Rotate 3 keys" and show which applications and email addresses are affected"
        return "Rotate \(keys.count) keys: " + keys.map { "\($0.appLabel) \($0.email)" }.joined(separator: ", ")
    case .awaitingUserPresence: return "biometric"
    case .submitting: return "rotating"
    case .succeeded(revokedKeys: let revokedKeys):
        return revokedKeys.map { notice in
            "\(notice.email) \(notice.clientId) \(notice.appLabel): " + (notice.replaced ? "moved to another device" : notice.terminated ? "terminated" : "removed")
        }.joined(separator: "; ")
    case .failed(reason: let reason): return "\(reason)"
    }
}

/// key-management.txt, "Revocation states".
func handle(_ state: RevocationFlow.State) -> String {
    switch state {
    case .confirming(key: let key): return "Remove \(key.appLabel)?"
    case .awaitingUserPresence: return "biometric"
    case .submitting: return "removing"
    case .succeeded(key: let key): return "removed \(key.id)"
    case .failed(reason: let reason): return "\(reason)"
    }
}

/// two-key-model.txt, "Three failures, three different responses": none of them logs the user out.
func respond(to error: SignKeypairError) -> String {
    switch error.code {
    case .userCancelled: "ask again later"
    case .notAvailable: "biometric not available or locked out"
    case .keyInvalidated: "re-enrol this device"
    }
}

/// Every snippet of the documents, in their order, adapted to FaceSeal only where SPEC maps a name.
func documentsSnippets(authn: Authenticator, linkBytes: Data, enteredPassword: String, session: any FaceCaptureSession) async throws -> [String] {
    var seen: [String] = []

    // face-pki-ceremony-flow.txt, "Starting the flow" and steps 1–4.
    let flow = authn.startPkiCeremonyFlow()
    // The stream is taken before the inputs below, so the observer sees every state (the documents take it inside the Task).
    let flowStates = flow.stateStream()
    let observer = Task {
        var states: [String] = []
        for await state in flowStates {
            states.append(handle(state))
        }
        return states
    }
    flow.submitLinkPayload(payload: linkBytes)
    flow.submitPassword(password: enteredPassword)
    flow.submitFaceCapture(captureSession: session)
    flow.retry()
    flow.cancelCeremony()
    flow.cancel()
    seen += await observer.value

    // key-management.txt, "Listing what the device holds".
    let keys: [Key] = authn.keys
    let current: Key? = authn.currentKey
    seen.append("\(keys.count) \(current?.id ?? "")")

    // "Starting a rotation", "Approving".
    let rotation = try authn.startKeyRotationFlow()
    // The stream is taken before the inputs below, so the observer sees every state (the documents take it inside the Task).
    let rotationStates = rotation.stateStream()
    let rotationObserver = Task {
        var states: [String] = []
        for await state in rotationStates {
            states.append(handle(state))
        }
        return states
    }
    rotation.cancel()
    seen += await rotationObserver.value

    // "The rotation hint".
    if authn.takeKeyRotationHint() {
        // Converge onto the new key.
        let flow = try authn.startKeyRotationFlow()
        flow.cancel()
    }

    // "Revocation".
    guard let key = keys.first else { return seen }
    let revocation = try authn.startRevocationFlow(keyId: key.id)
    // The stream is taken before the inputs below, so the observer sees every state (the documents take it inside the Task).
    let revocationStates = revocation.stateStream()
    let revocationObserver = Task {
        var states: [String] = []
        for await state in revocationStates {
            states.append(handle(state))
        }
        return states
    }
    revocation.cancel()
    seen += await revocationObserver.value
    do {
        _ = try authn.startRevocationFlow(keyId: "not-held")
    } catch {
        // "Throws AuthnRuntimeError.UnknownKey(keyId) if the id isn't held by this device."
        if case .UnknownKey(let keyId) = error { seen.append("UnknownKey(\(keyId))") }
    }

    // "Branding for key lists", and the branding sync's `replacedKeys`.
    let branding: Branding? = authn.brandingFor(keyId: key.id)
    seen.append(branding?.displayName ?? "monogram")
    let summary: BrandingSyncSummary = try await authn.syncBranding()
    let replaced: [RevokedKeyNotice] = summary.replacedKeys
    seen.append("\(replaced.count) replaced")

    // "Audit log".
    let entries: [AuditEntry] = authn.auditLog(limit: 50)
    let defaulted: [AuditEntry] = authn.auditLog()
    seen += entries.prefix(1).map { "\($0.timestamp) \($0.kind) \($0.identityId ?? "") \($0.note)" }
    seen.append("\(defaulted.count)")
    return seen
}

@Suite(.timeLimit(.minutes(1))) struct DocumentSnippetsTests {
    @Test func theDocumentsSnippetsCompileAndRun() async throws {
        let h = Harness()
        let key = try h.preloadKey()
        let authn = try await h.open()
        let seen = try await documentsSnippets(authn: authn, linkBytes: Data("garbage".utf8), enteredPassword: "pw",
                                               session: capture("ada"))
        #expect(seen.contains("Rotate 1 keys: \(key.appLabel) \(key.email)"))
        #expect(seen.contains("Remove \(key.appLabel)?"))
        #expect(seen.contains("UnknownKey(not-held)"))
        #expect(respond(to: SignKeypairError(code: .userCancelled)) == "ask again later")
    }
}
