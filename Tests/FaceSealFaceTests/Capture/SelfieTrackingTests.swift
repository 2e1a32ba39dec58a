import Testing
@testable import FaceSealFace

/// How a selfie capture asks the detector for faces: the minimum face size on every frame, the region
/// around the previous face on the frames that follow it, and the whole frame when tracking cannot be
/// trusted. The detector is a script; the real one on real images is in `SelfieDetectionTests`.
@Suite struct SelfieTrackingTests {
    /// Answers every search with the faces in view that overlap its region, and records the searches.
    final class ScriptedDetector: FaceDetecting {
        let inView: SyncBox<[DetectedFace]>
        let searches = SyncBox<[FaceSearch]>([])

        init(_ faces: [DetectedFace]) { inView = SyncBox(faces) }

        func show(_ faces: [DetectedFace]) { inView.withLock { $0 = faces } }
        func takeSearches() -> [FaceSearch] { searches.withLock { list in defer { list = [] }; return list } }

        func detectFaces(in image: RGBImage) throws -> [DetectedFace] { try detectFaces(in: image, search: .everywhere) }

        func detectFaces(in image: RGBImage, search: FaceSearch) throws -> [DetectedFace] {
            searches.withLock { $0.append(search) }
            let faces = inView.withLock { $0 }
            guard let region = search.region else { return faces }
            return faces.filter { $0.rect.intersection(region).area > 0 }
        }
    }

    /// A frontal face in a 200-px box at (100, 100): outer eye corners 100 px apart, the nose below them.
    static let box = FaceRect(left: 100, top: 100, right: 299, bottom: 299)
    static let frontal = [Point2D(x: 250, y: 180), Point2D(x: 225, y: 182), Point2D(x: 150, y: 180),
                          Point2D(x: 175, y: 182), Point2D(x: 200, y: 235)]
    static let whole = FaceSearch(minimumFaceSize: 110)
    /// Around `box`: grown by its side, faces of at least 2/3 of it.
    static let tracked = FaceSearch(minimumFaceSize: 133, region: FaceRect(left: -100, top: -100, right: 499, bottom: 499))

    static func face(_ rect: FaceRect) -> DetectedFace { DetectedFace(rect: rect, confidence: 1) }

    func session(_ detector: ScriptedDetector, policy: FaceCapturePolicy = FaceCapturePolicy()) -> FaceCaptureSession {
        FaceCaptureSession(detector: detector, landmarks5: FaceCaptureSessionTests.FixedLandmarks(points: Self.frontal),
                           embedder: FaceCaptureSessionTests.DigestEmbedder(), policy: policy)
    }

    @Test func followsTheFaceAndSearchesTheWholeFrameEveryTenthFrame() throws {
        let detector = ScriptedDetector([Self.face(Self.box)])
        var capture = session(detector)
        let image = try RGBImage(width: 640, height: 480)
        for frame in 0..<21 {
            let face = try capture.add(image: image, timestamp: Double(frame) / 30)
            let expected = frame % 10 == 0 ? Self.whole : Self.tracked
            #expect(detector.takeSearches() == [expected], "frame \(frame)")
            #expect(face.search == expected && face.detection.rect == Self.box)
        }
    }

    @Test func aFaceThatLeftTheRegionIsLookedForInTheWholeFrame() throws {
        let detector = ScriptedDetector([Self.face(Self.box)])
        var capture = session(detector)
        let image = try RGBImage(width: 1000, height: 800)
        try capture.add(image: image, timestamp: 0)
        _ = detector.takeSearches()
        let moved = FaceRect(left: 700, top: 500, right: 899, bottom: 699)
        detector.show([Self.face(moved)])
        let face = try capture.add(image: image, timestamp: 1.0 / 30)
        #expect(detector.takeSearches() == [Self.tracked, Self.whole])
        #expect(face.detection.rect == moved && face.search == Self.whole)
        // Cut by the region's edge: not trusted either.
        let edge = FaceRect(left: 350, top: 350, right: 549, bottom: 549)
        detector.show([Self.face(edge)])
        try capture.add(image: image, timestamp: 2.0 / 30)
        let around = FaceSearch(minimumFaceSize: 133, region: FaceRect(left: 500, top: 300, right: 1099, bottom: 899))
        #expect(detector.takeSearches() == [around, Self.whole])
    }

    @Test func aSecondFaceInTheRegionIsRefusedAndTheNextFrameSearchesEverywhere() throws {
        let detector = ScriptedDetector([Self.face(Self.box)])
        var capture = session(detector)
        let image = try RGBImage(width: 640, height: 480)
        try capture.add(image: image, timestamp: 0)
        detector.show([Self.face(Self.box), Self.face(FaceRect(left: 320, top: 120, right: 479, bottom: 279))])
        #expect(throws: FaceCaptureError.multipleFaces(frame: 1, count: 2)) { try capture.add(image: image, timestamp: 1.0 / 30) }
        detector.show([Self.face(Self.box)])
        try capture.add(image: image, timestamp: 2.0 / 30)
        #expect(detector.takeSearches() == [Self.whole, Self.tracked, Self.whole, Self.whole])
    }

    @Test func aGapInTimeOrARefusedFrameEndsTracking() throws {
        let detector = ScriptedDetector([Self.face(Self.box)])
        var capture = session(detector)
        let image = try RGBImage(width: 640, height: 480)
        try capture.add(image: image, timestamp: 0)
        try capture.add(image: image, timestamp: 0.6)
        try capture.add(image: image, timestamp: 0.7)
        detector.show([])
        #expect(throws: FaceCaptureError.noFace(frame: 3)) { try capture.add(image: image, timestamp: 0.8) }
        detector.show([Self.face(Self.box)])
        try capture.add(image: image, timestamp: 0.9)
        #expect(detector.takeSearches() == [Self.whole, Self.whole, Self.tracked, Self.tracked, Self.whole, Self.whole])
    }

    @Test func enrolmentPhotosAreSearchedEverywhereAtEverySize() throws {
        let detector = ScriptedDetector([Self.face(Self.box)])
        var capture = session(detector, policy: .enrolment)
        let image = try RGBImage(width: 640, height: 480)
        for frame in 0..<3 { try capture.add(image: image, timestamp: Double(frame) / 30) }
        #expect(detector.takeSearches() == [.everywhere, .everywhere, .everywhere])
    }
}
