import CImageShims
import Foundation

/// Why an image could not be made into an `RGBImage`.
public enum ImageError: Error, Equatable, Sendable {
    /// The file could not be opened or read.
    case unreadable(path: String)
    /// The bytes are not a JPEG or PNG this decoder recognises by signature.
    case unknownFormat
    /// The data is JPEG or PNG but broken or truncated; `detail` is the decoder's message.
    case corrupt(format: ImageFormat, detail: String)
    /// A valid but unsupported variant (for example a CMYK JPEG).
    case unsupported(format: ImageFormat, detail: String)
    /// The encoded data or the declared dimensions exceed the decoder's limits.
    case tooLarge(width: Int, height: Int)
    /// The encoded data exceeds the decoder's byte limit.
    case dataTooLarge(bytes: Int, limit: Int)
    /// Pixel buffer and dimensions disagree, or a dimension is not positive.
    case invalidDimensions(width: Int, height: Int)
    /// The decoder could not allocate its buffers.
    case outOfMemory
}

/// The encoded image formats the decoder reads.
public enum ImageFormat: String, Sendable, Equatable {
    /// JPEG (JFIF/EXIF), decoded with libjpeg-turbo.
    case jpeg
    /// PNG, decoded with libpng.
    case png
}

/// Decodes JPEG and PNG into `RGBImage` within size limits. Grayscale and palette images become RGB;
/// alpha is dropped. EXIF orientation is not applied (the pixels are returned as stored).
public struct ImageDecoder: Sendable, Equatable {
    /// Largest accepted width or height, in pixels.
    public var maxDimension: Int
    /// Largest accepted pixel count (width · height).
    public var maxPixels: Int
    /// Largest accepted encoded size, in bytes.
    public var maxEncodedBytes: Int

    /// Default limits: 8192 px per side, 40 megapixels, 64 MiB of encoded data — far above any camera
    /// frame the engine needs, and small enough that a hostile header cannot exhaust memory.
    public init(maxDimension: Int = 8192, maxPixels: Int = 40_000_000, maxEncodedBytes: Int = 64 << 20) {
        self.maxDimension = maxDimension
        self.maxPixels = maxPixels
        self.maxEncodedBytes = maxEncodedBytes
    }

    /// The format recognised from the leading bytes, or nil.
    public static func sniff(_ data: some Collection<UInt8>) -> ImageFormat? {
        let head = Array(data.prefix(8))
        if head.count >= 3, head[0] == 0xFF, head[1] == 0xD8, head[2] == 0xFF { return .jpeg }
        if head == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] { return .png }
        return nil
    }

    /// Decodes the file at `path` (JPEG or PNG, recognised by content, not by name).
    public func decodeFile(atPath path: String) throws(ImageError) -> RGBImage {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw .unreadable(path: path) }
        defer { try? handle.close() }
        let data: Data?
        do {
            // Read one byte past the limit so an oversized file is detected without reading all of it.
            data = try handle.read(upToCount: maxEncodedBytes + 1)
        } catch {
            throw .unreadable(path: path)
        }
        let bytes = [UInt8](data ?? Data())
        return try decode(bytes)
    }

    /// Decodes JPEG or PNG bytes.
    public func decode(_ bytes: [UInt8]) throws(ImageError) -> RGBImage {
        guard bytes.count <= maxEncodedBytes else { throw .dataTooLarge(bytes: bytes.count, limit: maxEncodedBytes) }
        guard let format = Self.sniff(bytes) else { throw .unknownFormat }
        let limits = fs_image_limits(
            max_width: UInt32(clamping: maxDimension),
            max_height: UInt32(clamping: maxDimension),
            max_pixels: UInt64(clamping: maxPixels)
        )
        var result = fs_image_rgb(pixels: nil, width: 0, height: 0)
        var message = [CChar](repeating: 0, count: 256)
        let status: fs_image_status = bytes.withUnsafeBufferPointer { input in
            message.withUnsafeMutableBufferPointer { text in
                switch format {
                case .jpeg: fs_jpeg_decode_rgb(input.baseAddress, input.count, limits, &result, text.baseAddress, text.count)
                case .png: fs_png_decode_rgb(input.baseAddress, input.count, limits, &result, text.baseAddress, text.count)
                }
            }
        }
        defer { fs_image_free(&result) }
        let detail = String(decoding: message.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        switch status {
        case FS_IMAGE_OK:
            break
        case FS_IMAGE_UNSUPPORTED:
            throw .unsupported(format: format, detail: detail)
        case FS_IMAGE_TOO_LARGE:
            throw .tooLarge(width: Int(result.width), height: Int(result.height))
        case FS_IMAGE_NO_MEMORY:
            throw .outOfMemory
        default:
            throw .corrupt(format: format, detail: detail)
        }
        let width = Int(result.width), height = Int(result.height)
        guard let base = result.pixels, width > 0, height > 0 else {
            throw .corrupt(format: format, detail: "empty image")
        }
        let pixels = [UInt8](UnsafeBufferPointer(start: base, count: width * height * 3))
        return RGBImage(uncheckedWidth: width, height: height, pixels: pixels)
    }
}
