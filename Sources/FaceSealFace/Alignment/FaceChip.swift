import Foundation

/// Where a face chip lies in its source image: dlib's `chip_details` (a rotated, real-valued
/// rectangle and the output size).
public struct ChipDetails: Sendable, Equatable, Codable {
    /// The source rectangle, before rotation about its centre.
    public var rect: DoubleRect
    /// Rotation in radians (image y down, so positive turns clockwise on screen).
    public var angle: Double
    /// Output rows.
    public var rows: Int
    /// Output columns.
    public var cols: Int

    /// A chip placement from its parts.
    public init(rect: DoubleRect, angle: Double, rows: Int, cols: Int) {
        self.rect = rect
        self.angle = angle
        self.rows = rows
        self.cols = cols
    }
}

/// dlib's face alignment: `get_face_chip_details` and `extract_image_chip` for the 5-point model
/// (reference `dlib_format.md` §5), bit-exact with dlib's bilinear chips.
public enum FaceAligner {
    /// The chip side the ResNet expects.
    public static let chipSize = 150
    /// A chip pixel's cost in the convolutions' unit of work (`Parallel`): ~30 cycles of double-precision
    /// bilinear arithmetic, where a convolution does ~16 multiply-adds a cycle. A 150×150 chip splits between two cores.
    static let workPerPixel = 480
    /// dlib's default padding around the face.
    public static let chipPadding = 0.25

    /// dlib's 5-point mean face in a unit square, in shape_predictor_5 order (0/1 = outer/inner corner of
    /// the eye on the image's right, 2/3 = outer/inner corner of the other eye, 4 = base of the nose).
    static let template5: [Point2D] = [
        Point2D(x: 0.8595674595992, y: 0.2134981538014),
        Point2D(x: 0.6460604764104, y: 0.2289674387677),
        Point2D(x: 0.1205750620789, y: 0.2137274526848),
        Point2D(x: 0.3340850613712, y: 0.2290642403242),
        Point2D(x: 0.4901123135679, y: 0.6277975316475),
    ]

    /// Why a chip could not be placed.
    public enum AlignmentError: Error, Equatable, Sendable {
        /// Chip placement needs exactly the 5 points of the 5-point model.
        case needsFivePoints(got: Int)
        /// Size must be ≥ 2 and padding ≥ 0.
        case invalidParameters
    }

    /// `get_face_chip_details(shape5, size, padding)`.
    public static func chipDetails(landmarks5: [Point2D], size: Int = chipSize, padding: Double = chipPadding) throws(AlignmentError) -> ChipDetails {
        guard landmarks5.count == 5 else { throw .needsFivePoints(got: landmarks5.count) }
        guard size >= 2, padding >= 0, padding.isFinite else { throw .invalidParameters }
        let s = Double(size)
        let chipPoints = template5.map { Point2D(x: (padding + $0.x) / (2 * padding + 1) * s, y: (padding + $0.y) / (2 * padding + 1) * s) }
        let fit = SimilarityTransform.fit(from: chipPoints, to: landmarks5)
        let angle = atan2(fit.m10, fit.m00)
        let scale = (fit.m00 * fit.m00 + fit.m10 * fit.m10).squareRoot()
        let center = fit.apply(Point2D(x: s / 2, y: s / 2))
        return ChipDetails(rect: DoubleRect(center: center, width: s * scale, height: s * scale), angle: angle, rows: size, cols: size)
    }

    /// The aligned chip for 5 landmarks (`dlib.get_face_chip(img, shape5, 150, 0.25)`).
    public static func chip(from image: RGBImage, landmarks5: [Point2D], size: Int = chipSize, padding: Double = chipPadding) throws(AlignmentError) -> RGBImage {
        extractChip(from: image, details: try chipDetails(landmarks5: landmarks5, size: size, padding: padding))
    }

    /// `extract_image_chip` with bilinear interpolation, including the `pyramid_down<2>` pre-filtering
    /// dlib applies when the source region is much larger than the chip.
    public static func extractChip(from image: RGBImage, details: ChipDetails) -> RGBImage {
        let rows = details.rows, cols = details.cols
        let chipArea = Double(rows * cols)
        let rect = details.rect
        guard rows > 1, cols > 1, rows <= 4096, cols <= 4096 else { return RGBImage(uncheckedWidth: 0, height: 0, pixels: []) }
        // A non-finite or absurdly large placement (only from corrupt input) yields a black chip rather
        // than an endless pyramid.
        let limit = 1e7
        guard [rect.left, rect.top, rect.right, rect.bottom, details.angle].allSatisfy({ $0.isFinite && abs($0) < limit }) else {
            return RGBImage(uncheckedWidth: cols, height: rows, pixels: [UInt8](repeating: 0, count: rows * cols * 3))
        }
        if details.angle == 0, Double(rows) == rect.height, Double(cols) == rect.width {
            // No rotation or scaling: a plain copy of the rounded rectangle, black outside the image.
            let l = lround(rect.left), t = lround(rect.top)
            var out = [UInt8](repeating: 0, count: rows * cols * 3)
            for y in 0..<rows {
                let sy = t + y
                guard sy >= 0, sy < image.height else { continue }
                for x in 0..<cols {
                    let sx = l + x
                    guard sx >= 0, sx < image.width else { continue }
                    let s = (sy * image.width + sx) * 3, d = (y * cols + x) * 3
                    out[d] = image.pixels[s]; out[d + 1] = image.pixels[s + 1]; out[d + 2] = image.pixels[s + 2]
                }
            }
            return RGBImage(uncheckedWidth: cols, height: rows, pixels: out)
        }
        // 1. How many pyramid levels are needed, and how far to grow the crop so they stay valid.
        var depth = 0
        var grow = 2.0
        var probe = rect.pyramidDown()
        while probe.area > chipArea {
            probe = probe.pyramidDown()
            depth += 1
            grow = grow * 2 + 2
        }
        // 2. The integer crop box: the rotated rectangle's bounding box, grown, clipped to the image.
        let c = rect.center
        let corners = [Point2D(x: rect.left, y: rect.top), Point2D(x: rect.right, y: rect.top),
                       Point2D(x: rect.left, y: rect.bottom), Point2D(x: rect.right, y: rect.bottom)]
            .map { rotate($0, about: c, by: details.angle) }
        let gl = max(corners.map(\.x).min()! - grow, 0)
        let gt = max(corners.map(\.y).min()! - grow, 0)
        let gr = min(corners.map(\.x).max()! + grow, Double(image.width - 1))
        let gb = min(corners.map(\.y).max()! + grow, Double(image.height - 1))
        let bl = lround(gl), bt = lround(gt), br = lround(gr), bb = lround(gb)
        // 3. The pyramid starts from the crop (its offset sets the filter phase, which dlib's result
        //    depends on). Without a pyramid the crop is read in place.
        let cropWidth = br - bl + 1, cropHeight = bb - bt + 1
        var levels: [RGBImage] = []
        if depth > 0 {
            let crop = image.cropped(x: bl, y: bt, width: cropWidth, height: cropHeight)
            for _ in 0..<depth { levels.append((levels.last ?? crop).pyramidDown2()) }
        }
        // 4. Pick the level and map the chip's corners into it.
        var r = rect.translated(dx: -Double(bl), dy: -Double(bt))
        var level = -1
        while r.pyramidDown().area > chipArea {
            level += 1
            r = r.pyramidDown()
        }
        let rc = r.center
        let tl = rotate(Point2D(x: r.left, y: r.top), about: rc, by: details.angle)
        let tr = rotate(Point2D(x: r.right, y: r.top), about: rc, by: details.angle)
        let blc = rotate(Point2D(x: r.left, y: r.bottom), about: rc, by: details.angle)
        let ux = (tr.x - tl.x) / Double(cols - 1), uy = (tr.y - tl.y) / Double(cols - 1)
        let vx = (blc.x - tl.x) / Double(rows - 1), vy = (blc.y - tl.y) / Double(rows - 1)
        var out = [UInt8](repeating: 0, count: rows * cols * 3)
        let source = level >= 0 ? levels[level] : image
        let (w, h) = level >= 0 ? (source.width, source.height) : (cropWidth, cropHeight)
        let stride = source.width * 3
        let origin = level >= 0 ? 0 : (bt * image.width + bl) * 3
        // The x terms of (x, y)·Aᵀ, once per column.
        let xu = (0..<cols).map { Double($0) * ux }, xv = (0..<cols).map { Double($0) * uy }
        let tlx = tl.x, tly = tl.y
        source.pixels.withUnsafeBufferPointer { pixels in
            out.withUnsafeMutableBufferPointer { dst in
                // Addresses cross into the workers as integers: each worker writes only its own rows.
                let srcAddress = UInt(bitPattern: pixels.baseAddress! + origin), dstAddress = UInt(bitPattern: dst.baseAddress)
                Parallel.forEachRange(of: rows, workers: Parallel.workers(items: rows, work: rows * cols * Self.workPerPixel)) { _, rowRange in
                    let src = UnsafePointer<UInt8>(bitPattern: srcAddress)!, dst = UnsafeMutablePointer<UInt8>(bitPattern: dstAddress)!
                    for y in rowRange {
                        let yx = Double(y) * vx, yy = Double(y) * vy
                        for x in 0..<cols {
                            // Same expression order as the reference's (x, y)·Aᵀ + tl.
                            let px = (xu[x] + yx) + tlx
                            let py = (xv[x] + yy) + tly
                            // floor by truncation: only non-negative coordinates get this far.
                            guard px >= 0, py >= 0, px < Double(w), py < Double(h) else { continue }
                            let x0 = Int(px), y0 = Int(py)
                            guard x0 + 1 < w, y0 + 1 < h else { continue }
                            let fx = px - Double(x0), fy = py - Double(y0)
                            let p00 = src + y0 * stride + x0 * 3, p10 = p00 + stride
                            let d = dst + (y * cols + x) * 3
                            for ch in 0..<3 {
                                let top = (1 - fx) * Double(p00[ch]) + fx * Double(p00[ch + 3])
                                let bottom = (1 - fx) * Double(p10[ch]) + fx * Double(p10[ch + 3])
                                let v = (1 - fy) * top + fy * bottom
                                d[ch] = truncatedByte(v)
                            }
                        }
                    }
                }
            }
        }
        return RGBImage(uncheckedWidth: cols, height: rows, pixels: out)
    }

    /// `UInt8(v)` (truncation, as dlib's static_cast) for a v in 0..<256, without the checked conversion: adding
    /// 2^52 rounds v to an integer n in the low mantissa bits, one less when that rounded up.
    @inline(__always)
    private static func truncatedByte(_ v: Double) -> UInt8 {
        let shifted = v + 0x1p52
        let n = UInt8(truncatingIfNeeded: shifted.bitPattern)
        return shifted - 0x1p52 > v ? n &- 1 : n
    }

    static func rotate(_ p: Point2D, about center: Point2D, by angle: Double) -> Point2D {
        let c = cos(angle), s = sin(angle)
        let x = p.x - center.x, y = p.y - center.y
        return Point2D(x: c * x - s * y + center.x, y: s * x + c * y + center.y)
    }
}
