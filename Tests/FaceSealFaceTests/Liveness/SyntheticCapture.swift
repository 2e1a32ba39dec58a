import Foundation
@testable import FaceSealFace

/// Builds synthetic 30 fps liveness captures from one real 68-point shape (dlib's landmarks of
/// `fr/obama.jpg` in the golden fixture): per-frame jitter like a camera's, rounded to whole pixels as
/// dlib returns them, and blink / turn / mouth gestures applied to the geometry the features read.
struct SyntheticCapture {
    private(set) var frames: [LivenessFrame] = []
    /// The identity shown on each frame (0 = the user); the test's embedding oracle maps it to a vector.
    private(set) var identities: [Int] = []
    var fps = 30.0
    var jitter = 0.6
    var identity = 0
    private var time = 10.0
    private var noise: UInt64 = 0x1234_5678
    let base: [Point2D]

    init(base: [Point2D]) { self.base = base }

    static func obama() throws -> SyntheticCapture {
        let golden = try FaceFixtures.golden("golden_photos.json")
        let entry = golden.images.first { $0.file == "fr/obama.jpg" }!
        let face = entry.hog_faces![entry.primary_face!]
        return SyntheticCapture(base: face.landmarks68!.map { Point2D(x: Double($0[0]), y: Double($0[1])) })
    }

    private mutating func random() -> Double {
        noise = noise &* 6364136223846793005 &+ 1442695040888963407
        return Double(noise >> 11) / Double(1 << 53)
    }

    /// Appends one frame of `shape`, jittered and rounded.
    mutating func frame(_ shape: [Point2D], exact: Bool = false) {
        var points = shape
        if !exact {
            for i in points.indices {
                points[i].x = (points[i].x + (random() * 2 - 1) * jitter).rounded(.down)
                points[i].y = (points[i].y + (random() * 2 - 1) * jitter).rounded(.down)
            }
        }
        let xs = points.map(\.x), ys = points.map(\.y)
        let box = FaceRect(left: Int(xs.min()!), top: Int(ys.min()!), right: Int(xs.max()!), bottom: Int(ys.max()!))
        frames.append(LivenessFrame(timestamp: time, landmarks: points, faceBox: box))
        identities.append(identity)
        time += 1 / fps
    }

    mutating func rest(seconds: Double) {
        for _ in 0..<Int((seconds * fps).rounded()) { frame(base) }
    }

    /// Time passes without frames (a stalled capture).
    mutating func skip(seconds: Double) { time += seconds }

    /// Eye aspect ratios scaled by `factor`: lids move toward the corner line.
    static func eyes(_ shape: [Point2D], factor: Double) -> [Point2D] {
        var p = shape
        for a in [36, 42] {
            let lineY = (shape[a].y + shape[a + 3].y) / 2
            for k in [a + 1, a + 2, a + 4, a + 5] { p[k].y = lineY + (shape[k].y - lineY) * factor }
        }
        return p
    }

    /// The nose moved along the eye line by `delta` eye distances (the yaw proxy's change).
    static func yaw(_ shape: [Point2D], delta: Double) -> [Point2D] {
        var p = shape
        let d = shape[36].distance(to: shape[45])
        let ux = (shape[45].x - shape[36].x) / d, uy = (shape[45].y - shape[36].y) / d
        for k in 27...35 {
            p[k].x += delta * d * ux
            p[k].y += delta * d * uy
        }
        return p
    }

    /// The inner lower lip moved down so the mouth ratio rises by `rise`.
    static func mouth(_ shape: [Point2D], rise: Double) -> [Point2D] {
        var p = shape
        let width = shape[60].distance(to: shape[64])
        for k in [65, 66, 67, 56, 57, 58] { p[k].y += rise * width }
        return p
    }

    /// The whole shape scaled vertically about the eye line (a print tilted backwards).
    static func squashed(_ shape: [Point2D], factor: Double) -> [Point2D] {
        let lineY = (shape[36].y + shape[45].y) / 2
        return shape.map { Point2D(x: $0.x, y: lineY + ($0.y - lineY) * factor) }
    }

    /// The whole shape rotated in-plane about its centroid.
    static func rotated(_ shape: [Point2D], degrees: Double) -> [Point2D] {
        let a = degrees * .pi / 180
        let cx = shape.map(\.x).reduce(0, +) / Double(shape.count), cy = shape.map(\.y).reduce(0, +) / Double(shape.count)
        return shape.map {
            Point2D(x: cos(a) * ($0.x - cx) - sin(a) * ($0.y - cy) + cx, y: sin(a) * ($0.x - cx) + cos(a) * ($0.y - cy) + cy)
        }
    }

    mutating func perform(_ action: LivenessAction) {
        switch action {
        case .blink:
            for f in [0.7, 0.3, 0.15, 0.3, 0.7] { frame(Self.eyes(base, factor: f)) }
        case .turnLeft, .turnRight:
            let sign = action == .turnLeft ? 1.0 : -1.0
            for d in [0.05, 0.1, 0.15, 0.2, 0.22, 0.22, 0.2, 0.15, 0.1, 0.05] { frame(Self.yaw(base, delta: sign * d)) }
        case .openMouth:
            for r in [0.1, 0.2, 0.35, 0.4, 0.4, 0.3, 0.2, 0.05] { frame(Self.mouth(base, rise: r)) }
        }
    }

    /// A baseline, then each action followed by a pause.
    mutating func performAll(_ actions: [LivenessAction]) {
        rest(seconds: 0.8)
        for action in actions {
            perform(action)
            rest(seconds: 0.6)
        }
    }
}

/// Embedding oracle for synthetic captures: identity 0 is the user, others are strangers (about 1.0
/// apart, like different people in dlib's space); each frame gets a little noise (0.05).
struct SyntheticIdentities {
    static func vector(identity: Int, frame: Int) -> [Float] {
        var state = UInt64(identity + 1) &* 0x9E37_79B9_7F4A_7C15
        var out = [Float](repeating: 0, count: 128)
        for i in 0..<128 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            out[i] = Float(Double(state >> 11) / Double(1 << 53) - 0.5) * 0.15
        }
        var n = UInt64(frame + 7) &* 0xD1B5_4A32_D192_ED03
        for i in 0..<128 {
            n = n &* 6364136223846793005 &+ 1442695040888963407
            out[i] += Float(Double(n >> 11) / Double(1 << 53) - 0.5) * 0.008
        }
        return out
    }
}
