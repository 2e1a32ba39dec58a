import Foundation
@testable import FaceSealCrypto

/// Loads the ACVP-derived ML-DSA fixtures (copied from the shared vectors; see Fixtures/).
enum MLDSAVectors {
    static let fixtures = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures")

    struct File: Decodable {
        let testGroups: [Group]
    }

    struct Group: Decodable {
        let parameterSet: String
        let mode: String?
        let signatureInterface: String?
        let preHash: String?
        let externalMu: Bool?
        let deterministic: Bool?
        let tests: [Case]
    }

    struct Case: Decodable {
        let id: Int
        let seed: String?
        let pk: String?
        let sk: String?
        let message: String?
        let mu: String?
        let context: String?
        let rnd: String?
        let signature: String?
        let testPassed: Bool?
        let reason: String?
        let hashAlg: String?
    }

    static func load(_ name: String) throws -> File {
        let data = try Data(contentsOf: fixtures.appendingPathComponent(name))
        return try JSONDecoder().decode(File.self, from: data)
    }

    static func parameters(_ name: String) -> MLDSAParameters? {
        switch name {
        case "ML-DSA-44": MLDSA44.parameters
        case "ML-DSA-65": MLDSA65.parameters
        case "ML-DSA-87": MLDSA87.parameters
        default: nil
        }
    }
}

/// Hex decoding for fixtures (upper- or lower-case).
func bytes(hex: String) -> [UInt8] {
    var result: [UInt8] = []
    result.reserveCapacity(hex.utf8.count / 2)
    var high: UInt8?
    for character in hex.utf8 {
        let nibble: UInt8
        switch character {
        case 48...57: nibble = character - 48
        case 65...70: nibble = character - 55
        case 97...102: nibble = character - 87
        default: continue
        }
        if let h = high {
            result.append(h << 4 | nibble)
            high = nil
        } else {
            high = nibble
        }
    }
    return result
}

/// Parameter-set-erased access to the generic key types, so one test body covers 44/65/87.
struct AnyMLDSA: Sendable {
    let parameters: MLDSAParameters
    let keyGen: @Sendable ([UInt8]) throws -> (pk: Data, sk: Data, seed: Data)
    let signExpanded: @Sendable (_ sk: [UInt8], _ interface: SignInput, _ rnd: MLDSASigningRandomness) throws -> Data
    let verify: @Sendable (_ pk: [UInt8], _ signature: [UInt8], _ interface: SignInput) throws -> Bool
    /// Decodes the public key once and returns a verifier (for tests that verify many times).
    let verifier: @Sendable (_ pk: [UInt8]) throws -> @Sendable (_ signature: [UInt8], _ interface: SignInput) -> Bool

    enum SignInput: Sendable {
        case pure(message: [UInt8], context: [UInt8])
        case preHash(message: [UInt8], context: [UInt8], hash: MLDSAPreHash)
        case internalMessage([UInt8])
        case mu([UInt8])
    }

    static func make<P: MLDSAParameterSet>(_: P.Type) -> AnyMLDSA {
        AnyMLDSA(
            parameters: P.parameters,
            keyGen: { seed in
                let key = try MLDSAPrivateKey<P>(seedRepresentation: seed)
                return (key.publicKey.rawRepresentation, key.expandedRepresentation, key.seedRepresentation)
            },
            signExpanded: { sk, input, rnd in
                let key = try MLDSAExpandedPrivateKey<P>(rawRepresentation: sk)
                switch input {
                case .pure(let message, let context):
                    return try key.signature(for: message, context: context, randomness: rnd)
                case .preHash(let message, let context, let hash):
                    return try key.signature(for: message, preHashedWith: hash, context: context, randomness: rnd)
                case .internalMessage(let message):
                    return try key.signature(forInternalMessage: message, randomness: rnd)
                case .mu(let mu):
                    return try key.signature(forPrehashedMessageRepresentative: mu, randomness: rnd)
                }
            },
            verify: { pk, signature, input in
                check(try MLDSAPublicKey<P>(rawRepresentation: pk), signature, input)
            },
            verifier: { pk in
                let key = try MLDSAPublicKey<P>(rawRepresentation: pk)
                return { signature, input in check(key, signature, input) }
            })
    }

    private static func check<P: MLDSAParameterSet>(
        _ key: MLDSAPublicKey<P>, _ signature: [UInt8], _ input: SignInput
    ) -> Bool {
        switch input {
        case .pure(let message, let context):
            key.isValidSignature(signature, for: message, context: context)
        case .preHash(let message, let context, let hash):
            key.isValidSignature(signature, for: message, preHashedWith: hash, context: context)
        case .internalMessage(let message):
            key.isValidSignature(signature, forInternalMessage: message)
        case .mu(let mu):
            key.isValidSignature(signature, forPrehashedMessageRepresentative: mu)
        }
    }

    static func named(_ name: String) -> AnyMLDSA? {
        switch name {
        case "ML-DSA-44": make(MLDSA44.self)
        case "ML-DSA-65": make(MLDSA65.self)
        case "ML-DSA-87": make(MLDSA87.self)
        default: nil
        }
    }
}
