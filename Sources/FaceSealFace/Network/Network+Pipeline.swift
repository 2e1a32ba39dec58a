/// The networks as the capture pipeline's stages (`FacePipelineProtocols.swift`).
extension FaceEmbedder: FaceEmbedding {}

extension FaceDetector: FaceDetecting {
    /// `detect(in:)` at dlib's default threshold, as `DetectedFace` values.
    public func detectFaces(in image: RGBImage) throws -> [DetectedFace] {
        try detect(in: image).map { $0.detectedFace }
    }

    /// `detect(in:minimumFaceSize:region:)` at dlib's default threshold: only the pyramid levels and the
    /// part of the image the search needs.
    public func detectFaces(in image: RGBImage, search: FaceSearch) throws -> [DetectedFace] {
        try detect(in: image, minimumFaceSize: search.minimumFaceSize, region: search.region).map { $0.detectedFace }
    }
}

extension FaceDetection {
    /// The box and score in the capture pipeline's type.
    public var detectedFace: DetectedFace {
        DetectedFace(rect: rect, confidence: Double(confidence))
    }

    /// The box as a dlib rectangle (inclusive edges).
    public var rect: FaceRect {
        FaceRect(left: left, top: top, right: right, bottom: bottom)
    }
}
