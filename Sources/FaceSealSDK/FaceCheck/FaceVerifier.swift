/// The face step (SPEC §5.4, §8): liveness first, then embeddings compared with the enrolled
/// templates. The real implementation is the face engine; flows are unit-tested with fakes.
public protocol FaceVerifier: Sendable {
    /// A fresh randomised liveness challenge to show before the next capture.
    func makeLivenessChallenge() -> LivenessChallenge

    /// Checks liveness over the capture's frames against `challenge`.
    /// Answers `.passed` or `.retry` with a capture-quality or liveness reason (never `.faceMismatch`).
    func checkLiveness(_ session: any FaceCaptureSession, challenge: LivenessChallenge?) async -> FaceCheckOutcome

    /// Compares the capture's embeddings with `templates` (mean distance ≤ `threshold` matches).
    /// Answers `.passed` on a match, `.retry(.faceMismatch)` on a mismatch, or a capture-quality reason.
    func match(_ session: any FaceCaptureSession, templates: FaceTemplates, threshold: Float) async -> FaceCheckOutcome

    /// Embeddings to enrol from a capture (first enrolment), or the reason to capture again.
    func enrolmentTemplates(from session: any FaceCaptureSession) async -> EnrolmentCaptureOutcome
}

/// The result of one face check.
public enum FaceCheckOutcome: Sendable, Hashable {
    /// The check passed.
    case passed
    /// Capture again, for this reason.
    case retry(FaceCaptureRetryReason)
}

/// Enrolled face embeddings (biometric data: kept only inside an opened token and never logged).
public struct FaceTemplates: Sendable, Hashable {
    /// One embedding per enrolment capture frame.
    public let embeddings: [[Float]]

    /// Creates templates.
    public init(embeddings: [[Float]]) {
        self.embeddings = embeddings
    }
}

/// The result of extracting enrolment templates from a capture.
public enum EnrolmentCaptureOutcome: Sendable, Hashable {
    /// Templates to seal into the new token.
    case templates(FaceTemplates)
    /// Capture again, for this reason.
    case retry(FaceCaptureRetryReason)
}
