import Foundation
import Testing
@testable import FaceSealFace

/// The capture pipeline with fake detector/embedder (the CNNs plug in through the same protocols)
/// and the real shape predictors and alignment.
@Suite struct FaceCaptureSessionTests {
    /// Returns fixed detections, whatever the image.
    struct FixedDetector: FaceDetecting {
        var detections: [DetectedFace]
        func detectFaces(in image: RGBImage) throws -> [DetectedFace] { detections }
    }

    struct FailingDetector: FaceDetecting {
        struct Broken: Error {}
        func detectFaces(in image: RGBImage) throws -> [DetectedFace] { throw Broken() }
    }

    /// A deterministic stand-in for the ResNet: 128 values from the chip's digest.
    struct DigestEmbedder: FaceEmbedding {
        func embedding(of chip: RGBImage) throws -> [Float] {
            var state = chip.contentDigest
            return (0..<128).map { _ in
                state = state &* 6364136223846793005 &+ 1442695040888963407
                return Float(state >> 40) / Float(1 << 24) * 0.1
            }
        }
    }

    /// Landmarks given by the test.
    struct FixedLandmarks: FaceLandmarking {
        var points: [Point2D]
        var pointCount: Int { points.count }
        func landmarks(in image: RGBImage, box: FaceRect) -> [Point2D] { points }
    }

    static func goldenFace(_ file: String, face: Int? = nil) throws -> Golden.HogFace {
        let golden = try FaceFixtures.golden("golden_photos.json")
        let entry = try #require(golden.images.first { $0.file == file })
        return try #require(entry.hog_faces)[face ?? entry.primary_face!]
    }

    func session(detections: [DetectedFace], with68: Bool = false) throws -> FaceCaptureSession {
        FaceCaptureSession(detector: FixedDetector(detections: detections),
                           landmarks5: try FaceFixtures.shapePredictor(points: 5),
                           landmarks68: with68 ? try FaceFixtures.shapePredictor(points: 68) : nil,
                           embedder: DigestEmbedder())
    }

    @Test func imageFileGoesThroughLandmarksAndAlignmentLikeDlib() throws {
        let face = try Self.goldenFace("fr/obama.jpg")
        var capture = try session(detections: [DetectedFace(rect: face.faceRect, confidence: 1)], with68: true)
        let captured = try capture.addImageFile(atPath: try FaceFixtures.requireFile(FaceFixtures.imagePath("fr/obama.jpg")), timestamp: 0)
        #expect(captured.landmarks5 == face.points5)
        #expect(captured.landmarks68?.map { [Int($0.x), Int($0.y)] } == face.landmarks68)
        #expect(TestSHA256.hex(captured.chip.pixels) == face.chip.sha256)
        #expect(abs(captured.pose.yaw) < 0.1)
        let embedding = try capture.embedding(ofFrame: 0)
        #expect(embedding == (try DigestEmbedder().embedding(of: captured.chip)))
        let match = try capture.match(templates: [embedding])
        #expect(match.isMatch && match.averageDistance == 0)
    }

    @Test func noFace() throws {
        var capture = try session(detections: [])
        #expect(throws: FaceCaptureError.noFace(frame: 0)) { try capture.add(image: try RGBImage(width: 64, height: 64), timestamp: 0) }
        #expect(capture.faces.isEmpty && capture.framesOffered == 1)
    }

    @Test func severalFaces() throws {
        let golden = try FaceFixtures.golden("golden_photos.json")
        let entry = try #require(golden.images.first { $0.file == "faces/bald_guys.jpg" })
        let detections = try #require(entry.hog_faces).map { DetectedFace(rect: $0.faceRect, confidence: 1) }
        var capture = try session(detections: detections)
        #expect(throws: FaceCaptureError.multipleFaces(frame: 0, count: 24)) {
            try capture.addImageFile(atPath: try FaceFixtures.requireFile(FaceFixtures.imagePath("faces/bald_guys.jpg")), timestamp: 0)
        }
    }

    @Test func faceTooSmall() throws {
        let face = try Self.goldenFace("faces/2008_004176.jpg")   // a 37-px face in a VOC photo
        var capture = try session(detections: [DetectedFace(rect: face.faceRect, confidence: 1)])
        #expect(throws: FaceCaptureError.faceTooSmall(frame: 0, size: 37, minimum: FaceCapturePolicy().minFaceSize)) {
            try capture.addImageFile(atPath: try FaceFixtures.requireFile(FaceFixtures.imagePath("faces/2008_004176.jpg")), timestamp: 0)
        }
    }

    @Test func extremePose() throws {
        let image = try RGBImage(width: 400, height: 400)
        let box = FaceRect(left: 100, top: 100, right: 299, bottom: 299)
        func capture(_ points: [Point2D]) -> FaceCaptureSession {
            FaceCaptureSession(detector: FixedDetector(detections: [DetectedFace(rect: box, confidence: 1)]),
                               landmarks5: FixedLandmarks(points: points), embedder: DigestEmbedder())
        }
        // Frontal: outer corners 100 px apart, nose base 55 px below their midpoint.
        let frontal = [Point2D(x: 250, y: 180), Point2D(x: 225, y: 182), Point2D(x: 150, y: 180), Point2D(x: 175, y: 182), Point2D(x: 200, y: 235)]
        var ok = capture(frontal)
        #expect(try ok.add(image: image, timestamp: 0).chip.width == 150)
        var turned = capture(frontal.enumerated().map { $0.offset == 4 ? Point2D(x: 245, y: 235) : $0.element })
        #expect {
            try turned.add(image: image, timestamp: 0)
        } throws: { error in
            guard case let .extremePose(frame: 0, yaw: yaw, pitch: _, rollDegrees: _)? = error as? FaceCaptureError else { return false }
            return abs(yaw - 0.45) < 1e-9
        }
        let rolled = frontal.map { p in Point2D(x: 200 + (p.x - 200) * cos(0.8) - (p.y - 200) * sin(0.8), y: 200 + (p.x - 200) * sin(0.8) + (p.y - 200) * cos(0.8)) }
        var tilted = capture(rolled)
        #expect {
            try tilted.add(image: image, timestamp: 0)
        } throws: { error in
            guard case let .extremePose(frame: 0, yaw: _, pitch: _, rollDegrees: roll)? = error as? FaceCaptureError else { return false }
            return abs(roll - 0.8 * 180 / .pi) < 1e-6
        }
    }

    @Test func unreadableImages() throws {
        var capture = try session(detections: [])
        #expect(throws: FaceCaptureError.unreadableImage(path: "/nonexistent.jpg", reason: .unreadable(path: "/nonexistent.jpg"))) {
            try capture.addImageFile(atPath: "/nonexistent.jpg", timestamp: 0)
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("faceseal-capture-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let text = dir.appendingPathComponent("notes.jpg")
        try Data("not an image".utf8).write(to: text)
        #expect(throws: FaceCaptureError.unreadableImage(path: text.path, reason: .unknownFormat)) {
            try capture.addImageFile(atPath: text.path, timestamp: 1)
        }
        let jpeg = try Data(contentsOf: FaceFixtures.directory.appendingPathComponent("gradient_48x32.jpg"))
        let cut = dir.appendingPathComponent("cut.jpg")
        try jpeg.prefix(300).write(to: cut)
        #expect {
            try capture.addImageFile(atPath: cut.path, timestamp: 2)
        } throws: { error in
            if case .unreadableImage(path: cut.path, reason: .corrupt(format: .jpeg, detail: _))? = error as? FaceCaptureError { return true }
            return false
        }
        #expect(capture.framesOffered == 3)
        #expect(capture.rejections.map(\.frame) == [0, 1, 2])
    }

    @Test func timestampsMustIncreaseAndDetectorErrorsAreReported() throws {
        let face = try Self.goldenFace("grace_hopper_512x512.jpg")
        let image = try FaceFixtures.image("grace_hopper_512x512.jpg")
        var capture = try session(detections: [DetectedFace(rect: face.faceRect, confidence: 1)])
        try capture.add(image: image, timestamp: 1)
        #expect(throws: FaceCaptureError.timestampNotIncreasing(frame: 1)) { try capture.add(image: image, timestamp: 1) }
        var failing = FaceCaptureSession(detector: FailingDetector(), landmarks5: try FaceFixtures.shapePredictor(points: 5), embedder: DigestEmbedder())
        #expect(throws: FaceCaptureError.detectorFailed("Broken()")) { try failing.add(image: image, timestamp: 0) }
    }

    @Test func stillImageRepeatedAsFramesFailsLiveness() throws {
        // The same photo file fed as a 30 fps stream: identical frames, caught before any challenge.
        let face = try Self.goldenFace("grace_hopper_512x512.jpg")
        var capture = try session(detections: [DetectedFace(rect: face.faceRect, confidence: 1)], with68: true)
        let path = try FaceFixtures.requireFile(FaceFixtures.imagePath("grace_hopper_512x512.jpg"))
        var source = ImageFileFrameSource(paths: Array(repeating: path, count: 8))
        try capture.addFrames(from: &source)
        #expect(capture.faces.count == 8)
        #expect(capture.faces[7].timestamp > capture.faces[6].timestamp)
        var policy = LivenessPolicy()
        policy.minInterocular = 60    // Grace Hopper's eyes are 90 px apart; the limit is not what fails here
        #expect(throws: LivenessFailure.repeatedFrames(frame: 1)) {
            try capture.verifyLiveness(nonce: Array(repeating: 5, count: 32), evaluator: LivenessEvaluator(policy: policy))
        }
        let spread = try capture.embeddings(maxFrames: 3)
        #expect(spread.count == 3)
        #expect(FaceCaptureSession.spread(count: 8, maxFrames: 3) == [0, 3, 7])
    }

    @Test func aFrameWithSeveralFacesFailsLiveness() throws {
        struct SwitchingDetector: FaceDetecting {
            let one: DetectedFace
            func detectFaces(in image: RGBImage) throws -> [DetectedFace] {
                // A second person appears in frames whose top-left pixel is white.
                image.pixel(x: 0, y: 0) == (255, 255, 255) ? [one, DetectedFace(rect: FaceRect(left: 0, top: 0, right: 99, bottom: 99), confidence: 1)] : [one]
            }
        }
        let face = try Self.goldenFace("grace_hopper_512x512.jpg")
        let image = try FaceFixtures.image("grace_hopper_512x512.jpg")
        var marked = image
        marked.pixels[0] = 255; marked.pixels[1] = 255; marked.pixels[2] = 255
        var capture = FaceCaptureSession(detector: SwitchingDetector(one: DetectedFace(rect: face.faceRect, confidence: 1)),
                                         landmarks5: try FaceFixtures.shapePredictor(points: 5),
                                         landmarks68: try FaceFixtures.shapePredictor(points: 68), embedder: DigestEmbedder())
        try capture.add(image: image, timestamp: 0)
        #expect(throws: FaceCaptureError.multipleFaces(frame: 1, count: 2)) { try capture.add(image: marked, timestamp: 0.033) }
        #expect(capture.rejections == [FrameRejection(frame: 1, timestamp: 0.033, error: .multipleFaces(frame: 1, count: 2))])
        #expect(throws: LivenessFailure.faceCount(frame: 1, count: 2)) { try capture.verifyLiveness(nonce: Array(repeating: 9, count: 32)) }
    }

    @Test func livenessNeedsThe68PointModel() throws {
        let face = try Self.goldenFace("grace_hopper_512x512.jpg")
        var capture = try session(detections: [DetectedFace(rect: face.faceRect, confidence: 1)])
        try capture.add(image: try FaceFixtures.image("grace_hopper_512x512.jpg"), timestamp: 0)
        #expect(throws: FaceCaptureError.landmarks68Unavailable) { try capture.livenessFrames() }
    }
}

@Suite struct FaceAssetsTests {
    @Test func pathsFollowTheCacheVariable() {
        #expect(FaceAssets.path(of: .landmarks5, environment: ["FACESEAL_CACHE": "/tmp/fs"]) == "/tmp/fs/models/shape_predictor_5_face_landmarks.dat")
        #expect(FaceAssets.imagePath("fr/obama.jpg", environment: ["FACESEAL_CACHE": "/tmp/fs"]) == "/tmp/fs/images/fr/obama.jpg")
        #expect(FaceAssets.cacheDirectory(environment: [:]).path.hasSuffix("/.cache/faceseal"))
        #expect(FaceAssets.Model.allCases.count == 4)
    }

    @Test func setUpScriptVerifiesTheSameHashes() throws {
        let script = try String(contentsOf: FaceFixtures.directory.deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/setup-face-assets.sh"), encoding: .utf8)
        for model in FaceAssets.Model.allCases {
            #expect(script.contains("[\(model.rawValue)]=\(model.sha256)"))
        }
    }
}
