import Foundation

/// Why a frame could not be used. Every case names the frame index within the session.
public enum FaceCaptureError: Error, Equatable, Sendable {
    /// The image file could not be read or decoded.
    case unreadableImage(path: String?, reason: ImageError)
    /// No face was found.
    case noFace(frame: Int)
    /// More than one face was found; the capture must show exactly one person.
    case multipleFaces(frame: Int, count: Int)
    /// The face is smaller than the policy's minimum (side of the detection box, pixels).
    case faceTooSmall(frame: Int, size: Int, minimum: Int)
    /// The head is turned or tilted too far for a reliable embedding.
    case extremePose(frame: Int, yaw: Double, pitch: Double, rollDegrees: Double)
    /// Timestamps must strictly increase.
    case timestampNotIncreasing(frame: Int)
    /// The session already holds the policy's maximum number of frames.
    case tooManyFrames(limit: Int)
    /// A frame index outside the session.
    case noSuchFrame(Int)
    /// Liveness needs 68-point landmarks, and the session has no 68-point predictor.
    case landmarks68Unavailable
    /// The detector failed (its error, described).
    case detectorFailed(String)
    /// The embedding network failed (its error, described).
    case embeddingFailed(String)
}

/// How a capture session looks for faces in its frames.
public enum FaceDetectionRange: Sendable, Equatable {
    /// Selfie frames, where the user fills much of the frame: faces smaller than the policy's
    /// `minFaceSize` are not looked for (the detector skips the finer scales), and once a face is found
    /// the next frames are searched around it, at its scale (`FaceCapturePolicy.tracking`).
    case selfie
    /// Every face the detector can find (80 px and up), anywhere in every frame: for enrolment photos.
    case fullRange
}

/// How a selfie capture follows the face from one frame to the next.
public struct FaceTracking: Sendable, Equatable {
    /// The previous accepted frame's face is searched for again only when it is at most this many
    /// seconds old.
    public var maxGap = 0.5
    /// The searched region: the previous face box grown by this many box sides on every side.
    public var margin = 1.0
    /// Faces smaller than this fraction of the previous face are not looked for in the region.
    public var minScale = 2.0 / 3.0
    /// Every this many frames the whole frame is searched, whatever the previous frame showed, so that a
    /// second face coming into view is seen.
    public var wholeFrameInterval = 10

    /// The defaults.
    public init() {}
}

/// Quality limits for captured frames.
public struct FaceCapturePolicy: Sendable, Equatable {
    /// Smallest accepted face: the shorter side of the detection box, pixels. Small faces make
    /// unreliable embeddings: the closest impostor pair in the golden photos involves a 53-px face.
    /// 110 px keeps the detector's boxes of 115 px and up, which the 150-px `johns` chips give.
    public var minFaceSize = 110
    /// Selfie frames (the default) or enrolment photos.
    public var detection = FaceDetectionRange.selfie
    /// How a selfie capture follows the face.
    public var tracking = FaceTracking()
    /// Largest |yaw| of the 5-point pose (nose base along the eye line; frontal stills stay within 0.21).
    public var maxYaw = 0.35
    /// Accepted range of the 5-point pitch (nose base below the eye line; frontal stills 0.38–0.72).
    public var pitchRange = 0.25...1.0
    /// Largest in-plane rotation, degrees (frontal stills stay within 23°).
    public var maxRollDegrees = 35.0
    /// Most frames per session.
    public var maxFrames = 1800
    /// Decoder limits for image files.
    public var decoder = ImageDecoder()

    /// The defaults (a selfie capture).
    public init() {}

    /// The defaults with full-range detection, for enrolment photos.
    public static var enrolment: FaceCapturePolicy {
        var policy = FaceCapturePolicy()
        policy.detection = .fullRange
        return policy
    }
}

/// One accepted frame: where the face is and its aligned chip.
public struct CapturedFace: Sendable, Equatable {
    /// Seconds on the capture's monotonic clock.
    public var timestamp: Double
    /// The detection that was kept (the only one).
    public var detection: DetectedFace
    /// How the detector looked for it.
    public var search: FaceSearch
    /// dlib 5-point landmarks (used for alignment).
    public var landmarks5: [Point2D]
    /// dlib 68-point landmarks, when the session has that model (used for liveness).
    public var landmarks68: [Point2D]?
    /// The aligned 150×150 chip the embedding is computed from.
    public var chip: RGBImage
    /// The 5-point head pose.
    public var pose: FivePointPose
    /// `contentDigest` of the whole frame, to catch repeated frames.
    public var pixelDigest: UInt64
}

/// A frame the session refused.
public struct FrameRejection: Sendable, Equatable {
    /// Index among the offered frames.
    public var frame: Int
    /// Its timestamp.
    public var timestamp: Double
    /// Why it was refused.
    public var error: FaceCaptureError
}

/// A timed image, from a file, a camera or a test.
public struct TimedFrame: Sendable {
    /// Seconds on a monotonic clock.
    public var timestamp: Double
    /// The pixels.
    public var image: RGBImage

    /// A frame.
    public init(timestamp: Double, image: RGBImage) {
        self.timestamp = timestamp
        self.image = image
    }
}

/// A source of frames: image files now, a camera later.
public protocol FaceFrameSource {
    /// The next frame, or nil at the end.
    mutating func nextFrame() throws(FaceCaptureError) -> TimedFrame?
}

/// Frames read from image files, timestamped at a fixed interval.
public struct ImageFileFrameSource: FaceFrameSource {
    private var paths: ArraySlice<String>
    private var time: Double
    private let interval: Double
    private let decoder: ImageDecoder

    /// Files in order, the first at `start` seconds, then one every `interval` seconds.
    public init(paths: [String], start: Double = 0, interval: Double = 1.0 / 30, decoder: ImageDecoder = ImageDecoder()) {
        self.paths = paths[...]
        self.time = start
        self.interval = interval
        self.decoder = decoder
    }

    /// Decodes the next file.
    public mutating func nextFrame() throws(FaceCaptureError) -> TimedFrame? {
        guard let path = paths.popFirst() else { return nil }
        let image: RGBImage
        do { image = try decoder.decodeFile(atPath: path) } catch { throw .unreadableImage(path: path, reason: error) }
        defer { time += interval }
        return TimedFrame(timestamp: time, image: image)
    }
}

/// A capture: frames with timestamps, each checked (one face, large enough, not turned away), landmarked
/// and aligned; then embeddings, the liveness check and the match against enrolled templates.
///
/// The pipeline per frame is detect → 5-point landmarks → pose check → chip (dlib's alignment) and,
/// with a 68-point model, the 68 landmarks for liveness. Embeddings are computed on demand, because the
/// ResNet is the costly stage and liveness only needs a few frames embedded.
public struct FaceCaptureSession: Sendable {
    /// The face detector.
    public let detector: any FaceDetecting
    /// The 5-point landmark model (alignment).
    public let landmarks5: any FaceLandmarking
    /// The 68-point landmark model (liveness), if liveness is wanted.
    public let landmarks68: (any FaceLandmarking)?
    /// The embedding network.
    public let embedder: any FaceEmbedding
    /// Quality limits.
    public var policy: FaceCapturePolicy
    /// The accepted frames, in order.
    public private(set) var faces: [CapturedFace] = []
    /// Frames offered so far, accepted or not (the index errors refer to).
    public private(set) var framesOffered = 0
    /// The frames that were refused, in order, with the reason.
    public private(set) var rejections: [FrameRejection] = []
    /// Frames offered since the whole frame was last searched, and whether the frame before this one was
    /// accepted (selfie tracking follows only an unbroken run of accepted frames).
    private var framesSinceWholeSearch = 0
    private var previousFrameAccepted = false

    /// A session with its models.
    public init(detector: any FaceDetecting, landmarks5: any FaceLandmarking, landmarks68: (any FaceLandmarking)? = nil,
                embedder: any FaceEmbedding, policy: FaceCapturePolicy = FaceCapturePolicy()) {
        self.detector = detector
        self.landmarks5 = landmarks5
        self.landmarks68 = landmarks68
        self.embedder = embedder
        self.policy = policy
    }

    /// Checks and adds one raw frame (from a camera or a decoded file). A rejected frame is not
    /// stored; the error says why, and the session can go on with the next frame.
    @discardableResult
    public mutating func add(image: RGBImage, timestamp: Double) throws(FaceCaptureError) -> CapturedFace {
        let index = framesOffered
        framesOffered += 1
        do {
            let face = try accept(image: image, timestamp: timestamp, index: index)
            previousFrameAccepted = true
            return face
        } catch {
            previousFrameAccepted = false
            rejections.append(FrameRejection(frame: index, timestamp: timestamp, error: error))
            throw error
        }
    }

    private mutating func accept(image: RGBImage, timestamp: Double, index: Int) throws(FaceCaptureError) -> CapturedFace {
        guard faces.count < policy.maxFrames else { throw .tooManyFrames(limit: policy.maxFrames) }
        guard timestamp.isFinite, faces.last.map({ timestamp > $0.timestamp }) ?? true else {
            throw .timestampNotIncreasing(frame: index)
        }
        let (search, detections) = try findFaces(in: image, timestamp: timestamp)
        guard let detection = detections.first else { throw .noFace(frame: index) }
        guard detections.count == 1 else { throw .multipleFaces(frame: index, count: detections.count) }
        let size = min(detection.rect.width, detection.rect.height)
        guard size >= policy.minFaceSize else { throw .faceTooSmall(frame: index, size: size, minimum: policy.minFaceSize) }
        let points5 = landmarks5.landmarks(in: image, box: detection.rect)
        guard let pose = FivePointPose(landmarks5: points5) else {
            throw .extremePose(frame: index, yaw: .nan, pitch: .nan, rollDegrees: .nan)
        }
        let roll = pose.roll * 180 / .pi
        guard abs(pose.yaw) <= policy.maxYaw, policy.pitchRange.contains(pose.pitch), abs(roll) <= policy.maxRollDegrees else {
            throw .extremePose(frame: index, yaw: pose.yaw, pitch: pose.pitch, rollDegrees: roll)
        }
        let chip: RGBImage
        do { chip = try FaceAligner.chip(from: image, landmarks5: points5) } catch {
            throw .extremePose(frame: index, yaw: pose.yaw, pitch: pose.pitch, rollDegrees: roll)
        }
        let face = CapturedFace(timestamp: timestamp, detection: detection, search: search, landmarks5: points5,
                                landmarks68: landmarks68?.landmarks(in: image, box: detection.rect),
                                chip: chip, pose: pose, pixelDigest: image.contentDigest)
        faces.append(face)
        return face
    }

    /// The detector's faces for one frame, and the search that found them: around the previous frame's
    /// face when the policy allows it and exactly one face lies inside that region, else the whole frame.
    private mutating func findFaces(in image: RGBImage, timestamp: Double) throws(FaceCaptureError) -> (FaceSearch, [DetectedFace]) {
        func run(_ search: FaceSearch) throws(FaceCaptureError) -> [DetectedFace] {
            do { return try detector.detectFaces(in: image, search: search) } catch { throw .detectorFailed("\(error)") }
        }
        guard policy.detection == .selfie else { return (.everywhere, try run(.everywhere)) }
        if let tracked = trackedSearch(timestamp: timestamp), let region = tracked.region {
            let found = try run(tracked)
            if found.count == 1, let box = found.first?.rect, box.left >= region.left, box.top >= region.top,
               box.right <= region.right, box.bottom <= region.bottom {
                framesSinceWholeSearch += 1
                return (tracked, found)
            }
        }
        framesSinceWholeSearch = 1
        let whole = FaceSearch(minimumFaceSize: policy.minFaceSize)
        return (whole, try run(whole))
    }

    /// The search around the previous accepted face, if it is recent and a whole-frame search is not due.
    private func trackedSearch(timestamp: Double) -> FaceSearch? {
        let tracking = policy.tracking
        guard previousFrameAccepted, let previous = faces.last, timestamp - previous.timestamp <= tracking.maxGap,
              framesSinceWholeSearch < tracking.wholeFrameInterval else { return nil }
        let box = previous.detection.rect
        let side = Double(max(box.width, box.height))
        let grow = Int((side * tracking.margin).rounded(.up))
        let region = FaceRect(left: box.left - grow, top: box.top - grow, right: box.right + grow, bottom: box.bottom + grow)
        return FaceSearch(minimumFaceSize: max(policy.minFaceSize, Int(side * tracking.minScale)), region: region)
    }

    /// Decodes and adds an image file (JPEG or PNG).
    @discardableResult
    public mutating func addImageFile(atPath path: String, timestamp: Double) throws(FaceCaptureError) -> CapturedFace {
        let image: RGBImage
        do { image = try policy.decoder.decodeFile(atPath: path) } catch {
            let failure = FaceCaptureError.unreadableImage(path: path, reason: error)
            rejections.append(FrameRejection(frame: framesOffered, timestamp: timestamp, error: failure))
            framesOffered += 1
            previousFrameAccepted = false
            throw failure
        }
        return try add(image: image, timestamp: timestamp)
    }

    /// Adds every frame of a source, stopping at the first rejected frame.
    public mutating func addFrames(from source: inout some FaceFrameSource) throws(FaceCaptureError) {
        while let frame = try source.nextFrame() {
            try add(image: frame.image, timestamp: frame.timestamp)
        }
    }

    /// The embedding of accepted frame `index` (runs the network).
    public func embedding(ofFrame index: Int) throws(FaceCaptureError) -> [Float] {
        guard faces.indices.contains(index) else { throw .noSuchFrame(index) }
        do { return try embedder.embedding(of: faces[index].chip) } catch { throw .embeddingFailed("\(error)") }
    }

    /// Embeddings of up to `maxFrames` accepted frames spread evenly over the session (all if fewer).
    public func embeddings(maxFrames: Int = 5) throws(FaceCaptureError) -> [[Float]] {
        try Self.spread(count: faces.count, maxFrames: maxFrames).map { index throws(FaceCaptureError) in try embedding(ofFrame: index) }
    }

    /// The frames as the liveness check sees them (needs the 68-point model).
    public func livenessFrames() throws(FaceCaptureError) -> [LivenessFrame] {
        try faces.map { face throws(FaceCaptureError) in
            guard let points = face.landmarks68 else { throw .landmarks68Unavailable }
            return LivenessFrame(timestamp: face.timestamp, landmarks: points, faceBox: face.detection.rect,
                                 faceCount: 1, pixelDigest: face.pixelDigest)
        }
    }

    /// Runs the liveness check for the request's `nonce` on this capture; identity continuity uses the
    /// session's embedder on the evaluator's chosen frames. Throws `FaceCaptureError.landmarks68Unavailable`
    /// without a 68-point model, otherwise `LivenessFailure`.
    /// A frame refused for showing several faces fails the check (`LivenessFailure.faceCount`, with the
    /// offered-frame index): someone else in view may be the one answering the challenge.
    public func verifyLiveness(nonce: [UInt8], evaluator: LivenessEvaluator = LivenessEvaluator()) throws -> LivenessEvidence {
        for rejection in rejections {
            if case let .multipleFaces(frame, count) = rejection.error { throw LivenessFailure.faceCount(frame: frame, count: count) }
        }
        let frames = try livenessFrames()
        return try evaluator.evaluate(frames: frames, nonce: nonce) { index in try embedding(ofFrame: index) }
    }

    /// Matches the capture against enrolled templates, on up to `maxFrames` frames spread over the session.
    /// Throws `FaceCaptureError` (embedding) or `FaceMatchError` (templates).
    public func match(templates: [[Float]], matcher: FaceMatcher = FaceMatcher(), maxFrames: Int = 5) throws -> FaceMatchResult {
        try matcher.match(frames: try embeddings(maxFrames: maxFrames), templates: templates)
    }

    static func spread(count: Int, maxFrames: Int) -> [Int] {
        guard count > 0, maxFrames > 0 else { return [] }
        guard count > maxFrames else { return Array(0..<count) }
        if maxFrames == 1 { return [0] }
        return (0..<maxFrames).map { ($0 * (count - 1)) / (maxFrames - 1) }
    }
}
