/// The detector's input for one search: dlib's pyramid levels of the image, or only the parts of them a
/// search needs (the levels of faces large enough, the windows that cover a region), laid out as dlib
/// lays out its levels.
///
/// Each part keeps the position dlib's own canvas gives its pixels, modulo the network's stride, so every
/// score cell inside it sees the same pixels on the same sampling grid as in dlib's canvas: a face well
/// inside a part scores as it does there and gets dlib's box. Only cells near a part's edge see other
/// neighbours. Without a search (every level, whole) the canvas is dlib's.
struct DetectionCanvas: Sendable {
    /// A window of one level and where it sits in the canvas.
    struct Part: Sendable {
        var level: Int
        var window: LevelWindow
        var placement: TiledPyramid.Placement
    }

    let parts: [Part]
    let rows: Int
    let cols: Int
    /// The size of every level of the image, level 0 first.
    private let sizes: [TiledPyramid.Size]

    /// The canvas for an image of `imageRows × imageCols`: levels from `firstLevel` on, and with a `region`
    /// (inside the image) only the windows of it in the levels whose `faceWindow`-px boxes fit in it.
    /// `nil` when no level is left.
    init?(imageRows: Int, imageCols: Int, firstLevel: Int, region: FaceRect?, faceWindow: Int,
          stride: (x: Int, y: Int), padding: Int, outerPadding: Int) {
        let sizes = TiledPyramid.levelSizes(rows: imageRows, cols: imageCols)
        let dlib = TiledPyramid(sizes: sizes, padding: padding, outerPadding: outerPadding)
        var chosen: [(level: Int, window: LevelWindow)] = []
        var level = firstLevel
        var box = Double(faceWindow) * Self.scale(of: firstLevel)
        while level < dlib.levels.count {
            let size = sizes[level]
            if let region {
                guard box <= Double(min(region.width, region.height)) + 1 else { break }
                chosen.append((level, Self.window(of: region, in: size, imageRows: imageRows, imageCols: imageCols)))
            } else {
                chosen.append((level, LevelWindow(x: 0, y: 0, width: size.width, height: size.height)))
            }
            level += 1
            box *= 1.2
        }
        guard !chosen.isEmpty else { return nil }
        let layout = TiledPyramid(sizes: chosen.map { TiledPyramid.Size(width: $0.window.width, height: $0.window.height) },
                                  padding: padding, outerPadding: outerPadding)
        var rows = layout.canvasRows
        var cols = layout.canvasCols
        var parts: [Part] = []
        for (index, placement) in layout.levels.enumerated() {
            let (level, window) = chosen[index]
            // Shift right and down (less than the gap between parts) onto dlib's phase.
            let original = dlib.levels[level]
            let dx = Self.phase(original.left + window.x - placement.left, stride.x)
            let dy = Self.phase(original.top + window.y - placement.top, stride.y)
            let moved = TiledPyramid.Placement(left: placement.left + dx, top: placement.top + dy,
                                               right: placement.right + dx, bottom: placement.bottom + dy)
            rows = max(rows, moved.bottom + 1 + outerPadding)
            cols = max(cols, moved.right + 1 + outerPadding)
            parts.append(Part(level: level, window: window, placement: moved))
        }
        self.parts = parts
        self.rows = rows
        self.cols = cols
        self.sizes = sizes
    }

    /// How many pixels of the image one pixel of `level` spans, roughly (dlib's 1.2 per level).
    static func scale(of level: Int) -> Double {
        (0..<level).reduce(1.0) { value, _ in value * 1.2 }
    }

    private static func phase(_ value: Int, _ stride: Int) -> Int {
        ((value % stride) + stride) % stride
    }

    /// `region` (image pixels) in a level's pixels: corners map to corners, as in dlib's resize.
    private static func window(of region: FaceRect, in size: TiledPyramid.Size, imageRows: Int, imageCols: Int) -> LevelWindow {
        let fx = Double(size.width - 1) / Double(max(imageCols - 1, 1))
        let fy = Double(size.height - 1) / Double(max(imageRows - 1, 1))
        let x0 = max(0, Int((Double(region.left) * fx).rounded(.down)))
        let y0 = max(0, Int((Double(region.top) * fy).rounded(.down)))
        let x1 = min(size.width - 1, Int((Double(region.right) * fx).rounded(.up)))
        let y1 = min(size.height - 1, Int((Double(region.bottom) * fy).rounded(.up)))
        return LevelWindow(x: x0, y: y0, width: x1 - x0 + 1, height: y1 - y0 + 1)
    }

    /// The part whose placement is nearest to canvas point `(x, y)`, by dlib's rule.
    func part(nearestTo x: Double, _ y: Double) -> Part {
        parts[TiledPyramid.placement(nearestTo: x, y, in: parts.map(\.placement))]
    }

    /// The canvas: zeros (the mean colour after normalising) and each part's pixels, normalised as dlib's
    /// input layer does, `(v − mean) / 256`. Each level is a bilinear resize of the one before, computed
    /// only over the windows the parts above it depend on.
    func fill(from image: RGBImage, mean: (red: Float, green: Float, blue: Float)) -> FeatureMap {
        let top = parts.map(\.level).max()!
        // The window each level needs: its own parts, and what the next level's window is resized from.
        var needed = [LevelWindow?](repeating: nil, count: top + 1)
        for level in stride(from: top, through: 0, by: -1) {
            var window = parts.filter { $0.level == level }.map(\.window).reduce(nil) { $0?.union($1) ?? $1 }
            if level < top, let above = needed[level + 1] {
                let source = TiledPyramid.sourceWindow(of: above, from: sizes[level], to: sizes[level + 1])
                window = window?.union(source) ?? source
            }
            needed[level] = window
        }
        var canvas = FeatureMap(channels: 3, rows: rows, cols: cols)
        let plane = rows * cols
        var previous: (window: LevelWindow, pixels: FeatureMap)?
        for level in 0...top {
            let window = needed[level]!
            let pixels: FeatureMap
            if let previous {
                pixels = Self.resized(previous.pixels, at: previous.window, from: sizes[level - 1], to: sizes[level], window: window)
            } else {
                let area = FaceRect(left: window.x, top: window.y, right: window.x + window.width - 1, bottom: window.y + window.height - 1)
                pixels = Self.normalised(image, region: area, mean: mean)
            }
            canvas.values.withUnsafeMutableBufferPointer { out in
                pixels.values.withUnsafeBufferPointer { source in
                    for part in parts where part.level == level {
                        for c in 0..<3 {
                            for y in 0..<part.window.height {
                                let from = source.baseAddress! + (c * window.height + part.window.y - window.y + y) * window.width
                                    + part.window.x - window.x
                                (out.baseAddress! + c * plane + (part.placement.top + y) * cols + part.placement.left)
                                    .update(from: from, count: part.window.width)
                            }
                        }
                    }
                }
            }
            previous = (window, pixels)
        }
        return canvas
    }

    /// `region` of `image` (inside it) as planar float, normalised: `(v − mean) / 256`.
    static func normalised(_ image: RGBImage, region: FaceRect, mean: (red: Float, green: Float, blue: Float)) -> FeatureMap {
        let means = [mean.red, mean.green, mean.blue]
        let rows = region.height, cols = region.width
        let plane = rows * cols
        return image.pixels.withUnsafeBufferPointer { pixels in
            FeatureMap(channels: 3, rows: rows, cols: cols) { out in
                for y in 0..<rows {
                    let source = pixels.baseAddress! + ((region.top + y) * image.width + region.left) * 3
                    for c in 0..<3 {
                        let m = means[c]
                        let target = out.baseAddress! + c * plane + y * cols
                        for x in 0..<cols { target[x] = (Float(source[3 * x + c]) - m) / 256 }
                    }
                }
            }
        }
    }

    /// `window` of the level of size `to`, resized from `pixels`, which hold the window `at` of the level below.
    private static func resized(_ pixels: FeatureMap, at origin: LevelWindow, from: TiledPyramid.Size, to: TiledPyramid.Size,
                                window: LevelWindow) -> FeatureMap {
        pixels.values.withUnsafeBufferPointer { source in
            FeatureMap(channels: 3, rows: window.height, cols: window.width) { out in
                for c in 0..<3 {
                    TiledPyramid.resize(source.baseAddress! + c * pixels.planeSize, stride: origin.width, origin: (origin.x, origin.y),
                                        from: from, into: out.baseAddress! + c * window.height * window.width, stride: window.width,
                                        window: window, to: to)
                }
            }
        }
    }
}
