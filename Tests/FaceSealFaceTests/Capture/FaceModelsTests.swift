import Foundation
import Testing
import FaceSealFace

/// The one loader of the face models: a missing or foreign file is a typed error naming it, and the cached models
/// load into a working capture session.
@Suite struct FaceModelsTests {
    @Test func aMissingModelIsNamedWithTheSetUpHint() throws {
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("faceseal-no-models-\(UUID().uuidString)")
        var reported: [String] = []
        #expect(throws: FaceModelsError.missing(path: empty.appendingPathComponent(FaceAssets.Model.mmod.rawValue).path)) {
            try FaceModels.load(from: empty, progress: { reported.append($0) })
        }
        #expect(reported.count == 1)
        #expect(FaceModelsError.missing(path: "/m").description == "missing /m: run `make setup` first")
    }

    @Test func aFileThatIsNotAModelIsUnloadable() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("faceseal-bad-models-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let detector = directory.appendingPathComponent(FaceAssets.Model.mmod.rawValue)
        try Data("not a dlib network".utf8).write(to: detector)
        #expect {
            try FaceModels.load(from: directory)
        } throws: { error in
            guard case .unloadable(let path, _) = error as? FaceModelsError else { return false }
            return path == detector.path
        }
    }

    @Test(.enabled(if: NetworkTestSupport.available(NetworkTestSupport.resnetURL, NetworkTestSupport.mmodURL,
                                                    NetworkTestSupport.model(FaceAssets.Model.landmarks5.rawValue),
                                                    NetworkTestSupport.model(FaceAssets.Model.landmarks68.rawValue),
                                                    NetworkTestSupport.image("fr/obama.jpg"))))
    func theCachedModelsLoadIntoACaptureSession() throws {
        let full = try FaceModels.load(from: FaceAssets.modelDirectory())
        #expect(full.landmarks68 != nil)
        #expect(try FaceModels.load(from: FaceAssets.modelDirectory(), landmarks68: false).landmarks68 == nil)
        var session = full.captureSession()
        _ = try session.addImageFile(atPath: NetworkTestSupport.image("fr/obama.jpg").path, timestamp: 0)
        #expect(try session.embedding(ofFrame: 0).count == 128)
    }
}
