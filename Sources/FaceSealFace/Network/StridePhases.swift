/// The input of an unpadded stride-s convolution split into its s×s (row, column) phases, so every
/// im2col row becomes a run of contiguous copies instead of a strided gather: input `[c][y][x]` goes
/// to phase `(y mod s, x mod s)` at `[c][y / s][x / s]`. The phases live in the caller's workspace.
struct StridePhases: Sendable {
    let stride: Int
    let phaseRows: [Int]
    let phaseCols: [Int]
    /// Start of phase `a·s + b`'s channel-0 plane.
    let offsets: [Int]
    /// The workspace address, kept as an integer so the value can cross into the workers.
    let baseAddress: UInt

    /// Splits `input` into `storage`, which holds at least `input.values.count` floats.
    init(_ input: FeatureMap, stride s: Int, into storage: UnsafeMutablePointer<Float>) {
        stride = s
        baseAddress = UInt(bitPattern: storage)
        let phaseRows = (0..<s).map { (input.rows - $0 + s - 1) / s }
        let phaseCols = (0..<s).map { (input.cols - $0 + s - 1) / s }
        var offsets: [Int] = []
        var total = 0
        for a in 0..<s {
            for b in 0..<s {
                offsets.append(total)
                total += input.channels * phaseRows[a] * phaseCols[b]
            }
        }
        self.phaseRows = phaseRows
        self.phaseCols = phaseCols
        self.offsets = offsets
        let (rows, cols, channels) = (input.rows, input.cols, input.channels)
        let planeOffsets = offsets
        let targetAddress = UInt(bitPattern: storage)
        input.values.withUnsafeBufferPointer { source in
            let sourceAddress = UInt(bitPattern: source.baseAddress)
            Parallel.forEachRange(of: channels, workers: Parallel.workers(items: channels, work: 4 * total)) { _, channelRange in
                let source = UnsafePointer<Float>(bitPattern: sourceAddress)!
                let target = UnsafeMutablePointer<Float>(bitPattern: targetAddress)!
                for c in channelRange {
                    for a in 0..<s {
                        for b in 0..<s {
                            let plane = target + planeOffsets[a * s + b] + c * phaseRows[a] * phaseCols[b]
                            for y in 0..<phaseRows[a] {
                                let from = source + (c * rows + y * s + a) * cols + b
                                let to = plane + y * phaseCols[b]
                                for x in 0..<phaseCols[b] { to[x] = from[x * s] }
                            }
                        }
                    }
                }
            }
        }
    }

    /// The column matrix of `kernel` for output rows `rowStart..<rowEnd`, as `ConvolutionKernel.im2col`.
    func im2col(_ kernel: ConvolutionKernel, outCols: Int, rowStart: Int, rowEnd: Int, into columns: UnsafeMutablePointer<Float>) {
        let width = (rowEnd - rowStart) * outCols
        let base = UnsafeMutablePointer<Float>(bitPattern: baseAddress)!
        var k = 0
        for c in 0..<kernel.channels {
            for i in 0..<kernel.kernelRows {
                let a = i % stride
                for j in 0..<kernel.kernelCols {
                    let b = j % stride
                    let pitch = phaseCols[b]
                    let plane = base + offsets[a * stride + b] + c * phaseRows[a] * pitch
                    let destinationRow = columns + k * width
                    k += 1
                    for oy in rowStart..<rowEnd {
                        (destinationRow + (oy - rowStart) * outCols)
                            .update(from: plane + (oy + i / stride) * pitch + j / stride, count: outCols)
                    }
                }
            }
        }
    }
}
