import Foundation
import Testing
@testable import FaceSealFace

/// JPEG and PNG decoding: formats, conversions to RGB, limits and typed errors.
@Suite struct ImageDecoderTests {
    let decoder = ImageDecoder()

    func fixture(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: FaceFixtures.directory.appendingPathComponent(name)))
    }

    @Test func decodesBaselineProgressiveAndGrayscaleJPEG() throws {
        let baseline = try decoder.decode(try fixture("gradient_48x32.jpg"))
        #expect(baseline.width == 48 && baseline.height == 32)
        #expect(TestSHA256.hex(baseline.pixels) == "4af7c8913fe7419015d86cba889782e360bb4f906a722c4dc4be1dc43c288abf")
        let progressive = try decoder.decode(try fixture("gradient_progressive_48x32.jpg"))
        #expect(progressive == baseline)
        let gray = try decoder.decode(try fixture("gray_48x32.jpg"))
        #expect(gray.width == 48 && gray.height == 32)
        #expect(TestSHA256.hex(gray.pixels) == "332345cd44519d99c7063cbd8ffadbd3d582e8f8ae4fce7c3a68bdae9fc80b49")
        let p = gray.pixel(x: 7, y: 3)
        #expect(p.r == p.g && p.g == p.b)
    }

    @Test func truncatedJPEGIsCorrupt() throws {
        let bytes = try fixture("gradient_48x32.jpg")
        #expect {
            try decoder.decode(Array(bytes.prefix(bytes.count / 2)))
        } throws: { error in
            guard case .corrupt(format: .jpeg, detail: let detail)? = error as? ImageError else { return false }
            return !detail.isEmpty
        }
        #expect(throws: ImageError.self) { try decoder.decode(Array(bytes.prefix(40))) }
        var damaged = bytes
        for i in 200..<260 { damaged[i] = 0xFF }
        #expect(throws: ImageError.self) { try decoder.decode(damaged) }
    }

    @Test func progressiveJPEGWithThousandsOfScansIsRefused() throws {
        // The last scan of a progressive file repeated 600 times: libjpeg only warns about the bogus
        // progression, and each scan costs a pass over the image, so the decoder caps the scan count.
        let bytes = try fixture("gradient_progressive_48x32.jpg")
        let lastScan = try #require((0..<(bytes.count - 1)).last { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xDA })
        let scan = bytes[lastScan..<(bytes.count - 2)]
        var hostile = Array(bytes[..<(bytes.count - 2)])
        for _ in 0..<600 { hostile += scan }
        hostile += [0xFF, 0xD9]
        #expect(throws: ImageError.unsupported(format: .jpeg, detail: "more than 500 scans")) { try decoder.decode(hostile) }
        // A handful of repeated scans is still decoded (the limit is far above real encoders' ~10).
        var mild = Array(bytes[..<(bytes.count - 2)])
        for _ in 0..<3 { mild += scan }
        mild += [0xFF, 0xD9]
        #expect(try decoder.decode(mild).width == 48)
    }

    @Test func unknownBytesAreRejected() {
        #expect(throws: ImageError.unknownFormat) { try decoder.decode([]) }
        #expect(throws: ImageError.unknownFormat) { try decoder.decode(Array("GIF89a......".utf8)) }
    }

    @Test func limitsAreEnforcedFromTheHeader() throws {
        let small = ImageDecoder(maxDimension: 40)
        #expect(throws: ImageError.tooLarge(width: 48, height: 32)) { try small.decode(try fixture("gradient_48x32.jpg")) }
        let fewPixels = ImageDecoder(maxPixels: 1000)
        #expect(throws: ImageError.tooLarge(width: 48, height: 32)) { try fewPixels.decode(try fixture("gradient_48x32.jpg")) }
        let tinyFile = ImageDecoder(maxEncodedBytes: 100)
        #expect(throws: ImageError.dataTooLarge(bytes: 892, limit: 100)) { try tinyFile.decode(try fixture("gradient_48x32.jpg")) }
        // A PNG declaring 100000 × 100000 pixels is refused before anything is allocated.
        var huge = TestPNG.encode(width: 1, height: 1, bitDepth: 8, colorType: 0, rows: [[0]])
        let ihdr = TestPNG.chunk("IHDR", TestPNG.be32(100_000) + TestPNG.be32(100_000) + [8, 0, 0, 0, 0])
        huge.replaceSubrange(8..<(8 + 25), with: ihdr)
        #expect(throws: ImageError.tooLarge(width: 100_000, height: 100_000)) { try decoder.decode(huge) }
    }

    @Test func decodesPNGVariantsToRGB() throws {
        let rgb = try decoder.decode(TestPNG.encode(width: 2, height: 1, bitDepth: 8, colorType: 2, rows: [[1, 2, 3, 4, 5, 6]]))
        #expect(rgb.pixels == [1, 2, 3, 4, 5, 6])
        let gray = try decoder.decode(TestPNG.encode(width: 2, height: 2, bitDepth: 8, colorType: 0, rows: [[10, 20], [30, 40]]))
        #expect(gray.pixels == [10, 10, 10, 20, 20, 20, 30, 30, 30, 40, 40, 40])
        let rgba = try decoder.decode(TestPNG.encode(width: 1, height: 1, bitDepth: 8, colorType: 6, rows: [[9, 8, 7, 0]]))
        #expect(rgba.pixels == [9, 8, 7])   // alpha dropped, not composited
        let palette = try decoder.decode(TestPNG.encode(width: 3, height: 1, bitDepth: 8, colorType: 3, rows: [[2, 0, 1]],
                                                         palette: [255, 0, 0, 0, 255, 0, 0, 0, 255]))
        #expect(palette.pixels == [0, 0, 255, 255, 0, 0, 0, 255, 0])
        let deep = try decoder.decode(TestPNG.encode(width: 1, height: 1, bitDepth: 16, colorType: 2, rows: [[0x12, 0x34, 0x56, 0x78, 0x9A, 0xBC]]))
        #expect(deep.pixels == [0x12, 0x56, 0x9A])   // high byte of each 16-bit sample
        let oneBit = try decoder.decode(TestPNG.encode(width: 8, height: 1, bitDepth: 1, colorType: 0, rows: [[0b1010_0000]]))
        #expect(oneBit.pixels.prefix(9) == [255, 255, 255, 0, 0, 0, 255, 255, 255])
    }

    @Test func brokenPNGIsCorrupt() {
        var png = TestPNG.encode(width: 2, height: 2, bitDepth: 8, colorType: 0, rows: [[10, 20], [30, 40]])
        png[png.count - 20] ^= 0xFF   // inside IDAT: bad CRC
        #expect {
            try decoder.decode(png)
        } throws: { error in
            if case .corrupt(format: .png, detail: _)? = error as? ImageError { return true }
            return false
        }
        let cut = TestPNG.encode(width: 2, height: 2, bitDepth: 8, colorType: 0, rows: [[10, 20], [30, 40]]).prefix(40)
        #expect(throws: ImageError.self) { try decoder.decode(Array(cut)) }
    }

    @Test func unreadableFile() {
        #expect(throws: ImageError.unreadable(path: "/nonexistent/face.jpg")) { try decoder.decodeFile(atPath: "/nonexistent/face.jpg") }
    }

    @Test func rgbImageValidatesItsShape() throws {
        #expect(throws: ImageError.invalidDimensions(width: 2, height: 2)) { try RGBImage(validatingWidth: 2, height: 2, pixels: [0, 0, 0]) }
        #expect(throws: ImageError.invalidDimensions(width: 0, height: 5)) { try RGBImage(width: 0, height: 5) }
        #expect(throws: ImageError.invalidDimensions(width: Int.max, height: 2)) { try RGBImage(width: Int.max, height: 2) }
        let gray = try RGBImage(width: 2, height: 1, grayscale: [7, 9])
        #expect(gray.pixels == [7, 7, 7, 9, 9, 9])
        #expect(gray.intensity(x: 1, y: 0) == 9)
    }

    @Test func pyramidDownMatchesTheFilterDefinition() throws {
        let w = 23, h = 17
        var pixels = [UInt8](repeating: 0, count: w * h * 3)
        var state: UInt32 = 7
        for i in pixels.indices {
            state = state &* 1_664_525 &+ 1_013_904_223
            pixels[i] = UInt8(truncatingIfNeeded: state >> 24)
        }
        let image = try RGBImage(validatingWidth: w, height: h, pixels: pixels)
        let down = image.pyramidDown2()
        #expect(down.width == (w - 3) / 2 && down.height == (h - 3) / 2)
        let k = [1, 4, 6, 4, 1]
        for r in 0..<down.height {
            for c in 0..<down.width {
                for ch in 0..<3 {
                    var sum = 0
                    for i in 0..<5 { for j in 0..<5 { sum += k[i] * k[j] * Int(pixels[((2 * r + i) * w + 2 * c + j) * 3 + ch]) } }
                    #expect(Int(down.pixels[(r * down.width + c) * 3 + ch]) == sum / 256)
                }
            }
        }
        #expect(try RGBImage(width: 8, height: 40).pyramidDown2().isEmpty)
    }
}
