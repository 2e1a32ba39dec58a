import Foundation
import Testing
@testable import FaceSealCrypto

/// Every case of the ACVP-derived ML-DSA fixtures, counted so an empty or partial run fails.
@Suite struct MLDSAVectorTests {
    /// Every case on every kernel level this CPU has (the portable Swift path always among them).
    @Test(arguments: PQKernels.available)
    func keyGenerationMatchesEveryVector(level: PQKernels.Level) throws {
        try onKernelLevel(level) { try keyGenerationMatchesEveryVectorOnActiveLevel() }
    }

    func keyGenerationMatchesEveryVectorOnActiveLevel() throws {
        let file = try MLDSAVectors.load("ml-dsa-keygen.json")
        var executed = 0
        for group in file.testGroups {
            let scheme = try #require(AnyMLDSA.named(group.parameterSet))
            for test in group.tests {
                let seed = bytes(hex: try #require(test.seed))
                let (pk, sk, seedBack) = try scheme.keyGen(seed)
                #expect(Array(pk) == bytes(hex: try #require(test.pk)), "\(group.parameterSet) id \(test.id) pk")
                #expect(Array(sk) == bytes(hex: try #require(test.sk)), "\(group.parameterSet) id \(test.id) sk")
                #expect(Array(seedBack) == seed)
                executed += 1
            }
        }
        #expect(executed == 24)
        print("ML-DSA vectors: keyGen=\(executed)")
    }

    /// Every case on every kernel level this CPU has (the portable Swift path always among them).
    @Test(arguments: PQKernels.available)
    func signatureGenerationMatchesEveryVector(level: PQKernels.Level) throws {
        try onKernelLevel(level) { try signatureGenerationMatchesEveryVectorOnActiveLevel() }
    }

    func signatureGenerationMatchesEveryVectorOnActiveLevel() throws {
        let file = try MLDSAVectors.load("ml-dsa-siggen.json")
        var executed = 0
        var byInterface: [String: Int] = [:]
        for group in file.testGroups {
            let scheme = try #require(AnyMLDSA.named(group.parameterSet))
            let interface = try Self.interface(group)
            for test in group.tests {
                let input = try Self.input(test, interface: interface)
                let rnd = bytes(hex: try #require(test.rnd))
                let randomness: MLDSASigningRandomness
                if group.deterministic == true {
                    #expect(rnd == [UInt8](repeating: 0, count: 32))
                    randomness = .deterministic
                } else {
                    randomness = .given(Data(rnd))
                }
                let signature = try scheme.signExpanded(bytes(hex: try #require(test.sk)), input, randomness)
                let expected = bytes(hex: try #require(test.signature))
                #expect(Array(signature) == expected, "\(group.parameterSet) \(interface) id \(test.id)")
                // The signature must also verify under the vector's public key.
                #expect(try scheme.verify(bytes(hex: try #require(test.pk)), expected, input))
                executed += 1
                byInterface[interface, default: 0] += 1
            }
        }
        #expect(executed == 72)
        print("ML-DSA vectors: sigGen=\(executed) \(byInterface.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))")
        #expect(byInterface == ["pure": 24, "internal": 24, "externalMu": 24])
    }

    /// Every case on every kernel level this CPU has (the portable Swift path always among them).
    @Test(arguments: PQKernels.available)
    func signatureVerificationMatchesEveryVector(level: PQKernels.Level) throws {
        try onKernelLevel(level) { try signatureVerificationMatchesEveryVectorOnActiveLevel() }
    }

    func signatureVerificationMatchesEveryVectorOnActiveLevel() throws {
        let file = try MLDSAVectors.load("ml-dsa-sigver.json")
        var executed = 0
        var reasons: [String: Int] = [:]
        for group in file.testGroups {
            let scheme = try #require(AnyMLDSA.named(group.parameterSet))
            let interface = try Self.interface(group)
            for test in group.tests {
                let input = try Self.input(test, interface: interface)
                let expected = try #require(test.testPassed as Bool?)
                let valid = try scheme.verify(
                    bytes(hex: try #require(test.pk)), bytes(hex: try #require(test.signature)), input)
                #expect(valid == expected, "\(group.parameterSet) \(interface) id \(test.id): \(test.reason ?? "")")
                executed += 1
                reasons[try #require(test.reason), default: 0] += 1
            }
        }
        #expect(executed == 60)
        print("ML-DSA vectors: sigVer=\(executed) by reason: \(reasons.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "; "))")
        #expect(Set(reasons.keys) == [
            "valid signature and message - signature should verify successfully",
            "modified message",
            "modified signature - commitment",
            "modified signature - z",
            "modified signature - hint",
        ])
    }

    static func interface(_ group: MLDSAVectors.Group) throws -> String {
        switch (group.signatureInterface, group.externalMu) {
        case ("external", _): return "pure"
        case ("internal", true): return "externalMu"
        case ("internal", _): return "internal"
        default: throw VectorError.unknownInterface(group.signatureInterface ?? "nil")
        }
    }

    static func input(_ test: MLDSAVectors.Case, interface: String) throws -> AnyMLDSA.SignInput {
        switch interface {
        case "pure":
            return .pure(message: bytes(hex: try #require(test.message)), context: bytes(hex: try #require(test.context)))
        case "internal":
            return .internalMessage(bytes(hex: try #require(test.message)))
        default:
            return .mu(bytes(hex: try #require(test.mu)))
        }
    }

    enum VectorError: Error {
        case unknownInterface(String)
    }
}
