import FaceSealCrypto

/// The body of a format-1 token, read by hand so a master goes from the plaintext straight into ``SecretBytes``
/// (a JSON decoder would leave each master behind in a string): `{"masters":{NAME:BASE64URL,…},"templates":[[FLOAT,…],…]}`,
/// as format-1 tokens were written. Read only, never written: a rotation seals format 2.
enum FaceTokenV1Body {
    /// The templates; the masters' values are skipped without being decoded.
    static func templates(_ plaintext: SecretBytes) throws(FaceTokenError) -> [[Float]] {
        let templates = try read(plaintext, decodeMasters: false).templates
        try FaceTokenTemplates.check(templates)
        return templates
    }

    /// The masters.
    static func masters(_ plaintext: SecretBytes) throws(FaceTokenError) -> FaceTokenMasters {
        try read(plaintext, decodeMasters: true).masters
    }

    private static func read(_ plaintext: SecretBytes, decodeMasters: Bool) throws(FaceTokenError) -> (templates: [[Float]], masters: FaceTokenMasters) {
        try plaintext.withUnsafeBytes { (raw) throws(FaceTokenError) in
            var reader = Reader(raw: raw)
            var templates: [[Float]]?
            var masters: FaceTokenMasters?
            try reader.object { (reader, key) throws(FaceTokenError) in
                switch key {
                case Array("masters".utf8) where masters == nil:
                    masters = try reader.masters(decode: decodeMasters)
                case Array("templates".utf8) where templates == nil:
                    templates = try reader.templates()
                default:
                    throw .malformed("format-1 body field")
                }
            }
            reader.skipWhitespace()
            guard reader.index == raw.count, let templates, let masters else { throw .malformed("format-1 body") }
            return (templates, masters)
        }
    }

    /// A cursor over the plaintext: just enough JSON for this one shape (no escapes, no nesting beyond it).
    private struct Reader {
        let raw: UnsafeRawBufferPointer
        var index = 0

        mutating func skipWhitespace() {
            while index < raw.count, [0x20, 0x09, 0x0A, 0x0D].contains(raw[index]) { index += 1 }
        }

        mutating func consume(_ byte: UInt8) -> Bool {
            skipWhitespace()
            guard index < raw.count, raw[index] == byte else { return false }
            index += 1
            return true
        }

        mutating func expect(_ byte: UInt8) throws(FaceTokenError) {
            guard consume(byte) else { throw .malformed("format-1 body syntax") }
        }

        /// The content of a string without escapes, as a range of the plaintext.
        mutating func string() throws(FaceTokenError) -> Range<Int> {
            try expect(0x22)
            let start = index
            while index < raw.count, raw[index] != 0x22 {
                guard raw[index] != 0x5C, raw[index] >= 0x20 else { throw .malformed("format-1 body string") }
                index += 1
            }
            guard index < raw.count else { throw .malformed("format-1 body string") }
            index += 1
            return start..<(index - 1)
        }

        /// `{ KEY : VALUE, … }`, handing each key to `member`, which reads the value.
        mutating func object(_ member: (inout Reader, [UInt8]) throws(FaceTokenError) -> Void) throws(FaceTokenError) {
            try expect(0x7B)
            if consume(0x7D) { return }
            repeat {
                let key = Array(raw[try string()])
                try expect(0x3A)
                try member(&self, key)
            } while consume(0x2C)
            try expect(0x7D)
        }

        /// `[ ELEMENT, … ]` (at least one element).
        mutating func array(_ element: (inout Reader) throws(FaceTokenError) -> Void) throws(FaceTokenError) {
            try expect(0x5B)
            repeat { try element(&self) } while consume(0x2C)
            try expect(0x5D)
        }

        mutating func masters(decode: Bool) throws(FaceTokenError) -> FaceTokenMasters {
            var masters = FaceTokenMasters()
            var count = 0
            try object { (reader, name) throws(FaceTokenError) in
                let value = try reader.string()
                count += 1
                guard count <= FaceTokenMasters.maximumCount, FaceTokenMasters.isValidName(name) else {
                    throw .malformed("format-1 masters")
                }
                guard decode else { return }
                let master: SecretBytes
                do {
                    master = try Base64URL.decodeSecret(utf8: UnsafeRawBufferPointer(rebasing: reader.raw[value]), part: "master",
                                                        maximumDecodedCount: FaceTokenMasters.masterByteCount)
                } catch {
                    throw .malformed("a format-1 master is not base64url of 32 bytes")
                }
                try masters.insert(name: name, master: master)
            }
            return masters
        }

        mutating func templates() throws(FaceTokenError) -> [[Float]] {
            var templates: [[Float]] = []
            try array { (reader) throws(FaceTokenError) in
                guard templates.count < FaceTokenTemplates.maximumCount else { throw .malformed("too many templates") }
                var template: [Float] = []
                try reader.array { (reader) throws(FaceTokenError) in
                    guard template.count < FaceTokenTemplates.maximumDimension else { throw .malformed("template too long") }
                    template.append(try reader.number())
                }
                templates.append(template)
            }
            return templates
        }

        /// A JSON number (at most 32 characters), as a finite `Float`.
        mutating func number() throws(FaceTokenError) -> Float {
            skipWhitespace()
            let start = index
            while index < raw.count, index - start < 32, "0123456789+-.eE".utf8.contains(raw[index]) { index += 1 }
            guard index > start, let value = Float(String(decoding: UnsafeRawBufferPointer(rebasing: raw[start..<index]), as: UTF8.self)),
                  value.isFinite else {
                throw .malformed("format-1 template value")
            }
            return value
        }
    }
}
