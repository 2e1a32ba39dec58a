import Foundation
@testable import FaceSealFace

/// Decodes a cached test photo with the project's decoder (libjpeg-turbo / libpng), as the golden
/// fixtures' `rgb_samples` pin down.
enum TestImageLoading {
    static func load(_ url: URL) throws -> RGBImage {
        try ImageDecoder().decodeFile(atPath: url.path)
    }
}
