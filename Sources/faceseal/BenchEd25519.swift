import FaceSealCrypto

/// Ed25519 rows of `faceseal bench crypto`: FaceSeal's (libsodium) beside OpenSSL 3.0's, which it replaced
/// (`OpenSSLEd25519`, the same system libcrypto FaceSeal links, its key object built once as FaceSeal did).
/// The authority makes six of these signatures per sign-in ceremony and the device verifies them.
enum BenchEd25519 {
    static let inputCount = 16

    /// A JWS signing input of the size the device-response signatures have (header and claims, ~250 bytes).
    static let messageSize = 250

    static func operations() throws -> [BenchOperation] {
        let seeds = (0..<inputCount).map { _ in SecretBytes(randomCount: 32) }
        let keys = try seeds.map { try Curve25519.Signing.PrivateKey(rawRepresentation: $0.copyBytes()) }
        let references = try seeds.map { try OpenSSLEd25519.PrivateKey(seed: $0) }
        let verifiers = keys.map(\.publicKey)
        let referenceVerifiers = try references.map { try OpenSSLEd25519.PublicKey(rawRepresentation: $0.publicKey) }
        let messages = (0..<inputCount).map { i in (0..<messageSize).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ i) } }
        // The expected signatures, from FaceSeal's side; OpenSSL's must equal them byte for byte (Ed25519 is deterministic).
        let signatures = try (0..<inputCount).map { [UInt8](try keys[$0].signature(for: messages[$0])) }
        let sign = BenchOperation(
            name: "Ed25519 sign",
            faceSeal: { i in
                let n = i % inputCount
                return (try? keys[n].signature(for: messages[n])).map { [UInt8]($0) == signatures[n] } ?? false
            },
            peers: [BenchSide(name: "openssl-3.0") { i in
                let n = i % inputCount
                return (try? references[n].signature(for: messages[n])) == signatures[n]
            }])
        let verify = BenchOperation(
            name: "Ed25519 verify",
            faceSeal: { i in
                let n = i % inputCount
                return verifiers[n].isValidSignature(signatures[n], for: messages[n])
            },
            peers: [BenchSide(name: "openssl-3.0") { i in
                let n = i % inputCount
                return referenceVerifiers[n].isValidSignature(signatures[n], for: messages[n])
            }])
        return [sign, verify]
    }
}
