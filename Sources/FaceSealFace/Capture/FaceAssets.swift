public import Foundation

/// Where `make setup` (scripts/setup-face-assets.sh) puts the dlib models and test images:
/// `$FACESEAL_CACHE`, or `~/.cache/faceseal` when unset.
public enum FaceAssets {
    /// The four dlib model files (CC0, from PyPI `face_recognition_models==0.3.0`).
    public enum Model: String, Sendable, CaseIterable {
        /// ResNet-29, 150×150 chip → 128-d embedding.
        case resnet = "dlib_face_recognition_resnet_model_v1.dat"
        /// MMOD CNN face detector.
        case mmod = "mmod_human_face_detector.dat"
        /// 5-point shape predictor (alignment).
        case landmarks5 = "shape_predictor_5_face_landmarks.dat"
        /// 68-point shape predictor (liveness).
        case landmarks68 = "shape_predictor_68_face_landmarks.dat"

        /// The file's sha256, as the set-up script verifies it.
        public var sha256: String {
            switch self {
            case .resnet: "55533b28a95800a551ba546ba62fe69625c7e95a7061c338adffead08719da30"
            case .mmod: "4cb19393e2fbaf2b1609a9319ad5386618c886a6234ec1b971f3e87c85d87fe6"
            case .landmarks5: "c4b1e9804792707d3a405c2c16a80a20269e6675021f64a41d30fffafbc41888"
            case .landmarks68: "fbdc2cb80eb9aa7a758672cbfdda32ba6300efe9b6e6c7a299ff7e736b11b92f"
            }
        }
    }

    /// The cache directory, from `environment["FACESEAL_CACHE"]` or the home directory.
    public static func cacheDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        if let path = environment["FACESEAL_CACHE"], !path.isEmpty { return URL(fileURLWithPath: path) }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache/faceseal")
    }

    /// The directory of the model files in the cache.
    public static func modelDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        cacheDirectory(environment: environment).appendingPathComponent("models")
    }

    /// The path of a model file in the cache (it exists once set-up has run).
    public static func path(of model: Model, environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        modelDirectory(environment: environment).appendingPathComponent(model.rawValue).path
    }

    /// The path of a test image in the cache, relative to `images/` (e.g. `fr/obama.jpg`).
    public static func imagePath(_ relative: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        cacheDirectory(environment: environment).appendingPathComponent("images").appendingPathComponent(relative).path
    }
}
