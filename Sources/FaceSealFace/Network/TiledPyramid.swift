/// dlib's `input_rgb_image_pyramid` with `pyramid_down<6>`: every level of the image, each 5/6 the
/// size of the one before, packed into one canvas so a single forward pass scans all scales
/// (dlib_format.md §3.2). This type is the layout; `DetectionCanvas` fills it.
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

    /// A level's (or a part's) size.
    struct Size: Sendable, Equatable {
        var width: Int
        var height: Int
    }

    /// The placements, in the order of the sizes laid out; sizes that do not fit are left out at the end,
    /// as dlib leaves out its smallest levels.
    let levels: [Placement]
    let canvasRows: Int
    let canvasCols: Int

    /// Lays out the levels of an image of `rows × cols`.
    init(rows: Int, cols: Int, padding: Int, outerPadding: Int) {
        self.init(sizes: Self.levelSizes(rows: rows, cols: cols), padding: padding, outerPadding: outerPadding)
    }

    /// The sizes of dlib's levels of an image of `rows × cols`, level 0 first.
    static func levelSizes(rows: Int, cols: Int, minimumHeight: Int = 5) -> [Size] {
        var sizes = [Size(width: cols, height: rows)]
        var nr = rows
        var nc = cols
        while true {
            // dlib's pyramid_down<6> shrinks by 5/6 in double, then truncates.
            nr = Int((5.0 / 6.0 * Double(nr)).rounded(.down))
            nc = Int((5.0 / 6.0 * Double(nc)).rounded(.down))
            if nr * nc == 0 || nr < minimumHeight { break }
            sizes.append(Size(width: nc, height: nr))
        }
        return sizes
    }

    /// dlib's layout of `sizes` (largest first): a column of the largest on the left, the rest up the right edge.
    init(sizes: [Size], padding: Int, outerPadding: Int) {
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
            let size = sizes[i]
            levels.append(Placement(left: outerPadding, top: y, right: outerPadding + size.width - 1, bottom: y + size.height - 1))
            y += size.height + padding
            i += 1
        }
        y -= padding
        // Then up the right edge, bottom first, right-aligned; stop before touching the first.
        let first = levels[0]
        while i < sizes.count {
            let size = sizes[i]
            let placement = Placement(left: outerPadding + width0 - size.width, top: y - size.height,
                                      right: outerPadding + width0 - 1, bottom: y - 1)
            let overlapsFirst = !(placement.right < first.left || placement.left > first.right
                                  || placement.bottom < first.top || placement.top > first.bottom)
            if overlapsFirst { break }
            levels.append(placement)
            y -= size.height + padding
            i += 1
        }
        self.levels = levels
    }

    /// dlib's bilinear `resize_image` from a level of `from` to one of `to`, in double: corners map to
    /// corners (scale (in − 1)/(out − 1)) and the +1 neighbour is clamped to the last row or column.
    /// Computes only the output `window`, from a source holding the input level from `sourceOrigin` on.
    static func resize(_ source: UnsafePointer<Float>, stride sourceStride: Int, origin sourceOrigin: (x: Int, y: Int), from: Size,
                       into destination: UnsafeMutablePointer<Float>, stride destinationStride: Int,
                       window: LevelWindow, to: Size) {
        let scaleY = Double(from.height - 1) / Double(max(to.height - 1, 1))
        let scaleX = Double(from.width - 1) / Double(max(to.width - 1, 1))
        var left = [Int](repeating: 0, count: window.width)
        var right = [Int](repeating: 0, count: window.width)
        var fx = [Double](repeating: 0, count: window.width)
        for i in 0..<window.width {
            let sx = Double(window.x + i) * scaleX
            let l = Int(sx.rounded(.down))
            left[i] = l - sourceOrigin.x
            right[i] = min(l + 1, from.width - 1) - sourceOrigin.x
            fx[i] = sx - Double(l)
        }
        for j in 0..<window.height {
            let sy = Double(window.y + j) * scaleY
            let t = Int(sy.rounded(.down))
            let b = min(t + 1, from.height - 1)
            let fy = sy - Double(t)
            let top = source + (t - sourceOrigin.y) * sourceStride
            let bottom = source + (b - sourceOrigin.y) * sourceStride
            let row = destination + j * destinationStride
            for i in 0..<window.width {
                let wx = fx[i]
                let upper = (1 - wx) * Double(top[left[i]]) + wx * Double(top[right[i]])
                let lower = (1 - wx) * Double(bottom[left[i]]) + wx * Double(bottom[right[i]])
                row[i] = Float((1 - fy) * upper + fy * lower)
            }
        }
    }

    /// The input window of level `from` that `resize` reads to make `window` of level `to`.
    static func sourceWindow(of window: LevelWindow, from: Size, to: Size) -> LevelWindow {
        let scaleY = Double(from.height - 1) / Double(max(to.height - 1, 1))
        let scaleX = Double(from.width - 1) / Double(max(to.width - 1, 1))
        let x0 = Int((Double(window.x) * scaleX).rounded(.down))
        let y0 = Int((Double(window.y) * scaleY).rounded(.down))
        let x1 = min(Int((Double(window.x + window.width - 1) * scaleX).rounded(.down)) + 1, from.width - 1)
        let y1 = min(Int((Double(window.y + window.height - 1) * scaleY).rounded(.down)) + 1, from.height - 1)
        return LevelWindow(x: x0, y: y0, width: x1 - x0 + 1, height: y1 - y0 + 1)
    }

    /// The placement nearest to `(x, y)` (rounded with floor(v + 0.5)): one that contains the point wins,
    /// otherwise the smallest Euclidean distance.
    static func placement(nearestTo x: Double, _ y: Double, in placements: [Placement]) -> Int {
        let px = (x + 0.5).rounded(.down)
        let py = (y + 0.5).rounded(.down)
        var best = Double.infinity
        var bestIndex = 0
        for (i, placement) in placements.enumerated() {
            let nx = min(max(px, Double(placement.left)), Double(placement.right))
            let ny = min(max(py, Double(placement.top)), Double(placement.bottom))
            let distance = ((nx - px) * (nx - px) + (ny - py) * (ny - py)).squareRoot()
            if distance == 0 { return i }
            if distance < best {
                best = distance
                bestIndex = i
            }
        }
        return bestIndex
    }
}

/// A rectangle of one pyramid level, in that level's pixels.
struct LevelWindow: Sendable, Equatable {
    var x: Int
    var y: Int
    var width: Int
    var height: Int

    /// The smallest window holding both.
    func union(_ other: LevelWindow) -> LevelWindow {
        let x0 = min(x, other.x), y0 = min(y, other.y)
        let x1 = max(x + width, other.x + other.width), y1 = max(y + height, other.y + other.height)
        return LevelWindow(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }
}
