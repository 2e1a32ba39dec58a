import Foundation

/// A dlib shape predictor (Kazemi & Sullivan's ensemble of regression trees), read from
/// `shape_predictor_5_face_landmarks.dat` or `shape_predictor_68_face_landmarks.dat`, predicting
/// landmarks exactly as dlib does (reference `dlib_format.md` §4).
public struct ShapePredictor: Sendable {
    /// Number of landmarks (5 or 68 for the shipped models).
    public let pointCount: Int
    /// Number of cascades (15 in the shipped models).
    public var cascadeCount: Int { cascades.count }

    /// The mean shape in the unit square of the face box: x0, y0, x1, y1, …
    let initialShape: [Float]
    let cascades: [Cascade]

    /// One cascade: the feature pixels it samples and the trees that read them. Trees are complete
    /// binary trees stored flat: `splitsPerTree` splits then `splitsPerTree + 1` leaves per tree.
    struct Cascade: Sendable {
        var anchors: [Int]          // landmark index of each feature pixel
        var deltas: [Float]         // (dx, dy) offset of each feature pixel from its anchor, interleaved
        var splitsPerTree: Int
        var treeCount: Int
        var splitFeature1: [Int32]  // treeCount · splitsPerTree
        var splitFeature2: [Int32]
        var splitThreshold: [Float]
        var leaves: [Float]         // treeCount · (splitsPerTree + 1) · 2·pointCount
    }

    /// Limits on what a model file may declare, so a corrupt header cannot demand huge allocations.
    public struct Limits: Sendable {
        /// Most landmarks.
        public var maxPoints = 256
        /// Most cascades.
        public var maxCascades = 64
        /// Most trees per cascade.
        public var maxTrees = 4096
        /// Most splits per tree.
        public var maxSplitsPerTree = 1023
        /// Most feature pixels per cascade.
        public var maxFeatures = 8192
        /// Largest model file, bytes (the 68-point model is 99.7 MB).
        public var maxFileBytes = 256 << 20
        /// The defaults fit both shipped models with room to spare.
        public init() {}
    }

    /// Reads a model file (through a small window: the 68-point file is 100 MB).
    public init(contentsOfFile path: String, limits: Limits = Limits()) throws(FaceModelError) {
        var reader = try DlibReader(contentsOfFile: path, maxBytes: limits.maxFileBytes)
        try self.init(reader: &reader, limits: limits)
    }

    /// Parses a model from its bytes; every byte must be consumed.
    public init(bytes: [UInt8], limits: Limits = Limits()) throws(FaceModelError) {
        var reader = DlibReader(bytes: bytes)
        try self.init(reader: &reader, limits: limits)
    }

    private init(reader r: inout DlibReader, limits: Limits) throws(FaceModelError) {
        do {
            let versionOffset = r.offset
            guard try r.readInt() == 1 else {
                throw FaceModelError.malformed(offset: versionOffset, reason: "shape_predictor version")
            }
            let shapeOffset = r.offset
            let initial = try r.readFloatMatrix(maxElements: 2 * limits.maxPoints)
            guard initial.cols == 1, initial.rows >= 2, initial.rows % 2 == 0 else {
                throw FaceModelError.malformed(offset: shapeOffset, reason: "initial shape \(initial.rows)×\(initial.cols)")
            }
            let points = initial.rows / 2
            let shapeLength = initial.rows

            let cascadeOffset = r.offset
            let cascadeCount = try r.readUInt()
            guard cascadeCount >= 1, cascadeCount <= limits.maxCascades else {
                throw FaceModelError.malformed(offset: cascadeOffset, reason: "\(cascadeCount) cascades")
            }
            var cascades: [Cascade] = []
            cascades.reserveCapacity(cascadeCount)
            for _ in 0..<cascadeCount {
                cascades.append(try Self.readForest(&r, shapeLength: shapeLength, limits: limits))
            }

            let anchorsOffset = r.offset
            guard try r.readUInt() == cascadeCount else {
                throw FaceModelError.malformed(offset: anchorsOffset, reason: "anchor list count")
            }
            for k in 0..<cascadeCount {
                let start = r.offset
                let count = try r.readUInt()
                guard count >= 1, count <= limits.maxFeatures else {
                    throw FaceModelError.malformed(offset: start, reason: "\(count) feature pixels")
                }
                var anchors = [Int]()
                anchors.reserveCapacity(count)
                for _ in 0..<count {
                    let at = r.offset
                    let a = try r.readUInt()
                    guard a < points else { throw FaceModelError.malformed(offset: at, reason: "anchor \(a)") }
                    anchors.append(a)
                }
                cascades[k].anchors = anchors
            }

            let deltasOffset = r.offset
            guard try r.readUInt() == cascadeCount else {
                throw FaceModelError.malformed(offset: deltasOffset, reason: "delta list count")
            }
            for k in 0..<cascadeCount {
                let start = r.offset
                let count = try r.readUInt()
                guard count == cascades[k].anchors.count else {
                    throw FaceModelError.malformed(offset: start, reason: "\(count) deltas for \(cascades[k].anchors.count) anchors")
                }
                var deltas = [Float]()
                deltas.reserveCapacity(2 * count)
                for _ in 0..<count {
                    deltas.append(try r.readFloat())
                    deltas.append(try r.readFloat())
                }
                cascades[k].deltas = deltas
                // Split indices refer to this cascade's feature pixels; check them now that the count is known.
                let featureCount = Int32(count)
                guard cascades[k].splitFeature1.allSatisfy({ $0 < featureCount }),
                      cascades[k].splitFeature2.allSatisfy({ $0 < featureCount }) else {
                    throw FaceModelError.malformed(offset: start, reason: "split index beyond \(count) feature pixels")
                }
            }
            try r.expectEnd()
            self.pointCount = points
            self.initialShape = initial.values
            self.cascades = cascades
        } catch let error as FaceModelError {
            throw error
        } catch {
            throw .malformed(offset: 0, reason: "\(error)")
        }
    }

    private static func readForest(_ r: inout DlibReader, shapeLength: Int, limits: Limits) throws -> Cascade {
        let start = r.offset
        let treeCount = try r.readUInt()
        guard treeCount >= 1, treeCount <= limits.maxTrees else {
            throw FaceModelError.malformed(offset: start, reason: "\(treeCount) trees")
        }
        var cascade = Cascade(anchors: [], deltas: [], splitsPerTree: 0, treeCount: treeCount,
                              splitFeature1: [], splitFeature2: [], splitThreshold: [], leaves: [])
        for tree in 0..<treeCount {
            let splitsOffset = r.offset
            let splitCount = try r.readUInt()
            // dlib trains complete trees of one depth, so every tree has 2^d − 1 splits; the flat
            // layout relies on that.
            guard splitCount >= 1, splitCount <= limits.maxSplitsPerTree, (splitCount + 1) & splitCount == 0,
                  tree == 0 || splitCount == cascade.splitsPerTree else {
                throw FaceModelError.malformed(offset: splitsOffset, reason: "tree of \(splitCount) splits")
            }
            if tree == 0 {
                cascade.splitsPerTree = splitCount
                cascade.splitFeature1.reserveCapacity(treeCount * splitCount)
                cascade.splitFeature2.reserveCapacity(treeCount * splitCount)
                cascade.splitThreshold.reserveCapacity(treeCount * splitCount)
                cascade.leaves.reserveCapacity(treeCount * (splitCount + 1) * shapeLength)
            }
            for _ in 0..<splitCount {
                let at = r.offset
                let a = try r.readUInt(), b = try r.readUInt()
                guard a <= limits.maxFeatures, b <= limits.maxFeatures else {
                    throw FaceModelError.malformed(offset: at, reason: "split index")
                }
                cascade.splitFeature1.append(Int32(a))
                cascade.splitFeature2.append(Int32(b))
                cascade.splitThreshold.append(try r.readFloat())
            }
            let leavesOffset = r.offset
            guard try r.readUInt() == splitCount + 1 else {
                throw FaceModelError.malformed(offset: leavesOffset, reason: "leaf count")
            }
            for _ in 0...splitCount {
                // A dlib::matrix<float>: −rows, −cols, then the values (read in bulk: most of the file).
                let at = r.offset
                let rows = -(try r.readInt()), cols = -(try r.readInt())
                guard rows == shapeLength, cols == 1 else {
                    throw FaceModelError.malformed(offset: at, reason: "leaf \(rows)×\(cols)")
                }
                try r.appendFloats(count: shapeLength, to: &cascade.leaves)
            }
        }
        return cascade
    }

    /// The landmarks of the face in `box` (dlib's `shape_predictor::operator()`), rounded to whole
    /// pixels as dlib returns them. The box may extend past the image; pixels outside read as 0.
    public func predict(in image: RGBImage, box: FaceRect) -> [Point2D] {
        predictUnrounded(in: image, box: box).map { Point2D(x: Double(roundHalfUp($0.x)), y: Double(roundHalfUp($0.y))) }
    }

    /// The landmarks before dlib's final rounding to integers.
    public func predictUnrounded(in image: RGBImage, box: FaceRect) -> [Point2D] {
        let l = Double(box.left), t = Double(box.top)
        let sx = Double(box.right - box.left), sy = Double(box.bottom - box.top)
        let points = pointCount, shapeLength = 2 * pointCount
        let width = image.width, height = image.height
        var current = initialShape
        var features = [Float](repeating: 0, count: cascades.map { $0.anchors.count }.max() ?? 0)
        initialShape.withUnsafeBufferPointer { mean in
            current.withUnsafeMutableBufferPointer { shape in
                features.withUnsafeMutableBufferPointer { feature in
                    image.pixels.withUnsafeBufferPointer { pixels in
                        for cascade in cascades {
                            // 1. The sampling frame: the linear part of the similarity from the mean shape
                            //    to the current estimate, cast to float as dlib does.
                            let fit = SimilarityTransform.fit(
                                count: points,
                                from: { Point2D(x: Double(mean[2 * $0]), y: Double(mean[2 * $0 + 1])) },
                                to: { Point2D(x: Double(shape[2 * $0]), y: Double(shape[2 * $0 + 1])) })
                            let a00 = Float(fit.m00), a01 = Float(fit.m01), a10 = Float(fit.m10), a11 = Float(fit.m11)
                            // 2. Every feature pixel's gray level (dlib: (R + G + B) / 3), 0 outside the image.
                            cascade.anchors.withUnsafeBufferPointer { anchors in
                                cascade.deltas.withUnsafeBufferPointer { deltas in
                                    for i in 0..<anchors.count {
                                        let dx = deltas[2 * i], dy = deltas[2 * i + 1]
                                        let anchor = anchors[i]
                                        let qx: Float = (a00 * dx + a01 * dy) + shape[2 * anchor]
                                        let qy: Float = (a10 * dx + a11 * dy) + shape[2 * anchor + 1]
                                        let px = roundHalfUp(l + Double(qx) * sx)
                                        let py = roundHalfUp(t + Double(qy) * sy)
                                        if px >= 0, px < width, py >= 0, py < height {
                                            let o = (py * width + px) * 3
                                            feature[i] = Float((Int(pixels[o]) + Int(pixels[o + 1]) + Int(pixels[o + 2])) / 3)
                                        } else {
                                            feature[i] = 0
                                        }
                                    }
                                }
                            }
                            // 3. Every tree reads the same features and adds one leaf to the shape.
                            let splits = cascade.splitsPerTree
                            let leafStride = (splits + 1) * shapeLength
                            cascade.splitFeature1.withUnsafeBufferPointer { first in
                                cascade.splitFeature2.withUnsafeBufferPointer { second in
                                    cascade.splitThreshold.withUnsafeBufferPointer { thresholds in
                                        cascade.leaves.withUnsafeBufferPointer { leaves in
                                            for tree in 0..<cascade.treeCount {
                                                let base = tree * splits
                                                var node = 0
                                                while node < splits {
                                                    let k = base + node
                                                    node = feature[Int(first[k])] - feature[Int(second[k])] > thresholds[k] ? 2 * node + 1 : 2 * node + 2
                                                }
                                                let leaf = tree * leafStride + (node - splits) * shapeLength
                                                for j in 0..<shapeLength { shape[j] += leaves[leaf + j] }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        return (0..<points).map { Point2D(x: l + Double(current[2 * $0]) * sx, y: t + Double(current[2 * $0 + 1]) * sy) }
    }
}
