import Foundation
@testable import FaceSealFace

/// The golden fixtures (copied from the dlib oracle run, see Fixtures/README.md) and the model and
/// image cache that `make setup` fills (scripts/setup-face-assets.sh).
enum FaceFixtures {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures")

    static func modelPath(_ name: String) -> String {
        FaceAssets.cacheDirectory().appendingPathComponent("models/\(name)").path
    }
    static func imagePath(_ relative: String) -> String { FaceAssets.imagePath(relative) }

    struct MissingAsset: Error, CustomStringConvertible {
        let path: String
        var description: String { "missing \(path): run `make setup` (scripts/setup-face-assets.sh)" }
    }

    static func requireFile(_ path: String) throws -> String {
        guard FileManager.default.fileExists(atPath: path) else { throw MissingAsset(path: path) }
        return path
    }

    static func golden(_ name: String) throws -> Golden {
        let data = try Data(contentsOf: directory.appendingPathComponent(name))
        return try JSONDecoder().decode(Golden.self, from: data)
    }

    /// Decodes a cached test image the way the fixtures were made (with `edge_pad` applied).
    static func image(_ relative: String, pad: Int = 0) throws -> RGBImage {
        let image = try ImageDecoder().decodeFile(atPath: try requireFile(imagePath(relative)))
        return image.edgePadded(by: pad)
    }

    private static let predictorCache = PredictorCache()

    /// The shape predictors are parsed once per test process (the 68-point file is 100 MB).
    static func shapePredictor(points: Int) throws -> ShapePredictor {
        try predictorCache.get(points: points)
    }
}

private final class PredictorCache: Sendable {
    private let models = SyncBox<[Int: ShapePredictor]>([:])

    func get(points: Int) throws -> ShapePredictor {
        try models.withLock { models in
            if let model = models[points] { return model }
            let path = try FaceFixtures.requireFile(FaceFixtures.modelPath("shape_predictor_\(points)_face_landmarks.dat"))
            let model = try ShapePredictor(contentsOfFile: path)
            models[points] = model
            return model
        }
    }
}

import Synchronization

final class SyncBox<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        try mutex.withLock { try body(&$0) }
    }
}

/// The parts of `make_golden.py`'s JSON the tests read.
struct Golden: Decodable {
    struct Params: Decodable {
        let mode: String
        let edge_pad: Int
        let chip_sample_positions_xy: [[Int]]
    }
    struct ChipDetailsJSON: Decodable {
        let rect: [Double]
        let angle: Double
        let rows: Int
        let cols: Int
    }
    struct Chip: Decodable {
        let sha256: String
        let samples: [[Int]]
    }
    struct HogFace: Decodable {
        let rect: [Int]
        let landmarks5: [[Int]]
        let landmarks68: [[Int]]?
        let chip_details: ChipDetailsJSON
        let chip: Chip
        let embedding: [Float]?
    }
    struct Image: Decodable {
        let file: String
        let label: String?
        let width: Int
        let height: Int
        let rgb_sha256: String
        let rgb_samples: [[Int]]
        let embedding: [Float]?
        let hog_faces: [HogFace]?
        let primary_face: Int?
    }
    let params: Params
    let images: [Image]
    let pairs: [[Double]]
}

extension Golden.HogFace {
    var faceRect: FaceRect { FaceRect(left: rect[0], top: rect[1], right: rect[2], bottom: rect[3]) }
    var points5: [Point2D] { landmarks5.map { Point2D(x: Double($0[0]), y: Double($0[1])) } }
}
