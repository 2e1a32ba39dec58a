import Foundation
import Testing
@testable import FaceSealCrypto

@Suite struct Base64URLTests {
    @Test func rfc4648Vectors() throws {
        let vectors: [(String, String)] = [("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"),
                                          ("fooba", "Zm9vYmE"), ("foobar", "Zm9vYmFy")]
        for (plain, encoded) in vectors {
            #expect(Base64URL.encode(Array(plain.utf8)) == encoded)
            #expect(try Base64URL.decode(encoded) == Array(plain.utf8))
        }
        #expect(Base64URL.encode([0xfb, 0xff]) == "-_8")
        #expect(try Base64URL.decode("-_8") == [0xfb, 0xff])
    }

    @Test func roundTripsEveryLength() throws {
        for length in 0..<70 {
            let bytes = SecureRandom.bytes(count: length)
            #expect(try Base64URL.decode(Base64URL.encode(bytes)) == bytes)
        }
    }

    @Test func rejectsEverythingNotStrict() {
        for bad in ["Zg==", "Zg=", "Z", "Zm9vY", "Zh", "Zm9", "Zm9vYh", "Zm9v\n", " Zm9v", "Zm+v", "Zm/v", "Zm9v.", "Zé", "Zm\u{0}v"] {
            #expect(throws: JOSEError.invalidBase64URL(part: "t"), "\(bad.debugDescription)") {
                try Base64URL.decode(bad, part: "t")
            }
        }
    }

    /// Contiguous text takes a faster decoder than any other collection: both answer the same, byte for byte.
    @Test func contiguousAndGenericDecodingAgree() {
        let symbols = Array("AZaz09-_=+/.\u{0}\u{80}Qg".utf8)
        var generator = SystemRandomNumberGenerator()
        for round in 0..<5000 {
            let text = (0..<(round % 14)).map { _ in
                round % 2 == 0 ? symbols[Int.random(in: 0..<symbols.count, using: &generator)]
                               : Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8).randomElement(using: &generator)!
            }
            let contiguous = Result { () throws(JOSEError) in try Base64URL.decode(utf8: text) }
            let generic = Result { () throws(JOSEError) in try Base64URL.decode(utf8: text.lazy.map { $0 }) }
            #expect(contiguous == generic, "\(text)")
        }
    }

    @Test func sizeLimit() {
        let text = Base64URL.encode([UInt8](repeating: 7, count: 100))
        #expect(throws: JOSEError.inputTooLarge(limit: 99)) { try Base64URL.decode(text, maximumDecodedCount: 99) }
        #expect((try? Base64URL.decode(text, maximumDecodedCount: 100))?.count == 100)
    }
}

@Suite struct JSONValueTests {
    @Test func parsesAndSerialisesDeterministically() throws {
        let text = #" { "b" : [1, -2.5, true, null, "x\"\\\/\n\u00e9\ud83d\ude00"], "a": {"z": 0, "y": 1e3} } "#
        let value = try JSONValue.parse(Array(text.utf8))
        #expect(value.serializedString == #"{"a":{"y":1000.0,"z":0},"b":[1,-2.5,true,null,"x\"\\/\né😀"]}"#)
        #expect(try JSONValue.parse(value.serialized) == value)
        #expect(value.objectValue?["a"]?.objectValue?["z"]?.integerValue == 0)
        #expect(JSONValue.string("\u{1}").serializedString == #""\u0001""#)
    }

    @Test func rejectsMalformedInput() {
        let bad = [
            "", "{", "}", "{\"a\":1,}", "[1,]", "{\"a\" 1}", "{a:1}", "01", "1.", "-", ".5", "1e", "+1",
            "\"unterminated", "\"tab\there\"", "\"\\x\"", "\"\\ud800\"", "\"\\udc00\"", "\"\\ud800\\u0041\"",
            "{\"a\":1} x", "nul", "tru", "NaN", "[1] [2]", "{\"a\":1,\"a\":2}",
        ]
        for text in bad {
            #expect(throws: JOSEError.self, "\(text.debugDescription)") { try JSONValue.parse(Array(text.utf8)) }
        }
        #expect(throws: JOSEError.self) { try JSONValue.parse([0x22, 0xff, 0x22]) }  // invalid UTF-8
        #expect(throws: JOSEError.self) { try JSONValue.parse([0x22, 0x61, 0xC3, 0x22]) }  // a truncated sequence
        #expect(throws: JOSEError.self) { try JSONValue.parse([0x22, 0xC0, 0xAF, 0x22]) }  // an overlong "/"
        #expect(throws: JOSEError.self) { try JSONValue.parse([0x22, 0xED, 0xA0, 0x80, 0x22]) }  // a surrogate
    }

    /// Strings without escapes: ASCII taken as it is, anything else validated as UTF-8 (a member name too).
    @Test func unescapedStringsAreTakenOrValidated() throws {
        #expect(try JSONValue.parse(Array(#"{"k":"plain ascii"}"#.utf8)).objectValue?["k"]?.stringValue == "plain ascii")
        let text = #"{"clé":"é😀x"}"#
        #expect(try JSONValue.parse(Array(text.utf8)).objectValue?["clé"]?.stringValue == "é😀x")
    }

    @Test func depthLimit() throws {
        let deep = String(repeating: "[", count: 40) + String(repeating: "]", count: 40)
        #expect(throws: JOSEError.self) { try JSONValue.parse(Array(deep.utf8)) }
        let fine = String(repeating: "[", count: 10) + String(repeating: "]", count: 10)
        #expect(throws: Never.self) { try JSONValue.parse(Array(fine.utf8)) }
    }

    @Test func bigIntegersBecomeDoubles() throws {
        #expect(try JSONValue.parse(Array("9223372036854775807".utf8)) == .integer(.max))
        #expect(try JSONValue.parse(Array("9223372036854775808".utf8)) == .double(9223372036854775808))
        #expect(throws: JOSEError.self) { try JSONValue.parse(Array("1e400".utf8)) }
    }
}
