import Foundation
import Testing
@testable import FaceSealCrypto

/// HashML-DSA (FIPS 204 Alg. 4/5): every case of the optional pre-hash fixture, plus the digest interface.
@Suite struct MLDSAPreHashTests {
    /// Every case on every kernel level this CPU has (the portable Swift path always among them).
    @Test(arguments: PQKernels.available)
    func everyPreHashVector(level: PQKernels.Level) throws {
        try onKernelLevel(level) { try everyPreHashVectorOnActiveLevel() }
    }

    func everyPreHashVectorOnActiveLevel() throws {
        let file = try MLDSAVectors.load("ml-dsa-hash-optional.json")
        var signed = 0, verified = 0
        var hashes: Swift.Set<String> = []
        for group in file.testGroups {
            let scheme = try #require(AnyMLDSA.named(group.parameterSet))
            #expect(group.preHash == "preHash")
            for test in group.tests {
                let name = try #require(test.hashAlg)
                let hash = try #require(MLDSAPreHash(rawValue: name), "unknown hashAlg \(name)")
                hashes.insert(name)
                let input = AnyMLDSA.SignInput.preHash(
                    message: bytes(hex: try #require(test.message)), context: bytes(hex: try #require(test.context)),
                    hash: hash)
                let signature = bytes(hex: try #require(test.signature))
                let pk = bytes(hex: try #require(test.pk))
                switch group.mode {
                case "sigGen":
                    let rnd = bytes(hex: try #require(test.rnd))
                    let produced = try scheme.signExpanded(bytes(hex: try #require(test.sk)), input, .given(Data(rnd)))
                    #expect(Array(produced) == signature, "\(group.parameterSet) id \(test.id) \(name)")
                    #expect(try scheme.verify(pk, signature, input))
                    signed += 1
                case "sigVer":
                    let expected = try #require(test.testPassed as Bool?)
                    #expect(try scheme.verify(pk, signature, input) == expected, "\(group.parameterSet) id \(test.id): \(test.reason ?? "")")
                    verified += 1
                default:
                    Issue.record("unknown mode \(group.mode ?? "nil")")
                }
            }
        }
        #expect(signed == 6)
        print("ML-DSA vectors: HashML-DSA sigGen=\(signed) sigVer=\(verified) hashes \(hashes.sorted().joined(separator: ","))")
        #expect(verified == 13)
        #expect(hashes == ["SHA3-224", "SHA3-256", "SHA3-384", "SHA3-512", "SHAKE-128", "SHAKE-256"])
    }

    /// Every hash function round-trips, the digest interface equals hashing inside, and HashML-DSA
    /// signatures are not valid as pure ones (the 0x01 domain separator).
    @Test(arguments: MLDSAPreHash.allCases)
    func preHashRoundTrip(hash: MLDSAPreHash) throws {
        let key = try MLDSA44.PrivateKey(seedRepresentation: [UInt8](repeating: 5, count: 32))
        let message = Array("pre-hashed message".utf8)
        let context = Array("ctx".utf8)
        let signature = try key.signature(for: message, preHashedWith: hash, context: context, randomness: .deterministic)
        #expect(key.publicKey.isValidSignature(signature, for: message, preHashedWith: hash, context: context))
        #expect(!key.publicKey.isValidSignature(signature, for: message, context: context))
        #expect(!key.publicKey.isValidSignature(signature, for: message + [0], preHashedWith: hash, context: context))
        let digest = message.withUnsafeBytes { hash.digest($0) }
        #expect(digest.count == hash.digestByteCount)
        let viaDigest = try key.signature(forDigest: digest, preHashedWith: hash, context: context, randomness: .deterministic)
        #expect(viaDigest == signature)
        #expect(key.publicKey.isValidSignature(signature, forDigest: digest, preHashedWith: hash, context: context))
        #expect(throws: MLDSAError.invalidDigestLength(expected: hash.digestByteCount, actual: digest.count - 1)) {
            try key.signature(forDigest: digest.dropLast(), preHashedWith: hash)
        }
        #expect(throws: MLDSAError.contextTooLong(length: 256)) {
            try key.signature(for: message, preHashedWith: hash, context: [UInt8](repeating: 0, count: 256))
        }
    }

    /// Known digests of "abc" for the hash functions computed here (FIPS 180-4 / FIPS 202 examples).
    @Test func digestsOfAbc() {
        let abc = Array("abc".utf8)
        func hex(_ hash: MLDSAPreHash) -> String {
            abc.withUnsafeBytes { hash.digest($0) }.map { String(format: "%02x", $0) }.joined()
        }
        #expect(hex(.sha3_224) == "e642824c3f8cf24ad09234ee7d3c766fc9a3a5168d0c94ad73b46fdf")
        #expect(hex(.sha3_384) == "ec01498288516fc926459f58e2c6ad8df9b473cb0fc08c2596da7cf0e49be4b298d88cea927ac7f539f1edf228376d25")
        #expect(hex(.sha224) == "23097d223405d8228642a477bda255b32aadbce4bda0b3f7e36c9da7")
        #expect(hex(.sha512_256) == "53048e2681941ef99b2e29b76b4c7dabe4c2d0c634fc6d46e0e2f13107e7af23")
    }
}
