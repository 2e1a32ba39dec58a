import Foundation

/// Per-frame liveness features from dlib's 68 landmarks (iBUG 300-W order), as defined in the reference
/// `liveness.md` §1. Pose is measured in the eye-line frame so that in-plane rotation (roll) never
/// looks like a head turn.
public struct FaceFeatures: Sendable, Equatable, Codable {
    /// Eye aspect ratio of the eye on the image's left (points 36–41).
    public var eyeAspectLeft: Double
    /// Eye aspect ratio of the eye on the image's right (points 42–47).
    public var eyeAspectRight: Double
    /// Inner-mouth aspect ratio ‖p62 − p66‖ / ‖p60 − p64‖.
    public var mouthAspect: Double
    /// Nose tip (30) along the outer-eye-corner line, relative to the eye distance. Positive: the nose
    /// is toward the image's right (the subject turned to their own left, in an unmirrored frame).
    public var yaw: Double
    /// Nose tip below the eye line, relative to the eye distance (shrinks when the face is
    /// foreshortened vertically, e.g. a tilted print).
    public var pitch: Double
    /// In-plane rotation of the eye line, radians.
    public var roll: Double
    /// Distance between the outer eye corners (36, 45), in pixels.
    public var interocular: Double

    /// Mean of both eyes' aspect ratios.
    public var eyeAspect: Double { (eyeAspectLeft + eyeAspectRight) / 2 }

    /// The landmark count the features need.
    public static let requiredPoints = 68

    /// Features of one 68-point shape; nil when the shape has another size or degenerate eyes.
    public init?(landmarks p: [Point2D]) {
        guard p.count == Self.requiredPoints else { return nil }
        func ear(_ a: Int) -> Double? {
            let width = p[a].distance(to: p[a + 3])
            guard width > 0 else { return nil }
            return (p[a + 1].distance(to: p[a + 5]) + p[a + 2].distance(to: p[a + 4])) / (2 * width)
        }
        guard let left = ear(36), let right = ear(42) else { return nil }
        let outerLeft = p[36], outerRight = p[45]
        let d = outerLeft.distance(to: outerRight)
        guard d > 0 else { return nil }
        let ux = (outerRight.x - outerLeft.x) / d, uy = (outerRight.y - outerLeft.y) / d
        let nx = -uy, ny = ux
        let mx = (outerLeft.x + outerRight.x) / 2, my = (outerLeft.y + outerRight.y) / 2
        let nose = p[30]
        let mouthWidth = p[60].distance(to: p[64])
        eyeAspectLeft = left
        eyeAspectRight = right
        mouthAspect = mouthWidth > 0 ? p[62].distance(to: p[66]) / mouthWidth : 0
        yaw = ((nose.x - mx) * ux + (nose.y - my) * uy) / d
        pitch = ((nose.x - mx) * nx + (nose.y - my) * ny) / d
        roll = atan2(uy, ux)
        interocular = d
    }
}

/// Rough head pose from the 5-point model (eye corners and nose base), for rejecting extreme poses at
/// capture time. Same eye-line frame as `FaceFeatures`, with the nose base instead of the nose tip.
public struct FivePointPose: Sendable, Equatable {
    /// Nose base along the eye line, relative to the outer-eye distance (0 when frontal).
    public var yaw: Double
    /// Nose base below the eye line, relative to the outer-eye distance (about 0.55 when frontal).
    public var pitch: Double
    /// In-plane rotation, radians.
    public var roll: Double
    /// Distance between the outer eye corners, pixels.
    public var interocular: Double

    /// The pose of a 5-point shape (0 = outer corner of the image-right eye, 2 = outer corner of the
    /// image-left eye, 4 = nose base); nil for another size or coincident eye corners.
    public init?(landmarks5 p: [Point2D]) {
        guard p.count == 5 else { return nil }
        let a = p[2], b = p[0]
        let d = a.distance(to: b)
        guard d > 0 else { return nil }
        let ux = (b.x - a.x) / d, uy = (b.y - a.y) / d
        let mx = (a.x + b.x) / 2, my = (a.y + b.y) / 2
        yaw = ((p[4].x - mx) * ux + (p[4].y - my) * uy) / d
        pitch = ((p[4].x - mx) * -uy + (p[4].y - my) * ux) / d
        roll = atan2(uy, ux)
        interocular = d
    }
}
