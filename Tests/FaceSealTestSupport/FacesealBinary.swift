package import Foundation

/// The `faceseal` executable of this build: beside the test bundle, else in the package's `.build/debug`
/// (`swift build --build-tests` builds both).
package enum FacesealBinary {
    /// The package's root directory.
    package static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The executable's path, when it is built.
    package static var pathIfBuilt: String? {
        [URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("faceseal").path,
         packageRoot.appendingPathComponent(".build/debug/faceseal").path].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// The executable's path; throws when it is not built.
    package static var path: String {
        get throws {
            guard let path = pathIfBuilt else { throw SetupError("the faceseal binary is not built (swift build --build-tests builds it)") }
            return path
        }
    }
}
