import CQREncode
import Foundation

/// A QR code (ISO/IEC 18004, byte mode, error correction M) made by libqrencode, as a matrix of modules. The C
/// result is copied into Swift storage and freed at once: no pointer leaves this file.
struct QRCode: Sendable, Equatable {
    /// Why no code was made.
    enum Failure: Error, Equatable {
        /// Empty, or longer than a version-40 symbol holds at level M (2331 bytes).
        case unencodable(byteCount: Int)
    }

    /// The symbol's side in modules (without the quiet zone).
    let size: Int
    /// `size × size` modules, row by row; `true` is dark.
    let modules: [Bool]

    /// The largest input encoded (byte mode, level M, version 40).
    static let maxBytes = 2331

    /// The code of `text`'s UTF-8 bytes.
    init(encoding text: String) throws(Failure) {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count <= Self.maxBytes else { throw .unencodable(byteCount: bytes.count) }
        guard let code = bytes.withUnsafeBufferPointer({ QRcode_encodeData(Int32($0.count), $0.baseAddress, 0, QR_ECLEVEL_M) }) else {
            throw .unencodable(byteCount: bytes.count)
        }
        defer { QRcode_free(code) }
        let width = Int(code.pointee.width)
        size = width
        // Bit 0 of each byte is the module's colour; the other bits describe its role in the symbol.
        modules = (0..<(width * width)).map { code.pointee.data[$0] & 1 == 1 }
    }

    /// Whether the module at (`x`, `y`) is dark.
    func isDark(x: Int, y: Int) -> Bool { modules[y * size + x] }

    /// An SVG image (no script, no style): one path of horizontal runs of dark modules, a 4-module quiet zone,
    /// `pixels` wide and high.
    func svg(pixels: Int, title: String) -> String {
        let side = size + 8
        var path = ""
        for y in 0..<size {
            var x = 0
            while x < size {
                guard isDark(x: x, y: y) else { x += 1; continue }
                let start = x
                while x < size && isDark(x: x, y: y) { x += 1 }
                path += "M\(start + 4) \(y + 4)h\(x - start)v1h-\(x - start)z"
            }
        }
        return """
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \(side) \(side)" width="\(pixels)" height="\(pixels)" \
        shape-rendering="crispEdges" role="img" aria-label="\(HTML.escape(title))"><title>\(HTML.escape(title))</title>\
        <rect width="\(side)" height="\(side)" fill="#ffffff"/><path fill="#000000" d="\(path)"/></svg>
        """
    }
}
