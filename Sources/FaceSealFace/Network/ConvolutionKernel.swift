/// A convolution with the following per-channel affine layer folded into its weights and bias,
/// and optionally the ReLU after it: FaceSeal's direct kernel (`DirectConvolution`) where the CPU has one
/// and the output is wide enough, otherwise one im2col + `cblas_sgemm` per band of output rows; then one
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
    /// The weights packed for the direct kernel, when this CPU has one and it takes this shape.
    private(set) var direct: DirectConvolution?
    /// Or for the narrow kernel, for a layer whose output is known to be too narrow for the direct one.
    private(set) var narrow: NarrowConvolution?

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
        direct = DirectConvolution(self)
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
        if narrow != nil {
            narrow = NarrowConvolution(self)
        } else {
            direct = DirectConvolution(self)
        }
    }

    /// Packs the weights for the narrow kernel instead of the direct one, for a layer whose output is known to be
    /// narrower than `DirectConvolution.minimumOutputCols` (after `fold`).
    mutating func useNarrowKernel() {
        direct = nil
        narrow = NarrowConvolution(self)
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

    /// Runs the convolution; with `residual` (a map of the output's shape) it then adds it and clamps at
    /// zero: a residual unit's `add_prev` and `relu` in the same pass as the bias. The caller has checked
    /// `input.channels == channels` and the size.
    ///
    /// The work is split between the cores, each worker running its own im2col + GEMM with OpenBLAS
    /// single-threaded (`BLAS`), so the im2col and bias passes run in parallel too and no BLAS
    /// thread spins waiting for the next call. A layer with more filters than output positions (the
    /// ResNet's deep levels, where the weights are most of the data) splits its filters, so that each
    /// worker packs only its share of the weights; the others split their output rows.
    func apply(to input: FeatureMap, residual: FeatureMap? = nil, workspace: inout Workspace) -> FeatureMap {
        guard let (outRows, outCols) = outputSize(rows: input.rows, cols: input.cols) else {
            return FeatureMap(channels: filters, rows: 0, cols: 0)
        }
        let positions = outRows * outCols
        let work = filters * patchSize * positions
        let level = ConvolutionKernels.active
        if let narrow, level > .portable {
            return narrow.apply(self, level: level, to: input, outRows: outRows, outCols: outCols, residual: residual,
                                workspace: &workspace)
        }
        if let direct, level > .portable, outCols >= DirectConvolution.minimumOutputCols {
            return applyDirect(direct, level: level, to: input, outRows: outRows, outCols: outCols, residual: residual,
                               workers: Parallel.workers(items: outRows, work: work), workspace: &workspace)
        }
        let usePhases = strideX == strideY && strideX > 1 && padX == 0 && padY == 0 && filters > 1
        let splitsFilters = filters > positions && 4 * patchSize * positions <= Self.bandBytes
        let workers = Parallel.workers(items: splitsFilters ? filters : outRows, work: work)
        let bandRows = splitsFilters ? outRows : max(1, min(outRows, Self.bandBytes / max(1, 4 * patchSize * outCols)))
        let columnCount = filters > 1 ? patchSize * bandRows * outCols : 0
        // A band's input rows, split into phases next to its column matrix.
        let phaseCount = usePhases ? channels * min(input.rows, (bandRows - 1) * strideY + kernelRows) * input.cols : 0
        let scratchCount = columnCount + phaseCount
        // One reused buffer for every worker's scratch (one shared column matrix when the filters are split):
        // fresh large allocations per call would be fresh pages, and their faults cost as much as the copies.
        let base = workspace.reserve((splitsFilters ? 1 : workers) * scratchCount)
        // Addresses cross into the workers as integers: each worker writes only its own rows or filters.
        let scratchAddress = UInt(bitPattern: base)
        return FeatureMap(channels: filters, rows: outRows, cols: outCols) { out in
            let outAddress = UInt(bitPattern: out.baseAddress)
            input.values.withUnsafeBufferPointer { inBuffer in
                let inAddress = UInt(bitPattern: inBuffer.baseAddress)
                if splitsFilters {
                    fillColumns(inBuffer.baseAddress!, rows: input.rows, cols: input.cols, outCols: outCols, rowStart: 0, rowEnd: outRows,
                                columns: base, phases: usePhases ? base + columnCount : nil)
                }
                Self.withAddress(of: residual) { residualAddress in
                    Parallel.forEachRange(of: splitsFilters ? filters : outRows, workers: workers) { worker, range in
                        let source = UnsafePointer<Float>(bitPattern: inAddress)!
                        let destination = UnsafeMutablePointer<Float>(bitPattern: outAddress)!
                        let scratch = UnsafeMutablePointer<Float>(bitPattern: scratchAddress)!
                        let added = residualAddress.flatMap { UnsafePointer<Float>(bitPattern: $0) }
                        if filters == 1 {
                            accumulateDirect(source, rows: input.rows, cols: input.cols, outCols: outCols, rowRange: range, into: destination)
                        } else if splitsFilters {
                            multiply(filters: range, columns: scratch, count: positions, into: destination, stride: positions)
                            finish(destination, filters: range, positions: 0..<positions, plane: positions, residual: added)
                        } else {
                            let mine = scratch + worker * scratchCount
                            multiplyBands(source, rows: input.rows, cols: input.cols, outRows: outRows, outCols: outCols,
                                          bandRows: bandRows, columns: mine, phases: usePhases ? mine + columnCount : nil,
                                          rowRange: range, into: destination)
                            finish(destination, filters: 0..<filters, positions: (range.lowerBound * outCols)..<(range.upperBound * outCols),
                                   plane: positions, residual: added)
                        }
                    }
                }
            }
        }
    }

    /// The direct kernel's path: each worker takes a share of the output rows and runs them band by band in its own
    /// part of the workspace.
    private func applyDirect(_ direct: DirectConvolution, level: ConvolutionKernels.Level, to input: FeatureMap, outRows: Int,
                             outCols: Int, residual: FeatureMap?, workers: Int, workspace: inout Workspace) -> FeatureMap {
        let bandRows = direct.bandRows(self, cols: input.cols, rows: (outRows + workers - 1) / workers)
        let layout = direct.layout(self, cols: input.cols, bandRows: bandRows)
        let scratchAddress = UInt(bitPattern: workspace.reserve(workers * direct.floats(layout)))
        return FeatureMap(channels: filters, rows: outRows, cols: outCols) { out in
            let outAddress = UInt(bitPattern: out.baseAddress)
            input.values.withUnsafeBufferPointer { inBuffer in
                let inAddress = UInt(bitPattern: inBuffer.baseAddress)
                Self.withAddress(of: residual) { residualAddress in
                    Parallel.forEachRange(of: outRows, workers: workers) { worker, range in
                        direct.run(self, level: level, input: UnsafePointer<Float>(bitPattern: inAddress)!, rows: input.rows,
                                   cols: input.cols, outRows: outRows, outCols: outCols, layout: layout, bandRows: bandRows,
                                   rowRange: range, scratch: UnsafeMutablePointer<Float>(bitPattern: scratchAddress)! + worker * direct.floats(layout),
                                   output: UnsafeMutablePointer<Float>(bitPattern: outAddress)!,
                                   residual: residualAddress.flatMap { UnsafePointer<Float>(bitPattern: $0) })
                    }
                }
            }
        }
    }

    /// The address of `map`'s values while `body` runs, as an integer that can cross into the workers.
    static func withAddress<R>(of map: FeatureMap?, _ body: (UInt?) -> R) -> R {
        guard let map else { return body(nil) }
        return map.values.withUnsafeBufferPointer { body(UInt(bitPattern: $0.baseAddress)) }
    }

    /// im2col + `cblas_sgemm` over bands of `rowRange`.
    /// With `phases` scratch, each band's input rows are first split into stride phases there.
    private func multiplyBands(_ input: UnsafePointer<Float>, rows: Int, cols: Int, outRows: Int, outCols: Int,
                               bandRows: Int, columns scratch: UnsafeMutablePointer<Float>, phases: UnsafeMutablePointer<Float>?,
                               rowRange: Range<Int>, into output: UnsafeMutablePointer<Float>) {
        var rowStart = rowRange.lowerBound
        while rowStart < rowRange.upperBound {
            let rowEnd = min(rowRange.upperBound, rowStart + bandRows)
            fillColumns(input, rows: rows, cols: cols, outCols: outCols, rowStart: rowStart, rowEnd: rowEnd, columns: scratch, phases: phases)
            multiply(filters: 0..<filters, columns: scratch, count: (rowEnd - rowStart) * outCols,
                     into: output + rowStart * outCols, stride: outRows * outCols)
            rowStart = rowEnd
        }
    }

    /// The column matrix of output rows `rowStart..<rowEnd`, through the stride phases when there is scratch for them.
    private func fillColumns(_ input: UnsafePointer<Float>, rows: Int, cols: Int, outCols: Int, rowStart: Int, rowEnd: Int,
                             columns: UnsafeMutablePointer<Float>, phases: UnsafeMutablePointer<Float>?) {
        if let phases {
            let inputRows = (rowStart * strideY)..<min(rows, (rowEnd - 1) * strideY + kernelRows)
            StridePhases(input, channels: channels, height: rows, width: cols, rows: inputRows, stride: strideX, into: phases)
                .im2col(self, outCols: outCols, rowStart: rowStart, rowEnd: rowEnd, into: columns)
        } else {
            im2col(input, rows: rows, cols: cols, outCols: outCols, rowStart: rowStart, rowEnd: rowEnd, into: columns)
        }
    }

    /// `output[f][0..<count] = Σ_k W[f][k] · columns[k][0..<count]` for the filters `filters`; output rows `stride` apart.
    private func multiply(filters range: Range<Int>, columns: UnsafeMutablePointer<Float>, count: Int,
                          into output: UnsafeMutablePointer<Float>, stride: Int) {
        let patch = patchSize
        weights.withUnsafeBufferPointer { weightBuffer in
            BLAS.multiply(m: range.count, n: count, k: patch, a: weightBuffer.baseAddress! + range.lowerBound * patch, lda: patch,
                          b: columns, ldb: count, c: output + range.lowerBound * stride, ldc: stride)
        }
    }

    /// Adds the bias, then the residual and a ReLU, or the layer's own ReLU: dlib's `affine`, `add_prev`
    /// and `relu`, in that order.
    private func finish(_ output: UnsafeMutablePointer<Float>, filters range: Range<Int>, positions: Range<Int>, plane: Int,
                        residual: UnsafePointer<Float>?) {
        for f in range {
            let values = output + f * plane + positions.lowerBound
            let b = bias[f]
            let count = positions.count
            if let residual {
                let added = residual + f * plane + positions.lowerBound
                for i in 0..<count { values[i] = max(values[i] + b + added[i], 0) }
            } else if appliesReLU {
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
                            for ox in 0..<outCols { destination[ox] = 0 }
                            continue
                        }
                        for ox in 0..<first { destination[ox] = 0 }
                        for ox in last..<outCols { destination[ox] = 0 }
                        let source = plane + y * cols + shift
                        if strideX == 1 {
                            // The deep levels' rows are a few values long: a plain loop beats a memmove call.
                            if last - first < 16 {
                                for ox in first..<last { destination[ox] = source[ox] }
                            } else {
                                (destination + first).update(from: source + first, count: last - first)
                            }
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
