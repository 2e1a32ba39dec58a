/// dlib's `input_rgb_image_pyramid` with `pyramid_down<6>`: every level of the image, each 5/6 the
/// size of the one before, packed into one canvas so a single forward pass scans all scales
/// (dlib_format.md §3.2).
struct TiledPyramid: Sendable {
    /// A level's place in the canvas, inclusive edges.
    struct Placement: Sendable, Equatable {
        var left: Int
        var top: Int
        var right: Int
        var bottom: Int
        var width: Int { right - left + 1 }
        var height: Int { bottom - top + 1 }
    }

    /// Levels in order (level 0 is the image itself).
    let levels: [Placement]
    let canvasRows: Int
    let canvasCols: Int

    /// Lays out the levels of an image of `rows × cols`.
    init(rows: Int, cols: Int, padding: Int, outerPadding: Int, minimumHeight: Int = 5) {
        var sizes = [(width: cols, height: rows)]
        var nr = rows
        var nc = cols
        while true {
            // dlib's pyramid_down<6> shrinks by 5/6 in double, then truncates.
            nr = Int((5.0 / 6.0 * Double(nr)).rounded(.down))
            nc = Int((5.0 / 6.0 * Double(nc)).rounded(.down))
            if nr * nc == 0 || nr < minimumHeight { break }
            sizes.append((nc, nr))
        }
        let width0 = sizes[0].width
        let height0 = sizes[0].height
        let totalHeight = sizes.reduce(0) { $0 + $1.height + padding } - 2 * padding
        var height = 0
        var previousWidth = 0
        for size in sizes {
            if size.width <= width0 - previousWidth - padding && (height - height0) * 2 >= totalHeight - height0 { break }
            height += size.height + padding
            previousWidth = size.width
        }
        height -= padding
        canvasRows = height + 2 * outerPadding
        canvasCols = width0 + 2 * outerPadding

        var levels: [Placement] = []
        var y = outerPadding
        var i = 0
        // First column, top down, left-aligned.
        while y < height + outerPadding && i < sizes.count {
            let (w, h) = sizes[i]
            levels.append(Placement(left: outerPadding, top: y, right: outerPadding + w - 1, bottom: y + h - 1))
            y += h + padding
            i += 1
        }
        y -= padding
        // Then up the right edge, bottom first, right-aligned; stop before touching level 0.
        let first = levels[0]
        while i < sizes.count {
            let (w, h) = sizes[i]
            let placement = Placement(left: outerPadding + width0 - w, top: y - h, right: outerPadding + width0 - 1, bottom: y - 1)
            let overlapsFirst = !(placement.right < first.left || placement.left > first.right
                                  || placement.bottom < first.top || placement.top > first.bottom)
            if overlapsFirst { break }
            levels.append(placement)
            y -= h + padding
            i += 1
        }
        self.levels = levels
    }

    /// `image` as planar float, normalised as dlib's input layer does: `(v − mean) / 256`.
    static func normalised(_ image: RGBImage, mean: (red: Float, green: Float, blue: Float)) -> FeatureMap {
        let means = [mean.red, mean.green, mean.blue]
        let plane = image.width * image.height
        return image.pixels.withUnsafeBufferPointer { pixels in
            FeatureMap(channels: 3, rows: image.height, cols: image.width) { out in
                for c in 0..<3 {
                    let m = means[c]
                    for i in 0..<plane { out[c * plane + i] = (Float(pixels[3 * i + c]) - m) / 256 }
                }
            }
        }
    }

    /// The next pyramid level of a normalised image: floor(5/6) of each side, bilinear as in the canvas.
    static func downsampled(_ level: FeatureMap) -> FeatureMap {
        let rows = Int((5.0 / 6.0 * Double(level.rows)).rounded(.down))
        let cols = Int((5.0 / 6.0 * Double(level.cols)).rounded(.down))
        return level.values.withUnsafeBufferPointer { source in
            FeatureMap(channels: 3, rows: rows, cols: cols) { out in
                for c in 0..<3 {
                    resize(source.baseAddress! + c * level.planeSize, stride: level.cols, rows: level.rows, cols: level.cols,
                           into: out.baseAddress! + c * rows * cols, stride: cols, rows: rows, cols: cols)
                }
            }
        }
    }

    /// The network input: zeros (the mean colour after normalising), level 0 the normalised image,
    /// each further level a bilinear resize of the previous one, per channel.
    func canvas(level0 image: FeatureMap) -> FeatureMap {
        var canvas = FeatureMap(channels: 3, rows: canvasRows, cols: canvasCols)
        let plane = canvasRows * canvasCols
        let first = levels[0]
        canvas.values.withUnsafeMutableBufferPointer { out in
            let base = out.baseAddress!
            image.values.withUnsafeBufferPointer { source in
                for c in 0..<3 {
                    for y in 0..<image.rows {
                        (base + c * plane + (first.top + y) * canvasCols + first.left)
                            .update(from: source.baseAddress! + (c * image.rows + y) * image.cols, count: image.cols)
                    }
                }
            }
            for index in levels.indices.dropFirst() {
                let from = levels[index - 1], to = levels[index]
                for c in 0..<3 {
                    let channel = base + c * plane
                    Self.resize(channel + from.top * canvasCols + from.left, stride: canvasCols, rows: from.height, cols: from.width,
                                into: channel + to.top * canvasCols + to.left, stride: canvasCols, rows: to.height, cols: to.width)
                }
            }
        }
        return canvas
    }

    /// dlib's bilinear `resize_image` on a float plane, in double: corners map to corners
    /// (scale (in − 1)/(out − 1)) and the +1 neighbour is clamped to the last row or column.
    private static func resize(_ source: UnsafePointer<Float>, stride sourceStride: Int, rows inRows: Int, cols inCols: Int,
                               into destination: UnsafeMutablePointer<Float>, stride destinationStride: Int,
                               rows outRows: Int, cols outCols: Int) {
        let scaleY = Double(inRows - 1) / Double(max(outRows - 1, 1))
        let scaleX = Double(inCols - 1) / Double(max(outCols - 1, 1))
        var left = [Int](repeating: 0, count: outCols)
        var right = [Int](repeating: 0, count: outCols)
        var fx = [Double](repeating: 0, count: outCols)
        for x in 0..<outCols {
            let sx = Double(x) * scaleX
            let l = Int(sx.rounded(.down))
            left[x] = l
            right[x] = min(l + 1, inCols - 1)
            fx[x] = sx - Double(l)
        }
        for y in 0..<outRows {
            let sy = Double(y) * scaleY
            let t = Int(sy.rounded(.down))
            let b = min(t + 1, inRows - 1)
            let fy = sy - Double(t)
            let top = source + t * sourceStride
            let bottom = source + b * sourceStride
            let row = destination + y * destinationStride
            for x in 0..<outCols {
                let wx = fx[x]
                let upper = (1 - wx) * Double(top[left[x]]) + wx * Double(top[right[x]])
                let lower = (1 - wx) * Double(bottom[left[x]]) + wx * Double(bottom[right[x]])
                row[x] = Float((1 - fy) * upper + fy * lower)
            }
        }
    }

    /// The level whose placement is nearest to `(x, y)` (rounded with floor(v + 0.5)): one that
    /// contains the point wins, otherwise the smallest Euclidean distance.
    func level(nearestTo x: Double, _ y: Double) -> Int {
        let px = (x + 0.5).rounded(.down)
        let py = (y + 0.5).rounded(.down)
        var best = Double.infinity
        var bestLevel = 0
        for (i, placement) in levels.enumerated() {
            let nx = min(max(px, Double(placement.left)), Double(placement.right))
            let ny = min(max(py, Double(placement.top)), Double(placement.bottom))
            let distance = ((nx - px) * (nx - px) + (ny - py) * (ny - py)).squareRoot()
            if distance == 0 { return i }
            if distance < best {
                best = distance
                bestLevel = i
            }
        }
        return bestLevel
    }
}
