import Testing
@testable import FaceSealFace

/// The fused convolution paths (GEMM with im2col, stride phases, the direct and narrow kernels, direct one-filter) against a
/// naive reference convolution, and the pooling / residual helpers, on seeded random data.
@Suite struct NetworkKernelTests {
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static func random(_ count: Int, _ generator: inout SeededGenerator) -> [Float] {
        (0..<count).map { _ in Float.random(in: -1...1, using: &generator) }
    }

    static func naive(_ x: FeatureMap, _ c: DlibConvolution, gamma: [Float]?, beta: [Float]?, relu: Bool) -> FeatureMap {
        let outRows = (x.rows + 2 * c.padY - c.kernelRows) / c.strideY + 1
        let outCols = (x.cols + 2 * c.padX - c.kernelCols) / c.strideX + 1
        var out = FeatureMap(channels: c.filters, rows: outRows, cols: outCols)
        for f in 0..<c.filters {
            for oy in 0..<outRows {
                for ox in 0..<outCols {
                    var sum: Double = 0
                    for ch in 0..<c.channels {
                        for i in 0..<c.kernelRows {
                            for j in 0..<c.kernelCols {
                                let y = oy * c.strideY - c.padY + i, xx = ox * c.strideX - c.padX + j
                                guard y >= 0, y < x.rows, xx >= 0, xx < x.cols else { continue }
                                sum += Double(x.values[(ch * x.rows + y) * x.cols + xx])
                                    * Double(c.weights[((f * c.channels + ch) * c.kernelRows + i) * c.kernelCols + j])
                            }
                        }
                    }
                    var v = Float(sum) + c.bias[f]
                    if let gamma, let beta { v = v * gamma[f] + beta[f] }
                    if relu { v = max(v, 0) }
                    out.values[(f * outRows + oy) * outCols + ox] = v
                }
            }
        }
        return out
    }

    typealias Shape = (filters: Int, channels: Int, kernel: Int, stride: Int, pad: Int, rows: Int, cols: Int)

    static let shapes: [Shape] = [
        (filters: 6, channels: 4, kernel: 5, stride: 1, pad: 2, rows: 23, cols: 31),   // MMOD 4–6 shape: padded copy
        (filters: 5, channels: 3, kernel: 5, stride: 2, pad: 0, rows: 40, cols: 29),   // MMOD 1–3: stride phases
        (filters: 4, channels: 3, kernel: 7, stride: 2, pad: 0, rows: 31, cols: 30),   // ResNet stem, odd sizes
        (filters: 16, channels: 8, kernel: 3, stride: 2, pad: 0, rows: 35, cols: 35),  // ResNet down unit
        (filters: 9, channels: 5, kernel: 3, stride: 1, pad: 1, rows: 160, cols: 100), // several bands, a partial block
        (filters: 12, channels: 6, kernel: 3, stride: 1, pad: 1, rows: 6, cols: 6),    // too narrow: narrow kernel or GEMM
        (filters: 40, channels: 9, kernel: 3, stride: 1, pad: 1, rows: 4, cols: 4),    // ResNet level 1: 4×4 tiles
        (filters: 72, channels: 7, kernel: 3, stride: 1, pad: 1, rows: 1, cols: 1),    // level 0: centre tap only, 4 blocks
        (filters: 20, channels: 6, kernel: 3, stride: 2, pad: 0, rows: 8, cols: 5),    // stride phases, 3×2 narrow output
        (filters: 3, channels: 2, kernel: 3, stride: 2, pad: 1, rows: 9, cols: 12),    // padded stride: gather
        (filters: 1, channels: 5, kernel: 9, stride: 1, pad: 4, rows: 20, cols: 17),   // MMOD scorer: one-filter block
        (filters: 1, channels: 2, kernel: 3, stride: 2, pad: 1, rows: 11, cols: 8),    // one-filter loop, strided
    ]

    /// A random layer of `shape` with a folded affine and a ReLU, a random input, and the naive result.
    static func randomCase(_ shape: Shape) -> (kernel: ConvolutionKernel, input: FeatureMap, want: FeatureMap) {
        var generator = SeededGenerator(state: UInt64(shape.filters * 1000 + shape.kernel * 10 + shape.stride))
        let layer = DlibConvolution(
            filters: shape.filters, channels: shape.channels, kernelRows: shape.kernel, kernelCols: shape.kernel,
            strideY: shape.stride, strideX: shape.stride, padY: shape.pad, padX: shape.pad,
            weights: Self.random(shape.filters * shape.channels * shape.kernel * shape.kernel, &generator),
            bias: Self.random(shape.filters, &generator))
        var input = FeatureMap(channels: shape.channels, rows: shape.rows, cols: shape.cols)
        input.values = Self.random(input.values.count, &generator)
        let gamma = Self.random(shape.filters, &generator), beta = Self.random(shape.filters, &generator)
        var kernel = ConvolutionKernel(layer)
        kernel.fold(DlibAffine(gamma: gamma, beta: beta, perElement: false))
        kernel.fuseReLU()
        // As LayerPlan does for the embedder, whose sizes it knows.
        if let size = kernel.outputSize(rows: shape.rows, cols: shape.cols), size.cols < DirectConvolution.minimumOutputCols {
            kernel.useNarrowKernel()
        }
        return (kernel, input, Self.naive(input, layer, gamma: gamma, beta: beta, relu: true))
    }

    /// Every convolution path (im2col + GEMM, stride phases, the direct kernel on each instruction set this CPU has,
    /// the one-filter loop) against the naive convolution.
    @Test(arguments: ConvolutionKernels.available, shapes)
    func convolutionMatchesNaive(level: ConvolutionKernels.Level, shape: Shape) {
        let (kernel, input, want) = Self.randomCase(shape)
        var workspace = Workspace()
        defer { workspace.release() }
        let got = ConvolutionKernels.$limit.withValue(level) { kernel.apply(to: input, workspace: &workspace) }
        #expect(got.channels == want.channels && got.rows == want.rows && got.cols == want.cols)
        let worst = zip(got.values, want.values).map { abs($0 - $1) }.max() ?? .infinity
        #expect(worst < 1e-4, "max difference \(worst)")
        #expect(got.values.contains { $0 > 0 } && got.values.contains { $0 == 0 }, "ReLU should clamp some values")
    }

    /// A residual unit's last convolution adds the unit's input and clamps, in the same pass as the bias, on every path.
    @Test(arguments: ConvolutionKernels.available)
    func convolutionAddingResidualMatchesNaive(level: ConvolutionKernels.Level) {
        let shape: Shape = (filters: 10, channels: 10, kernel: 3, stride: 1, pad: 1, rows: 17, cols: 17)
        var generator = SeededGenerator(state: 99)
        let layer = DlibConvolution(
            filters: shape.filters, channels: shape.channels, kernelRows: 3, kernelCols: 3, strideY: 1, strideX: 1, padY: 1, padX: 1,
            weights: Self.random(shape.filters * shape.channels * 9, &generator), bias: Self.random(shape.filters, &generator))
        var input = FeatureMap(channels: shape.channels, rows: shape.rows, cols: shape.cols)
        input.values = Self.random(input.values.count, &generator)
        var residual = FeatureMap(channels: shape.filters, rows: shape.rows, cols: shape.cols)
        residual.values = Self.random(residual.values.count, &generator)
        let plain = Self.naive(input, layer, gamma: nil, beta: nil, relu: false)
        var workspace = Workspace()
        defer { workspace.release() }
        let got = ConvolutionKernels.$limit.withValue(level) {
            ConvolutionKernel(layer).apply(to: input, residual: residual, workspace: &workspace)
        }
        let want = zip(plain.values, residual.values).map { max($0 + $1, 0) }
        let worst = zip(got.values, want).map { abs($0 - $1) }.max() ?? .infinity
        #expect(got.values.count == want.count && worst < 1e-4, "max difference \(worst)")
    }

    /// The direct kernel sums every output in the same order on every instruction set and however the rows are split
    /// into bands and between workers, so all its levels give the same bits.
    @Test(arguments: shapes)
    func directKernelLevelsAgreeBitForBit(shape: Shape) {
        let levels = ConvolutionKernels.available.filter { $0 > .portable }
        guard levels.count > 1 else { return }
        let (kernel, input, _) = Self.randomCase(shape)
        var workspace = Workspace()
        defer { workspace.release() }
        let results = levels.map { level in
            ConvolutionKernels.$limit.withValue(level) { kernel.apply(to: input, workspace: &workspace).values }
        }
        #expect(results.allSatisfy { $0 == results[0] })
    }

    @Test func residualSumZeroPadsTheSmallerOperand() {
        var a = FeatureMap(channels: 2, rows: 1, cols: 1)
        a.values = [1, 2]
        var b = FeatureMap(channels: 1, rows: 2, cols: 2)
        b.values = [10, -20, 30, 40]
        let sum = LayerPlan.addZeroPadded(a, b, relu: true)
        #expect(sum.channels == 2 && sum.rows == 2 && sum.cols == 2)
        #expect(sum.values == [11, 0, 30, 40, 2, 0, 0, 0])
    }

    @Test func poolingWindowsAndGlobalAverage() throws {
        var x = FeatureMap(channels: 1, rows: 4, cols: 5)
        x.values = (0..<20).map(Float.init)
        let max3 = try LayerPlan.pool(x, DlibPool(kernelRows: 3, kernelCols: 3, strideY: 2, strideX: 2, padY: 0, padX: 0), maximum: true)
        #expect(max3.rows == 1 && max3.cols == 2 && max3.values == [12, 14])
        let avg2 = try LayerPlan.pool(x, DlibPool(kernelRows: 2, kernelCols: 2, strideY: 2, strideX: 2, padY: 0, padX: 0), maximum: false)
        #expect(avg2.values == [3, 5, 13, 15])
        let global = try LayerPlan.pool(x, DlibPool(kernelRows: 0, kernelCols: 0, strideY: 1, strideX: 1, padY: 0, padX: 0), maximum: false)
        #expect(global.values == [9.5])
    }

    /// Canvas size and level placements from reference/oracle/numpy_reference/mmod.py's
    /// `tiled_pyramid_layout`, run on these image sizes.
    @Test(arguments: [
        (rows: 480, cols: 640, canvasRows: 1782, canvasCols: 662, levels: 24,
         first: [11, 11, 650, 490], second: [11, 501, 543, 900], last: [643, 512, 650, 516]),
        (rows: 512, cols: 512, canvasRows: 1895, canvasCols: 534, levels: 24,
         first: [11, 11, 522, 522], second: [11, 533, 436, 958], last: [518, 559, 522, 563]),
        (rows: 1545, cols: 1986, canvasRows: 5603, canvasCols: 2008, levels: 30,
         first: [11, 11, 1996, 1555], second: [11, 1566, 1665, 2852], last: [1989, 1729, 1996, 1733]),
    ])
    func tiledPyramidLayoutMatchesReference(
        case c: (rows: Int, cols: Int, canvasRows: Int, canvasCols: Int, levels: Int, first: [Int], second: [Int], last: [Int])
    ) {
        let pyramid = TiledPyramid(rows: c.rows, cols: c.cols, padding: 10, outerPadding: 11)
        #expect(pyramid.canvasRows == c.canvasRows && pyramid.canvasCols == c.canvasCols)
        #expect(pyramid.levels.count == c.levels)
        func edges(_ p: TiledPyramid.Placement) -> [Int] { [p.left, p.top, p.right, p.bottom] }
        #expect(edges(pyramid.levels[0]) == c.first)
        #expect(edges(pyramid.levels[1]) == c.second)
        #expect(pyramid.levels.last.map(edges) == c.last)
    }
}
