import Foundation

/// The external interfaces of FIPS 204 (Alg. 2/3 with contexts, Sign_internal on raw M′, external μ)
/// over key material: input length checks, M′ framing, μ, and the choice of rnd.
enum MLDSASigner {
    static let maximumContextLength = 255

    static func sign(
        _ key: MLDSAPrivateKeyMaterial, message: some DataProtocol, context: some DataProtocol,
        randomness: MLDSASigningRandomness
    ) throws(MLDSAError) -> Data {
        let mu = try messageRepresentative(tr: key.publicKey.tr, message: message, context: context)
        return try sign(key, validMu: mu, randomness: randomness)
    }

    static func signInternal(
        _ key: MLDSAPrivateKeyMaterial, message: some DataProtocol, randomness: MLDSASigningRandomness
    ) throws(MLDSAError) -> Data {
        let mu = MLDSAInput.withBytes(message) { bytes in
            representative(tr: key.publicKey.tr, prefix: [], message: bytes)
        }
        return try sign(key, validMu: mu, randomness: randomness)
    }

    static func sign(
        _ key: MLDSAPrivateKeyMaterial, mu: some DataProtocol, randomness: MLDSASigningRandomness
    ) throws(MLDSAError) -> Data {
        let bytes = [UInt8](mu)
        guard bytes.count == 64 else { throw .invalidMessageRepresentativeLength(expected: 64, actual: bytes.count) }
        return try sign(key, validMu: bytes, randomness: randomness)
    }

    private static func sign(
        _ key: MLDSAPrivateKeyMaterial, validMu mu: [UInt8], randomness: MLDSASigningRandomness
    ) throws(MLDSAError) -> Data {
        let rnd: [UInt8]
        switch randomness {
        case .hedged: rnd = MLDSAInput.randomBytes(32)
        case .deterministic: rnd = [UInt8](repeating: 0, count: 32)
        case .given(let given):
            guard given.count == 32 else { throw .invalidRandomnessLength(expected: 32, actual: given.count) }
            rnd = MLDSAInput.freshCopy(given)
        }
        defer { MLDSAWipe.wipe(owned: rnd) }
        let signature = mu.withUnsafeBytes { muBytes in
            rnd.withUnsafeBytes { rndBytes in
                MLDSAAlgorithm.sign(key: key, mu: muBytes, randomness: rndBytes)
            }
        }
        return Data(signature)
    }

    static func signPreHash(
        _ key: MLDSAPrivateKeyMaterial, message: some DataProtocol, isDigest: Bool, hash: MLDSAPreHash,
        context: some DataProtocol, randomness: MLDSASigningRandomness
    ) throws(MLDSAError) -> Data {
        let prefix = try preHashPrefix(context: context, hash: hash)
        let digest = try preHashDigest(message: message, digest: isDigest, hash: hash)
        let mu = digest.withUnsafeBytes { representative(tr: key.publicKey.tr, prefix: prefix, message: $0) }
        return try sign(key, validMu: mu, randomness: randomness)
    }

    static func verifyPreHash(
        _ key: MLDSAPublicKeyMaterial, signature: some DataProtocol, message: some DataProtocol, isDigest: Bool,
        hash: MLDSAPreHash, context: some DataProtocol
    ) throws(MLDSAError) {
        let prefix = try preHashPrefix(context: context, hash: hash)
        let digest = try preHashDigest(message: message, digest: isDigest, hash: hash)
        let mu = digest.withUnsafeBytes { representative(tr: key.tr, prefix: prefix, message: $0) }
        try verify(key, signature: signature, validMu: mu)
    }

    static func verify(
        _ key: MLDSAPublicKeyMaterial, signature: some DataProtocol, message: some DataProtocol,
        context: some DataProtocol
    ) throws(MLDSAError) {
        let mu = try messageRepresentative(tr: key.tr, message: message, context: context)
        try verify(key, signature: signature, validMu: mu)
    }

    static func verifyInternal(
        _ key: MLDSAPublicKeyMaterial, signature: some DataProtocol, message: some DataProtocol
    ) throws(MLDSAError) {
        let mu = MLDSAInput.withBytes(message) { bytes in representative(tr: key.tr, prefix: [], message: bytes) }
        try verify(key, signature: signature, validMu: mu)
    }

    static func verify(
        _ key: MLDSAPublicKeyMaterial, signature: some DataProtocol, mu: some DataProtocol
    ) throws(MLDSAError) {
        let bytes = [UInt8](mu)
        guard bytes.count == 64 else { throw .invalidMessageRepresentativeLength(expected: 64, actual: bytes.count) }
        try verify(key, signature: signature, validMu: bytes)
    }

    private static func verify(
        _ key: MLDSAPublicKeyMaterial, signature: some DataProtocol, validMu mu: [UInt8]
    ) throws(MLDSAError) {
        let expected = key.parameters.signatureByteCount
        guard signature.count == expected else {
            throw .invalidSignatureLength(expected: expected, actual: signature.count)
        }
        let valid = MLDSAInput.withBytes(signature) { sigma in
            mu.withUnsafeBytes { muBytes in MLDSAAlgorithm.verify(key: key, mu: muBytes, signature: sigma) }
        }
        guard valid else { throw .invalidSignature }
    }

    /// μ for pure ML-DSA: M′ = 0 ‖ len(ctx) ‖ ctx ‖ M.
    static func messageRepresentative(
        _ key: MLDSAPublicKeyMaterial, message: some DataProtocol, context: some DataProtocol
    ) throws(MLDSAError) -> [UInt8] {
        try messageRepresentative(tr: key.tr, message: message, context: context)
    }

    private static func messageRepresentative(
        tr: [UInt8], message: some DataProtocol, context: some DataProtocol
    ) throws(MLDSAError) -> [UInt8] {
        guard context.count <= maximumContextLength else { throw .contextTooLong(length: context.count) }
        let prefix = [0, UInt8(context.count)] + [UInt8](context)
        return MLDSAInput.withBytes(message) { bytes in representative(tr: tr, prefix: prefix, message: bytes) }
    }

    static func representative(tr: [UInt8], prefix: [UInt8], message: UnsafeRawBufferPointer) -> [UInt8] {
        var mu = [UInt8](repeating: 0, count: 64)
        prefix.withUnsafeBytes { prefixBytes in
            mu.withUnsafeMutableBytes { out in
                MLDSAAlgorithm.messageRepresentative(
                    tr: tr, prefix: prefixBytes, message: message, into: out, level: PQKernels.active)
            }
        }
        return mu
    }
}

/// Byte access to caller input and system randomness.
enum MLDSAInput {
    /// Runs `body` over contiguous bytes of `data`, copying only when the collection is not contiguous.
    static func withBytes<R>(_ data: some DataProtocol, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        if let result = data.withContiguousStorageIfAvailable({ body(UnsafeRawBufferPointer($0)) }) {
            return result
        }
        let copy = [UInt8](data)
        return copy.withUnsafeBytes(body)
    }

    /// A copy in newly allocated storage. `[UInt8](array)` would share the caller's buffer, and wiping
    /// that would wipe the caller's array too.
    static func freshCopy(_ data: some DataProtocol) -> [UInt8] {
        let count = data.count
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            _ = buffer.initialize(from: data)
            initialized = count
        }
    }

    /// `count` bytes from the project's secure generator (OpenSSL RAND_bytes).
    static func randomBytes(_ count: Int) -> [UInt8] {
        SecureRandom.bytes(count: count)
    }
}
