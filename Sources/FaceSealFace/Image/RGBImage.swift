/// An 8-bit RGB image, pixels interleaved R, G, B, row-major, no row padding.
///
/// Stand-in with the shape of face-geo's `RGBImage` (same initialisers), replaced by theirs on merge.
public struct RGBImage: Sendable, Equatable {
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// `width * height * 3` bytes.
    public var pixels: [UInt8]

    /// Wraps interleaved RGB bytes whose size is right by construction; the sizes are a precondition.
    public init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(width >= 0 && height >= 0 && pixels.count == width * height * 3, "RGBImage size mismatch")
        self.init(uncheckedWidth: width, height: height, pixels: pixels)
    }

    /// For results whose size is correct by construction.
    init(uncheckedWidth width: Int, height: Int, pixels: [UInt8]) {
        self.width = width
        self.height = height
        self.pixels = pixels
    }
}
