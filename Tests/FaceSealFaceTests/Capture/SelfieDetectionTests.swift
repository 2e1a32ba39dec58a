import Foundation
import Testing
@testable import FaceSealFace

/// A selfie capture's detector skips the scales of faces below the minimum size and, on the frames that
/// follow a face, searches only around it. On the real images, that finds the same face as dlib's
/// full-range search and leads to the same match decision.
@Suite(.serialized) struct SelfieDetectionTests {
    static var assetsPresent: Bool {
        NetworkTestSupport.available(NetworkTestSupport.mmodURL, NetworkTestSupport.resnetURL, NetworkTestSupport.image("johns"))
    }

    struct Models {
        let detector: FaceDetector
        let landmarks: ShapePredictor
        let embedder: FaceEmbedder

        init() throws {
            detector = try NetworkTestSupport.detector.get()
            landmarks = try FaceFixtures.shapePredictor(points: 5)
            embedder = try NetworkTestSupport.embedder.get()
        }

        func session(_ policy: FaceCapturePolicy) -> FaceCaptureSession {
            FaceCaptureSession(detector: detector, landmarks5: landmarks, embedder: embedder, policy: policy)
        }

        /// The one face of a single-image capture, or the reason there is none.
        func capture(_ image: RGBImage, policy: FaceCapturePolicy) -> Result<CapturedFace, FaceCaptureError> {
            var capture = session(policy)
            return Result { () throws(FaceCaptureError) in try capture.add(image: image, timestamp: 0) }
        }
    }

    /// The `johns` chips, by person: the demo's capture frames.
    static func johns() throws -> [(person: String, file: String)] {
        let root = NetworkTestSupport.image("johns")
        return try FileManager.default.contentsOfDirectory(atPath: root.path).sorted().flatMap { person in
            try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(person).path).sorted()
                .map { (person, "johns/\(person)/\($0)") }
        }
    }

    /// A `width × height` crop of a photo around a point, inside the photo.
    static func frame(_ image: RGBImage, width: Int, height: Int, centre: (x: Int, y: Int)) -> RGBImage {
        let x = min(max(centre.x - width / 2, 0), image.width - width)
        let y = min(max(centre.y - height / 2, 0), image.height - height)
        return image.cropped(x: x, y: y, width: width, height: height)
    }

    @Test(.enabled(if: assetsPresent))
    func theSelfieSearchFindsTheFullRangeFaceAndMakesTheSameMatchDecision() throws {
        let models = try Models()
        let photos = try Self.johns()
        #expect(photos.count == 55)
        // Templates: full-range embeddings of each person's first three photos (enrolment).
        var templates: [String: [[Float]]] = [:]
        for (person, file) in photos where (templates[person]?.count ?? 0) < 3 {
            let face = try models.capture(try TestImageLoading.load(NetworkTestSupport.image(file)), policy: .enrolment).get()
            templates[person, default: []].append(try models.embedder.embedding(of: face.chip))
        }
        let matcher = FaceMatcher()
        var identical = 0, decisions = 0, worst = 0.0
        for (_, file) in photos {
            let image = try TestImageLoading.load(NetworkTestSupport.image(file))
            let full = try models.capture(image, policy: .enrolment).get()
            let selfie = try models.capture(image, policy: FaceCapturePolicy()).get()
            let overlap = full.detection.rect.iou(selfie.detection.rect)
            worst = max(worst, 1 - overlap)
            #expect(overlap >= 0.5, "\(file): full-range box \(full.detection.rect), selfie box \(selfie.detection.rect)")
            if full.detection.rect == selfie.detection.rect { identical += 1 }
            let fullEmbedding = try models.embedder.embedding(of: full.chip)
            let selfieEmbedding = try models.embedder.embedding(of: selfie.chip)
            for (person, enrolled) in templates.sorted(by: { $0.key < $1.key }) {
                let a = try matcher.match(frames: [fullEmbedding], templates: enrolled)
                let b = try matcher.match(frames: [selfieEmbedding], templates: enrolled)
                #expect(a.isMatch == b.isMatch, "\(file) against \(person): \(a.averageDistance) full range, \(b.averageDistance) selfie")
                decisions += 1
            }
        }
        #expect(decisions == 55 * 5)
        print("johns: \(identical)/\(photos.count) selfie boxes identical to full range, lowest IoU \(1 - worst)")
    }

    /// Camera-sized frames of the portraits, the face moving a few pixels a frame: after the first frame the
    /// face is searched around its last place, and found where the full-range search finds it.
    @Test(.enabled(if: assetsPresent), arguments: ["fr/obama.jpg", "fr/biden.jpg", "grace_hopper_512x512.jpg"])
    func aMovingFaceIsTrackedToTheFullRangeBox(photo: String) throws {
        let models = try Models()
        let image = try TestImageLoading.load(NetworkTestSupport.image(photo))
        let face = try #require(try models.detector.detect(in: image).first)
        let (width, height) = image.width >= 640 ? (640, 480) : (480, 360)
        var capture = models.session(FaceCapturePolicy())
        for step in 0..<4 {
            let frame = Self.frame(image, width: width, height: height,
                                   centre: ((face.left + face.right) / 2 + 7 * step, (face.top + face.bottom) / 2 + 3 * step))
            let captured = try capture.add(image: frame, timestamp: Double(step) / 30)
            #expect((captured.search.region != nil) == (step > 0), "\(photo) frame \(step): \(captured.search)")
            let full = try #require(try models.detector.detect(in: frame).first)
            #expect(captured.detection.rect.iou(full.rect) >= 0.8, "\(photo) frame \(step): \(captured.detection.rect) vs \(full.rect)")
            let fullChip = try FaceAligner.chip(from: frame, landmarks5: models.landmarks.predict(in: frame, box: full.rect))
            let distance = try FaceMatcher.distance(try models.embedder.embedding(of: captured.chip),
                                                    try models.embedder.embedding(of: fullChip))
            #expect(distance < 0.1, "\(photo) frame \(step): embedding \(distance) from the full-range one")
        }
    }
}
