import Foundation
import Testing
@testable import FaceSealFace

/// Landmarks from the golden HOG boxes against dlib's, on the padded johns and the photos.
@Suite struct ShapePredictorGoldenTests {
    static let fixtures = ["golden_johns_full.json", "golden_photos.json"]

    @Test(arguments: fixtures)
    func fivePointLandmarksMatchDlib(fixture: String) throws {
        let predictor = try FaceFixtures.shapePredictor(points: 5)
        #expect(predictor.pointCount == 5 && predictor.cascadeCount == 15)
        let golden = try FaceFixtures.golden(fixture)
        var faces = 0, exact = 0, worst = 0.0
        for entry in golden.images {
            let image = try FaceFixtures.image(entry.file, pad: golden.params.edge_pad)
            for face in entry.hog_faces ?? [] {
                let points = predictor.predict(in: image, box: face.faceRect)
                let expected = face.points5
                let error = zip(points, expected).map { max(abs($0.x - $1.x), abs($0.y - $1.y)) }.max() ?? .infinity
                worst = max(worst, error)
                faces += 1
                if error == 0 { exact += 1 }
                #expect(error <= 1, "\(entry.file) face \(face.rect): \(points) vs \(expected)")
            }
        }
        #expect(faces > 50)
        // dlib is deterministic and the port follows it operation by operation: expect exact integers.
        #expect(exact == faces, "\(exact) of \(faces) exact, worst \(worst) px")
    }

    @Test func sixtyEightPointLandmarksMatchDlib() throws {
        let predictor = try FaceFixtures.shapePredictor(points: 68)
        #expect(predictor.pointCount == 68)
        let golden = try FaceFixtures.golden("golden_photos.json")
        var faces = 0, exact = 0
        for entry in golden.images {
            let image = try FaceFixtures.image(entry.file, pad: golden.params.edge_pad)
            for face in entry.hog_faces ?? [] {
                guard let expected = face.landmarks68 else { continue }
                let points = predictor.predict(in: image, box: face.faceRect)
                let error = zip(points, expected).map { max(abs($0.x - Double($1[0])), abs($0.y - Double($1[1]))) }.max() ?? .infinity
                faces += 1
                if error == 0 { exact += 1 }
                #expect(error <= 1, "\(entry.file) face \(face.rect)")
            }
        }
        #expect(faces > 50)
        #expect(exact == faces, "\(exact) of \(faces) exact")
    }
}
