import Foundation
import Testing
@testable import FaceSealFace

/// dlib's own MMOD detections on the test photos (golden_photos.json `cnn_faces`, made by
/// reference/oracle/make_golden.py from dlib 20.0.1 with `cnn_face_detection_model_v1(img, 0)`).
@Suite struct NetworkDetectorGoldenTests {
    struct Expected {
        var rect: [Int]
        var confidence: Double
    }

    static func goldenPhotos() throws -> [(file: String, faces: [Expected])] {
        let golden = try NetworkTestSupport.fixtureJSON("golden_photos.json")
        let images = try #require(golden["images"] as? [[String: Any]])
        return try images.map { entry in
            let faces = try #require(entry["cnn_faces"] as? [[String: Any]]).map {
                Expected(rect: try #require($0["rect"] as? [Int]), confidence: try #require($0["confidence"] as? Double))
            }
            return (try #require(entry["file"] as? String), faces)
        }
    }

    static func iou(_ a: FaceDetection, _ b: [Int]) -> Double {
        let l = max(a.left, b[0]), t = max(a.top, b[1]), r = min(a.right, b[2]), btm = min(a.bottom, b[3])
        let inter = (r >= l && btm >= t) ? (r - l + 1) * (btm - t + 1) : 0
        let areaB = (b[2] - b[0] + 1) * (b[3] - b[1] + 1)
        return Double(inter) / Double(a.width * a.height + areaB - inter)
    }

    /// On every convolution path this CPU has.
    @Test(arguments: ConvolutionKernels.available)
    func detectionsMatchDlibOnTestPhotos(level: ConvolutionKernels.Level) throws {
        try ConvolutionKernels.$limit.withValue(level) { try detectionsMatchDlibOnTestPhotos() }
    }

    private func detectionsMatchDlibOnTestPhotos() throws {
        guard NetworkTestSupport.available(NetworkTestSupport.mmodURL, NetworkTestSupport.image("faces")) else { return }
        let detector = try NetworkTestSupport.detector.get()
        var exact = 0
        var total = 0
        for (file, expected) in try Self.goldenPhotos() {
            let url = NetworkTestSupport.image(file)
            guard NetworkTestSupport.available(url) else { continue }
            let image = try TestImageLoading.load(url)
            let found = try detector.detect(in: image)
            total += 1
            #expect(found.count == expected.count, "\(file): \(found.count) faces, dlib \(expected.count)")
            var allExact = found.count == expected.count
            for want in expected {
                let best = found.max { Self.iou($0, want.rect) < Self.iou($1, want.rect) }
                let overlap = best.map { Self.iou($0, want.rect) } ?? 0
                #expect(overlap >= 0.8, "\(file): dlib box \(want.rect) best IoU \(overlap)")
                if let best, [best.left, best.top, best.right, best.bottom] == want.rect,
                   abs(Double(best.confidence) - want.confidence) < 1e-3 {
                } else {
                    allExact = false
                }
            }
            if allExact { exact += 1 }
        }
        print("MMOD (\(ConvolutionKernels.active)): \(exact)/\(total) photos with identical boxes and scores")
        #expect(exact == total, "\(total - exact) photos whose boxes or scores differ from dlib's")
    }

    /// Skipping the finest levels keeps every face at least `minimumFaceSize` wide and finds no smaller one.
    /// The smaller canvas moves level borders, so a face may win on the neighbouring pyramid level: its
    /// box is then one step (×1.2) apart from dlib's, IoU (1/1.2)² ≈ 0.69.
    @Test(arguments: [100, 120, 200])
    func minimumFaceSizeKeepsTheLargerFaces(minimumFaceSize: Int) throws {
        guard NetworkTestSupport.available(NetworkTestSupport.mmodURL, NetworkTestSupport.image("faces")) else { return }
        let detector = try NetworkTestSupport.detector.get()
        #expect(FaceDetector.skippedLevels(minimumFaceSize: minimumFaceSize, window: 80) > 0)
        let photos = ["grace_hopper_512x512.jpg", "fr/obama.jpg", "faces/Tom_Cruise_avp_2014_4.jpg", "faces/2008_001322.jpg"]
        var checked = 0
        for (file, expected) in try Self.goldenPhotos() where photos.contains(file) {
            let url = NetworkTestSupport.image(file)
            guard NetworkTestSupport.available(url) else { continue }
            let found = try detector.detect(in: try TestImageLoading.load(url), minimumFaceSize: minimumFaceSize)
            for face in found {
                #expect(face.width >= minimumFaceSize * 4 / 5, "\(file): a \(face.width)-px face below the minimum")
            }
            for want in expected where want.rect[2] - want.rect[0] + 1 >= minimumFaceSize {
                let overlap = found.map { Self.iou($0, want.rect) }.max() ?? 0
                #expect(overlap >= 0.65, "\(file): dlib box \(want.rect) best IoU \(overlap)")
                checked += 1
            }
        }
        #expect(checked > 0)
    }
}
