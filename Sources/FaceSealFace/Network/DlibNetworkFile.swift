import Foundation

/// A parsed dlib DNN file: loss, input layer and the layers in forward order (dlib_format.md §2).
/// Parsing consumes the file to its last byte; anything else is an error.
struct DlibNetworkFile: Sendable {
    var loss: DlibLoss
    var input: DlibInputLayer
    /// Forward order: the layer next to the input first.
    var layers: [DlibLayer]

    /// Upper bounds that keep a corrupt file from asking for absurd allocations or loops.
    enum Limits {
        static let wrappers = 10_000
        static let tensorElements = 64 * 1024 * 1024
        static let dimension = 1 << 16
        static let kernel = 64
        static let stride = 16
        static let windows = 64
        static let fileBytes = 256 << 20
    }

    /// Reads and parses the file at `url`, through a small window of the file.
    init(contentsOf url: URL) throws {
        var reader: DlibReader
        do {
            reader = try DlibReader(contentsOfFile: url.path, maxBytes: Limits.fileBytes)
        } catch {
            throw DlibNetworkError.unreadableFile(path: url.path, reason: String(describing: error))
        }
        try self.init(reader: &reader)
    }

    /// Parses a whole file held in memory.
    init(bytes: [UInt8]) throws {
        var reader = DlibReader(bytes: bytes)
        try self.init(reader: &reader)
    }

    private init(reader: inout DlibReader) throws {
        let lossVersion = try reader.readInt()
        guard lossVersion == 1 else {
            throw DlibNetworkError.unsupportedVersion(what: "add_loss_layer", version: lossVersion, offset: 0)
        }
        loss = try Self.readLoss(&reader)

        // Wrapper versions, outermost first, until the input layer's name.
        var wrappers: [Int] = []
        while !Self.nextIsInputRecord(reader) {
            let at = reader.offset
            let version = try reader.readInt()
            guard (1...3).contains(version) else {
                throw DlibNetworkError.unsupportedVersion(what: "layer wrapper", version: version, offset: at)
            }
            wrappers.append(version)
            guard wrappers.count <= Limits.wrappers else {
                throw DlibNetworkError.badLayerField(offset: at, reason: "more than \(Limits.wrappers) layer wrappers")
            }
        }
        guard let innermost = wrappers.last, innermost >= 2 else {
            throw DlibNetworkError.unexpectedNetwork("the layer next to the input must be a computational layer")
        }
        input = try Self.readInput(&reader)

        var layers: [DlibLayer] = []
        layers.reserveCapacity(wrappers.count)
        for (index, version) in wrappers.reversed().enumerated() {
            if version == 1 {
                layers.append(.tagOrSkip)
                continue
            }
            if let layer = try Self.readLayer(&reader) { layers.append(layer) }
            try Self.readTrailer(&reader, isInnermost: index == 0, version: version)
        }
        guard reader.isAtEnd else {
            throw DlibNetworkError.trailingBytes(count: reader.remaining)
        }
        self.layers = layers
    }

    // MARK: - Records

    private static func nextIsInputRecord(_ reader: DlibReader) -> Bool {
        var probe = reader
        guard let name = try? probe.readString(maxLength: 64) else { return false }
        return name.hasPrefix("input")
    }

    private static func readLoss(_ reader: inout DlibReader) throws -> DlibLoss {
        let at = reader.offset
        let name = try reader.readString(maxLength: 64)
        switch name {
        case "loss_metric_2":
            return .metric(margin: try reader.readFloat(), distanceThreshold: try reader.readFloat())
        case "loss_mmod_":
            return .mmod(try readMMODOptions(&reader))
        default:
            throw DlibNetworkError.unsupportedRecord(name: name, offset: at)
        }
    }

    private static func readMMODOptions(_ reader: inout DlibReader) throws -> DlibMMODOptions {
        let at = reader.offset
        let version = try reader.readInt()
        guard (1...4).contains(version) else {
            throw DlibNetworkError.unsupportedVersion(what: "mmod_options", version: version, offset: at)
        }
        var windows: [DlibMMODOptions.Window] = []
        if version == 1 {
            windows.append(.init(width: try readDimension(&reader), height: try readDimension(&reader), label: ""))
        } else {
            let count = try reader.readInt()
            guard (1...Limits.windows).contains(count) else {
                throw DlibNetworkError.badLayerField(offset: at, reason: "detector window count \(count)")
            }
            for _ in 0..<count {
                let windowAt = reader.offset
                let windowVersion = try reader.readInt()
                guard windowVersion == 1 || windowVersion == 2 else {
                    throw DlibNetworkError.unsupportedVersion(what: "detector window", version: windowVersion, offset: windowAt)
                }
                let width = try readDimension(&reader)
                let height = try readDimension(&reader)
                let label = windowVersion == 2 ? try reader.readString(maxLength: 256) : ""
                windows.append(.init(width: width, height: height, label: label))
            }
        }
        _ = try reader.readDouble()          // loss_per_false_alarm (training only)
        _ = try reader.readDouble()          // loss_per_missed_target (training only)
        _ = try reader.readDouble()          // truth_match_iou_threshold (training only)
        let nmsIoU = try reader.readDouble()
        let nmsCovered = try reader.readDouble()
        _ = try reader.readDouble()          // overlaps_ignore (training only)
        _ = try reader.readDouble()
        if version >= 3 {
            _ = try reader.readBytes(1)      // assume_image_pyramid: a raw byte
        }
        if version >= 4 {
            _ = try reader.readBool()        // bounding-box regression: not in the shipped files
            _ = try reader.readDouble()
        }
        guard nmsIoU.isFinite, nmsCovered.isFinite else {
            throw DlibNetworkError.badLayerField(offset: at, reason: "non-finite NMS thresholds")
        }
        return DlibMMODOptions(windows: windows, nmsIoUThreshold: nmsIoU, nmsPercentCoveredThreshold: nmsCovered)
    }

    private static func readInput(_ reader: inout DlibReader) throws -> DlibInputLayer {
        let at = reader.offset
        let name = try reader.readString(maxLength: 64)
        switch name {
        case "input_rgb_image_sized":
            let mean = (red: try reader.readFloat(), green: try reader.readFloat(), blue: try reader.readFloat())
            return .rgbImageSized(mean: mean, rows: try readDimension(&reader), cols: try readDimension(&reader))
        case "input_rgb_image_pyramid", "input_rgb_image_pyramid2":
            let mean = (red: try reader.readFloat(), green: try reader.readFloat(), blue: try reader.readFloat())
            if name == "input_rgb_image_pyramid2" {
                let padding = try readCount(&reader, limit: 1024)
                let outer = try readCount(&reader, limit: 1024)
                return .rgbImagePyramid(mean: mean, padding: padding, outerPadding: outer)
            }
            return .rgbImagePyramid(mean: mean, padding: 10, outerPadding: 11)
        default:
            throw DlibNetworkError.unsupportedRecord(name: name, offset: at)
        }
    }

    /// One layer record; `nil` for an affine layer that is switched off.
    private static func readLayer(_ reader: inout DlibReader) throws -> DlibLayer? {
        let at = reader.offset
        let name = try reader.readString(maxLength: 64)
        switch name {
        case "con_4", "con_5":
            var params = try readTensor(&reader)
            let filters = try readDimension(&reader)
            let kernelRows = try readCount(&reader, limit: Limits.kernel)
            let kernelCols = try readCount(&reader, limit: Limits.kernel)
            let strideY = try readCount(&reader, limit: Limits.stride)
            let strideX = try readCount(&reader, limit: Limits.stride)
            let padY = try readCount(&reader, limit: Limits.kernel)
            let padX = try readCount(&reader, limit: Limits.kernel)
            let filterShape = try readAlias(&reader)
            let biasShape = try readAlias(&reader)
            for _ in 0..<4 { _ = try reader.readDouble() }      // learning-rate / weight-decay multipliers
            let useBias = name == "con_5" ? try reader.readBool() : true
            guard kernelRows > 0, kernelCols > 0, strideY > 0, strideX > 0 else {
                throw DlibNetworkError.badLayerField(offset: at, reason: "\(name): zero kernel or stride")
            }
            let channels = filterShape[1]
            guard filterShape[0] == filters, filterShape[2] == kernelRows, filterShape[3] == kernelCols, channels > 0,
                  biasShape == [1, filters, 1, 1]
            else {
                throw DlibNetworkError.badTensorShape(offset: at, reason: "\(name): filter alias \(filterShape), bias alias \(biasShape)")
            }
            let weightCount = filters * channels * kernelRows * kernelCols
            let needed = weightCount + (useBias ? filters : 0)
            guard params.count >= needed else {
                throw DlibNetworkError.badTensorShape(offset: at, reason: "\(name): \(params.count) parameters, need \(needed)")
            }
            let bias = useBias ? Array(params[weightCount..<(weightCount + filters)]) : [Float](repeating: 0, count: filters)
            params.removeSubrange(weightCount...)       // the weights stay in the tensor's buffer
            return .convolution(DlibConvolution(
                filters: filters, channels: channels, kernelRows: kernelRows, kernelCols: kernelCols,
                strideY: strideY, strideX: strideX, padY: padY, padX: padX,
                weights: params, bias: bias))

        case "affine_", "affine_2":
            let params = try readTensor(&reader)
            let gammaShape = try readAlias(&reader)
            let betaShape = try readAlias(&reader)
            let mode = try reader.readInt()
            let disabled = name == "affine_2" ? try reader.readBool() : false
            guard mode == 0 || mode == 1 else {
                throw DlibNetworkError.badLayerField(offset: at, reason: "affine mode \(mode)")
            }
            let count = gammaShape.reduce(1, *)
            guard gammaShape == betaShape, count > 0, params.count == 2 * count else {
                throw DlibNetworkError.badTensorShape(offset: at, reason: "affine: \(params.count) parameters for alias \(gammaShape)")
            }
            if disabled { return nil }
            return .affine(DlibAffine(gamma: Array(params[0..<count]), beta: Array(params[count...]), perElement: mode == 1))

        case "bn_con2", "bn_fc2":
            let params = try readTensor(&reader)
            let gammaShape = try readAlias(&reader)
            let betaShape = try readAlias(&reader)
            _ = try readTensor(&reader)                 // means (training state)
            _ = try readTensor(&reader)                 // invstds (training state)
            let runningMeans = try readTensor(&reader)
            let runningVariances = try readTensor(&reader)
            _ = try reader.readInt()                    // num_updates
            _ = try reader.readInt()                    // running_stats_window_size
            for _ in 0..<4 { _ = try reader.readDouble() }
            let eps = Float(try reader.readDouble())
            let count = gammaShape.reduce(1, *)
            guard gammaShape == betaShape, count > 0, params.count == 2 * count,
                  runningMeans.count == count, runningVariances.count == count
            else {
                throw DlibNetworkError.badTensorShape(offset: at, reason: "\(name): statistics do not match alias \(gammaShape)")
            }
            // dlib turns a batch-norm record into an affine layer on load, in float32.
            var gamma = [Float](repeating: 0, count: count)
            var beta = [Float](repeating: 0, count: count)
            for i in 0..<count {
                gamma[i] = params[i] / (runningVariances[i] + eps).squareRoot()
                beta[i] = params[count + i] - gamma[i] * runningMeans[i]
            }
            return .affine(DlibAffine(gamma: gamma, beta: beta, perElement: name == "bn_fc2"))

        case "fc_2", "fc_3":
            let outputs = try readDimension(&reader)
            let inputs = try readDimension(&reader)
            var params = try readTensor(&reader)
            let weightShape = try readAlias(&reader)
            _ = try readAlias(&reader)
            let biasMode = try reader.readInt()
            for _ in 0..<4 { _ = try reader.readDouble() }
            if name == "fc_3" { _ = try reader.readBool() }  // use_bias, implied by bias_mode here
            guard biasMode == 0 || biasMode == 1 else {
                throw DlibNetworkError.badLayerField(offset: at, reason: "fc bias mode \(biasMode)")
            }
            let weightCount = inputs * outputs
            let needed = weightCount + (biasMode == 0 ? outputs : 0)
            guard weightShape == [1, 1, inputs, outputs] || weightShape.reduce(1, *) == weightCount,
                  params.count >= needed
            else {
                throw DlibNetworkError.badTensorShape(offset: at, reason: "fc: \(params.count) parameters, need \(needed)")
            }
            let bias = biasMode == 0 ? Array(params[weightCount..<(weightCount + outputs)]) : nil
            params.removeSubrange(weightCount...)
            return .fullyConnected(DlibFullyConnected(inputs: inputs, outputs: outputs, weights: params, bias: bias))

        case "max_pool_2", "avg_pool_2":
            let pool = DlibPool(
                kernelRows: try readCount(&reader, limit: Limits.kernel),
                kernelCols: try readCount(&reader, limit: Limits.kernel),
                strideY: try readCount(&reader, limit: Limits.stride),
                strideX: try readCount(&reader, limit: Limits.stride),
                padY: try readCount(&reader, limit: Limits.kernel),
                padX: try readCount(&reader, limit: Limits.kernel))
            guard pool.strideY > 0, pool.strideX > 0, (pool.kernelRows == 0) == (pool.kernelCols == 0) else {
                throw DlibNetworkError.badLayerField(offset: at, reason: "\(name): zero stride or half-global kernel")
            }
            guard pool.padY == 0, pool.padX == 0 else {
                throw DlibNetworkError.badLayerField(offset: at, reason: "\(name): padded pooling is not supported")
            }
            return name == "max_pool_2" ? .maxPool(pool) : .averagePool(pool)

        case "relu_":
            return .relu
        case "add_prev_":
            return .addPrevious
        default:
            throw DlibNetworkError.unsupportedRecord(name: name, offset: at)
        }
    }

    /// The add_layer trailer: three bools, two (empty) training tensors, then params_grad or,
    /// for the layer on the input, grad_final and the sample expansion factor (§2.2).
    private static func readTrailer(_ reader: inout DlibReader, isInnermost: Bool, version: Int) throws {
        for _ in 0..<3 { _ = try reader.readBool() }
        for _ in 0..<2 {
            let at = reader.offset
            guard try readTensor(&reader).isEmpty else {
                throw DlibNetworkError.badTensorShape(offset: at, reason: "unexpected non-empty training tensor")
            }
        }
        _ = try readTensor(&reader)                   // params_grad or grad_final
        if isInnermost && version >= 3 {
            _ = try reader.readInt()                  // sample_expansion_factor
        }
    }

    // MARK: - Primitives above DlibReader

    /// A `resizable_tensor`: version 2, shape (n, k, nr, nc), then raw little-endian float32.
    private static func readTensor(_ reader: inout DlibReader) throws -> [Float] {
        let at = reader.offset
        let version = try reader.readInt()
        guard version == 2 else { throw DlibNetworkError.unsupportedVersion(what: "tensor", version: version, offset: at) }
        var count = 1
        for _ in 0..<4 {
            let dimension = try reader.readInt()
            guard dimension >= 0, dimension <= Limits.tensorElements else {
                throw DlibNetworkError.badTensorShape(offset: at, reason: "tensor dimension \(dimension)")
            }
            count *= dimension
            guard count <= Limits.tensorElements else {
                throw DlibNetworkError.badTensorShape(offset: at, reason: "tensor larger than \(Limits.tensorElements) floats")
            }
        }
        return try reader.readRawFloats(count)
    }

    /// An `alias_tensor`: version 1, then a 4-integer shape.
    private static func readAlias(_ reader: inout DlibReader) throws -> [Int] {
        let at = reader.offset
        let version = try reader.readInt()
        guard version == 1 else { throw DlibNetworkError.unsupportedVersion(what: "alias_tensor", version: version, offset: at) }
        var shape: [Int] = []
        for _ in 0..<4 {
            let dimension = try reader.readInt()
            guard dimension >= 0, dimension <= Limits.tensorElements else {
                throw DlibNetworkError.badTensorShape(offset: at, reason: "alias dimension \(dimension)")
            }
            shape.append(dimension)
        }
        return shape
    }

    private static func readDimension(_ reader: inout DlibReader) throws -> Int {
        let value = try readCount(&reader, limit: Limits.dimension)
        guard value > 0 else { throw DlibNetworkError.badLayerField(offset: reader.offset, reason: "zero dimension") }
        return value
    }

    private static func readCount(_ reader: inout DlibReader, limit: Int) throws -> Int {
        let at = reader.offset
        let value = try reader.readInt()
        guard value >= 0, value <= limit else {
            throw DlibNetworkError.badLayerField(offset: at, reason: "value \(value) outside 0...\(limit)")
        }
        return value
    }
}
