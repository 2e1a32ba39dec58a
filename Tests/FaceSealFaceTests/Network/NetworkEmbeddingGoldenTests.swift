import Foundation
import Testing
@testable import FaceSealFace

/// dlib's own embeddings of the `johns` chips (golden_johns_aligned.json, made by
/// reference/oracle/make_golden.py --aligned from dlib 20.0.1): ours must be within 1e-4 (L2), on every convolution
/// path this CPU has.
@Suite struct NetworkEmbeddingGoldenTests {
    @Test(arguments: ConvolutionKernels.available)
    func johnsChipsMatchDlib(level: ConvolutionKernels.Level) throws {
        try ConvolutionKernels.$limit.withValue(level) { try johnsChipsMatchDlib() }
    }

    private func johnsChipsMatchDlib() throws {
        guard NetworkTestSupport.available(NetworkTestSupport.resnetURL, NetworkTestSupport.image("johns")) else { return }
        let embedder = try NetworkTestSupport.embedder.get()
        let golden = try NetworkTestSupport.fixtureJSON("golden_johns_aligned.json")
        let images = try #require(golden["images"] as? [[String: Any]])
        #expect(images.count == 54)
        var worst: Float = 0
        for entry in images {
            let file = try #require(entry["file"] as? String)
            let expected = try #require(entry["embedding"] as? [Double]).map(Float.init)
            let chip = try TestImageLoading.load(NetworkTestSupport.image(file))
            let samples = try #require(entry["rgb_samples"] as? [[Int]])
            for s in samples {
                let i = (s[1] * chip.width + s[0]) * 3
                #expect(Array(chip.pixels[i..<(i + 3)]).map(Int.init) == Array(s[2...]), "decoder differs on \(file)")
            }
            let embedding = try embedder.embedding(of: chip)
            var sum: Float = 0
            for k in 0..<128 { sum += (embedding[k] - expected[k]) * (embedding[k] - expected[k]) }
            let distance = sum.squareRoot()
            worst = max(worst, distance)
            #expect(distance < 1e-4, "\(file): L2 \(distance) from dlib")
        }
        print("johns (\(ConvolutionKernels.active)): worst L2 distance from dlib \(worst)")
    }
}
