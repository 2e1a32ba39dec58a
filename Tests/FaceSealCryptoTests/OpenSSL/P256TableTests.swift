import Foundation
import Testing
@testable import FaceSealCrypto

/// FaceSeal's P-256 table verifier (`P256Tables`, `CFaceSealCurves`) against OpenSSL's ECDSA verification: the same
/// answer for valid signatures (low and high s), tampering, out-of-range r and s, and keys it must leave to OpenSSL.
@Suite struct P256TableTests {
    /// A table for every key at its first verification.
    let tables = P256Tables(limit: 1_000, threshold: 1)

    /// The group order n, big-endian.
    static let order = OSSLTestBytes.hex("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551")

    static func random(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255) } }

    /// `a - b` for 32-byte big-endian numbers (a ≥ b).
    static func subtract(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        var difference = [UInt8](repeating: 0, count: 32), borrow = 0
        for index in (0..<32).reversed() {
            var value = Int(a[index]) - Int(b[index]) - borrow
            borrow = value < 0 ? 1 : 0
            if value < 0 { value += 256 }
            difference[index] = UInt8(value)
        }
        return difference
    }

    /// Asserts that OpenSSL and the tables both give `expected`.
    func expectBoth(_ raw: [UInt8], _ message: [UInt8], _ key: P256.Signing.PublicKey, _ expected: Bool,
                    sourceLocation: SourceLocation = #_sourceLocation) throws {
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: raw)
        #expect(key.isValidSignatureWithOpenSSL(signature, for: message) == expected, sourceLocation: sourceLocation)
        #expect(tables.verify(Data(raw), message: message, key: key.x963Representation) == expected, sourceLocation: sourceLocation)
    }

    @Test func randomKeysSignaturesAndTampering() throws {
        for _ in 0..<25 {
            let key = P256.Signing.PrivateKey()
            for _ in 0..<8 {
                let message = Self.random(Int.random(in: 0...300))
                let raw = [UInt8](try key.signature(for: message).rawRepresentation)
                try expectBoth(raw, message, key.publicKey, true)
                // The other s of the same signature (n - s) verifies too: ECDSA has no low-s rule.
                try expectBoth(Array(raw[..<32]) + Self.subtract(Self.order, Array(raw[32...])), message, key.publicKey, true)
                var flipped = raw
                flipped[Int.random(in: 0..<64)] ^= 1 << UInt8.random(in: 0...7)
                try expectBoth(flipped, message, key.publicKey, false)
                var changed = message + [0]
                changed[Int.random(in: 0..<changed.count)] ^= 1 << UInt8.random(in: 0...7)
                try expectBoth(raw, changed, key.publicKey, false)
                try expectBoth(Self.random(64), message, key.publicKey, false)
                try expectBoth(raw, message, P256.Signing.PrivateKey().publicKey, false)
            }
        }
    }

    /// r and s must be in 1..<n: 0, n, n + 1 and 2^256 - 1 in either place fail on both.
    @Test func outOfRangeRAndS() throws {
        let key = P256.Signing.PrivateKey()
        let message = Array("range".utf8)
        let raw = [UInt8](try key.signature(for: message).rawRepresentation)
        var orderPlusOne = Self.order
        orderPlusOne[31] += 1
        for value in [[UInt8](repeating: 0, count: 32), Self.order, orderPlusOne, [UInt8](repeating: 0xFF, count: 32)] {
            try expectBoth(value + Array(raw[32...]), message, key.publicKey, false)
            try expectBoth(Array(raw[..<32]) + value, message, key.publicKey, false)
        }
    }

    /// A point off the curve gets no table (nil: OpenSSL decides); a valid key gets one at the threshold.
    @Test func tablesAndThreshold() throws {
        let key = P256.Signing.PrivateKey()
        let message = Array("threshold".utf8)
        let raw = Data(try key.signature(for: message).rawRepresentation)
        var offCurve = [UInt8](key.publicKey.x963Representation)
        offCurve[64] ^= 1
        #expect(tables.verify(raw, message: message, key: Data(offCurve)) == nil)
        #expect(tables.verify(raw, message: message, key: Data(offCurve.dropFirst())) == nil)

        let counting = P256Tables(limit: 8, threshold: 3)
        #expect(counting.verify(raw, message: message, key: key.publicKey.x963Representation) == nil)
        #expect(counting.verify(raw, message: message, key: key.publicKey.x963Representation) == nil)
        #expect(!counting.hasTable(key.publicKey.x963Representation))
        #expect(counting.verify(raw, message: message, key: key.publicKey.x963Representation) == true)
        #expect(counting.hasTable(key.publicKey.x963Representation))
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: raw)
        for _ in 0..<10 { #expect(key.publicKey.isValidSignature(signature, for: message)) }
        #expect(P256Tables.shared.hasTable(key.publicKey.x963Representation))
    }

    /// A table's entries start at a cache-line boundary found from its own address, recorded in its first word: a
    /// copy of it elsewhere verifies only where that boundary falls at the same distance (one word offset in eight
    /// within a line) and refuses everywhere else, never reading the entries a few words off.
    @Test func aTableVerifiesOnlyWhereItWasMade() throws {
        let key = P256.Signing.PrivateKey()
        let message = Array("moved".utf8)
        let signature = Data(try key.signature(for: message).rawRepresentation)
        let digest = SHA256.hash(data: message)
        let table = try #require(P256Tables.table(for: key.publicKey.x963Representation))
        #expect(table.withUnsafeBufferPointer { P256Tables.verify(signature, digest: digest, keyTable: $0) })
        let words = table.count
        let buffer = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: words + 8)
        defer { buffer.deallocate() }
        var verified: [Int] = []
        for shift in 0..<8 {
            buffer.initialize(repeating: 0)
            _ = UnsafeMutableBufferPointer(rebasing: buffer[shift..<(shift + words)]).initialize(from: table)
            if P256Tables.verify(signature, digest: digest, keyTable: UnsafeBufferPointer(rebasing: buffer[shift..<(shift + words)])) {
                verified.append(shift)
            }
        }
        #expect(verified.count == 1)
        #expect(!table.withUnsafeBufferPointer { P256Tables.verify(Data(repeating: 1, count: 64), digest: digest, keyTable: $0) })
    }
}
