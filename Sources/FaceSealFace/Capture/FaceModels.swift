public import Foundation

/// The dlib models a face engine runs on, each loaded once: the detector, the 5-point landmarks (alignment), the
/// 68-point landmarks (liveness; optional) and the ResNet embedder. Every host — `faceseal device`, the benchmarks,
/// the tests — loads them here, so a missing or damaged file reads the same everywhere.
public struct FaceModels: Sendable {
    /// The MMOD face detector.
    public let detector: FaceDetector
    /// The 5-point shape predictor.
    public let landmarks5: ShapePredictor
    /// The 68-point shape predictor, when loaded (liveness needs it; the pipeline stages do not).
    public let landmarks68: ShapePredictor?
    /// The ResNet-29 embedder.
    public let embedder: FaceEmbedder

    /// Loads the models from `directory` (by default the cache `make setup` fills), reporting each step on
    /// `progress`. `landmarks68: false` skips the 68-point model.
    public static func load(from directory: URL = FaceAssets.modelDirectory(), landmarks68: Bool = true,
                            progress: (String) -> Void = { _ in }) throws(FaceModelsError) -> FaceModels {
        func file(_ model: FaceAssets.Model) throws(FaceModelsError) -> URL {
            let url = directory.appendingPathComponent(model.rawValue)
            guard FileManager.default.isReadableFile(atPath: url.path) else { throw .missing(path: url.path) }
            return url
        }
        func loaded<Model>(_ model: FaceAssets.Model, _ make: (URL) throws -> Model) throws(FaceModelsError) -> Model {
            let url = try file(model)
            do { return try make(url) } catch { throw .unloadable(path: url.path, reason: "\(error)") }
        }
        progress("loading face models from \(directory.path)…")
        let started = Date()
        let detector = try loaded(.mmod) { try FaceDetector(modelURL: $0) }
        progress("  face detector (MMOD) loaded")
        let five = try loaded(.landmarks5) { try ShapePredictor(contentsOfFile: $0.path) }
        let sixtyEight = landmarks68 ? try loaded(.landmarks68) { try ShapePredictor(contentsOfFile: $0.path) } : nil
        progress(landmarks68 ? "  landmark models (5 and 68 points) loaded" : "  landmark model (5 points) loaded")
        let embedder = try loaded(.resnet) { try FaceEmbedder(modelURL: $0) }
        progress(String(format: "  face embedder (ResNet) loaded — %.1f s", Date().timeIntervalSince(started)))
        return FaceModels(detector: detector, landmarks5: five, landmarks68: sixtyEight, embedder: embedder)
    }

    /// A new capture session over these models (with the 68-point model when it was loaded).
    public func captureSession(policy: FaceCapturePolicy = FaceCapturePolicy()) -> FaceCaptureSession {
        FaceCaptureSession(detector: detector, landmarks5: landmarks5, landmarks68: landmarks68, embedder: embedder, policy: policy)
    }
}

/// Why the face models could not be loaded.
public enum FaceModelsError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A model file is not there (or not readable): set-up has not run.
    case missing(path: String)
    /// A model file is there but is not a model this engine reads.
    case unloadable(path: String, reason: String)

    public var description: String {
        switch self {
        case .missing(let path): "missing \(path): run `make setup` first"
        case .unloadable(let path, let reason): "cannot load the face model \(path): \(reason)"
        }
    }
}
