import FaceSealCrypto
import Foundation

/// ML-DSA keygen / sign / verify against pycryptodome's `_mldsa` (mldsa-native, portable C).
///
/// Both sides do the same bytes-in/bytes-out work per call: keygen from the 32-byte seed ξ to the
/// encoded pk and expanded sk; deterministic pure ML-DSA signing from the expanded sk bytes (FaceSeal
/// imports them, with its consistency check, into `ExpandedPrivateKey`; the peer unpacks them) over a
/// fixed corpus of messages and contexts; verification from the pk bytes (FaceSeal decodes them into
/// `PublicKey`, including ExpandA). Two extra rows for ML-DSA-65 ("sign kept", "verify kept") show what
/// a FaceSeal caller that keeps its key objects pays per signature and per verification (Â, NTT(s1, s2,
/// t0) or NTT(t1·2^d) cached), against the same peer calls.
enum BenchMLDSA {
    typealias Keypair = @convention(c) (
        UInt32, UnsafeMutablePointer<UInt8>?, Int, UnsafeMutablePointer<UInt8>?, Int, UnsafePointer<UInt8>?, Int
    ) -> Int32
    typealias Sign = @convention(c) (
        UInt32, UnsafeMutablePointer<UInt8>?, Int, UnsafePointer<UInt8>?, Int, UnsafePointer<UInt8>?, Int,
        UnsafePointer<UInt8>?, Int, UnsafePointer<UInt8>?, Int, Int32
    ) -> Int32
    typealias Verify = @convention(c) (
        UInt32, UnsafePointer<UInt8>?, Int, UnsafePointer<UInt8>?, Int, UnsafePointer<UInt8>?, Int,
        UnsafePointer<UInt8>?, Int, Int32
    ) -> Int32

    /// Keys (seeds) cycled through.
    static let keyCount = 16
    /// Messages (each with its own context) cycled through: the rejection-loop work averages out.
    static let messageCount = 64

    struct SetupError: Error, CustomStringConvertible {
        let description: String
    }

    static func operations(_ p: MLDSAParameters, peer: BenchPeerLibrary, includeReusedKeys: Bool) throws -> [BenchOperation] {
        switch p.name {
        case MLDSA44.parameters.name: try operations(MLDSA44.self, peer: peer, includeReusedKeys: includeReusedKeys)
        case MLDSA65.parameters.name: try operations(MLDSA65.self, peer: peer, includeReusedKeys: includeReusedKeys)
        default: try operations(MLDSA87.self, peer: peer, includeReusedKeys: includeReusedKeys)
        }
    }

    static func operations<Variant: MLDSAParameterSet>(
        _: Variant.Type, peer: BenchPeerLibrary, includeReusedKeys: Bool
    ) throws -> [BenchOperation] {
        let keypair = try peer.function("mldsa_keypair", as: Keypair.self)
        let sign = try peer.function("mldsa_sign", as: Sign.self)
        let verify = try peer.function("mldsa_verify", as: Verify.self)
        let p = Variant.parameters
        let name = p.name
        let level = UInt32(p.k == 4 ? 44 : p.k == 6 ? 65 : 87)
        let pkSize = p.publicKeyByteCount, skSize = p.expandedPrivateKeyByteCount, sigSize = p.signatureByteCount

        // Fixed inputs: seeds, messages of 0…~2 KiB, contexts of 0…255 bytes.
        let seeds = BenchSlots(count: keyCount, size: 32)
        seeds.fillDeterministic(seed: UInt64(level) &* 3_000_017)
        let messageBytes = BenchSlots(count: 1, size: messageCount * 2048)
        messageBytes.fillDeterministic(seed: UInt64(level) &* 5_000_011)
        let contextBytes = BenchSlots(count: 1, size: messageCount * 255)
        contextBytes.fillDeterministic(seed: UInt64(level) &* 9_000_049)
        func message(_ i: Int) -> UnsafeRawBufferPointer {
            let index = i % messageCount
            return UnsafeRawBufferPointer(start: messageBytes.bytes(0) + index * 2048, count: (index * 97) % 2048)
        }
        func context(_ i: Int) -> UnsafeRawBufferPointer {
            let index = i % messageCount
            return UnsafeRawBufferPointer(start: contextBytes.bytes(0) + index * 255, count: (index * 29) % 256)
        }
        // FIPS 204 M′ prefix for the peer: 0 ‖ len(ctx) ‖ ctx.
        let prefixes = BenchSlots(count: messageCount, size: 257)
        for i in 0..<messageCount {
            let ctx = context(i)
            prefixes.bytes(i)[0] = 0
            prefixes.bytes(i)[1] = UInt8(ctx.count)
            UnsafeMutableRawPointer(prefixes.bytes(i) + 2).copyMemory(from: ctx.baseAddress!, byteCount: ctx.count)
        }
        let zeroRandomness = BenchSlots(count: 1, size: 32)

        // The peer's outputs are the references: pk/sk per key, a signature per message.
        let pks = BenchSlots(count: keyCount, size: pkSize), sks = BenchSlots(count: keyCount, size: skSize)
        for i in 0..<keyCount {
            guard keypair(level, pks.bytes(i), pkSize, sks.bytes(i), skSize, seeds.bytes(i), 32) == 0 else {
                throw SetupError(description: "\(name): the peer failed to generate a key")
            }
        }
        let signatures = BenchSlots(count: messageCount, size: sigSize)
        for i in 0..<messageCount {
            let m = message(i), key = i % keyCount
            guard sign(
                level, signatures.bytes(i), sigSize, m.baseAddress?.assumingMemoryBound(to: UInt8.self), m.count,
                prefixes.bytes(i), 2 + context(i).count, zeroRandomness.bytes(0), 32, sks.bytes(key), skSize, 0) == 0
            else { throw SetupError(description: "\(name): the peer failed to sign") }
        }
        let peerSignature = BenchSlots(count: 1, size: sigSize)
        let peerPK = BenchSlots(count: 1, size: pkSize), peerSK = BenchSlots(count: 1, size: skSize)

        func equals(_ data: Data, _ slots: BenchSlots, _ i: Int) -> Bool {
            data.count == slots.size && data.withUnsafeBytes { memcmp($0.baseAddress!, slots.bytes(i), slots.size) == 0 }
        }

        var table: [BenchOperation] = []
        table.append(BenchOperation(
            name: "\(name) keygen",
            faceSeal: { i in
                guard let key = try? MLDSAPrivateKey<Variant>(seedRepresentation: UnsafeRawBufferPointer(seeds[i])) else {
                    return false
                }
                return equals(key.publicKey.rawRepresentation, pks, i) && equals(key.expandedRepresentation, sks, i)
            },
            peer: { i in
                keypair(level, peerPK.bytes(0), pkSize, peerSK.bytes(0), skSize, seeds.bytes(i), 32) == 0
                    && peerPK.equals(0, pks, i) && peerSK.equals(0, sks, i)
            }))
        table.append(BenchOperation(
            name: "\(name) sign",
            faceSeal: { i in
                let key = i % keyCount
                guard let signingKey = try? MLDSAExpandedPrivateKey<Variant>(rawRepresentation: UnsafeRawBufferPointer(sks[key])),
                    let signature = try? signingKey.signature(for: message(i), context: context(i), randomness: .deterministic)
                else { return false }
                return equals(signature, signatures, i)
            },
            peer: { i in
                let m = message(i)
                return sign(
                    level, peerSignature.bytes(0), sigSize, m.baseAddress?.assumingMemoryBound(to: UInt8.self), m.count,
                    prefixes.bytes(i), 2 + context(i).count, zeroRandomness.bytes(0), 32, sks.bytes(i % keyCount), skSize, 0) == 0
                    && peerSignature.equals(0, signatures, i)
            }))
        let peerVerify: (Int) -> Bool = { i in
            let m = message(i)
            return verify(
                level, signatures.bytes(i), sigSize, m.baseAddress?.assumingMemoryBound(to: UInt8.self), m.count,
                prefixes.bytes(i), 2 + context(i).count, pks.bytes(i % keyCount), pkSize, 0) == 0
        }
        table.append(BenchOperation(
            name: "\(name) verify",
            faceSeal: { i in
                guard let publicKey = try? MLDSAPublicKey<Variant>(rawRepresentation: UnsafeRawBufferPointer(pks[i % keyCount]))
                else { return false }
                return publicKey.isValidSignature(UnsafeRawBufferPointer(signatures[i]), for: message(i), context: context(i))
            },
            peer: peerVerify))
        guard includeReusedKeys else { return table }

        // The same signatures and verifications with FaceSeal key objects built once (the peer has no such API).
        let privateKeys = try (0..<keyCount).map { i in
            try MLDSAPrivateKey<Variant>(seedRepresentation: UnsafeRawBufferPointer(seeds[i]))
        }
        let publicKeys = privateKeys.map(\.publicKey)
        table.append(BenchOperation(
            name: "\(name) sign kept",
            faceSeal: { i in
                guard let signature = try? privateKeys[i % keyCount].signature(
                    for: message(i), context: context(i), randomness: .deterministic)
                else { return false }
                return equals(signature, signatures, i)
            },
            peer: { i in
                let m = message(i)
                return sign(
                    level, peerSignature.bytes(0), sigSize, m.baseAddress?.assumingMemoryBound(to: UInt8.self), m.count,
                    prefixes.bytes(i), 2 + context(i).count, zeroRandomness.bytes(0), 32, sks.bytes(i % keyCount), skSize, 0) == 0
                    && peerSignature.equals(0, signatures, i)
            }))
        table.append(BenchOperation(
            name: "\(name) verify kept",
            faceSeal: { i in
                publicKeys[i % keyCount].isValidSignature(
                    UnsafeRawBufferPointer(signatures[i]), for: message(i), context: context(i))
            },
            peer: peerVerify))
        return table
    }
}
