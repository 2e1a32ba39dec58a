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

/// Where and how large a detector looks for faces in a frame: what a capture session knows about its
/// frames lets the detector skip work (`FaceCapturePolicy.detection`).
public struct FaceSearch: Sendable, Hashable {
    /// Faces whose box side is below this (pixels) need not be found; 0 = every size the detector finds.
    /// A hint that saves work, not a filter: the caller still checks the sizes it gets.
    public var minimumFaceSize: Int
    /// Only faces in this part of the frame need be found; `nil` = the whole frame. Faces that overlap
    /// the region's edge may be found, with their boxes as they come out.
    public var region: FaceRect?

    /// A search.
    public init(minimumFaceSize: Int = 0, region: FaceRect? = nil) {
        self.minimumFaceSize = minimumFaceSize
        self.region = region
    }

    /// Every face anywhere in the frame.
    public static let everywhere = FaceSearch()
}

/// Finds faces in an image. The MMOD CNN detector (`Network/FaceDetector`) conforms; tests use fakes.
public protocol FaceDetecting: Sendable {
    /// Every face found, in any order.
    func detectFaces(in image: RGBImage) throws -> [DetectedFace]
    /// The faces `search` asks for. A detector may use it to do less work; the default searches
    /// everywhere and keeps the faces that overlap the search's region.
    func detectFaces(in image: RGBImage, search: FaceSearch) throws -> [DetectedFace]
}

extension FaceDetecting {
    /// Searches everywhere and keeps the faces that overlap `search.region`.
    public func detectFaces(in image: RGBImage, search: FaceSearch) throws -> [DetectedFace] {
        let found = try detectFaces(in: image)
        guard let region = search.region else { return found }
        return found.filter { $0.rect.intersection(region).area > 0 }
    }
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
