import Foundation

/// A point in image coordinates (x to the right, y down), in pixels.
public struct Point2D: Sendable, Hashable, Codable {
    /// Horizontal coordinate.
    public var x: Double
    /// Vertical coordinate.
    public var y: Double

    /// A point at (x, y).
    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }

    /// Euclidean distance to `other`.
    public func distance(to other: Point2D) -> Double {
        ((x - other.x) * (x - other.x) + (y - other.y) * (y - other.y)).squareRoot()
    }
}

/// An integer rectangle with inclusive right and bottom edges, like `dlib::rectangle`.
/// Edges may lie outside the image (a face cut by the border).
public struct FaceRect: Sendable, Hashable, Codable {
    /// Left column (inclusive).
    public var left: Int
    /// Top row (inclusive).
    public var top: Int
    /// Right column (inclusive).
    public var right: Int
    /// Bottom row (inclusive).
    public var bottom: Int

    /// A rectangle from its inclusive edges.
    public init(left: Int, top: Int, right: Int, bottom: Int) {
        self.left = left
        self.top = top
        self.right = right
        self.bottom = bottom
    }

    /// right − left + 1, or 0 when empty.
    public var width: Int { right >= left ? right - left + 1 : 0 }
    /// bottom − top + 1, or 0 when empty.
    public var height: Int { bottom >= top ? bottom - top + 1 : 0 }
    /// Pixel count, inclusive.
    public var area: Int { width * height }
    /// The centre, in double.
    public var center: Point2D { Point2D(x: Double(left + right) / 2, y: Double(top + bottom) / 2) }

    /// The intersection (possibly empty).
    public func intersection(_ other: FaceRect) -> FaceRect {
        FaceRect(left: max(left, other.left), top: max(top, other.top),
                 right: min(right, other.right), bottom: min(bottom, other.bottom))
    }

    /// Intersection over union, with inclusive pixel areas; 0 when both are empty.
    public func iou(_ other: FaceRect) -> Double {
        let inter = intersection(other).area
        let union = area + other.area - inter
        return union > 0 ? Double(inter) / Double(union) : 0
    }
}

/// A real-valued rectangle like `dlib::drectangle`: width = right − left + 1.
public struct DoubleRect: Sendable, Hashable, Codable {
    /// Left edge.
    public var left: Double
    /// Top edge.
    public var top: Double
    /// Right edge (inclusive convention).
    public var right: Double
    /// Bottom edge (inclusive convention).
    public var bottom: Double

    /// A rectangle from its edges.
    public init(left: Double, top: Double, right: Double, bottom: Double) {
        self.left = left
        self.top = top
        self.right = right
        self.bottom = bottom
    }

    /// dlib `centered_drect`: edges at centre ± (size − 1) / 2.
    public init(center: Point2D, width: Double, height: Double) {
        let w = width - 1, h = height - 1
        self.init(left: center.x - w / 2, top: center.y - h / 2, right: center.x + w / 2, bottom: center.y + h / 2)
    }

    var isEmpty: Bool { top > bottom || left > right }
    /// right − left + 1 (0 when empty).
    public var width: Double { isEmpty ? 0 : right - left + 1 }
    /// bottom − top + 1 (0 when empty).
    public var height: Double { isEmpty ? 0 : bottom - top + 1 }
    var area: Double { width * height }
    /// ((l + r) / 2, (t + b) / 2).
    public var center: Point2D { Point2D(x: (left + right) / 2, y: (top + bottom) / 2) }

    func translated(dx: Double, dy: Double) -> DoubleRect {
        DoubleRect(left: left + dx, top: top + dy, right: right + dx, bottom: bottom + dy)
    }

    /// `pyramid_down<2>::rect_down`: each corner p ↦ p / 2 − (1.25, 0.75).
    func pyramidDown() -> DoubleRect {
        DoubleRect(left: left / 2 - 1.25, top: top / 2 - 0.75, right: right / 2 - 1.25, bottom: bottom / 2 - 0.75)
    }
}

/// A 2-D similarity (rotation, uniform scale, translation): p ↦ M·p + t.
public struct SimilarityTransform: Sendable, Equatable {
    /// Row-major 2×2 linear part.
    public var m00, m01, m10, m11: Double
    /// Translation.
    public var tx, ty: Double

    /// Applies the transform.
    public func apply(_ p: Point2D) -> Point2D {
        Point2D(x: m00 * p.x + m01 * p.y + tx, y: m10 * p.x + m11 * p.y + ty)
    }

    /// The least-squares similarity mapping `from[i]` onto `to[i]` (Umeyama 1991, as dlib's
    /// `find_similarity_transform`), in double.
    ///
    /// In 2-D Umeyama's SVD step has a closed form: with C the cross-covariance, the best proper
    /// rotation is the angle atan2(C₁₀ − C₀₁, C₀₀ + C₁₁) and trace(D·S) = ‖(C₀₀ + C₁₁, C₁₀ − C₀₁)‖,
    /// including the reflection case (det C < 0) that Umeyama's sign matrix S handles.
    public static func fit<From: Collection, To: Collection>(from: From, to: To) -> SimilarityTransform
    where From.Element == Point2D, To.Element == Point2D {
        let f = Array(from), t = Array(to)
        return fit(count: min(f.count, t.count), from: { f[$0] }, to: { t[$0] })
    }

    /// The same fit over `count` point pairs given by accessors (no arrays of points needed; the shape
    /// predictor calls this once per cascade on its flat float shapes).
    @inline(__always)
    static func fit(count: Int, from f: (Int) -> Point2D, to t: (Int) -> Point2D) -> SimilarityTransform {
        let n = Double(count)
        guard count > 0 else { return SimilarityTransform(m00: 1, m01: 0, m10: 0, m11: 1, tx: 0, ty: 0) }
        var mfx = 0.0, mfy = 0.0, mtx = 0.0, mty = 0.0
        for i in 0..<count {
            let a = f(i), b = t(i)
            mfx += a.x; mfy += a.y; mtx += b.x; mty += b.y
        }
        mfx /= n; mfy /= n; mtx /= n; mty /= n
        var sigma = 0.0, c00 = 0.0, c01 = 0.0, c10 = 0.0, c11 = 0.0
        for i in 0..<count {
            let a = f(i), b = t(i)
            let fx = a.x - mfx, fy = a.y - mfy
            let tx = b.x - mtx, ty = b.y - mty
            sigma += fx * fx + fy * fy
            c00 += tx * fx; c01 += tx * fy
            c10 += ty * fx; c11 += ty * fy
        }
        sigma /= n
        c00 /= n; c01 /= n; c10 /= n; c11 /= n
        let a = c00 + c11, b = c10 - c01
        let norm = (a * a + b * b).squareRoot()
        let cosine = norm > 0 ? a / norm : 1, sine = norm > 0 ? b / norm : 0
        let scale = sigma != 0 ? norm / sigma : 1
        let m00 = scale * cosine, m01 = -scale * sine, m10 = scale * sine, m11 = scale * cosine
        return SimilarityTransform(m00: m00, m01: m01, m10: m10, m11: m11,
                                   tx: mtx - (m00 * mfx + m01 * mfy), ty: mty - (m10 * mfx + m11 * mfy))
    }
}

/// dlib's double → integer point conversion: floor(v + 0.5). Non-finite or huge values are clamped
/// (they only arise from absurd inputs, and must not trap).
@inline(__always) func roundHalfUp(_ v: Double) -> Int { clampedInt((v + 0.5).rounded(.down)) }

/// C `lround`: nearest, halves away from zero (clamped like `roundHalfUp`).
@inline(__always) func lround(_ v: Double) -> Int { clampedInt(v.rounded(.toNearestOrAwayFromZero)) }

@inline(__always) private func clampedInt(_ v: Double) -> Int {
    let limit = Double(1 << 40)
    guard v.isFinite else { return v > 0 ? 1 << 40 : -(1 << 40) }
    return Int(min(max(v, -limit), limit))
}
