import FaceSealSDK
import Foundation

/// One line per flow state, e.g. `awaitingFaceCapture(kind: sign, rp: "Acme", binding: "Sign invoice 7")`.
/// Never prints face data, secrets or passwords.
enum DeviceStates {
    static func describe(_ state: RegistrationFlow.State) -> String {
        switch state {
        case .awaitingLink(let refusal): "awaitingLink(refusal: \(refusal.map(\.rawValue) ?? "none"))"
        case .downloadingFaceToken(let required, let error): downloading(required, error)
        case .choosingPassword(let error): "choosingPassword(lastPasswordError: \(error.map { "\($0)" } ?? "none"))"
        case .awaitingApproval(let method, let code, let expires):
            "awaitingApproval(method: \(method.rawValue), code: \(code), expires: \(time(expires)))\(method == .enrolledDevice ? " — approve it on an enrolled device" : "")"
        case .awaitingFaceCapture(let email, let app, _, let expires, let attempts, let reason, let challenge):
            "awaitingFaceCapture(app: \(quoted(app)), email: \(quoted(email)), expires: \(time(expires)), attemptsLeft: \(attempts)\(retry(reason))\(liveness(challenge)))"
        case .verifying: "verifying"
        case .registeringKeys: "registeringKeys"
        case .succeeded(let key): "succeeded(key: \(key.id), app: \(quoted(key.appLabel)), email: \(quoted(key.email)))"
        case .failed(let reason): "failed(reason: \(reason))"
        }
    }

    static func describe(_ state: LoginFlow.State) -> String {
        switch state {
        case .awaitingLink(let refusal): "awaitingLink(refusal: \(refusal.map(\.rawValue) ?? "none"))"
        case .downloadingFaceToken(let required, let error): downloading(required, error)
        case .awaitingFaceCapture(let binding, let rp, _, let expires, let attempts, let reason, let challenge):
            "awaitingFaceCapture(kind: login, rp: \(quoted(rp))\(binding.map { ", binding: \(quoted($0))" } ?? ""), expires: \(time(expires)), attemptsLeft: \(attempts)\(retry(reason))\(liveness(challenge)))"
        case .verifying: "verifying"
        case .postingResult: "postingResult"
        case .postingResultFailed(let reason): "postingResultFailed(reason: \(reason), retryable: \(reason.isRetryable))"
        case .succeeded(let rp, let timestamp): "succeeded(rp: \(quoted(rp)), at: \(time(Int64(timestamp.timeIntervalSince1970))))"
        case .failed(let reason): "failed(reason: \(reason))"
        }
    }

    static func describe(_ state: PkiCeremonyFlow.State) -> String {
        switch state {
        case .awaitingLink(let refusal): "awaitingLink(refusal: \(refusal.map(\.rawValue) ?? "none"))"
        case .downloadingFaceToken(let required, let error): downloading(required, error)
        case .awaitingFaceCapture(let binding, let kind, let rp, _, let expires, let attempts, let reason, let challenge):
            "awaitingFaceCapture(kind: \(kind), rp: \(quoted(rp)), binding: \(quoted(binding)), expires: \(time(expires)), attemptsLeft: \(attempts)\(retry(reason))\(liveness(challenge)))"
        case .verifying: "verifying"
        case .deliveringResult: "deliveringResult"
        case .deliveryFailed(let status): "deliveryFailed(status: \(status))"
        case .postingResult: "postingResult"
        case .postingResultFailed(let reason): "postingResultFailed(reason: \(reason), retryable: \(reason.isRetryable))"
        case .succeeded(let rp, let kind, let timestamp):
            "succeeded(rp: \(quoted(rp)), kind: \(kind), at: \(time(Int64(timestamp.timeIntervalSince1970))))"
        case .failed(let reason): "failed(reason: \(reason))"
        }
    }

    static func describe(_ state: KeyRotationFlow.State) -> String {
        switch state {
        case .confirming(let keys): "confirming(keys: \(keys.count): \(keys.map { "\($0.appLabel) <\($0.email)>" }.joined(separator: ", ")))"
        case .awaitingUserPresence: "awaitingUserPresence"
        case .submitting: "submitting"
        case .succeeded(let revoked): "succeeded(revokedKeys: \(revoked.count)\(revoked.isEmpty ? "" : ": " + revoked.map(notice).joined(separator: ", ")))"
        case .failed(let reason): "failed(reason: \(reason))"
        }
    }

    static func describe(_ state: RevocationFlow.State) -> String {
        switch state {
        case .confirming(let key): "confirming(key: \(key.id), app: \(quoted(key.appLabel)), email: \(quoted(key.email)))"
        case .awaitingUserPresence: "awaitingUserPresence"
        case .submitting: "submitting"
        case .succeeded(let key): "succeeded(key: \(key.id))"
        case .failed(let reason): "failed(reason: \(reason))"
        }
    }

    static func notice(_ notice: RevokedKeyNotice) -> String {
        "\(notice.appLabel) <\(notice.email)>\(notice.replaced ? " (moved to another device)" : notice.terminated ? " (terminated)" : " (revoked)")"
    }

    private static func downloading(_ required: Bool, _ error: PasswordError?) -> String {
        "downloadingFaceToken(passwordRequired: \(required)\(error.map { ", lastPasswordError: \($0)" } ?? ""))"
    }

    private static func retry(_ reason: FaceCaptureRetryReason?) -> String {
        reason.map { ", lastRetry: \($0.rawValue)" } ?? ""
    }

    private static func liveness(_ challenge: LivenessChallenge?) -> String {
        challenge.map { ", liveness: \($0.steps.map(\.rawValue).joined(separator: "+"))" } ?? ", liveness: off"
    }

    static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    static func time(_ unix: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(unix)))
    }
}
