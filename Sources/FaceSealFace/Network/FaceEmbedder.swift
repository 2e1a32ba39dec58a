public import Foundation

/// dlib's ResNet-29 face descriptor (`dlib_face_recognition_resnet_model_v1.dat`): an aligned
/// 150×150 RGB chip → a 128-d embedding. Compare embeddings by Euclidean distance.
///
/// The weights are parsed once and immutable, so one instance can serve any number of tasks at once.
public struct FaceEmbedder: Sendable {
    /// Length of an embedding.
    public static let dimension = 128

    /// Chip side the network takes, from the model file (150).
    public let chipSize: Int
    /// dlib's same-person distance threshold stored in the model (0.6).
    public let distanceThreshold: Float

    private let mean: (red: Float, green: Float, blue: Float)
    private let plan: LayerPlan

    /// Loads the model file. Throws `DlibNetworkError` or `FaceModelError` when it is unreadable,
    /// truncated, corrupt, or not dlib's face-recognition ResNet.
    public init(modelURL: URL) throws {
        try self.init(file: DlibNetworkFile(contentsOf: modelURL))
    }

    /// Loads the model from the bytes of the file.
    public init(modelBytes: [UInt8]) throws {
        try self.init(file: DlibNetworkFile(bytes: modelBytes))
    }

    init(file: DlibNetworkFile) throws {
        guard case .metric(_, let threshold) = file.loss else {
            throw DlibNetworkError.unexpectedNetwork("not a metric-learning network (loss_metric)")
        }
        guard case .rgbImageSized(let mean, let rows, let cols) = file.input, rows == cols else {
            throw DlibNetworkError.unexpectedNetwork("input is not a square RGB chip")
        }
        let plan = try LayerPlan(layers: file.layers, inputChannels: 3, inputSize: (rows, cols))
        guard case .fullyConnected(let head)? = plan.steps.last, head.outputs == Self.dimension else {
            throw DlibNetworkError.unexpectedNetwork("the network does not end in a \(Self.dimension)-output fully connected layer")
        }
        self.chipSize = rows
        self.distanceThreshold = threshold
        self.mean = mean
        self.plan = plan
    }

    /// The 128-d embedding of an aligned chip (as made by dlib's `get_face_chip`, 150×150).
    public func embedding(of chip: RGBImage) throws -> [Float] {
        guard chip.width == chipSize, chip.height == chipSize else {
            throw DlibNetworkError.badInput("chip is \(chip.width)×\(chip.height), the network takes \(chipSize)×\(chipSize)")
        }
        guard chip.pixels.count == chipSize * chipSize * 3 else {
            throw DlibNetworkError.badInput("chip has \(chip.pixels.count) bytes, expected \(chipSize * chipSize * 3)")
        }
        let output = try plan.run(inputTensor(chip))
        guard output.values.count == Self.dimension else {
            throw DlibNetworkError.inconsistentNetwork("output has \(output.values.count) values")
        }
        return output.values
    }

    /// Planar R, G, B with dlib's normalisation `(v − mean_channel) / 256`.
    private func inputTensor(_ chip: RGBImage) -> FeatureMap {
        let plane = chipSize * chipSize
        let means = [mean.red, mean.green, mean.blue]
        return chip.pixels.withUnsafeBufferPointer { pixels in
            FeatureMap(channels: 3, rows: chipSize, cols: chipSize) { out in
                for c in 0..<3 {
                    let m = means[c]
                    for i in 0..<plane { out[c * plane + i] = (Float(pixels[3 * i + c]) - m) / 256 }
                }
            }
        }
    }

}
