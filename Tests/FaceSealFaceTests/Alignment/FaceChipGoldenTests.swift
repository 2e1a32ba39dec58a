import Foundation
import Testing
@testable import FaceSealFace

/// Chip geometry and pixels from dlib's landmarks, against dlib's get_face_chip_details / get_face_chip.
@Suite struct FaceChipGoldenTests {
    @Test(arguments: ["golden_johns_full.json", "golden_photos.json"])
    func chipsAreBitIdenticalToDlib(fixture: String) throws {
        let golden = try FaceFixtures.golden(fixture)
        var faces = 0, identical = 0
        for entry in golden.images {
            let image = try FaceFixtures.image(entry.file, pad: golden.params.edge_pad)
            for face in entry.hog_faces ?? [] {
                let details = try FaceAligner.chipDetails(landmarks5: face.points5)
                let g = face.chip_details
                let got = [details.rect.left, details.rect.top, details.rect.right, details.rect.bottom, details.angle]
                let want = g.rect + [g.angle]
                for (a, b) in zip(got, want) {
                    // The JSON keeps 9 significant digits.
                    #expect(abs(a - b) <= 1e-8 * max(1, abs(b)) * 10, "\(entry.file): \(got) vs \(want)")
                }
                #expect(details.rows == 150 && details.cols == 150)
                let chip = FaceAligner.extractChip(from: image, details: details)
                #expect(chip.width == 150 && chip.height == 150)
                for s in face.chip.samples {
                    let p = chip.pixel(x: s[0], y: s[1])
                    #expect([Int(p.r), Int(p.g), Int(p.b)] == Array(s[2...4]), "\(entry.file) chip at (\(s[0]), \(s[1]))")
                }
                faces += 1
                if TestSHA256.hex(chip.pixels) == face.chip.sha256 { identical += 1 }
            }
        }
        #expect(faces > 50)
        #expect(identical == faces, "\(identical) of \(faces) chips bit-identical")
    }
}
