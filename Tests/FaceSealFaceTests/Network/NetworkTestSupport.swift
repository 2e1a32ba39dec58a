import Foundation
import Testing
@testable import FaceSealFace

/// Where the tests find the models and images that set-up fetched (never committed), and the
/// committed golden fixtures.
enum NetworkTestSupport {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures")

    static var cache: URL {
        if let path = ProcessInfo.processInfo.environment["FACESEAL_CACHE"], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache/faceseal")
    }

    /// Under CI a missing asset is a failure; elsewhere the test is skipped.
    static var assetsRequired: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }

    static func model(_ name: String) -> URL { cache.appendingPathComponent("models").appendingPathComponent(name) }
    static func image(_ relative: String) -> URL { cache.appendingPathComponent("images").appendingPathComponent(relative) }

    static let resnetURL = model("dlib_face_recognition_resnet_model_v1.dat")
    static let mmodURL = model("mmod_human_face_detector.dat")

    /// `true` when every file exists; records an issue under CI when one is missing.
    static func available(_ urls: URL...) -> Bool {
        let missing = urls.filter { !FileManager.default.fileExists(atPath: $0.path) }
        if !missing.isEmpty && assetsRequired {
            Issue.record("missing assets (run scripts/setup-face-assets.sh): \(missing.map(\.path))")
        }
        return missing.isEmpty
    }

    static func fixtureJSON(_ name: String) throws -> [String: Any] {
        let data = try Data(contentsOf: fixtures.appendingPathComponent(name))
        return try #require(JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// Loaded once per test process: parsing the ResNet file is the slow part of a debug test run.
    static let embedder: Result<FaceEmbedder, any Error> = Result { try FaceEmbedder(modelURL: resnetURL) }
    static let detector: Result<FaceDetector, any Error> = Result { try FaceDetector(modelURL: mmodURL) }
}
