import Foundation
import Testing
@testable import FaceSealFace

/// Decoded pixels against the oracle's (Pillow with libjpeg-turbo) hashes of the same files.
@Suite struct ImageDecoderGoldenTests {
    @Test(arguments: ["golden_johns_aligned.json", "golden_johns_full.json", "golden_photos.json"])
    func decodedPixelsMatchTheOracle(fixture: String) throws {
        let golden = try FaceFixtures.golden(fixture)
        var mismatched: [String] = []
        for entry in golden.images {
            let image = try FaceFixtures.image(entry.file, pad: golden.params.edge_pad)
            #expect(image.width == entry.width && image.height == entry.height, "\(entry.file)")
            for s in entry.rgb_samples {
                let p = image.pixel(x: s[0], y: s[1])
                #expect([Int(p.r), Int(p.g), Int(p.b)] == Array(s[2...4]), "\(entry.file) at (\(s[0]), \(s[1]))")
            }
            if TestSHA256.hex(image.pixels) != entry.rgb_sha256 { mismatched.append(entry.file) }
        }
        #expect(mismatched.isEmpty, "rgb_sha256 differs for \(mismatched)")
    }
}
