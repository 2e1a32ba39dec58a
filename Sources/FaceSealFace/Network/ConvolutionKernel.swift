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

    /// Bytes of im2col scratch per band: the column matrix stays in L2 while OpenBLAS packs it
    /// (measured: 1 MB bands cost ~10 % less CPU than 6 MB on the MMOD canvas).
    static let bandBytes = 1 << 20

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
    ///
    /// The output rows are split between the cores; each worker runs its own im2col + GEMM bands with
    /// OpenBLAS single-threaded (`BLASThreading`), so the im2col and bias passes run in parallel too
    /// and no BLAS thread spins waiting for the next call.
    func apply(to input: FeatureMap, workspace: inout Workspace) -> FeatureMap {
        guard let (outRows, outCols) = outputSize(rows: input.rows, cols: input.cols) else {
            return FeatureMap(channels: filters, rows: 0, cols: 0)
        }
        let work = filters * patchSize * outRows * outCols
        let workers = Parallel.workers(items: outRows, work: work)
        let usePhases = strideX == strideY && strideX > 1 && padX == 0 && padY == 0 && filters > 1
        let phaseCount = usePhases ? input.values.count : 0
        let bandRows = max(1, min(outRows, Self.bandBytes / max(1, 4 * patchSize * outCols)))
        let scratchCount = filters > 1 ? patchSize * bandRows * outCols : 0
        // One reused buffer for the phases and every worker's column matrix: fresh large allocations
        // per call would be fresh pages, and their faults cost as much as the copies.
        let base = workspace.reserve(phaseCount + workers * scratchCount)
        let phases = usePhases ? StridePhases(input, stride: strideX, into: base) : nil
        // Addresses cross into the workers as integers: each worker writes only its own rows and scratch.
        let scratchAddress = UInt(bitPattern: base + phaseCount)
        return FeatureMap(channels: filters, rows: outRows, cols: outCols) { out in
            let outAddress = UInt(bitPattern: out.baseAddress)
            input.values.withUnsafeBufferPointer { inBuffer in
                let inAddress = UInt(bitPattern: inBuffer.baseAddress)
                Parallel.forEachRange(of: outRows, workers: workers) { worker, rowRange in
                    let source = UnsafePointer<Float>(bitPattern: inAddress)!
                    let destination = UnsafeMutablePointer<Float>(bitPattern: outAddress)!
                    if filters == 1 {
                        accumulateDirect(source, rows: input.rows, cols: input.cols, outCols: outCols,
                                         rowRange: rowRange, into: destination)
                    } else {
                        let scratch = UnsafeMutablePointer<Float>(bitPattern: scratchAddress)! + worker * scratchCount
                        multiplyBands(source, rows: input.rows, cols: input.cols, outRows: outRows, outCols: outCols,
                                      bandRows: bandRows, scratch: scratch, phases: phases, rowRange: rowRange, into: destination)
                    }
                }
            }
        }
    }

    /// im2col + `cblas_sgemm` over bands of `rowRange`, then bias and ReLU on those rows.
    private func multiplyBands(_ input: UnsafePointer<Float>, rows: Int, cols: Int, outRows: Int, outCols: Int,
                               bandRows: Int, scratch: UnsafeMutablePointer<Float>, phases: StridePhases?,
                               rowRange: Range<Int>, into output: UnsafeMutablePointer<Float>) {
        let patch = patchSize
        let outPlane = outRows * outCols
        weights.withUnsafeBufferPointer { weightBuffer in
            var rowStart = rowRange.lowerBound
            while rowStart < rowRange.upperBound {
                let rowEnd = min(rowRange.upperBound, rowStart + bandRows)
                let columns = (rowEnd - rowStart) * outCols
                if let phases {
                    phases.im2col(self, outCols: outCols, rowStart: rowStart, rowEnd: rowEnd, into: scratch)
                } else {
                    im2col(input, rows: rows, cols: cols, outCols: outCols, rowStart: rowStart, rowEnd: rowEnd, into: scratch)
                }
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans,
                            Int32(filters), Int32(columns), Int32(patch),
                            1, weightBuffer.baseAddress!, Int32(patch),
                            scratch, Int32(columns),
                            0, output + rowStart * outCols, Int32(outPlane))
                rowStart = rowEnd
            }
        }
        let first = rowRange.lowerBound * outCols
        let count = rowRange.count * outCols
        for f in 0..<filters {
            let values = output + f * outPlane + first
            let b = bias[f]
            if appliesReLU {
                for i in 0..<count { values[i] = max(values[i] + b, 0) }
            } else {
                for i in 0..<count { values[i] += b }
            }
        }
    }

    /// A one-filter convolution (MMOD's 9×9 scorer) without im2col: each weight adds a shifted input
    /// row into the output row, which stays in L1. The column matrix would be 3,645 rows of the whole
    /// plane for a single output row.
    private func accumulateDirect(_ input: UnsafePointer<Float>, rows: Int, cols: Int, outCols: Int,
                                  rowRange: Range<Int>, into output: UnsafeMutablePointer<Float>) {
        weights.withUnsafeBufferPointer { w in
            for oy in rowRange {
                let destination = output + oy * outCols
                destination.update(repeating: bias[0], count: outCols)
                for c in 0..<channels {
                    let plane = input + c * rows * cols
                    for i in 0..<kernelRows {
                        let y = oy * strideY - padY + i
                        guard y >= 0, y < rows else { continue }
                        let sourceRow = plane + y * cols
                        for j in 0..<kernelCols {
                            let weight = w[(c * kernelRows + i) * kernelCols + j]
                            let shift = j - padX
                            let first = shift >= 0 ? 0 : (-shift + strideX - 1) / strideX
                            let last = min(outCols, (cols - 1 - shift) >= 0 ? (cols - 1 - shift) / strideX + 1 : 0)
                            guard first < last else { continue }
                            if strideX == 1 {
                                let source = sourceRow + shift
                                for ox in first..<last { destination[ox] += weight * source[ox] }
                            } else {
                                for ox in first..<last { destination[ox] += weight * sourceRow[ox * strideX + shift] }
                            }
                        }
                    }
                }
                if appliesReLU {
                    for ox in 0..<outCols { destination[ox] = max(destination[ox], 0) }
                }
            }
        }
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
