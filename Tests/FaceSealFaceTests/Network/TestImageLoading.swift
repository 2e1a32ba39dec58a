import Foundation
@testable import FaceSealFace

/// Decodes a test photo to RGB.
enum TestImageLoading {
    struct Failed: Error { let reason: String }

    static func load(_ url: URL) throws -> RGBImage {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/djpeg")
        process.arguments = ["-pnm", url.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let bytes = [UInt8](data)
        // P6\n<w> <h>\n255\n<data>
        var fields: [String] = []
        var i = 0
        while fields.count < 4 {
            while bytes[i] == 0x20 || bytes[i] == 0x0A { i += 1 }
            var token = ""
            while bytes[i] != 0x20 && bytes[i] != 0x0A { token.append(Character(UnicodeScalar(bytes[i]))); i += 1 }
            fields.append(token)
        }
        i += 1
        guard fields[0] == "P6", let w = Int(fields[1]), let h = Int(fields[2]) else { throw Failed(reason: "not P6") }
        return RGBImage(uncheckedWidth: w, height: h, pixels: Array(bytes[i..<(i + w * h * 3)]))
    }
}
