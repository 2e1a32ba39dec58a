/// An 8-bit RGB image, pixels interleaved R, G, B, row-major, no row padding.
public struct RGBImage: Sendable {
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// `width * height * 3` bytes.
    public var pixels: [UInt8]

    /// Wraps `pixels`; the caller guarantees `pixels.count == width * height * 3`.
    public init(width: Int, height: Int, pixels: [UInt8]) {
        self.width = width
        self.height = height
        self.pixels = pixels
    }
}
