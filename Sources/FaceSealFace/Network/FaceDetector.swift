public import Foundation

/// A face found by `FaceDetector`: dlib's `mmod_rectangle`.
public struct FaceDetection: Sendable, Hashable {
    /// Left column, inclusive. Edges may lie outside the image for faces cut by the border.
    public var left: Int
    /// Top row, inclusive.
    public var top: Int
    /// Right column, inclusive.
    public var right: Int
    /// Bottom row, inclusive.
    public var bottom: Int
    /// The detector's score (dlib's `confidence`); detections are reported above the threshold.
    public var confidence: Float

    /// A detection from its inclusive edges and score.
    public init(left: Int, top: Int, right: Int, bottom: Int, confidence: Float) {
        self.left = left
        self.top = top
        self.right = right
        self.bottom = bottom
        self.confidence = confidence
    }

    /// right − left + 1.
    public var width: Int { right - left + 1 }
    /// bottom − top + 1.
    public var height: Int { bottom - top + 1 }
}

/// dlib's CNN face detector (`mmod_human_face_detector.dat`), equivalent to
/// `cnn_face_detection_model_v1(img, 0)`: a tiled image pyramid, six 5×5 convolutions and a 9×9
/// scorer, then sliding-window decoding and dlib's non-maximum suppression.
///
/// The weights are parsed once and immutable, so one instance can serve any number of tasks at once.
/// Faces smaller than about 40 px are not found (the window is 80×80 at the finest level); scale the
/// image up first to find smaller ones.
public struct FaceDetector: Sendable {
    /// Largest accepted image side.
    public static let maximumImageSide = 4096
    /// Largest accepted pixel count. The canvas is about 3.8× the image and the first layer's input and
    /// output are float copies of it (about 140 bytes per image pixel at the peak, 1.1 GB here); scale
    /// larger photos down, or pass `minimumFaceSize`, first.
    public static let maximumImagePixels = 8_000_000

    private let mean: (red: Float, green: Float, blue: Float)
    private let padding: Int
    private let outerPadding: Int
    private let plan: LayerPlan
    private let window: (width: Int, height: Int)
    private let nmsIoU: Double
    private let nmsCovered: Double
    /// (stride, pad, kernel/2) of each convolution, last first: maps a score cell back to the canvas.
    private let backProjection: [(strideX: Int, strideY: Int, offsetX: Int, offsetY: Int)]
    /// Smallest image side with a non-empty score map (computed from the kernels).
    private let minimumCanvasSide: Int
    /// The network's total stride: a score cell steps this many canvas pixels.
    private let stride: (x: Int, y: Int)

    /// Loads the model file. Throws `DlibNetworkError` or `FaceModelError` when it is unreadable,
    /// truncated, corrupt, or not dlib's MMOD detector.
    public init(modelURL: URL) throws {
        try self.init(file: DlibNetworkFile(contentsOf: modelURL))
    }

    /// Loads the model from the bytes of the file.
    public init(modelBytes: [UInt8]) throws {
        try self.init(file: DlibNetworkFile(bytes: modelBytes))
    }

    init(file: DlibNetworkFile) throws {
        guard case .mmod(let options) = file.loss else {
            throw DlibNetworkError.unexpectedNetwork("not an MMOD detector (loss_mmod)")
        }
        guard options.windows.count == 1, let window = options.windows.first else {
            throw DlibNetworkError.unexpectedNetwork("\(options.windows.count) detector windows; one is supported")
        }
        guard case .rgbImagePyramid(let mean, let padding, let outerPadding) = file.input else {
            throw DlibNetworkError.unexpectedNetwork("input is not an RGB image pyramid")
        }
        let plan = try LayerPlan(layers: file.layers, inputChannels: 3)
        var kernels: [ConvolutionKernel] = []
        for step in plan.steps {
            switch step {
            case .convolution(let kernel): kernels.append(kernel)
            case .relu, .affine: continue
            default: throw DlibNetworkError.unexpectedNetwork("the detector may only hold convolutions, affine and relu layers")
            }
        }
        guard let last = kernels.last, last.filters == 1 else {
            throw DlibNetworkError.unexpectedNetwork("the detector must end in a one-filter score convolution")
        }
        self.mean = mean
        self.padding = padding
        self.outerPadding = outerPadding
        self.plan = plan
        self.window = (window.width, window.height)
        self.nmsIoU = options.nmsIoUThreshold
        self.nmsCovered = options.nmsPercentCoveredThreshold
        self.stride = kernels.reduce((1, 1)) { ($0.0 * $1.strideX, $0.1 * $1.strideY) }
        self.backProjection = kernels.reversed().map {
            ($0.strideX, $0.strideY, $0.kernelCols / 2 - $0.padX, $0.kernelRows / 2 - $0.padY)
        }
        // Grow a side until every convolution leaves at least one output cell.
        var side = 1
        while side < 4096 {
            var size: (rows: Int, cols: Int)? = (side, side)
            for kernel in kernels { size = size.flatMap { kernel.outputSize(rows: $0.rows, cols: $0.cols) } }
            if size != nil { break }
            side += 1
        }
        self.minimumCanvasSide = side
    }

    /// The faces in `image`, strongest first, after non-maximum suppression: dlib's
    /// `cnn_face_detection_model_v1(img, 0)`.
    ///
    /// - `threshold` is dlib's `adjust_threshold`: raise it for fewer false alarms, lower it to find
    ///   harder faces.
    /// - `minimumFaceSize` (pixels, 0 = dlib's behaviour) skips the finest pyramid levels, all of whose
    ///   boxes are smaller than this: level k's boxes are about 80·1.2^k px, and each skipped level
    ///   removes about 30 % of the work. The smaller canvas moves level borders, so a face may come out
    ///   one pyramid step (×1.2) apart from dlib's box; a face whose box would be at least this large is
    ///   still found. A selfie capture can afford 110 px.
    /// - `region` (nil = the whole image) searches only that part of the image, clipped to it; boxes are
    ///   in image coordinates and may extend past the region for faces its edge cuts.
    public func detect(in image: RGBImage, threshold: Float = 0, minimumFaceSize: Int = 0, region: FaceRect? = nil) throws -> [FaceDetection] {
        guard image.width > 0, image.height > 0,
              image.width <= Self.maximumImageSide, image.height <= Self.maximumImageSide,
              image.width * image.height <= Self.maximumImagePixels
        else {
            throw DlibNetworkError.badInput("image of \(image.width)×\(image.height); sides must be 1…\(Self.maximumImageSide)"
                                            + " and the area at most \(Self.maximumImagePixels) pixels")
        }
        guard image.pixels.count == image.width * image.height * 3 else {
            throw DlibNetworkError.badInput("image has \(image.pixels.count) bytes, expected \(image.width * image.height * 3)")
        }
        let bounds = FaceRect(left: 0, top: 0, right: image.width - 1, bottom: image.height - 1)
        let area = region.map { $0.intersection(bounds) }
        if let area, area.width == 0 || area.height == 0 { return [] }
        let faceWindow = max(window.width, window.height)
        guard let canvas = DetectionCanvas(
            imageRows: image.height, imageCols: image.width,
            firstLevel: Self.skippedLevels(minimumFaceSize: minimumFaceSize, window: faceWindow), region: area,
            faceWindow: faceWindow, stride: stride, padding: padding, outerPadding: outerPadding),
            canvas.rows >= minimumCanvasSide, canvas.cols >= minimumCanvasSide else { return [] }
        let scores = try plan.run(canvas.fill(from: image, mean: mean))
        return suppressNonMaxima(decode(scores, canvas: canvas, threshold: threshold))
    }

    /// Levels all of whose boxes are smaller than `minimumFaceSize`: level k's boxes are window·1.2^k px,
    /// give or take the one pixel of rounding at each edge.
    static func skippedLevels(minimumFaceSize: Int, window: Int) -> Int {
        var levels = 0
        var size = Double(window)
        while size + 1 < Double(minimumFaceSize) && levels < 32 {
            levels += 1
            size *= 1.2
        }
        return levels
    }

    /// Every score cell above `threshold`, mapped back through the network and the canvas to an image
    /// rectangle, rounded as dlib does (`lround`).
    private func decode(_ scores: FeatureMap, canvas: DetectionCanvas, threshold: Float) -> [FaceDetection] {
        var found: [FaceDetection] = []
        let halfWidth = Double(window.width - 1) / 2
        let halfHeight = Double(window.height - 1) / 2
        for r in 0..<scores.rows {
            for c in 0..<scores.cols {
                let score = scores.values[r * scores.cols + c]
                guard score > threshold else { continue }
                var x = c
                var y = r
                for step in backProjection {
                    x = x * step.strideX + step.offsetX
                    y = y * step.strideY + step.offsetY
                }
                var left = Double(x) - halfWidth, right = Double(x) + halfWidth
                var top = Double(y) - halfHeight, bottom = Double(y) + halfHeight
                // Into the part's level: its place in the canvas off, its window's place in the level on.
                let part = canvas.part(nearestTo: (left + right) / 2, (top + bottom) / 2)
                let dx = Double(part.window.x - part.placement.left), dy = Double(part.window.y - part.placement.top)
                left += dx
                right += dx
                top += dy
                bottom += dy
                // Undo the level's steps of pyramid_down<6>.
                for _ in 0..<part.level {
                    left = left * 1.2 + 0.3
                    top = top * 1.2 + 0.3
                    right = right * 1.2 + 0.3
                    bottom = bottom * 1.2 + 0.3
                }
                found.append(FaceDetection(
                    left: Int(left.rounded(.toNearestOrAwayFromZero)), top: Int(top.rounded(.toNearestOrAwayFromZero)),
                    right: Int(right.rounded(.toNearestOrAwayFromZero)), bottom: Int(bottom.rounded(.toNearestOrAwayFromZero)),
                    confidence: score))
            }
        }
        return found
    }

    /// dlib's greedy NMS: strongest first, a box is dropped when it overlaps a kept one.
    private func suppressNonMaxima(_ candidates: [FaceDetection]) -> [FaceDetection] {
        // Ties keep scan order, as a stable sort in dlib does.
        let order = candidates.indices.sorted {
            candidates[$0].confidence != candidates[$1].confidence
                ? candidates[$0].confidence > candidates[$1].confidence : $0 < $1
        }
        var kept: [FaceDetection] = []
        for index in order {
            let candidate = candidates[index]
            if kept.contains(where: { overlaps($0, candidate) }) { continue }
            kept.append(candidate)
        }
        return kept
    }

    /// dlib's `test_box_overlap` on inclusive integer boxes. The IoU denominator is the area of the
    /// bounding box of the two, not of their union.
    private func overlaps(_ a: FaceDetection, _ b: FaceDetection) -> Bool {
        let left = max(a.left, b.left), top = max(a.top, b.top)
        let right = min(a.right, b.right), bottom = min(a.bottom, b.bottom)
        guard left <= right, top <= bottom else { return false }
        let inner = Double((right - left + 1) * (bottom - top + 1))
        let outer = Double((max(a.right, b.right) - min(a.left, b.left) + 1) * (max(a.bottom, b.bottom) - min(a.top, b.top) + 1))
        let areaA = Double(a.width * a.height), areaB = Double(b.width * b.height)
        return inner / outer > nmsIoU || inner / areaA > nmsCovered || inner / areaB > nmsCovered
    }
}
