/// ML-DSA-65 as the JOSE algorithm `ML-DSA-65`: pure ML-DSA with an empty context over the JWS signing input.
extension MLDSAPrivateKey: JWSSigner where Variant == MLDSA65 {
    /// `.mlDSA65`.
    public var algorithm: JWSAlgorithm { .mlDSA65 }

    /// The 3309-byte hedged ML-DSA-65 signature of `signingInput` with an empty context.
    public func sign(_ signingInput: [UInt8]) throws -> [UInt8] {
        [UInt8](try signature(for: signingInput))
    }
}

extension MLDSAPublicKey: JWSVerifier where Variant == MLDSA65 {
    /// `.mlDSA65`.
    public var algorithm: JWSAlgorithm { .mlDSA65 }

    /// ML-DSA-65 verification with an empty context; any malformed signature is simply invalid.
    public func verify(_ signingInput: [UInt8], signature: [UInt8]) -> Bool {
        isValidSignature(signature, for: signingInput)
    }
}

extension JWSVerifierFactory {
    /// The built-in verifiers plus the pure-Swift ML-DSA-65 for `AKP` keys.
    public static var includingMLDSA65: JWSVerifierFactory {
        JWSVerifierFactory(mlDSA65: { publicKey in try MLDSA65.PublicKey(rawRepresentation: publicKey) })
    }
}
