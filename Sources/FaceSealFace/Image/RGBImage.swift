/// An 8-bit RGB image: `width × height` pixels, interleaved R, G, B, row-major, no row padding.
///
/// The pixel layout every stage of the face engine reads (decoders produce it, the shape predictor,
/// the chip extraction and the networks consume it).
public struct RGBImage: Sendable, Equatable {
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// `width · height · 3` bytes: pixel (x, y) channel c is at `(y · width + x) · 3 + c`.
    public var pixels: [UInt8]

    /// Wraps interleaved RGB bytes whose size is right by construction (a decoder's or a camera
    /// adapter's own buffer). The sizes are a precondition; for bytes from outside use
    /// `init(validatingWidth:height:pixels:)`, which throws instead.
    public init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(width >= 0 && height >= 0 && pixels.count == width * height * 3, "RGBImage size mismatch")
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// Wraps interleaved RGB bytes from outside; throws `ImageError.invalidDimensions` unless
    /// `pixels.count == width · height · 3` and both dimensions are positive.
    public init(validatingWidth width: Int, height: Int, pixels: [UInt8]) throws(ImageError) {
        guard width > 0, height > 0,
              case let (count, overflow) = width.multipliedReportingOverflow(by: height), !overflow,
              count <= Int.max / 3, pixels.count == count * 3 else {
            throw .invalidDimensions(width: width, height: height)
        }
        self.init(uncheckedWidth: width, height: height, pixels: pixels)
    }

    /// A black image. Dimensions must be positive and small enough to allocate.
    public init(width: Int, height: Int) throws(ImageError) {
        guard width > 0, height > 0,
              case let (count, overflow) = width.multipliedReportingOverflow(by: height), !overflow,
              count <= Int.max / 3 else {
            throw .invalidDimensions(width: width, height: height)
        }
        self.width = width
        self.height = height
        self.pixels = [UInt8](repeating: 0, count: count * 3)
    }

    /// Internal initialiser for results whose size is correct by construction (the pyramid, chips,
    /// decoders); allows empty images, which `pyramidDown2` returns for small inputs.
    init(uncheckedWidth width: Int, height: Int, pixels: [UInt8]) {
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// Expands 8-bit grayscale (one byte per pixel, row-major) to RGB by replicating each value.
    public init(width: Int, height: Int, grayscale: [UInt8]) throws(ImageError) {
        guard width > 0, height > 0,
              case let (count, overflow) = width.multipliedReportingOverflow(by: height), !overflow,
              count <= Int.max / 3, grayscale.count == count else {
            throw .invalidDimensions(width: width, height: height)
        }
        var rgb = [UInt8](repeating: 0, count: count * 3)
        for i in 0..<count {
            let v = grayscale[i]
            rgb[3 * i] = v
            rgb[3 * i + 1] = v
            rgb[3 * i + 2] = v
        }
        self.init(uncheckedWidth: width, height: height, pixels: rgb)
    }

    /// Whether the image has no pixels (only pyramid levels of tiny images are empty).
    public var isEmpty: Bool { width == 0 || height == 0 }

    /// The (r, g, b) value at (x, y); the coordinates must be inside the image.
    public func pixel(x: Int, y: Int) -> (r: UInt8, g: UInt8, b: UInt8) {
        precondition(x >= 0 && x < width && y >= 0 && y < height, "pixel outside the image")
        let i = (y * width + x) * 3
        return (pixels[i], pixels[i + 1], pixels[i + 2])
    }

    /// dlib's pixel intensity of an RGB pixel: (R + G + B) / 3, truncated. Used by the shape predictor.
    public func intensity(x: Int, y: Int) -> UInt8 {
        let i = (y * width + x) * 3
        return UInt8((Int(pixels[i]) + Int(pixels[i + 1]) + Int(pixels[i + 2])) / 3)
    }

    /// The sub-image with its top-left corner at (x, y), clamped to the image. Empty if it lies outside.
    public func cropped(x: Int, y: Int, width w: Int, height h: Int) -> RGBImage {
        let x0 = max(0, x), y0 = max(0, y)
        let x1 = min(width, x + max(0, w)), y1 = min(height, y + max(0, h))
        guard x1 > x0, y1 > y0 else { return RGBImage(uncheckedWidth: 0, height: 0, pixels: []) }
        let cw = x1 - x0, ch = y1 - y0
        var out = [UInt8](repeating: 0, count: cw * ch * 3)
        pixels.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                for row in 0..<ch {
                    let s = ((y0 + row) * width + x0) * 3
                    let d = row * cw * 3
                    for k in 0..<(cw * 3) { dst[d + k] = src[s + k] }
                }
            }
        }
        return RGBImage(uncheckedWidth: cw, height: ch, pixels: out)
    }

    /// The image with `amount` pixels of edge replication added on every side (what the golden fixtures
    /// call `edge_pad`: numpy's `mode="edge"`).
    public func edgePadded(by amount: Int) -> RGBImage {
        guard amount > 0, !isEmpty else { return self }
        let w = width + 2 * amount, h = height + 2 * amount
        var out = [UInt8](repeating: 0, count: w * h * 3)
        for y in 0..<h {
            let sy = min(max(y - amount, 0), height - 1)
            for x in 0..<w {
                let sx = min(max(x - amount, 0), width - 1)
                let s = (sy * width + sx) * 3, d = (y * w + x) * 3
                out[d] = pixels[s]
                out[d + 1] = pixels[s + 1]
                out[d + 2] = pixels[s + 2]
            }
        }
        return RGBImage(uncheckedWidth: w, height: h, pixels: out)
    }

    /// A 64-bit FNV-1a digest of the dimensions and pixels. Not cryptographic: it only tells frames
    /// apart, so that a stream repeating one still frame is caught (camera noise makes real frames differ).
    public var contentDigest: UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ byte: UInt8) {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        for v in [UInt64(width), UInt64(height)] {
            for k in 0..<8 { mix(UInt8(truncatingIfNeeded: v >> (8 * UInt64(k)))) }
        }
        pixels.withUnsafeBufferPointer { buffer in
            for byte in buffer { mix(byte) }
        }
        return hash
    }

    /// dlib's `pyramid_down<2>` on 8-bit RGB: a separable 5-tap (1, 4, 6, 4, 1) filter over the valid
    /// region only, every second sample kept, the 16-bit sum divided by 256 with truncation. The
    /// result is ((H − 3) / 2) × ((W − 3) / 2), and empty when either side is ≤ 8.
    /// Output pixel (r, c) is centred on input (2r + 2, 2c + 2).
    ///
    /// The sums are exact in 16 bits (at most 16 · 16 · 255), so the vertical pass can come first: it runs
    /// over whole rows of bytes, and the horizontal pass over every position of the result before every
    /// second pixel is kept, both in loops the compiler vectorises.
    public func pyramidDown2() -> RGBImage {
        guard width > 8, height > 8 else { return RGBImage(uncheckedWidth: 0, height: 0, pixels: []) }
        let ow = (width - 3) / 2, oh = (height - 3) / 2
        let rowBytes = width * 3
        // Horizontal taps of every pixel that starts a kept window: 2·ow pixels (the last one's taps are valid).
        let spanned = (2 * ow - 1) * 3
        var vertical = [UInt16](repeating: 0, count: rowBytes)
        var horizontal = [UInt16](repeating: 0, count: spanned)
        var out = [UInt8](repeating: 0, count: ow * oh * 3)
        pixels.withUnsafeBufferPointer { src in
            vertical.withUnsafeMutableBufferPointer { v in
                horizontal.withUnsafeMutableBufferPointer { h in
                    out.withUnsafeMutableBufferPointer { dst in
                        for r in 0..<oh {
                            let top = src.baseAddress! + 2 * r * rowBytes
                            for x in 0..<rowBytes {
                                let a = UInt16(top[x]), b = UInt16(top[x + rowBytes]), m = UInt16(top[x + 2 * rowBytes])
                                let d = UInt16(top[x + 3 * rowBytes]), e = UInt16(top[x + 4 * rowBytes])
                                v[x] = a &+ 4 &* b &+ 6 &* m &+ 4 &* d &+ e
                            }
                            for x in 0..<spanned {
                                h[x] = v[x] &+ 4 &* v[x + 3] &+ 6 &* v[x + 6] &+ 4 &* v[x + 9] &+ v[x + 12]
                            }
                            let row = dst.baseAddress! + r * ow * 3
                            for c in 0..<ow {
                                for ch in 0..<3 { row[3 * c + ch] = UInt8(truncatingIfNeeded: h[6 * c + ch] >> 8) }
                            }
                        }
                    }
                }
            }
        }
        return RGBImage(uncheckedWidth: ow, height: oh, pixels: out)
    }
}
