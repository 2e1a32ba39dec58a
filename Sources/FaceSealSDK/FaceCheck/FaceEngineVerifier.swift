import FaceSealCrypto
public import FaceSealFace
import Synchronization

/// The face engine's capture session is what a host app submits to `submitFaceCapture(captureSession:)`.
extension FaceSealFace.FaceCaptureSession: FaceCaptureSession {}

/// The real ``FaceVerifier`` (SPEC §5.4, §8) over `FaceSealFace`: liveness first (the engine's randomised
/// challenge-response over the capture's frames), then the capture's embeddings matched against the token's
/// templates with the token's threshold; enrolment templates are embeddings spread over a capture.
///
/// The engine derives a challenge from a nonce. `makeLivenessChallenge()` draws a fresh 16-byte nonce, shows the
/// user the engine's steps for it and remembers the nonce, so `checkLiveness` verifies the very challenge shown.
/// A capture that is not a `FaceSealFace.FaceCaptureSession` finds no face.
public final class FaceEngineVerifier: FaceVerifier {
    private let evaluator: LivenessEvaluator
    private let maxFrames: Int
    /// Challenges shown, newest last, with their nonces (a few: a flow shows one at a time).
    private let issued = Mutex<[(LivenessChallenge, [UInt8])]>([])
    private static let remembered = 16

    /// Creates the verifier. The engine's actions are limited to those the SDK's ``LivenessChallenge`` can show.
    public init(evaluator: LivenessEvaluator = LivenessEvaluator(actions: [.blink, .turnLeft, .turnRight]), maxFrames: Int = 5) {
        self.evaluator = evaluator
        self.maxFrames = max(1, maxFrames)
    }

    /// A fresh challenge: the engine's steps for a new random nonce.
    public func makeLivenessChallenge() -> LivenessChallenge {
        while true {
            let nonce = SecureRandom.bytes(count: 16)
            guard let engine = try? evaluator.challenge(for: nonce) else { continue }
            let steps = engine.steps.compactMap(Self.step)
            guard steps.count == engine.steps.count else { continue }
            let challenge = LivenessChallenge(steps: steps)
            issued.withLock { list in
                list.append((challenge, nonce))
                if list.count > Self.remembered { list.removeFirst(list.count - Self.remembered) }
            }
            return challenge
        }
    }

    static func step(_ action: LivenessAction) -> LivenessChallenge.Step? {
        switch action {
        case .blink: .blink
        case .turnLeft: .turnLeft
        case .turnRight: .turnRight
        case .openMouth: nil
        }
    }

    /// Checks the capture against the challenge shown (its nonce).
    public func checkLiveness(_ session: any FaceCaptureSession, challenge: LivenessChallenge?) async -> FaceCheckOutcome {
        guard let capture = session as? FaceSealFace.FaceCaptureSession else { return .retry(.noFaceDetected) }
        if capture.faces.isEmpty { return .retry(Self.reason(for: capture)) }
        guard let challenge, let nonce = issued.withLock({ $0.last { $0.0 == challenge }?.1 }) else { return .retry(.livenessFailed) }
        do {
            _ = try capture.verifyLiveness(nonce: nonce, evaluator: evaluator)
            return .passed
        } catch let failure as LivenessFailure {
            switch failure {
            case .faceCount: return .retry(.multipleFacesDetected)
            case .faceTooSmall: return .retry(.faceTooSmall)
            case .trackBroken: return .retry(.lostFace)
            default: return .retry(.livenessFailed)
            }
        } catch {
            return .retry(.livenessFailed)
        }
    }

    /// Mean embedding distance over up to `maxFrames` frames against the templates, at the token's threshold.
    public func match(_ session: any FaceCaptureSession, templates: FaceTemplates, threshold: Float) async -> FaceCheckOutcome {
        guard let capture = session as? FaceSealFace.FaceCaptureSession else { return .retry(.noFaceDetected) }
        if capture.faces.isEmpty { return .retry(Self.reason(for: capture)) }
        do {
            let result = try capture.match(templates: templates.embeddings, matcher: FaceMatcher(threshold: threshold), maxFrames: maxFrames)
            return result.isMatch ? .passed : .retry(.faceMismatch)
        } catch {
            return .retry(.noFaceDetected)
        }
    }

    /// Embeddings of up to `maxFrames` frames spread over the capture.
    public func enrolmentTemplates(from session: any FaceCaptureSession) async -> EnrolmentCaptureOutcome {
        guard let capture = session as? FaceSealFace.FaceCaptureSession else { return .retry(.noFaceDetected) }
        if capture.faces.isEmpty { return .retry(Self.reason(for: capture)) }
        do {
            return .templates(FaceTemplates(embeddings: try capture.embeddings(maxFrames: maxFrames)))
        } catch {
            return .retry(.noFaceDetected)
        }
    }

    /// Why a capture has no usable frame, from its last refused frame.
    static func reason(for capture: FaceSealFace.FaceCaptureSession) -> FaceCaptureRetryReason {
        switch capture.rejections.last?.error {
        case .multipleFaces: .multipleFacesDetected
        case .faceTooSmall: .faceTooSmall
        case .extremePose: .extremeHeadPose
        case .tooManyFrames: .captureTimeout
        default: .noFaceDetected
        }
    }
}
