/// A DNN file's layers compiled for inference: convolutions with their affine and ReLU fused, and
/// the residual wiring of dlib's ResNet definitions made explicit.
///
/// dlib stores no tag ids, so the wiring follows the published definitions (dlib_format.md §3.1):
/// a single tag/skip wrapper marks a residual unit's input (`tag1`); two in a row are `tag2` (keep the
/// block output) then `skip1` (continue from `tag1`); an `add_prev` right after an average pool adds
/// `tag2`, any other adds `tag1`.
struct LayerPlan: Sendable {
    enum Step: Sendable {
        case convolution(ConvolutionKernel)
        /// A convolution whose output is added to the residual input (`tag1`) and clamped, when the shapes agree.
        case convolutionAddingResidual(ConvolutionKernel)
        case affine(gamma: [Float], beta: [Float])
        case relu
        case maxPool(DlibPool)
        case averagePool(DlibPool)
        case markResidualInput
        case branchToResidualInput
        case addResidual(fromBlockOutput: Bool, relu: Bool)
        case fullyConnected(DlibFullyConnected)
    }

    let steps: [Step]
    private let workspaces = WorkspacePool()

    /// Compiles `layers` for an input with `channels` channels, checking that every layer fits the
    /// one before it. With the input's size known (the embedder's chip), a convolution whose output is too narrow
    /// for the direct kernel keeps only its GEMM weights.
    init(layers: [DlibLayer], inputChannels: Int, inputSize: (rows: Int, cols: Int)? = nil) throws {
        BLAS.configure()
        var steps: [Step] = []
        var index = 0
        var channels = inputChannels
        var size = inputSize
        var tag1Channels: Int?
        var tag2Channels: Int?
        var tag1Size: (rows: Int, cols: Int)?
        var tag2Size: (rows: Int, cols: Int)?
        var previousWasAveragePool = false
        var flattened = false
        while index < layers.count {
            let layer = layers[index]
            var isAveragePool = false
            switch layer {
            case .convolution(let convolution):
                guard !flattened, convolution.channels == channels else {
                    throw DlibNetworkError.inconsistentNetwork("convolution expects \(convolution.channels) channels, gets \(channels)")
                }
                var kernel = ConvolutionKernel(convolution)
                if index + 1 < layers.count, case .affine(let affine) = layers[index + 1], !affine.perElement {
                    guard affine.gamma.count == convolution.filters else {
                        throw DlibNetworkError.inconsistentNetwork("affine of \(affine.gamma.count) channels after \(convolution.filters) filters")
                    }
                    kernel.fold(affine)
                    index += 1
                    if index + 1 < layers.count, case .relu = layers[index + 1] {
                        kernel.fuseReLU()
                        index += 1
                    }
                } else if index + 1 < layers.count, case .relu = layers[index + 1] {
                    kernel.fuseReLU()
                    index += 1
                }
                channels = convolution.filters
                size = size.flatMap { kernel.outputSize(rows: $0.rows, cols: $0.cols) }
                if let size, size.cols < DirectConvolution.minimumOutputCols { kernel.useNarrowKernel() }
                steps.append(.convolution(kernel))
            case .affine(let affine):
                guard !affine.perElement, affine.gamma.count == channels else {
                    throw DlibNetworkError.inconsistentNetwork("a stand-alone affine layer must be per channel over \(channels) channels")
                }
                steps.append(.affine(gamma: affine.gamma, beta: affine.beta))
            case .relu:
                steps.append(.relu)
            case .maxPool(let pool):
                steps.append(.maxPool(pool))
                size = size.map { Self.pooledSize($0, pool) }
            case .averagePool(let pool):
                steps.append(.averagePool(pool))
                size = size.map { Self.pooledSize($0, pool) }
                isAveragePool = true
            case .tagOrSkip:
                if index + 1 < layers.count, case .tagOrSkip = layers[index + 1] {
                    guard let saved = tag1Channels else {
                        throw DlibNetworkError.inconsistentNetwork("skip without a residual input")
                    }
                    tag2Channels = channels
                    channels = saved
                    tag2Size = size
                    size = tag1Size
                    steps.append(.branchToResidualInput)
                    index += 1
                } else {
                    tag1Channels = channels
                    tag1Size = size
                    steps.append(.markResidualInput)
                }
            case .addPrevious:
                let other = previousWasAveragePool ? tag2Channels : tag1Channels
                guard let otherChannels = other else {
                    throw DlibNetworkError.inconsistentNetwork("add_prev without a tagged tensor")
                }
                channels = max(channels, otherChannels)
                if let mine = size, let other = previousWasAveragePool ? tag2Size : tag1Size {
                    size = (max(mine.rows, other.rows), max(mine.cols, other.cols))
                }
                var relu = false
                if index + 1 < layers.count, case .relu = layers[index + 1] {
                    relu = true
                    index += 1
                }
                if !previousWasAveragePool, relu, case .convolution(let kernel)? = steps.last, !kernel.appliesReLU {
                    steps[steps.count - 1] = .convolutionAddingResidual(kernel)
                } else {
                    steps.append(.addResidual(fromBlockOutput: previousWasAveragePool, relu: relu))
                }
            case .fullyConnected(let fc):
                steps.append(.fullyConnected(fc))
                flattened = true
                channels = fc.outputs
                size = (1, 1)
            }
            previousWasAveragePool = isAveragePool
            index += 1
        }
        self.steps = steps
    }

    /// Runs every step on `input`. Throws when the input is too small for a kernel or a fully
    /// connected layer does not match the flattened size.
    func run(_ input: FeatureMap) throws -> FeatureMap {
        var x = input
        var tag1: FeatureMap?
        var tag2: FeatureMap?
        var workspace = workspaces.take()
        defer { workspaces.give(workspace) }
        for step in steps {
            switch step {
            case .convolution(let kernel):
                guard kernel.outputSize(rows: x.rows, cols: x.cols) != nil else {
                    throw DlibNetworkError.badInput("input of \(x.rows)×\(x.cols) is smaller than a \(kernel.kernelRows)×\(kernel.kernelCols) kernel")
                }
                x = kernel.apply(to: x, workspace: &workspace)
            case .convolutionAddingResidual(let kernel):
                guard let (rows, cols) = kernel.outputSize(rows: x.rows, cols: x.cols) else {
                    throw DlibNetworkError.badInput("input of \(x.rows)×\(x.cols) is smaller than a \(kernel.kernelRows)×\(kernel.kernelCols) kernel")
                }
                guard let residual = tag1 else { throw DlibNetworkError.inconsistentNetwork("add_prev before its tag") }
                if residual.channels == kernel.filters, residual.rows == rows, residual.cols == cols {
                    x = kernel.apply(to: x, residual: residual, workspace: &workspace)
                } else {
                    x = Self.addZeroPadded(kernel.apply(to: x, workspace: &workspace), residual, relu: true)
                }
            case .affine(let gamma, let beta):
                let plane = x.planeSize
                x.values.withUnsafeMutableBufferPointer { values in
                    for c in 0..<x.channels {
                        for i in 0..<plane { values[c * plane + i] = values[c * plane + i] * gamma[c] + beta[c] }
                    }
                }
            case .relu:
                x.values.withUnsafeMutableBufferPointer { values in
                    for i in values.indices { values[i] = max(values[i], 0) }
                }
            case .maxPool(let pool):
                x = try Self.pool(x, pool, maximum: true)
            case .averagePool(let pool):
                x = try Self.pool(x, pool, maximum: false)
            case .markResidualInput:
                tag1 = x
            case .branchToResidualInput:
                guard let saved = tag1 else { throw DlibNetworkError.inconsistentNetwork("skip before any tag") }
                tag2 = x
                x = saved
            case .addResidual(let fromBlockOutput, let relu):
                guard let other = fromBlockOutput ? tag2 : tag1 else {
                    throw DlibNetworkError.inconsistentNetwork("add_prev before its tag")
                }
                x = Self.addZeroPadded(x, other, relu: relu)
            case .fullyConnected(let fc):
                guard x.values.count == fc.inputs else {
                    throw DlibNetworkError.badInput("fully connected layer expects \(fc.inputs) inputs, gets \(x.values.count)")
                }
                var output = fc.bias ?? [Float](repeating: 0, count: fc.outputs)
                fc.weights.withUnsafeBufferPointer { weights in
                    x.values.withUnsafeBufferPointer { inputs in
                        output.withUnsafeMutableBufferPointer { out in
                            // W is (inputs × outputs) row-major, so y = Wᵀ·x.
                            BLAS.addTransposedProduct(rows: fc.inputs, cols: fc.outputs, a: weights.baseAddress!,
                                                      x: inputs.baseAddress!, y: out.baseAddress!)
                        }
                    }
                }
                x = FeatureMap(channels: fc.outputs, rows: 1, cols: 1) { out in
                    for i in 0..<fc.outputs { out[i] = output[i] }
                }
            }
        }
        return x
    }

    /// The output size of `pool` (without padding; a zero kernel pools each whole plane) on a `size` plane.
    static func pooledSize(_ size: (rows: Int, cols: Int), _ pool: DlibPool) -> (rows: Int, cols: Int) {
        guard pool.kernelRows > 0 else { return (1, 1) }
        return ((size.rows - pool.kernelRows) / max(1, pool.strideY) + 1, (size.cols - pool.kernelCols) / max(1, pool.strideX) + 1)
    }

    /// Max or average pooling without padding; a zero kernel pools each whole plane.
    static func pool(_ x: FeatureMap, _ pool: DlibPool, maximum: Bool) throws -> FeatureMap {
        let global = pool.kernelRows == 0
        let kh = global ? x.rows : pool.kernelRows
        let kw = global ? x.cols : pool.kernelCols
        let sy = global ? 1 : pool.strideY
        let sx = global ? 1 : pool.strideX
        guard x.rows >= kh, x.cols >= kw, kh > 0, kw > 0 else {
            throw DlibNetworkError.badInput("pool of \(kh)×\(kw) on a \(x.rows)×\(x.cols) plane")
        }
        let outRows = (x.rows - kh) / sy + 1
        let outCols = (x.cols - kw) / sx + 1
        let count = Float(kh * kw)
        return x.values.withUnsafeBufferPointer { input in
            FeatureMap(channels: x.channels, rows: outRows, cols: outCols) { out in
                let inAddress = UInt(bitPattern: input.baseAddress), outAddress = UInt(bitPattern: out.baseAddress)
                let (channels, rows, cols) = (x.channels, x.rows, x.cols)
                // A window element costs about as much as a convolution's multiply-add a lane.
                let work = channels * outRows * outCols * kh * kw * 16
                Parallel.forEachRange(of: channels, workers: Parallel.workers(items: channels, work: work)) { _, range in
                    let input = UnsafePointer<Float>(bitPattern: inAddress)!, out = UnsafeMutablePointer<Float>(bitPattern: outAddress)!
                    // Max pooling takes each window's column maxima first (one pass over kh rows, vectorised), then
                    // their maximum: the same value in any order. Averages keep dlib's order: rows, each left to right.
                    let columns = UnsafeMutablePointer<Float>.allocate(capacity: cols)
                    defer { columns.deallocate() }
                    for c in range {
                        let plane = input + c * rows * cols
                        for oy in 0..<outRows {
                            let origin = plane + oy * sy * cols
                            let row = out + (c * outRows + oy) * outCols
                            if maximum {
                                columns.update(from: origin, count: cols)
                                for i in 1..<kh {
                                    let line = origin + i * cols
                                    for x in 0..<cols { columns[x] = Swift.max(columns[x], line[x]) }
                                }
                                for ox in 0..<outCols {
                                    let window = columns + ox * sx
                                    var value = window[0]
                                    for j in 1..<kw { value = Swift.max(value, window[j]) }
                                    row[ox] = value
                                }
                                continue
                            }
                            for ox in 0..<outCols {
                                let window = origin + ox * sx
                                var value: Float = 0
                                for i in 0..<kh {
                                    let line = window + i * cols
                                    for j in 0..<kw { value += line[j] }
                                }
                                row[ox] = value / count
                            }
                        }
                    }
                }
            }
        }
    }

    /// dlib's add_prev: the result has the larger size in every dimension; an element missing from
    /// the smaller operand counts as 0.
    static func addZeroPadded(_ a: FeatureMap, _ b: FeatureMap, relu: Bool) -> FeatureMap {
        let channels = max(a.channels, b.channels)
        let rows = max(a.rows, b.rows)
        let cols = max(a.cols, b.cols)
        var sum = FeatureMap(channels: channels, rows: rows, cols: cols)
        sum.values.withUnsafeMutableBufferPointer { out in
            for operand in [a, b] {
                operand.values.withUnsafeBufferPointer { source in
                    for c in 0..<operand.channels {
                        for r in 0..<operand.rows {
                            let from = (c * operand.rows + r) * operand.cols
                            let to = (c * rows + r) * cols
                            for k in 0..<operand.cols { out[to + k] += source[from + k] }
                        }
                    }
                }
            }
            if relu {
                for i in out.indices { out[i] = max(out[i], 0) }
            }
        }
        return sum
    }
}
