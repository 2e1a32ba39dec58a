import Testing
@testable import FaceSealFace

@Suite struct DlibReaderTests {
    @Test func integersFromTheFormatTable() throws {
        var r = DlibReader(bytes: [0x01, 0x96, 0x02, 0x80, 0x12, 0x81, 0x1c, 0x01, 0x00])
        #expect(try r.readInt() == 150)
        #expect(try r.readInt() == 4736)
        #expect(try r.readInt() == -28)
        #expect(try r.readUInt() == 0)
        #expect(r.isAtEnd)
    }

    @Test func floatDetailsFromTheFormatTable() throws {
        var r = DlibReader(bytes: [0x03, 0x0a, 0xd7, 0xa3, 0x81, 0x1c, 0x01, 0x10, 0x81, 0x04, 0x01, 0x00, 0x01, 0x0b])
        #expect(try r.readFloat() == 0.04)
        #expect(try r.readFloat() == 1.0)
        #expect(try r.readDouble() == 0.0)
        try r.expectEnd()
    }

    @Test func stringsBoolsAndMatrices() throws {
        var r = DlibReader(bytes: [0x01, 0x05] + Array("con_4".utf8) + [0x31, 0x30, 0x81, 0x02, 0x81, 0x01, 0x01, 0x10, 0x81, 0x04, 0x01, 0x00, 0x01, 0x00])
        #expect(try r.readString() == "con_4")
        #expect(try r.readBool())
        #expect(try !r.readBool())
        let m = try r.readFloatMatrix()
        #expect(m.rows == 2 && m.cols == 1 && m.values == [1, 0])
        try r.expectEnd()
    }

    @Test func badInputIsTypedNeverACrash() {
        var truncated = DlibReader(bytes: [0x02, 0x80])
        #expect(throws: FaceModelError.truncated(offset: 0)) { try truncated.readInt() }
        var control = DlibReader(bytes: [0x10, 0x00])
        #expect(throws: FaceModelError.self) { try control.readInt() }
        var bool = DlibReader(bytes: [0x32])
        #expect(throws: FaceModelError.self) { try bool.readBool() }
        var huge = DlibReader(bytes: [0x81, 0x7f, 0x81, 0x7f, 0x01])
        #expect(throws: FaceModelError.self) { try huge.readFloatMatrix(maxElements: 100) }
        var name = DlibReader(bytes: [0x01, 0x03] + Array("fc_".utf8))
        #expect(throws: FaceModelError.unexpectedRecord(offset: 0, expected: "con", found: "fc_")) { try name.expectString("con") }
        var negative = DlibReader(bytes: [0x81, 0x01])
        #expect(throws: FaceModelError.self) { try negative.readUInt() }
    }
}
