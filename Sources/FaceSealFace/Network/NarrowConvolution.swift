import CFaceSealConv

/// A convolution with few output positions (the ResNet's deep levels, 4×4 and 1×1 outputs with 256 filters), on
/// FaceSeal's narrow kernel (`fs_conv_narrow`): vectorised over filters instead of positions, so no lane is spent on
/// padding columns, and reading its weights once, packed at load time, where im2col + GEMM repacked them every call.
/// Its input copy is the direct kernel's (`DirectConvolution.Layout`); the work is split between the cores by
/// filter blocks, so each core reads only its share of the weights.
struct NarrowConvolution: Sendable {
    static let blockFilters = Int(FS_CONV_NARROW_FILTERS)
    /// A multiply-add's cost in `Parallel`'s unit: each weight is read from memory for a handful of positions, so a
    /// layer gains from both cores at a tenth of the work a compute-bound one needs.
    static let workPerMultiplyAdd = 10

    /// `[block][channel][tap][blockFilters]`, zero for the filters past the last.
    let weights: [Float]
    let blocks: Int

    /// Packs `kernel`'s weights, or `nil` when the kernel does not take its shape or this CPU has no kernel.
    init?(_ kernel: ConvolutionKernel) {
        guard DirectConvolution.takesShape(of: kernel) else { return nil }
        blocks = (kernel.filters + Self.blockFilters - 1) / Self.blockFilters
        weights = DirectConvolution.pack(kernel, blockFilters: Self.blockFilters)
    }

    /// The taps that read an input value for at least one output position: the others read only zero padding,
    /// and skipping them leaves every sum as it was (the ResNet's 1×1 outputs need only the centre tap).
    static func liveTaps(_ kernel: ConvolutionKernel, rows: Int, cols: Int, outRows: Int, outCols: Int) -> [Int32] {
        func reaches(_ i: Int, stride: Int, pad: Int, size: Int, outputs: Int) -> Bool {
            (0..<outputs).contains { o in (0..<size).contains(o * stride - pad + i) }
        }
        var live: [Int32] = []
        for i in 0..<kernel.kernelRows where reaches(i, stride: kernel.strideY, pad: kernel.padY, size: rows, outputs: outRows) {
            for j in 0..<kernel.kernelCols where reaches(j, stride: kernel.strideX, pad: kernel.padX, size: cols, outputs: outCols) {
                live.append(Int32(i * kernel.kernelCols + j))
            }
        }
        return live
    }

    /// Runs `kernel` on `input` (an `outRows × outCols` output), then the bias, residual and ReLU in
    /// `ConvolutionKernel.finish`'s order.
    func apply(_ kernel: ConvolutionKernel, level: ConvolutionKernels.Level, to input: FeatureMap, outRows: Int, outCols: Int,
               residual: FeatureMap?, workspace: inout Workspace) -> FeatureMap {
        let layout = DirectConvolution.Layout(kernel, cols: input.cols, bandRows: outRows)
        let positions = outRows * outCols
        let positionStride = blocks * Self.blockFilters
        let live = Self.liveTaps(kernel, rows: input.rows, cols: input.cols, outRows: outRows, outCols: outCols)
        let inputFloats = layout.inputFloats + Int(FS_CONV_NARROW_SLACK)
        let base = workspace.reserve(inputFloats + positions * positionStride)
        input.values.withUnsafeBufferPointer { inBuffer in
            DirectConvolution.fill(base, kernel, level: level, layout: layout, input: inBuffer.baseAddress!, rows: input.rows,
                                   cols: input.cols, rowStart: 0)
        }
        (base + layout.inputFloats).update(repeating: 0, count: inputFloats - layout.inputFloats)
        let scratchAddress = UInt(bitPattern: base)
        let work = kernel.filters * kernel.channels * live.count * outRows * outCols
        return FeatureMap(channels: kernel.filters, rows: outRows, cols: outCols) { out in
            let outAddress = UInt(bitPattern: out.baseAddress)
            ConvolutionKernel.withAddress(of: residual) { residualAddress in
                Parallel.forEachRange(of: blocks, workers: Parallel.workers(items: blocks, work: work * Self.workPerMultiplyAdd)) { _, range in
                    let copy = UnsafeMutablePointer<Float>(bitPattern: scratchAddress)!
                    let result = copy + inputFloats
                    weights.withUnsafeBufferPointer { w in
                        layout.offsets.withUnsafeBufferPointer { offsets in
                            live.withUnsafeBufferPointer { live in
                                fs_conv_narrow(copy, layout.pitch, layout.channelStride, offsets.baseAddress!, Int32(offsets.count),
                                               live.baseAddress!, Int32(live.count), Int32(kernel.channels), w.baseAddress!,
                                               Int32(range.lowerBound), Int32(range.upperBound), result, positionStride,
                                               Int32(outRows), Int32(outCols), Int32(level.rawValue))
                            }
                        }
                    }
                    let destination = UnsafeMutablePointer<Float>(bitPattern: outAddress)!
                    let added = residualAddress.flatMap { UnsafePointer<Float>(bitPattern: $0) }
                    for f in (range.lowerBound * Self.blockFilters)..<min(kernel.filters, range.upperBound * Self.blockFilters) {
                        let b = kernel.bias[f]
                        for p in 0..<positions {
                            let value = result[p * positionStride + f] + b
                            let o = f * positions + p
                            if let added {
                                destination[o] = max(value + added[o], 0)
                            } else {
                                destination[o] = kernel.appliesReLU ? max(value, 0) : value
                            }
                        }
                    }
                }
            }
        }
    }
}
