public import FaceSealCrypto

/// The masters of a face token (SPEC §5.2): one 32-byte secret per key algorithm name, each in its own ``SecretBytes``.
/// Names this build does not know are carried over untouched (fill-only: a master is never dropped or replaced).
public struct FaceTokenMasters: Sendable {
    /// The length of every master.
    public static let masterByteCount = 32
    /// The most masters a token holds (a policy names a handful).
    public static let maximumCount = 16
    /// The longest algorithm name.
    public static let maximumNameLength = 32

    private var byName: [String: SecretBytes] = [:]

    /// No masters.
    public init() {}

    /// The algorithm names held, sorted.
    public var names: [String] { byName.keys.sorted() }

    /// The master of `algorithm`, if the token holds one.
    public subscript(algorithm: KeyAlgorithm) -> SecretBytes? { byName[algorithm.rawValue] }

    /// Adds a fresh random master for `algorithm` unless the token holds one (fill-only, so a key an application
    /// pinned never moves).
    public mutating func fill(_ algorithm: KeyAlgorithm) {
        if byName[algorithm.rawValue] == nil { byName[algorithm.rawValue] = SecretBytes(randomCount: Self.masterByteCount) }
    }

    /// Adds a decoded master; a repeated or malformed name, a wrong length or one master too many is refused.
    mutating func insert(name: [UInt8], master: SecretBytes) throws(FaceTokenError) {
        guard Self.isValidName(name) else { throw .malformed("a master's algorithm name") }
        guard master.count == Self.masterByteCount else { throw .malformed("a master is not 32 bytes") }
        guard byName.count < Self.maximumCount else { throw .malformed("more than \(Self.maximumCount) masters") }
        let text = String(decoding: name, as: UTF8.self)
        guard byName[text] == nil else { throw .malformed("a master named twice") }
        byName[text] = master
    }

    /// 1…32 bytes of `A–Z a–z 0–9 -` (every `KeyAlgorithm` name, and room for later ones).
    static func isValidName(_ name: some Collection<UInt8>) -> Bool {
        (1...maximumNameLength).contains(name.count) && name.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x2D
        }
    }

    /// The keys layer's plaintext (format 2), written straight into secret storage:
    /// `count (1 byte) ‖ count × (name length (1 byte) ‖ name ‖ master (32 bytes))`, names in ascending byte order.
    func encodedLayer() -> SecretBytes {
        let names = self.names
        let size = names.reduce(1) { $0 + 1 + $1.utf8.count + Self.masterByteCount }
        return SecretBytes(count: size) { out in
            out[0] = UInt8(names.count)
            var index = 1
            for name in names {
                out[index] = UInt8(name.utf8.count)
                index += 1
                for byte in name.utf8 {
                    out[index] = byte
                    index += 1
                }
                byName[name]!.withUnsafeBytes { master in
                    UnsafeMutableRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(out)[index..<(index + master.count)])
                        .copyMemory(from: master)
                }
                index += Self.masterByteCount
            }
        }
    }

    /// Parses a keys layer's plaintext; each master goes from the plaintext straight into its own ``SecretBytes``.
    static func decodeLayer(_ plaintext: SecretBytes) throws(FaceTokenError) -> FaceTokenMasters {
        try plaintext.withUnsafeBytes { (raw) throws(FaceTokenError) -> FaceTokenMasters in
            guard let first = raw.first else { throw .malformed("empty keys layer") }
            var masters = FaceTokenMasters()
            var index = 1
            var previous: [UInt8] = []
            for _ in 0..<Int(first) {
                guard index < raw.count else { throw .malformed("keys layer truncated") }
                let length = Int(raw[index])
                index += 1
                // Lengths are at most 255 + 32, so the sum cannot overflow; compare with what is left.
                guard raw.count - index >= length + masterByteCount else { throw .malformed("keys layer truncated") }
                let name = Array(raw[index..<(index + length)])
                // Strictly ascending: one encoding per set of masters, and no name twice.
                guard previous.lexicographicallyPrecedes(name) else { throw .malformed("keys layer names out of order") }
                index += length
                let master = SecretBytes(count: masterByteCount) { out in
                    UnsafeMutableRawBufferPointer(out).copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[index..<(index + masterByteCount)]))
                }
                index += masterByteCount
                try masters.insert(name: name, master: master)
                previous = name
            }
            guard index == raw.count else { throw .malformed("bytes after the keys layer") }
            return masters
        }
    }
}

/// The templates layer's plaintext (format 2): `count (2 bytes) ‖ dimension (2 bytes) ‖ count × dimension IEEE-754
/// binary32 values`, all big-endian; every value finite, every template of the same dimension.
enum FaceTokenTemplates {
    /// The most templates a token holds.
    static let maximumCount = 64
    /// The longest embedding.
    static let maximumDimension = 1024

    /// Checks the templates' shape: 1…64 of one dimension in 1…1024, every value finite.
    static func check(_ templates: [[Float]]) throws(FaceTokenError) {
        guard let dimension = templates.first?.count, (1...maximumCount).contains(templates.count),
              (1...maximumDimension).contains(dimension) else {
            throw .malformed("1…\(maximumCount) templates of 1…\(maximumDimension) values are sealed")
        }
        guard templates.allSatisfy({ $0.count == dimension && $0.allSatisfy(\.isFinite) }) else {
            throw .malformed("templates of mixed dimensions or with non-finite values")
        }
    }

    /// The layer's plaintext, in secret storage (templates are biometric data: the buffer is wiped when released).
    static func encode(_ templates: [[Float]]) throws(FaceTokenError) -> SecretBytes {
        try check(templates)
        let dimension = templates[0].count
        return SecretBytes(count: 4 + 4 * templates.count * dimension) { out in
            out[0] = UInt8(templates.count >> 8)
            out[1] = UInt8(templates.count & 0xFF)
            out[2] = UInt8(dimension >> 8)
            out[3] = UInt8(dimension & 0xFF)
            var index = 4
            for value in templates.joined() {
                let bits = value.bitPattern
                out[index] = UInt8(bits >> 24)
                out[index + 1] = UInt8(bits >> 16 & 0xFF)
                out[index + 2] = UInt8(bits >> 8 & 0xFF)
                out[index + 3] = UInt8(bits & 0xFF)
                index += 4
            }
        }
    }

    /// Parses the layer's plaintext.
    static func decode(_ plaintext: SecretBytes) throws(FaceTokenError) -> [[Float]] {
        let templates = try plaintext.withUnsafeBytes { (raw) throws(FaceTokenError) -> [[Float]] in
            guard raw.count >= 4 else { throw .malformed("templates layer truncated") }
            let count = Int(raw[0]) << 8 | Int(raw[1])
            let dimension = Int(raw[2]) << 8 | Int(raw[3])
            // Both are below 2^16, so the product cannot overflow.
            guard raw.count == 4 + 4 * count * dimension else { throw .malformed("templates layer length") }
            var index = 4
            return (0..<count).map { _ in
                (0..<dimension).map { _ in
                    let bits = UInt32(raw[index]) << 24 | UInt32(raw[index + 1]) << 16 | UInt32(raw[index + 2]) << 8 | UInt32(raw[index + 3])
                    index += 4
                    return Float(bitPattern: bits)
                }
            }
        }
        try check(templates)
        return templates
    }
}
