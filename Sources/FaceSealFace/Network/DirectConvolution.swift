import CFaceSealConv

/// Which convolution code runs: im2col + OpenBLAS (portable: any CPU) or FaceSeal's own direct kernel
/// (target `CFaceSealConv`, AVX2 + FMA or AVX-512F), chosen at run time from the CPU.
///
/// A convolution reads `active` once and passes the level down, so a test or benchmark can run the portable
/// path inside `ConvolutionKernels.$limit.withValue(.portable) { … }` while others run concurrently.
enum ConvolutionKernels {
    /// Kernel sets, in increasing order of what they need from the CPU.
    enum Level: Int, Sendable, Comparable, CaseIterable, CustomStringConvertible {
        /// im2col + `cblas_sgemm` (any CPU).
        case portable = 0
        /// The direct kernel on AVX2 + FMA.
        case avx2 = 1
        /// The direct kernel on AVX-512F.
        case avx512 = 2

        static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }

        var description: String {
            switch self {
            case .portable: "im2col + OpenBLAS"
            case .avx2: "direct AVX2"
            case .avx512: "direct AVX-512"
            }
        }
    }

    /// The best level this CPU (and operating system) supports.
    static let supported: Level = Level(rawValue: Int(fs_conv_cpu_level())) ?? .portable

    /// An upper bound on the level, for tests and benchmarks; the default lets `supported` decide.
    @TaskLocal static var limit: Level = .avx512

    /// The level a convolution starting now uses.
    static var active: Level { min(supported, limit) }

    /// Every level this CPU can run, portable first (what the tests iterate over).
    static var available: [Level] { Level.allCases.filter { $0 <= supported } }
}

/// A convolution's weights packed for the direct kernel (`faceseal_conv.h`), which reads its input in place: a
/// stride-1 layer from a zero-padded copy of a band of input rows, a stride-s one (unpadded) from the band's s×s
/// stride phases. Either copy has the output's row pitch, so each kernel tap is one offset and no im2col matrix
/// is written; the kernel's output rows carry a few unused columns, dropped when the bias is added.
struct DirectConvolution: Sendable {
    static let layerBlockFilters = Int(FS_CONV_BLOCK_FILTERS)
    static let tilePositions = Int(FS_CONV_TILE_POSITIONS)
    /// Floats of scratch per band and worker (input copy and kernel output): the band stays in L2.
    static let bandFloats = 1 << 17
    /// Narrower outputs (the ResNet's deepest levels, 3×3 and 1×1) keep im2col + GEMM: most of a tile of
    /// positions would be unused columns.
    static let minimumOutputCols = 8

    /// `[block][channel][tap][blockFilters]`, zero for the filters past the last.
    let weights: [Float]
    /// Filters a block: `layerBlockFilters`, or 1 for a one-filter layer (the detector's scorer).
    let blockFilters: Int
    let blocks: Int

    /// Packs `kernel`'s weights, or `nil` when the direct kernel does not take its shape or this CPU has no kernel.
    init?(_ kernel: ConvolutionKernel) {
        guard Self.takesShape(of: kernel) else { return nil }
        let block = kernel.filters == 1 ? 1 : Self.layerBlockFilters
        blockFilters = block
        blocks = (kernel.filters + block - 1) / block
        weights = Self.pack(kernel, blockFilters: block)
    }

    /// Whether this CPU has a kernel and the layer's input copy takes this shape: equal strides, padding only at stride 1.
    static func takesShape(of kernel: ConvolutionKernel) -> Bool {
        ConvolutionKernels.supported > .portable && kernel.strideX == kernel.strideY
            && (kernel.strideX == 1 || (kernel.padX == 0 && kernel.padY == 0))
    }

    /// `kernel`'s weights as `[block][channel][tap][blockFilters]`, zero for the filters past the last.
    static func pack(_ kernel: ConvolutionKernel, blockFilters block: Int) -> [Float] {
        let patch = kernel.patchSize
        let blocks = (kernel.filters + block - 1) / block
        var packed = [Float](repeating: 0, count: blocks * patch * block)
        kernel.weights.withUnsafeBufferPointer { w in
            for f in 0..<kernel.filters {
                for k in 0..<patch { packed[((f / block) * patch + k) * block + f % block] = w[f * patch + k] }
            }
        }
        return packed
    }

    /// Where a band of `bandRows` output rows reads its input: the copy's row pitch (also the kernel output's), the
    /// distance between channels, the offset of each tap, the floats the copy takes, and the kernel output's filter stride.
    struct Layout: Sendable {
        let pitch: Int
        let copyRows: Int
        let channelStride: Int
        let offsets: [Int32]
        let inputFloats: Int
        let outputStride: Int

        init(_ kernel: ConvolutionKernel, cols: Int, bandRows: Int) {
            let s = kernel.strideX
            pitch = s == 1 ? cols + 2 * kernel.padX : (cols + s - 1) / s
            // Rows of the padded copy, or of each stride phase.
            copyRows = s == 1 ? bandRows + kernel.kernelRows - 1 : bandRows + (kernel.kernelRows - 1) / s
            let phasePlane = copyRows * pitch
            channelStride = s * s * phasePlane
            var offsets: [Int32] = []
            for i in 0..<kernel.kernelRows {
                for j in 0..<kernel.kernelCols {
                    offsets.append(Int32(((i % s) * s + j % s) * phasePlane + (i / s) * pitch + j / s))
                }
            }
            self.offsets = offsets
            outputStride = DirectConvolution.roundedToTiles(bandRows * pitch)
            // The last tile's unused positions read a little past the last channel.
            inputFloats = max(kernel.channels * channelStride,
                              (kernel.channels - 1) * channelStride + Int(offsets.max() ?? 0) + outputStride)
        }
    }

    static func roundedToTiles(_ positions: Int) -> Int {
        (positions + tilePositions - 1) / tilePositions * tilePositions
    }

    /// The band height for a worker's `rows` output rows: as many as fit `bandFloats`, at least one.
    func bandRows(_ kernel: ConvolutionKernel, cols: Int, rows: Int) -> Int {
        let one = floats(layout(kernel, cols: cols, bandRows: 1))
        let two = floats(layout(kernel, cols: cols, bandRows: 2))
        return max(1, min(rows, 1 + (Self.bandFloats - one) / max(1, two - one)))
    }

    func layout(_ kernel: ConvolutionKernel, cols: Int, bandRows: Int) -> Layout {
        Layout(kernel, cols: cols, bandRows: bandRows)
    }

    /// Scratch floats of a band: the input copy and the kernel's output.
    func floats(_ layout: Layout) -> Int {
        layout.inputFloats + blocks * blockFilters * layout.outputStride
    }

    /// Output rows `rowRange` of `kernel` on `input` (`rows × cols` planes) into `output` (`outRows × outCols`), band by
    /// band in `scratch` (`layout.floats`), then the bias, residual and ReLU (`ConvolutionKernel.finish`'s order).
    func run(_ kernel: ConvolutionKernel, level: ConvolutionKernels.Level, input: UnsafePointer<Float>, rows: Int, cols: Int,
             outRows: Int, outCols: Int, layout: Layout, bandRows: Int, rowRange: Range<Int>,
             scratch: UnsafeMutablePointer<Float>, output: UnsafeMutablePointer<Float>, residual: UnsafePointer<Float>?) {
        let copy = scratch
        let result = scratch + layout.inputFloats
        var rowStart = rowRange.lowerBound
        while rowStart < rowRange.upperBound {
            let rowEnd = min(rowRange.upperBound, rowStart + bandRows)
            Self.fill(copy, kernel, level: level, layout: layout, input: input, rows: rows, cols: cols, rowStart: rowStart)
            let positions = Self.roundedToTiles((rowEnd - rowStart) * layout.pitch)
            weights.withUnsafeBufferPointer { w in
                layout.offsets.withUnsafeBufferPointer { offsets in
                    fs_conv_tiles(copy, layout.channelStride, offsets.baseAddress!, Int32(offsets.count), Int32(kernel.channels),
                                  w.baseAddress!, Int32(blockFilters), 0, Int32(blocks), result, layout.outputStride, 0, positions,
                                  Int32(level.rawValue))
                }
            }
            for f in 0..<kernel.filters {
                let b = kernel.bias[f]
                for oy in rowStart..<rowEnd {
                    let source = result + f * layout.outputStride + (oy - rowStart) * layout.pitch
                    let destination = output + (f * outRows + oy) * outCols
                    if let residual {
                        let added = residual + (f * outRows + oy) * outCols
                        for ox in 0..<outCols { destination[ox] = max(source[ox] + b + added[ox], 0) }
                    } else if kernel.appliesReLU {
                        for ox in 0..<outCols { destination[ox] = max(source[ox] + b, 0) }
                    } else {
                        for ox in 0..<outCols { destination[ox] = source[ox] + b }
                    }
                }
            }
            rowStart = rowEnd
        }
    }

    /// The band's input copy from output row `rowStart` on: zero padding around the rows (stride 1), or the stride
    /// phases, zero past the input's edge; and zeros in the slack the last tile reads.
    static func fill(_ copy: UnsafeMutablePointer<Float>, _ kernel: ConvolutionKernel, level: ConvolutionKernels.Level, layout: Layout,
                      input: UnsafePointer<Float>, rows: Int, cols: Int, rowStart: Int) {
        let s = kernel.strideX
        let pitch = layout.pitch
        for c in 0..<kernel.channels {
            let plane = input + c * rows * cols
            let channel = copy + c * layout.channelStride
            if s == 1 {
                for k in 0..<layout.copyRows {
                    let destination = channel + k * pitch
                    let y = rowStart + k - kernel.padY
                    guard y >= 0, y < rows else {
                        destination.update(repeating: 0, count: pitch)
                        continue
                    }
                    destination.update(repeating: 0, count: kernel.padX)
                    (destination + kernel.padX).update(from: plane + y * cols, count: cols)
                    (destination + kernel.padX + cols).update(repeating: 0, count: kernel.padX)
                }
            } else {
                let phasePlane = layout.copyRows * pitch
                for a in 0..<s {
                    for k in 0..<layout.copyRows {
                        let y = (rowStart + k) * s + a
                        fs_conv_split_row(plane + min(y, rows - 1) * cols, y < rows ? cols : 0, Int32(s),
                                          channel + a * s * phasePlane + k * pitch, phasePlane, pitch, Int32(level.rawValue))
                    }
                }
            }
        }
        let filled = kernel.channels * layout.channelStride
        (copy + filled).update(repeating: 0, count: layout.inputFloats - filled)
    }
}
