/// The face-match policy values the authority (tenant default), the SDK (new tokens) and the CLI share
/// (SPEC §5.3, §5.4): one default, in one place.
public enum MatchPolicy {
    /// The default match threshold (mean embedding distance): the face engine's recorded decision,
    /// `FaceMatcher.recommendedThreshold` in FaceSealFace (the SDK's tests keep the two equal).
    public static let defaultThreshold = 0.52
    /// The thresholds a tenant policy may set: lower is stricter.
    public static let thresholdRange: ClosedRange<Double> = 0.1...1.0
}

extension FaceTokenHeader {
    /// This header under a tenant policy: liveness when either the header or the policy asks for it, and the lower
    /// (stricter) of the two thresholds. What a device enforces and what a rotated header carries (SPEC §5.3).
    public func tightened(livenessRequired policyLiveness: Bool, threshold policyThreshold: Double) -> FaceTokenHeader {
        var next = self
        next.livenessRequired = livenessRequired || policyLiveness
        next.threshold = Swift.min(threshold, policyThreshold)
        return next
    }
}
