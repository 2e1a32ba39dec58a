import Dispatch
import Foundation
import Testing
@testable import FaceSealFace

/// One model instance serves concurrent callers (the SDK may detect in one task while it embeds in another), each
/// call splits its layers between the cores, and the scratch memory is reused from call to call: every result must
/// be bit-identical to the one a lone call gives, whatever runs at the same time and whatever ran before.
@Suite(.serialized) struct ConcurrentInferenceTests {
    static let chipFiles = ["johns/John_Salley/000179_02159509.jpg", "johns/John_Simm/000288_00470387.jpg"]
    static let photo = "grace_hopper_512x512.jpg"

    static var assetsPresent: Bool {
        NetworkTestSupport.available(NetworkTestSupport.mmodURL, NetworkTestSupport.resnetURL, NetworkTestSupport.image(photo),
                                     NetworkTestSupport.image(chipFiles[0]), NetworkTestSupport.image(chipFiles[1]))
    }

    static func chips() throws -> [RGBImage] {
        try chipFiles.map { try TestImageLoading.load(NetworkTestSupport.image($0)) }
    }

    /// A frame of the photo centred on its face (dlib's box: 191, 133, 355, 297), inside the photo.
    static func frame(width: Int, height: Int) throws -> RGBImage {
        let image = try TestImageLoading.load(NetworkTestSupport.image(photo))
        let x = min(max(273 - width / 2, 0), image.width - width), y = min(max(215 - height / 2, 0), image.height - height)
        return image.cropped(x: x, y: y, width: width, height: height)
    }

    /// Three threads embed chips while a fourth detects faces, all on the same two model instances, many times;
    /// every embedding and every detection equals the serial one bit for bit. The sequential OpenBLAS build, entered
    /// from two threads at once, sometimes computed garbage here (embeddings 0.4 from the right one).
    @Test(.enabled(if: assetsPresent))
    func concurrentEmbeddingsAndDetectionsEqualSerialOnes() throws {
        let embedder = try NetworkTestSupport.embedder.get()
        let detector = try NetworkTestSupport.detector.get()
        let chips = try Self.chips()
        let frame = try Self.frame(width: 320, height: 240)
        let expected = try chips.map { try embedder.embedding(of: $0) }
        let expectedFaces = try detector.detect(in: frame)
        #expect(expectedFaces.count == 1)
        let rounds = 6
        let failures = SyncBox<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for round in 0..<rounds {
                do {
                    if worker == 0 {
                        let faces = try detector.detect(in: frame)
                        if faces != expectedFaces { failures.withLock { $0.append("round \(round): detected \(faces), serially \(expectedFaces)") } }
                    } else {
                        let which = (worker + round) % chips.count
                        let embedding = try embedder.embedding(of: chips[which])
                        if embedding != expected[which] {
                            let distance = (try? FaceMatcher.distance(embedding, expected[which])) ?? .nan
                            failures.withLock { $0.append("worker \(worker) round \(round): embedding \(distance) from the serial one") }
                        }
                    }
                } catch {
                    failures.withLock { $0.append("worker \(worker) round \(round): \(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 } == [])
    }

    /// The workspaces are reused between calls and between frames of other sizes, their contents undefined: an
    /// embedding or a detection repeated after larger and smaller frames is bit-identical to the first.
    @Test(.enabled(if: assetsPresent))
    func resultsDoNotDependOnTheCallsBefore() throws {
        let embedder = try NetworkTestSupport.embedder.get()
        let detector = try NetworkTestSupport.detector.get()
        let chips = try Self.chips()
        let small = try Self.frame(width: 320, height: 240)
        let large = try Self.frame(width: 512, height: 512)
        let embedding = try embedder.embedding(of: chips[0])
        let faces = try detector.detect(in: small)
        #expect(faces.count == 1)
        _ = try detector.detect(in: large)
        #expect(try embedder.embedding(of: chips[0]) == embedding)
        #expect(try detector.detect(in: small) == faces)
        _ = try embedder.embedding(of: chips[1])
        _ = try detector.detect(in: large, minimumFaceSize: 110)
        #expect(try detector.detect(in: small) == faces)
        #expect(try embedder.embedding(of: chips[0]) == embedding)
    }
}
