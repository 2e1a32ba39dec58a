import COpenBLAS

/// A convolution with the following per-channel affine layer folded into its weights and bias,
/// and optionally the ReLU after it: one im2col + `cblas_sgemm` per band of output rows, then one
/// pass that adds the bias and clamps.
///
/// Folding (W·γ, b·γ + β) changes float rounding by about one ulp per value; dlib's own summation
/// order differs from OpenBLAS's by as much, so results stay within the golden tolerances.
struct ConvolutionKernel: Sendable {
    let filters: Int
    let channels: Int
    let kernelRows: Int
    let kernelCols: Int
    let strideY: Int
    let strideX: Int
    let padY: Int
    let padX: Int
    /// `filters × (channels·kernelRows·kernelCols)`, row-major: the GEMM's A matrix as stored.
    private(set) var weights: [Float]
    private(set) var bias: [Float]
    private(set) var appliesReLU = false

    /// Bytes of im2col scratch per band; keeps the column matrix cache-sized on large MMOD canvases.
    static let bandBytes = 6 << 20

    init(_ layer: DlibConvolution) {
        filters = layer.filters
        channels = layer.channels
        kernelRows = layer.kernelRows
        kernelCols = layer.kernelCols
        strideY = layer.strideY
        strideX = layer.strideX
        padY = layer.padY
        padX = layer.padX
        weights = layer.weights
        bias = layer.bias
    }

    var patchSize: Int { channels * kernelRows * kernelCols }

    /// Folds a per-channel affine layer (`x·γ + β`) that follows this convolution.
    mutating func fold(_ affine: DlibAffine) {
        let patch = patchSize
        for f in 0..<filters {
            let gamma = affine.gamma[f]
            for i in 0..<patch { weights[f * patch + i] *= gamma }
            bias[f] = bias[f] * gamma + affine.beta[f]
        }
    }

    /// Clamps the output at zero, in the same pass that adds the bias.
    mutating func fuseReLU() { appliesReLU = true }

    /// Output size for an input plane, or `nil` when the input is smaller than the kernel.
    func outputSize(rows: Int, cols: Int) -> (rows: Int, cols: Int)? {
        let paddedRows = rows + 2 * padY - kernelRows
        let paddedCols = cols + 2 * padX - kernelCols
        guard paddedRows >= 0, paddedCols >= 0 else { return nil }
        return (paddedRows / strideY + 1, paddedCols / strideX + 1)
    }

    /// Runs the convolution. The caller has checked `input.channels == channels` and the size.
    func apply(to input: FeatureMap) -> FeatureMap {
        guard let (outRows, outCols) = outputSize(rows: input.rows, cols: input.cols) else {
            return FeatureMap(channels: filters, rows: 0, cols: 0)
        }
        let patch = patchSize
        let outPlane = outRows * outCols
        let bandRows = max(1, min(outRows, Self.bandBytes / max(1, 4 * patch * outCols)))
        let scratchCount = patch * bandRows * outCols
        let scratch = UnsafeMutablePointer<Float>.allocate(capacity: scratchCount)
        defer { scratch.deallocate() }

        let output = FeatureMap(channels: filters, rows: outRows, cols: outCols) { out in
            let outBase = out.baseAddress!
            input.values.withUnsafeBufferPointer { inBuffer in
                weights.withUnsafeBufferPointer { weightBuffer in
                    var rowStart = 0
                    while rowStart < outRows {
                        let rowEnd = min(outRows, rowStart + bandRows)
                        let columns = (rowEnd - rowStart) * outCols
                        im2col(inBuffer.baseAddress!, rows: input.rows, cols: input.cols,
                               outCols: outCols, rowStart: rowStart, rowEnd: rowEnd, into: scratch)
                        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans,
                                    Int32(filters), Int32(columns), Int32(patch),
                                    1, weightBuffer.baseAddress!, Int32(patch),
                                    scratch, Int32(columns),
                                    0, outBase + rowStart * outCols, Int32(outPlane))
                        rowStart = rowEnd
                    }
                }
            }
            for f in 0..<filters {
                let plane = outBase + f * outPlane
                let b = bias[f]
                if appliesReLU {
                    for i in 0..<outPlane { plane[i] = max(plane[i] + b, 0) }
                } else {
                    for i in 0..<outPlane { plane[i] += b }
                }
            }
        }
        return output
    }

    /// Writes the column matrix for output rows `rowStart..<rowEnd`: row `(c·kh + i)·kw + j`, column
    /// `(oy − rowStart)·outCols + ox` holds input `[c][oy·sy − py + i][ox·sx − px + j]` (0 outside).
    private func im2col(_ input: UnsafePointer<Float>, rows: Int, cols: Int, outCols: Int,
                        rowStart: Int, rowEnd: Int, into columns: UnsafeMutablePointer<Float>) {
        let width = (rowEnd - rowStart) * outCols
        var k = 0
        for c in 0..<channels {
            let plane = input + c * rows * cols
            for i in 0..<kernelRows {
                for j in 0..<kernelCols {
                    let destinationRow = columns + k * width
                    k += 1
                    // Output columns whose input column x = ox·sx − px + j lies inside 0..<cols.
                    let shift = j - padX
                    let first = shift >= 0 ? 0 : (-shift + strideX - 1) / strideX
                    let last = min(outCols, (cols - 1 - shift) >= 0 ? (cols - 1 - shift) / strideX + 1 : 0)
                    for oy in rowStart..<rowEnd {
                        let destination = destinationRow + (oy - rowStart) * outCols
                        let y = oy * strideY - padY + i
                        guard y >= 0, y < rows, first < last else {
                            destination.update(repeating: 0, count: outCols)
                            continue
                        }
                        if first > 0 { destination.update(repeating: 0, count: first) }
                        if last < outCols { (destination + last).update(repeating: 0, count: outCols - last) }
                        let source = plane + y * cols + shift
                        if strideX == 1 {
                            (destination + first).update(from: source + first, count: last - first)
                        } else {
                            var ox = first
                            while ox < last {
                                destination[ox] = source[ox * strideX]
                                ox += 1
                            }
                        }
                    }
                }
            }
        }
    }
}
