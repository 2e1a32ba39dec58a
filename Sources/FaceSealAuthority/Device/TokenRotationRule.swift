import FaceSealWire

/// The authority owns the policy (SPEC §5.3): a rotated header equals the stored one in every field but `gen`, except
/// that the tenant's policy, where it became stricter since, is carried in (liveness on, a lower threshold).
enum TokenRotationRule {
    /// A stored → rotated format version a rotation may make.
    struct VersionStep: Hashable {
        let from: Int
        let to: Int
    }

    /// The format versions a rotation may move between: the one line to change when a format migrates. Format 1
    /// migrates to format 2 at its next rotation; nothing goes back.
    static let versionSteps: Set<VersionStep> = [VersionStep(from: 1, to: 2), VersionStep(from: 2, to: 2)]

    /// Refuses (`invalid_request`) a rotated header that is not exactly the stored header at the next generation under
    /// the tenant's current policy.
    static func check(stored: FaceTokenHeader, rotated: FaceTokenHeader, policy: TenantPolicy) throws {
        guard versionSteps.contains(VersionStep(from: stored.v, to: rotated.v)) else {
            throw DeviceFailure.invalidRequest("a rotation cannot change the token format from \(stored.v) to \(rotated.v)")
        }
        // `gen` is within `WireRange.generation` (checked at decode): `+ 1` cannot overflow.
        var expected = stored.tightened(livenessRequired: policy.livenessRequired, threshold: policy.matchThreshold)
        expected.gen = stored.gen + 1
        expected.v = rotated.v
        guard rotated == expected else {
            throw DeviceFailure.invalidRequest("the rotated header must equal the stored one but for gen, under the tenant's current policy")
        }
    }
}
