import COpenSSL
public import Foundation

/// The hash functions HashML-DSA (FIPS 204 §5.4) can pre-hash with, each identified in M′ by its OID.
public enum MLDSAPreHash: String, Sendable, CaseIterable {
    /// SHA-224 (OpenSSL).
    case sha224 = "SHA2-224"
    /// SHA-256 (OpenSSL).
    case sha256 = "SHA2-256"
    /// SHA-384 (OpenSSL).
    case sha384 = "SHA2-384"
    /// SHA-512 (OpenSSL).
    case sha512 = "SHA2-512"
    /// SHA-512/224 (OpenSSL).
    case sha512_224 = "SHA2-512/224"
    /// SHA-512/256 (OpenSSL).
    case sha512_256 = "SHA2-512/256"
    /// SHA3-224.
    case sha3_224 = "SHA3-224"
    /// SHA3-256.
    case sha3_256 = "SHA3-256"
    /// SHA3-384.
    case sha3_384 = "SHA3-384"
    /// SHA3-512.
    case sha3_512 = "SHA3-512"
    /// SHAKE128 with 256 bits of output.
    case shake128 = "SHAKE-128"
    /// SHAKE256 with 512 bits of output.
    case shake256 = "SHAKE-256"

    /// Bytes of PH(M).
    public var digestByteCount: Int {
        switch self {
        case .sha224, .sha512_224, .sha3_224: 28
        case .sha256, .sha512_256, .sha3_256, .shake128: 32
        case .sha384, .sha3_384: 48
        case .sha512, .sha3_512, .shake256: 64
        }
    }

    /// DER of the OID (2.16.840.1.101.3.4.2.x).
    var encodedOID: [UInt8] {
        let last: UInt8 = switch self {
        case .sha256: 0x01
        case .sha384: 0x02
        case .sha512: 0x03
        case .sha224: 0x04
        case .sha512_224: 0x05
        case .sha512_256: 0x06
        case .sha3_224: 0x07
        case .sha3_256: 0x08
        case .sha3_384: 0x09
        case .sha3_512: 0x0A
        case .shake128: 0x0B
        case .shake256: 0x0C
        }
        return [0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, last]
    }

    /// PH(M).
    func digest(_ message: UnsafeRawBufferPointer) -> [UInt8] {
        switch self {
        case .sha224: return openSSL("SHA224", message)
        case .sha256: return openSSL("SHA256", message)
        case .sha384: return openSSL("SHA384", message)
        case .sha512: return openSSL("SHA512", message)
        case .sha512_224: return openSSL("SHA512-224", message)
        case .sha512_256: return openSSL("SHA512-256", message)
        case .sha3_224: return keccak(KeccakSponge(rate: 144, domain: 0x06), message)
        case .sha3_256: return keccak(.sha3_256(), message)
        case .sha3_384: return keccak(KeccakSponge(rate: 104, domain: 0x06), message)
        case .sha3_512: return keccak(.sha3_512(), message)
        case .shake128: return keccak(.shake128(), message)
        case .shake256: return keccak(.shake256(), message)
        }
    }

    private func keccak(_ sponge: KeccakSponge, _ message: UnsafeRawBufferPointer) -> [UInt8] {
        var sponge = sponge
        sponge.absorb(message)
        return sponge.squeeze(count: digestByteCount)
    }

    private func openSSL(_ name: String, _ message: UnsafeRawBufferPointer) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard let md = EVP_get_digestbyname(name), EVP_Digest(message.uint8Base, message.count, &out, &length, md, nil) == 1,
              Int(length) == digestByteCount else {
            fatalError("EVP_Digest(\(name)) failed: \(LibCrypto.drainErrors())")
        }
        return Array(out.prefix(digestByteCount))
    }
}

extension MLDSASigner {
    /// M′ header for HashML-DSA: 1 ‖ len(ctx) ‖ ctx ‖ OID; PH(M) follows as the message.
    static func preHashPrefix(context: some DataProtocol, hash: MLDSAPreHash) throws(MLDSAError) -> [UInt8] {
        guard context.count <= maximumContextLength else { throw .contextTooLong(length: context.count) }
        return [1, UInt8(context.count)] + [UInt8](context) + hash.encodedOID
    }

    static func preHashDigest(
        message: some DataProtocol, digest: Bool, hash: MLDSAPreHash
    ) throws(MLDSAError) -> [UInt8] {
        if digest {
            guard message.count == hash.digestByteCount else {
                throw .invalidDigestLength(expected: hash.digestByteCount, actual: message.count)
            }
            return [UInt8](message)
        }
        return MLDSAInput.withBytes(message) { hash.digest($0) }
    }
}

extension MLDSAPrivateKey {
    /// HashML-DSA.Sign (FIPS 204 Alg. 4): signs PH(`data`) under `context`. Prefer pure ML-DSA
    /// (`signature(for:context:)`) unless a protocol demands the pre-hash variant.
    public func signature(
        for data: some DataProtocol, preHashedWith hash: MLDSAPreHash,
        context: some DataProtocol = EmptyCollection<UInt8>(), randomness: MLDSASigningRandomness = .hedged
    ) throws(MLDSAError) -> Data {
        try MLDSASigner.signPreHash(material, message: data, isDigest: false, hash: hash, context: context, randomness: randomness)
    }

    /// HashML-DSA.Sign with PH(M) already computed by the caller (`digest` of `hash.digestByteCount` bytes).
    public func signature(
        forDigest digest: some DataProtocol, preHashedWith hash: MLDSAPreHash,
        context: some DataProtocol = EmptyCollection<UInt8>(), randomness: MLDSASigningRandomness = .hedged
    ) throws(MLDSAError) -> Data {
        try MLDSASigner.signPreHash(material, message: digest, isDigest: true, hash: hash, context: context, randomness: randomness)
    }
}

extension MLDSAExpandedPrivateKey {
    /// HashML-DSA.Sign of PH(`data`) under `context`.
    public func signature(
        for data: some DataProtocol, preHashedWith hash: MLDSAPreHash,
        context: some DataProtocol = EmptyCollection<UInt8>(), randomness: MLDSASigningRandomness = .hedged
    ) throws(MLDSAError) -> Data {
        try MLDSASigner.signPreHash(material, message: data, isDigest: false, hash: hash, context: context, randomness: randomness)
    }
}

extension MLDSAPublicKey {
    /// HashML-DSA.Verify (FIPS 204 Alg. 5) of `data`.
    public func isValidSignature(
        _ signature: some DataProtocol, for data: some DataProtocol, preHashedWith hash: MLDSAPreHash,
        context: some DataProtocol = EmptyCollection<UInt8>()
    ) -> Bool {
        (try? MLDSASigner.verifyPreHash(material, signature: signature, message: data, isDigest: false, hash: hash, context: context)) != nil
    }

    /// HashML-DSA.Verify given PH(M).
    public func isValidSignature(
        _ signature: some DataProtocol, forDigest digest: some DataProtocol, preHashedWith hash: MLDSAPreHash,
        context: some DataProtocol = EmptyCollection<UInt8>()
    ) -> Bool {
        (try? MLDSASigner.verifyPreHash(material, signature: signature, message: digest, isDigest: true, hash: hash, context: context)) != nil
    }
}
