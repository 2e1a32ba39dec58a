import Testing
@testable import FaceSealCrypto

/// Known answers on every permutation level the sponge runs (the Swift one, lane 0 of the AVX-512VL kernel).
@Suite struct KeccakSpongeTests {
    private func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    @Test(arguments: PQKernels.available)
    func sha3EmptyAndAbc(level: PQKernels.Level) {
        var a = KeccakSponge.sha3_256(level)
        #expect(hex(a.squeeze(count: 32)) == "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a")
        var b = KeccakSponge.sha3_256(level)
        b.absorb(Array("abc".utf8))
        #expect(hex(b.squeeze(count: 32)) == "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532")
        var c = KeccakSponge.sha3_512(level)
        c.absorb(Array("abc".utf8))
        #expect(hex(c.squeeze(count: 64)) == "b751850b1a57168a5693cd924b6b096e08f621827444f70d884f5d0240d2712e10e116e9192af3c91a7ec57647e3934057340b4cf408d5a56592f8274eec53f0")
    }

    @Test(arguments: PQKernels.available)
    func shakeEmpty(level: PQKernels.Level) {
        var a = KeccakSponge.shake128(level)
        #expect(hex(a.squeeze(count: 32)) == "7f9c2ba4e88f827d616045507605853ed73b8093f6efbc88eb1a6eacfa66ef26")
        var b = KeccakSponge.shake256(level)
        #expect(hex(b.squeeze(count: 32)) == "46b9dd2b0ba88d13233b3feb743eeb243fcd52ea62b81b82b50c27646ed5762f")
    }

    /// The same stream whatever the split of absorbs and squeezes, across block boundaries.
    @Test(arguments: PQKernels.available)
    func incrementalEqualsOneShot(level: PQKernels.Level) {
        let message = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        var whole = KeccakSponge.shake128(level)
        whole.absorb(message)
        let expected = whole.squeeze(count: 1000)
        for split in [0, 1, 135, 167, 168, 169, 500, 999] {
            var pieces = KeccakSponge.shake128(level)
            pieces.absorb(Array(message[..<split]))
            pieces.absorb(Array(message[split...]))
            var out: [UInt8] = []
            for chunk in [1, 167, 168, 3, 661] { out += pieces.squeeze(count: chunk) }
            #expect(out == expected, "split \(split)")
        }
    }

    /// 200 bytes of 0xA3 (the FIPS 202 example message length of 1600 bits).
    @Test(arguments: PQKernels.available)
    func sha3_256Of1600Bits(level: PQKernels.Level) {
        var s = KeccakSponge.sha3_256(level)
        s.absorb([UInt8](repeating: 0xA3, count: 200))
        #expect(hex(s.squeeze(count: 32)) == "79f38adec5c20307a98ef76e8324afbfd46cfd81b22e3973c65fa1bd9de31787")
    }

    @Test func zeroizeResets() {
        var s = KeccakSponge.shake256()
        s.absorb([1, 2, 3])
        _ = s.squeeze(count: 10)
        s.zeroize()
        var fresh = KeccakSponge.shake256()
        #expect(s.squeeze(count: 32) == fresh.squeeze(count: 32))
    }
}
