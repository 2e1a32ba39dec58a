import Foundation
import Testing
@testable import FaceSealFace

/// Writes dlib's serialisation (dlib_format.md §1–2) so the tests can build small networks and
/// damage them on purpose.
struct DlibWriter {
    var bytes: [UInt8] = []

    mutating func int(_ value: Int) {
        var magnitude = value.magnitude
        var body: [UInt8] = []
        repeat {
            body.append(UInt8(magnitude & 0xFF))
            magnitude >>= 8
        } while magnitude > 0
        bytes.append(UInt8(body.count) | (value < 0 ? 0x80 : 0))
        bytes += body
    }

    mutating func bool(_ value: Bool) { bytes.append(value ? 0x31 : 0x30) }

    mutating func string(_ value: String) {
        int(value.utf8.count)
        bytes += Array(value.utf8)
    }

    /// float_details with an exact mantissa·2^exponent.
    mutating func real(_ mantissa: Int, _ exponent: Int) {
        int(mantissa)
        int(exponent)
    }

    mutating func tensor(_ shape: [Int], _ values: [Float]) {
        int(2)
        shape.forEach { int($0) }
        for v in values { withUnsafeBytes(of: v.bitPattern.littleEndian) { bytes += $0 } }
    }

    mutating func emptyTensor() { tensor([0, 0, 0, 0], []) }

    mutating func alias(_ shape: [Int]) {
        int(1)
        shape.forEach { int($0) }
    }

    mutating func trailer(innermost: Bool) {
        bool(true); bool(true); bool(false)
        emptyTensor(); emptyTensor()
        emptyTensor()                    // params_grad / grad_final
        if innermost { int(1) }          // sample_expansion_factor of a version-3 wrapper
    }
}

@Suite struct NetworkFileTests {
    static let convWeights: [Float] = (0..<(2 * 3 * 3 * 3)).map { Float($0 % 7 - 3) / 8 }
    static let convBias: [Float] = [0.25, -0.125]
    static let fcWeights: [Float] = (0..<(2 * 128)).map { Float($0 % 11 - 5) / 16 }

    /// input 4×4 → con 2×3×3×3 /1 pad 1 → relu → global avg_pool → fc 2→128 (no bias).
    static func tinyEmbedder() -> [UInt8] {
        var w = DlibWriter()
        w.int(1)
        w.string("loss_metric_2"); w.real(10_737_418, -28); w.real(5, -3)   // margin 0.04, threshold 0.625
        [2, 2, 2, 3].forEach { w.int($0) }                                   // fc, pool, relu, con (innermost)
        w.string("input_rgb_image_sized"); w.real(100, 0); w.real(50, 0); w.real(25, 0); w.int(4); w.int(4)
        w.string("con_4")
        w.tensor([1, 1, 1, 56], convWeights + convBias)
        [2, 3, 3, 1, 1, 1, 1].forEach { w.int($0) }
        w.alias([2, 3, 3, 3]); w.alias([1, 2, 1, 1])
        for _ in 0..<4 { w.real(1, 0) }
        w.trailer(innermost: true)
        w.string("relu_")
        w.trailer(innermost: false)
        w.string("avg_pool_2"); [0, 0, 1, 1, 0, 0].forEach { w.int($0) }
        w.trailer(innermost: false)
        w.string("fc_2"); w.int(128); w.int(2)
        w.tensor([1, 1, 1, 256], fcWeights)
        w.alias([2, 128, 1, 1]); w.alias([1, 128, 1, 1]); w.int(1)
        for _ in 0..<4 { w.real(1, 0) }
        w.trailer(innermost: false)
        return w.bytes
    }

    static let tinyChip = RGBImage(uncheckedWidth: 4, height: 4, pixels: (0..<48).map { UInt8(($0 * 37) % 256) })

    @Test func tinyNetworkParsesAndRunsLikeTheReferenceArithmetic() throws {
        let file = try DlibNetworkFile(bytes: Self.tinyEmbedder())
        #expect(file.layers.count == 4)
        guard case .metric(let margin, let threshold) = file.loss else { Issue.record("loss"); return }
        #expect(margin == 0.04 && threshold == 0.625)

        // Reference: normalise, naive conv + bias, ReLU, mean, then y_j = Σ_i x_i·W[i·128 + j].
        var input = FeatureMap(channels: 3, rows: 4, cols: 4)
        let means: [Float] = [100, 50, 25]
        for c in 0..<3 {
            for i in 0..<16 { input.values[c * 16 + i] = (Float(Self.tinyChip.pixels[3 * i + c]) - means[c]) / 256 }
        }
        let conv = DlibConvolution(filters: 2, channels: 3, kernelRows: 3, kernelCols: 3, strideY: 1, strideX: 1,
                                   padY: 1, padX: 1, weights: Self.convWeights, bias: Self.convBias)
        let activated = NetworkKernelTests.naive(input, conv, gamma: nil, beta: nil, relu: true)
        let pooled = (0..<2).map { f in activated.values[(f * 16)..<(f * 16 + 16)].reduce(0, +) / 16 }
        let expected = (0..<128).map { j in pooled[0] * Self.fcWeights[j] + pooled[1] * Self.fcWeights[128 + j] }

        let embedder = try FaceEmbedder(modelBytes: Self.tinyEmbedder())
        #expect(embedder.chipSize == 4 && embedder.distanceThreshold == 0.625)
        let got = try embedder.embedding(of: Self.tinyChip)
        #expect(got.count == 128)
        #expect(zip(got, expected).allSatisfy { abs($0 - $1) < 1e-6 })
    }

    @Test func everyTruncationIsATypedError() {
        let bytes = Self.tinyEmbedder()
        for length in 0..<bytes.count {
            do {
                _ = try DlibNetworkFile(bytes: Array(bytes[0..<length]))
                Issue.record("a file cut to \(length) of \(bytes.count) bytes parsed")
            } catch is FaceModelError {
            } catch is DlibNetworkError {
            } catch {
                Issue.record("untyped error \(error) at length \(length)")
            }
        }
    }

    @Test func trailingBytesAreRejected() {
        #expect(throws: DlibNetworkError.trailingBytes(count: 1)) {
            try DlibNetworkFile(bytes: Self.tinyEmbedder() + [0])
        }
    }

    @Test func unknownLayerRecordIsRejected() throws {
        var bytes = Self.tinyEmbedder()
        let name = Array("con_4".utf8)
        let at = try #require((0..<(bytes.count - name.count)).first { Array(bytes[$0..<($0 + name.count)]) == name })
        bytes[at + 4] = UInt8(ascii: "9")
        #expect(throws: DlibNetworkError.unsupportedRecord(name: "con_9", offset: at - 2)) {
            try DlibNetworkFile(bytes: bytes)
        }
    }

    @Test func oversizedTensorIsRejectedBeforeAllocating() throws {
        var w = DlibWriter()
        w.int(1)
        w.string("loss_metric_2"); w.real(1, 0); w.real(1, 0)
        w.int(3)
        w.string("input_rgb_image_sized"); w.real(1, 0); w.real(1, 0); w.real(1, 0); w.int(4); w.int(4)
        w.string("con_4")
        w.int(2); [1 << 20, 1 << 20, 1, 1].forEach { w.int($0) }
        #expect(throws: DlibNetworkError.self) { try DlibNetworkFile(bytes: w.bytes) }
    }

    @Test func badChipIsATypedError() throws {
        let embedder = try FaceEmbedder(modelBytes: Self.tinyEmbedder())
        #expect(throws: DlibNetworkError.self) {
            try embedder.embedding(of: RGBImage(uncheckedWidth: 5, height: 4, pixels: [UInt8](repeating: 0, count: 60)))
        }
        #expect(throws: DlibNetworkError.self) {
            try embedder.embedding(of: RGBImage(uncheckedWidth: 4, height: 4, pixels: [UInt8](repeating: 0, count: 47)))
        }
    }

    @Test func embedderRefusesADetectorFile() {
        var w = DlibWriter()
        w.int(1)
        w.string("loss_mmod_"); w.int(1); w.int(80); w.int(80)
        #expect(throws: (any Error).self) { try FaceEmbedder(modelBytes: w.bytes) }
    }

    // MARK: - The shipped model files (from the set-up cache)

    @Test func shippedResNetParsesToTheLastByte() throws {
        guard NetworkTestSupport.available(NetworkTestSupport.resnetURL) else { return }
        let file = try DlibNetworkFile(contentsOf: NetworkTestSupport.resnetURL)
        let convolutions = file.layers.filter { if case .convolution = $0 { return true } else { return false } }
        #expect(convolutions.count == 29)
        guard case .rgbImageSized(let mean, 150, 150) = file.input else { Issue.record("input \(file.input)"); return }
        #expect(abs(mean.red - 122.782) < 1e-4 && abs(mean.green - 117.001) < 1e-4 && abs(mean.blue - 104.298) < 1e-4)
        let embedder = try NetworkTestSupport.embedder.get()
        #expect(embedder.distanceThreshold == 0.6 && embedder.chipSize == 150)
    }

    @Test func shippedDetectorParsesToTheLastByte() throws {
        guard NetworkTestSupport.available(NetworkTestSupport.mmodURL) else { return }
        let file = try DlibNetworkFile(contentsOf: NetworkTestSupport.mmodURL)
        guard case .mmod(let options) = file.loss else { Issue.record("loss"); return }
        #expect(options.windows.count == 1 && options.windows[0].width == 80 && options.windows[0].height == 80)
        #expect(options.nmsIoUThreshold == 0.3382761351109955 && options.nmsPercentCoveredThreshold == 1)
        #expect(file.layers.count == 19)
    }

    @Test func damagedShippedFilesAreTypedErrors() throws {
        guard NetworkTestSupport.available(NetworkTestSupport.mmodURL, NetworkTestSupport.resnetURL) else { return }
        let mmod = [UInt8](try Data(contentsOf: NetworkTestSupport.mmodURL))
        #expect(throws: FaceModelError.self) { try FaceDetector(modelBytes: Array(mmod.dropLast())) }
        #expect(throws: DlibNetworkError.trailingBytes(count: 2)) { try FaceDetector(modelBytes: mmod + [1, 0]) }
        #expect(throws: DlibNetworkError.self) { try FaceEmbedder(modelURL: NetworkTestSupport.mmodURL) }
        #expect(throws: DlibNetworkError.self) {
            try FaceEmbedder(modelURL: URL(fileURLWithPath: "/nonexistent/dlib_face_recognition_resnet_model_v1.dat"))
        }
        let detector = try NetworkTestSupport.detector.get()
        #expect(throws: DlibNetworkError.self) { try detector.detect(in: RGBImage(uncheckedWidth: 10, height: 10, pixels: [1, 2, 3])) }
        #expect(try detector.detect(in: RGBImage(uncheckedWidth: 8, height: 8, pixels: [UInt8](repeating: 128, count: 192))).isEmpty)
    }
}
