/// A face found by a detector, as the capture pipeline consumes it. (The MMOD network's own result type
/// is `FaceDetection`; its `FaceDetecting` conformance maps one to the other.)
public struct DetectedFace: Sendable, Hashable {
    /// The face box (dlib rectangle: inclusive edges, may extend past the image).
    public var rect: FaceRect
    /// The detector's score (for dlib's MMOD CNN, the score-map value; higher is surer).
    public var confidence: Double

    /// A detection.
    public init(rect: FaceRect, confidence: Double) {
        self.rect = rect
        self.confidence = confidence
    }
}

/// Finds faces in an image. The MMOD CNN detector (`Network/FaceDetector`) conforms through a small
/// adapter (its `detect(in:threshold:)` has a defaulted parameter and returns `FaceDetection`); tests
/// use fakes.
public protocol FaceDetecting: Sendable {
    /// Every face found, in any order.
    func detectFaces(in image: RGBImage) throws -> [DetectedFace]
}

/// Computes the identity embedding of an aligned 150×150 chip. The ResNet (`Network/FaceEmbedder`,
/// whose `embedding(of:)` has this signature) conforms with an empty extension (128 floats, compared by
/// Euclidean distance); tests use fakes.
public protocol FaceEmbedding: Sendable {
    /// The embedding of `chip`, which is `FaceAligner.chipSize` square.
    func embedding(of chip: RGBImage) throws -> [Float]
}

/// Places landmarks in a face box. `ShapePredictor` conforms.
public protocol FaceLandmarking: Sendable {
    /// How many points `landmarks(in:box:)` returns (5 or 68).
    var pointCount: Int { get }
    /// The landmarks of the face in `box`.
    func landmarks(in image: RGBImage, box: FaceRect) -> [Point2D]
}

extension ShapePredictor: FaceLandmarking {
    /// `predict(in:box:)`.
    public func landmarks(in image: RGBImage, box: FaceRect) -> [Point2D] { predict(in: image, box: box) }
}
