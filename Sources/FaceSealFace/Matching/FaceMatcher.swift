/// Why embeddings could not be compared.
public enum FaceMatchError: Error, Equatable, Sendable {
    /// No capture frames were given.
    case noFrames
    /// No enrolled templates were given.
    case noTemplates
    /// Two embeddings have different lengths, or one is empty.
    case dimensionMismatch(expected: Int, found: Int)
    /// An embedding contains NaN or infinity.
    case nonFiniteValue
}

/// The outcome of comparing a capture with the enrolled templates.
public struct FaceMatchResult: Sendable, Equatable {
    /// Per capture frame: the mean distance to the enrolled templates.
    public var frameDistances: [Float]
    /// The mean of `frameDistances`: the score compared with the threshold.
    public var averageDistance: Float
    /// The threshold used.
    public var threshold: Float
    /// Whether the capture matches (see `FaceMatcher.match`).
    public var isMatch: Bool
}

/// Compares 128-d face embeddings (dlib ResNet) by Euclidean distance against a threshold.
///
/// Threshold: dlib's published default is 0.6 (`loss_metric_2`'s `dist_thresh`). FaceSeal uses **0.52**
/// (`recommendedThreshold`). On the golden dlib embeddings, 0.6 accepts one impostor pair among the
/// portrait photos (astronaut vs a 53-px face, distance 0.5295) and 0.5 sits on two genuine johns
/// pairs (0.49994 and 0.50041) so that a 1e-3 perturbation moves the false-reject rate across 2 %.
/// At 0.52: johns (5 people × 11, 54 unique) reject all 1,166 impostor pairs (closest 0.655) and
/// 3 of 265 genuine pairs (1.1 %, aligned chips and full pipeline alike); the portraits reject all
/// 175 cross-person pairs and accept all Obama pairs (≤ 0.43). Margins: 0.0135 to the nearest accepted
/// genuine pair, 0.0095 to the nearest impostor, which is a face below the capture minimum size.
public struct FaceMatcher: Sendable, Equatable {
    /// dlib's default same-person threshold (stored in the ResNet model file).
    public static let dlibDefaultThreshold: Float = 0.6
    /// The threshold FaceSeal uses unless a token sets its own (see the type's documentation).
    public static let recommendedThreshold: Float = 0.52

    /// Largest accepted average distance.
    public var threshold: Float
    /// When true, every frame's distance must also be within the threshold, not only the average
    /// (liveness.md §5: one stranger's frame among the owner's must not be averaged away).
    public var requireEveryFrame: Bool

    /// A matcher with the given threshold.
    public init(threshold: Float = FaceMatcher.recommendedThreshold, requireEveryFrame: Bool = true) {
        self.threshold = threshold
        self.requireEveryFrame = requireEveryFrame
    }

    /// Euclidean distance, accumulated in double.
    public static func distance(_ a: [Float], _ b: [Float]) throws(FaceMatchError) -> Float {
        guard !a.isEmpty, a.count == b.count else { throw .dimensionMismatch(expected: a.count, found: b.count) }
        var sum = 0.0
        for i in 0..<a.count {
            guard a[i].isFinite, b[i].isFinite else { throw .nonFiniteValue }
            let d = Double(a[i]) - Double(b[i])
            sum += d * d
        }
        return Float(sum.squareRoot())
    }

    /// Compares capture frames with enrolled templates: each frame's distance is its mean distance to
    /// the templates; the capture matches when the mean over frames is ≤ `threshold` (and, with
    /// `requireEveryFrame`, each frame's is too).
    public func match(frames: [[Float]], templates: [[Float]]) throws(FaceMatchError) -> FaceMatchResult {
        guard !frames.isEmpty else { throw .noFrames }
        guard !templates.isEmpty else { throw .noTemplates }
        var perFrame: [Float] = []
        perFrame.reserveCapacity(frames.count)
        for frame in frames {
            var total = 0.0
            for template in templates { total += Double(try Self.distance(frame, template)) }
            perFrame.append(Float(total / Double(templates.count)))
        }
        let average = Float(perFrame.reduce(0.0) { $0 + Double($1) } / Double(perFrame.count))
        let accepted = average <= threshold && (!requireEveryFrame || perFrame.allSatisfy { $0 <= threshold })
        return FaceMatchResult(frameDistances: perFrame, averageDistance: average, threshold: threshold, isMatch: accepted)
    }

    /// Whether two single embeddings are the same person at this threshold.
    public func isSamePerson(_ a: [Float], _ b: [Float]) throws(FaceMatchError) -> Bool {
        try Self.distance(a, b) <= threshold
    }
}
