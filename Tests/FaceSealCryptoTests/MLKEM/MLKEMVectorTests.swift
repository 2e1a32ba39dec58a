import Foundation
import Testing
@testable import FaceSealCrypto

/// The NIST ACVP vectors of FIPS 203 (Tests/FaceSealCryptoTests/Fixtures/ml-kem-*.json), every case run
/// and counted so a fixture that silently yields nothing fails.
@Suite struct MLKEMVectorTests {
    struct File<Test: Decodable>: Decodable {
        struct Group: Decodable {
            let parameterSet: String
            let function: String?
            let tests: [Test]
        }
        let testGroups: [Group]
    }

    struct KeyGenCase: Decodable {
        let id: Int
        let d, z, ek, dk: String
    }

    struct EncapDecapCase: Decodable {
        let id: Int
        let ek: String?
        let dk: String?
        let m: String?
        let c: String?
        let k: String?
        let testPassed: Bool?
        let reason: String?
    }

    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures")

    static func load<T: Decodable>(_ name: String, as: T.Type) throws -> File<T> {
        let data = try Data(contentsOf: fixtures.appendingPathComponent(name))
        return try JSONDecoder().decode(File<T>.self, from: data)
    }

    static func parameters(_ name: String) -> MLKEMParameters {
        switch name {
        case "ML-KEM-512": return .mlkem512
        case "ML-KEM-768": return .mlkem768
        case "ML-KEM-1024": return .mlkem1024
        default:
            Issue.record("unknown parameter set \(name)")
            return .mlkem768
        }
    }

    /// Every case on every kernel level this CPU has (the portable Swift path always among them).
    @Test(arguments: PQKernels.available)
    func keyGeneration(level: PQKernels.Level) throws {
        try onKernelLevel(level) { try keyGenerationOnActiveLevel() }
    }

    func keyGenerationOnActiveLevel() throws {
        let file = try Self.load("ml-kem-keygen.json", as: KeyGenCase.self)
        var count = 0
        for group in file.testGroups {
            let p = Self.parameters(group.parameterSet)
            for test in group.tests {
                let seed = hex(test.d) + hex(test.z)
                var ek = [UInt8](repeating: 0, count: p.encapsulationKeyByteCount)
                var dk = [UInt8](repeating: 0, count: p.decapsulationKeyByteCount)
                try seed.withUnsafeBytes { s in
                    try ek.withUnsafeMutableBytes { e in
                        try dk.withUnsafeMutableBytes { d in
                            try MLKEM.keyGenInternal(p, seed: s, encapsulationKey: e, decapsulationKey: d)
                        }
                    }
                }
                #expect(ek == hex(test.ek), "\(group.parameterSet) keygen \(test.id): ek")
                #expect(dk == hex(test.dk), "\(group.parameterSet) keygen \(test.id): dk")
                // The public API derives the same keys from the seed.
                let (ekAPI, dkAPI) = try Self.apiKeyGen(group.parameterSet, seed: seed)
                #expect(ekAPI == ek && dkAPI == dk, "\(group.parameterSet) keygen \(test.id): public API")
                count += 1
            }
        }
        #expect(count == 30)
        print("ML-KEM vectors: keyGen=\(count)")
    }

    static func apiKeyGen(_ set: String, seed: [UInt8]) throws -> ([UInt8], [UInt8]) {
        switch set {
        case "ML-KEM-512":
            let key = try MLKEM512.PrivateKey(seedRepresentation: seed)
            return ([UInt8](key.publicKey.rawRepresentation), [UInt8](key.integrityCheckedRepresentation))
        case "ML-KEM-768":
            let key = try MLKEM768.PrivateKey(seedRepresentation: seed)
            return ([UInt8](key.publicKey.rawRepresentation), [UInt8](key.integrityCheckedRepresentation))
        default:
            let key = try MLKEM1024.PrivateKey(seedRepresentation: seed)
            return ([UInt8](key.publicKey.rawRepresentation), [UInt8](key.integrityCheckedRepresentation))
        }
    }

    static func encaps(_ p: MLKEMParameters, ek: [UInt8], m: [UInt8]) throws -> (c: [UInt8], k: [UInt8]) {
        var c = [UInt8](repeating: 0, count: p.ciphertextByteCount)
        var k = [UInt8](repeating: 0, count: 32)
        try ek.withUnsafeBytes { e in
            try m.withUnsafeBytes { mb in
                try c.withUnsafeMutableBytes { cb in
                    try k.withUnsafeMutableBytes { kb in
                        try MLKEM.encapsulateInternal(p, encapsulationKey: e, randomness: mb, ciphertext: cb, sharedSecret: kb)
                    }
                }
            }
        }
        return (c, k)
    }

    static func decaps(_ p: MLKEMParameters, dk: [UInt8], c: [UInt8]) throws -> [UInt8] {
        var k = [UInt8](repeating: 0, count: 32)
        try dk.withUnsafeBytes { d in
            try c.withUnsafeBytes { cb in
                try k.withUnsafeMutableBytes { kb in
                    try MLKEM.decapsulateInternal(p, decapsulationKey: d, ciphertext: cb, sharedSecret: kb)
                }
            }
        }
        return k
    }

    /// Every case on every kernel level this CPU has (the portable Swift path always among them).
    @Test(arguments: PQKernels.available)
    func encapsulationDecapsulationAndKeyChecks(level: PQKernels.Level) throws {
        try onKernelLevel(level) { try encapsulationDecapsulationAndKeyChecksOnActiveLevel() }
    }

    func encapsulationDecapsulationAndKeyChecksOnActiveLevel() throws {
        let file = try Self.load("ml-kem-encapdecap.json", as: EncapDecapCase.self)
        var counts: [String: Int] = [:]
        var rejectedEK = 0, rejectedDK = 0, implicitRejections = 0
        for group in file.testGroups {
            let p = Self.parameters(group.parameterSet)
            let function = group.function ?? "?"
            for test in group.tests {
                let label = "\(group.parameterSet) \(function) \(test.id)"
                switch function {
                case "encapsulation":
                    let ek = hex(test.ek!), dk = hex(test.dk!)
                    let (c, k) = try Self.encaps(p, ek: ek, m: hex(test.m!))
                    #expect(c == hex(test.c!), "\(label): c")
                    #expect(k == hex(test.k!), "\(label): k")
                    #expect(try Self.decaps(p, dk: dk, c: c) == k, "\(label): Decaps(dk, c) == k")
                case "decapsulation":
                    let k = try Self.decaps(p, dk: hex(test.dk!), c: hex(test.c!))
                    #expect(k == hex(test.k!), "\(label): k (\(test.reason ?? ""))")
                    if test.reason == "modified ciphertext" { implicitRejections += 1 }
                case "encapsulationKeyCheck":
                    let ek = hex(test.ek!)
                    let passed = (try? MLKEM.checkEncapsulationKey(p, ek)) != nil
                    #expect(passed == test.testPassed!, "\(label): \(test.reason ?? "")")
                    if !passed {
                        rejectedEK += 1
                        // These ACVP keys are rejected by the §7.2 type (length) check: each is 416 bytes
                        // longer than 384k + 32. The modulus check itself is exercised in MLKEMTests.
                        #expect(throws: MLKEMError.invalidKeyLength(expected: p.encapsulationKeyByteCount, actual: ek.count)) {
                            try MLKEM.checkEncapsulationKey(p, ek)
                        }
                    }
                    #expect(Self.publicKeyImports(group.parameterSet, ek) == test.testPassed!, "\(label): PublicKey import")
                case "decapsulationKeyCheck":
                    let dk = hex(test.dk!)
                    let passed = (try? dk.withUnsafeBytes { try MLKEM.checkDecapsulationKey(p, $0) }) != nil
                    #expect(passed == test.testPassed!, "\(label): \(test.reason ?? "")")
                    if !passed { rejectedDK += 1 }
                    #expect(Self.privateKeyImports(group.parameterSet, dk) == test.testPassed!, "\(label): PrivateKey import")
                default:
                    Issue.record("unknown function \(function)")
                }
                counts[function, default: 0] += 1
            }
        }
        #expect(counts["encapsulation"] == 30)
        #expect(counts["decapsulation"] == 30)
        #expect(counts["encapsulationKeyCheck"] == 30)
        #expect(counts["decapsulationKeyCheck"] == 30)
        // The must-reject and implicit-rejection cases are really there.
        #expect(rejectedEK > 0 && rejectedDK > 0 && implicitRejections > 0)
        print("ML-KEM vectors: \(counts.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")); rejected ek \(rejectedEK), rejected dk \(rejectedDK), modified ciphertexts \(implicitRejections)")
    }

    static func publicKeyImports(_ set: String, _ ek: [UInt8]) -> Bool {
        switch set {
        case "ML-KEM-512": return (try? MLKEM512.PublicKey(rawRepresentation: ek)) != nil
        case "ML-KEM-768": return (try? MLKEM768.PublicKey(rawRepresentation: ek)) != nil
        default: return (try? MLKEM1024.PublicKey(rawRepresentation: ek)) != nil
        }
    }

    static func privateKeyImports(_ set: String, _ dk: [UInt8]) -> Bool {
        switch set {
        case "ML-KEM-512": return (try? MLKEM512.PrivateKey(integrityCheckedRepresentation: dk)) != nil
        case "ML-KEM-768": return (try? MLKEM768.PrivateKey(integrityCheckedRepresentation: dk)) != nil
        default: return (try? MLKEM1024.PrivateKey(integrityCheckedRepresentation: dk)) != nil
        }
    }
}

/// Decodes a hex string (the fixtures are trusted test data; a malformed one records an issue).
private func hex(_ string: String) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(string.utf8.count / 2)
    var high: UInt8?
    for c in string.utf8 {
        let v: UInt8
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): v = c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): v = c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): v = c - UInt8(ascii: "A") + 10
        default:
            Issue.record("bad hex digit in fixture")
            return []
        }
        if let h = high {
            bytes.append(h << 4 | v)
            high = nil
        } else {
            high = v
        }
    }
    return bytes
}
