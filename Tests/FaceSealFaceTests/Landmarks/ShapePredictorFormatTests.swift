import Foundation
import Testing
@testable import FaceSealFace

/// The shape-predictor reader refuses damaged files with typed errors instead of crashing or
/// accepting them.
@Suite struct ShapePredictorFormatTests {
    static func modelBytes() throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: try FaceFixtures.requireFile(
            FaceFixtures.modelPath("shape_predictor_5_face_landmarks.dat")))))
    }

    @Test func parsesTheShippedFivePointModel() throws {
        let model = try ShapePredictor(bytes: try Self.modelBytes())
        #expect(model.pointCount == 5 && model.cascadeCount == 15)
        #expect(model.cascades.allSatisfy { $0.treeCount == 500 && $0.splitsPerTree == 15 && $0.anchors.count == 800 })
    }

    @Test func truncatedFileThrows() throws {
        let bytes = try Self.modelBytes()
        for cut in [0, 1, 5, 1000, bytes.count / 2, bytes.count - 1] {
            #expect(throws: FaceModelError.self) { try ShapePredictor(bytes: Array(bytes.prefix(cut))) }
        }
        #expect {
            try ShapePredictor(bytes: Array(bytes.prefix(bytes.count - 1)))
        } throws: { error in
            if case .truncated? = error as? FaceModelError { return true }
            return false
        }
    }

    @Test func trailingBytesThrow() throws {
        let bytes = try Self.modelBytes()
        #expect(throws: FaceModelError.trailingBytes(offset: bytes.count)) { try ShapePredictor(bytes: bytes + [0]) }
    }

    @Test func wrongVersionAndImpossibleCountsThrow() throws {
        var bytes = try Self.modelBytes()
        #expect(Array(bytes.prefix(2)) == [0x01, 0x01])   // version 1
        bytes[1] = 2
        #expect(throws: FaceModelError.malformed(offset: 0, reason: "shape_predictor version")) { try ShapePredictor(bytes: bytes) }
        var limits = ShapePredictor.Limits()
        limits.maxTrees = 100
        #expect {
            try ShapePredictor(bytes: try Self.modelBytes(), limits: limits)
        } throws: { error in
            if case .malformed(offset: _, reason: "500 trees")? = error as? FaceModelError { return true }
            return false
        }
        #expect(throws: FaceModelError.unreadable(path: "/nonexistent.dat")) { try ShapePredictor(contentsOfFile: "/nonexistent.dat") }
    }

    @Test func alignmentNeedsFivePoints() {
        #expect(throws: FaceAligner.AlignmentError.needsFivePoints(got: 68)) {
            try FaceAligner.chipDetails(landmarks5: Array(repeating: Point2D(x: 0, y: 0), count: 68))
        }
        #expect(throws: FaceAligner.AlignmentError.invalidParameters) {
            try FaceAligner.chipDetails(landmarks5: Array(repeating: Point2D(x: 0, y: 0), count: 5), size: 1)
        }
    }
}
