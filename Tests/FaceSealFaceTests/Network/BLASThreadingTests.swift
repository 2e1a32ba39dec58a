@testable import FaceSealFace
import Foundation
import Testing

/// The test runner links FaceSealFace as `faceseal` does, so it loads the same OpenBLAS.
@Suite struct BLASThreadingTests {
    /// The single-threaded OpenBLAS build is the one loaded: it came up with one thread, so no worker thread spins
    /// after load (the threaded build starts one per further core).
    @Test func openBLASLoadsSingleThreaded() throws {
        let file = try #require(FileHandle(forReadingAtPath: "/proc/self/maps"))
        defer { try? file.close() }
        let maps = String(decoding: try file.readToEnd() ?? Data(), as: UTF8.self)
        #expect(maps.contains("/openblas-serial/"))
        #expect(!maps.contains("/openblas-pthread/"))
        #expect(BLASThreading.threadsAtLoad == 1)
    }
}
