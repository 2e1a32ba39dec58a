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

    static func operations(
        _ p: MLDSAParameters, peer: BenchPeerLibrary, openssl: BenchEVP?, includeReusedKeys: Bool
    ) throws -> [BenchOperation] {
        switch p.name {
        case MLDSA44.parameters.name: try operations(MLDSA44.self, peer: peer, openssl: openssl, includeReusedKeys: includeReusedKeys)
        case MLDSA65.parameters.name: try operations(MLDSA65.self, peer: peer, openssl: openssl, includeReusedKeys: includeReusedKeys)
        default: try operations(MLDSA87.self, peer: peer, openssl: openssl, includeReusedKeys: includeReusedKeys)
        }
    }

    static func operations<Variant: MLDSAParameterSet>(
        _: Variant.Type, peer: BenchPeerLibrary, openssl: BenchEVP?, includeReusedKeys: Bool
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

        let pycryptodome = "pycryptodome-4.4.0"
        let isDefaultSet = level == 65
        var table: [BenchOperation] = []
        table.append(BenchOperation(
            name: "\(name) keygen",
            faceSeal: { i in
                guard let key = try? MLDSAPrivateKey<Variant>(seedRepresentation: UnsafeRawBufferPointer(seeds[i])) else {
                    return false
                }
                return equals(key.publicKey.rawRepresentation, pks, i) && equals(key.expandedRepresentation, sks, i)
            },
            peers: [BenchSide(name: pycryptodome) { i in
                keypair(level, peerPK.bytes(0), pkSize, peerSK.bytes(0), skSize, seeds.bytes(i), 32) == 0
                    && peerPK.equals(0, pks, i) && peerSK.equals(0, sks, i)
            }],
            referenceCycles: isDefaultSet ? 61_000 : nil))
        let peerSign: (Int) -> Bool = { i in
            let m = message(i)
            return sign(
                level, peerSignature.bytes(0), sigSize, m.baseAddress?.assumingMemoryBound(to: UInt8.self), m.count,
                prefixes.bytes(i), 2 + context(i).count, zeroRandomness.bytes(0), 32, sks.bytes(i % keyCount), skSize, 0) == 0
                && peerSignature.equals(0, signatures, i)
        }
        table.append(BenchOperation(
            name: "\(name) sign",
            faceSeal: { i in
                let key = i % keyCount
                guard let signingKey = try? MLDSAExpandedPrivateKey<Variant>(rawRepresentation: UnsafeRawBufferPointer(sks[key])),
                    let signature = try? signingKey.signature(for: message(i), context: context(i), randomness: .deterministic)
                else { return false }
                return equals(signature, signatures, i)
            },
            peers: [BenchSide(name: pycryptodome, run: peerSign)],
            referenceCycles: isDefaultSet ? 202_000 : nil))
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
            peers: [BenchSide(name: pycryptodome, run: peerVerify)]))
        if includeReusedKeys {
            try appendKeptRows(
                Variant.self, to: &table, seeds: seeds, signatures: signatures, message: message, context: context,
                peerSign: BenchSide(name: pycryptodome, run: peerSign), peerVerify: BenchSide(name: pycryptodome, run: peerVerify))
        }
        if let openssl {
            try addOpenSSL(
                openssl, to: &table, parameters: p, seeds: seeds, pks: pks, sks: sks, signatures: signatures,
                message: message, context: context)
        }
        return table
    }

    /// "sign kept" / "verify kept": FaceSeal key objects built once (Â, NTT(s1, s2, t0), NTT(t1·2^d) cached)
    /// against the same peer calls.
    private static func appendKeptRows<Variant: MLDSAParameterSet>(
        _: Variant.Type, to table: inout [BenchOperation], seeds: BenchSlots, signatures: BenchSlots,
        message: @escaping (Int) -> UnsafeRawBufferPointer, context: @escaping (Int) -> UnsafeRawBufferPointer,
        peerSign: BenchSide, peerVerify: BenchSide
    ) throws {
        let name = Variant.parameters.name
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
            peers: [peerSign]))
        table.append(BenchOperation(
            name: "\(name) verify kept",
            faceSeal: { i in
                publicKeys[i % keyCount].isValidSignature(
                    UnsafeRawBufferPointer(signatures[i]), for: message(i), context: context(i))
            },
            peers: [peerVerify]))
    }

    /// OpenSSL's column on every row: from bytes for keygen/sign/verify (key import, then the operation),
    /// EVP_PKEY objects built once for the kept rows.
    private static func addOpenSSL(
        _ openssl: BenchEVP, to table: inout [BenchOperation], parameters p: MLDSAParameters, seeds: BenchSlots,
        pks: BenchSlots, sks: BenchSlots, signatures: BenchSlots,
        message: @escaping (Int) -> UnsafeRawBufferPointer, context: @escaping (Int) -> UnsafeRawBufferPointer
    ) throws {
        let name = p.name, sideName = "openssl-4.0"
        let pkSize = p.publicKeyByteCount, skSize = p.expandedPrivateKeyByteCount, sigSize = p.signatureByteCount
        guard let algorithm = openssl.fetchSignature(nil, name, nil) else {
            throw SetupError(description: "\(name): OpenSSL has no signature algorithm of that name")
        }
        let seedParams = BenchOSSLParams([("seed", .octets)])
        let signParams = BenchOSSLParams([("deterministic", .int(1)), ("context-string", .octets)])
        let verifyParams = BenchOSSLParams([("context-string", .octets)])
        let sslPK = BenchSlots(count: 1, size: pkSize), sslSK = BenchSlots(count: 1, size: skSize)
        let sslSignature = BenchSlots(count: 1, size: sigSize)
        let signWith: (OpaquePointer, Int) -> Bool = { key, i in
            signParams.setOctets(1, context(i))
            return openssl.sign(
                key: key, algorithm: algorithm, params: signParams, message: message(i), signature: sslSignature.bytes(0),
                signatureCount: sigSize) && sslSignature.equals(0, signatures, i)
        }
        let verifyWith: (OpaquePointer, Int) -> Bool = { key, i in
            verifyParams.setOctets(0, context(i))
            return openssl.verify(
                key: key, algorithm: algorithm, params: verifyParams, message: message(i), signature: signatures.bytes(i),
                signatureCount: sigSize)
        }
        let fromBytes: [String: BenchSide] = [
            "\(name) keygen": BenchSide(name: sideName) { i in
                seedParams.setOctets(0, UnsafeRawBufferPointer(seeds[i]))
                return openssl.generate(
                    name, params: seedParams, publicKey: sslPK.bytes(0), publicCount: pkSize, privateKey: sslSK.bytes(0),
                    privateCount: skSize) && sslPK.equals(0, pks, i) && sslSK.equals(0, sks, i)
            },
            "\(name) sign": BenchSide(name: sideName) { i in
                guard let key = openssl.newPrivateKey(nil, name, nil, sks.bytes(i % keyCount), skSize) else { return false }
                defer { openssl.freeKey(key) }
                return signWith(key, i)
            },
            "\(name) verify": BenchSide(name: sideName) { i in
                guard let key = openssl.newPublicKey(nil, name, nil, pks.bytes(i % keyCount), pkSize) else { return false }
                defer { openssl.freeKey(key) }
                return verifyWith(key, i)
            },
        ]
        let privateKeys = try (0..<keyCount).map { i in
            guard let key = openssl.newPrivateKey(nil, name, nil, sks.bytes(i), skSize) else {
                throw SetupError(description: "\(name): OpenSSL refused a private key")
            }
            return BenchEVPKey(key, openssl)
        }
        let publicKeys = try (0..<keyCount).map { i in
            guard let key = openssl.newPublicKey(nil, name, nil, pks.bytes(i), pkSize) else {
                throw SetupError(description: "\(name): OpenSSL refused a public key")
            }
            return BenchEVPKey(key, openssl)
        }
        let kept: [String: BenchSide] = [
            "\(name) sign kept": BenchSide(name: sideName) { i in signWith(privateKeys[i % keyCount].key, i) },
            "\(name) verify kept": BenchSide(name: sideName) { i in verifyWith(publicKeys[i % keyCount].key, i) },
        ]
        for index in table.indices {
            if let side = fromBytes[table[index].name] ?? kept[table[index].name] { table[index].peers.append(side) }
        }
    }
}

/// Whether `data` equals slot `i` of `slots` byte for byte.
private func equals(_ data: Data, _ slots: BenchSlots, _ i: Int) -> Bool {
    data.count == slots.size && data.withUnsafeBytes { memcmp($0.baseAddress!, slots.bytes(i), slots.size) == 0 }
}
