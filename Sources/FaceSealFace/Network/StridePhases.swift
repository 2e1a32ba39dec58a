/// Input rows of an unpadded stride-s convolution split into their s×s (row, column) phases, so every
/// im2col row becomes a run of contiguous copies instead of a strided gather: input `[c][y][x]` goes to
/// phase `(y mod s, x mod s)` at `[c][(y − first) / s][x / s]`. One band of rows at a time, in the
/// worker's scratch, so the copy stays small and in cache.
struct StridePhases {
    let stride: Int
    /// The first input row held (a multiple of the stride).
    let firstRow: Int
    private let phaseRows: [Int]
    private let phaseCols: [Int]
    /// Start of phase `a·s + b`'s channel-0 plane.
    private let offsets: [Int]
    private let base: UnsafeMutablePointer<Float>

    /// Splits input rows `rows` of the `channels × height × width` map at `input` into `storage`.
    init(_ input: UnsafePointer<Float>, channels: Int, height: Int, width: Int, rows: Range<Int>, stride s: Int,
         into storage: UnsafeMutablePointer<Float>) {
        stride = s
        firstRow = rows.lowerBound
        base = storage
        let count = rows.count
        let phaseRows = (0..<s).map { (count - $0 + s - 1) / s }
        let phaseCols = (0..<s).map { (width - $0 + s - 1) / s }
        var offsets: [Int] = []
        var total = 0
        for a in 0..<s {
            for b in 0..<s {
                offsets.append(total)
                total += channels * phaseRows[a] * phaseCols[b]
            }
        }
        for c in 0..<channels {
            for a in 0..<s {
                for b in 0..<s {
                    let plane = storage + offsets[a * s + b] + c * phaseRows[a] * phaseCols[b]
                    for y in 0..<phaseRows[a] {
                        let from = input + (c * height + firstRow + y * s + a) * width + b
                        let to = plane + y * phaseCols[b]
                        for x in 0..<phaseCols[b] { to[x] = from[x * s] }
                    }
                }
            }
        }
        self.phaseRows = phaseRows
        self.phaseCols = phaseCols
        self.offsets = offsets
    }

    /// The column matrix of `kernel` for output rows `rowStart..<rowEnd`, as `ConvolutionKernel.im2col`;
    /// the phases hold input rows from `rowStart · stride` on.
    func im2col(_ kernel: ConvolutionKernel, outCols: Int, rowStart: Int, rowEnd: Int, into columns: UnsafeMutablePointer<Float>) {
        let width = (rowEnd - rowStart) * outCols
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
                            .update(from: plane + (oy - rowStart + i / stride) * pitch + j / stride, count: outCols)
                    }
                }
            }
        }
    }
}
