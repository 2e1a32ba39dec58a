public import Foundation

/// An ML-KEM parameter set (FIPS 203): ML-KEM-512, ML-KEM-768 or ML-KEM-1024.
/// The three conforming namespaces are the only intended conformances.
public protocol MLKEMParameterSet: Sendable {
    /// The sizes and constants of the set.
    static var parameters: MLKEMParameters { get }
}

/// ML-KEM-512 (FIPS 203, security category 1).
public enum MLKEM512: MLKEMParameterSet {
    /// The sizes and constants of ML-KEM-512.
    public static let parameters = MLKEMParameters.mlkem512
    /// An ML-KEM-512 encapsulation key.
    public typealias PublicKey = MLKEMPublicKey<MLKEM512>
    /// An ML-KEM-512 decapsulation key.
    public typealias PrivateKey = MLKEMPrivateKey<MLKEM512>
}

/// ML-KEM-768 (FIPS 203, security category 3), the default KEM of FaceSeal.
public enum MLKEM768: MLKEMParameterSet {
    /// The sizes and constants of ML-KEM-768.
    public static let parameters = MLKEMParameters.mlkem768
    /// An ML-KEM-768 encapsulation key.
    public typealias PublicKey = MLKEMPublicKey<MLKEM768>
    /// An ML-KEM-768 decapsulation key.
    public typealias PrivateKey = MLKEMPrivateKey<MLKEM768>
}

/// ML-KEM-1024 (FIPS 203, security category 5).
public enum MLKEM1024: MLKEMParameterSet {
    /// The sizes and constants of ML-KEM-1024.
    public static let parameters = MLKEMParameters.mlkem1024
    /// An ML-KEM-1024 encapsulation key.
    public typealias PublicKey = MLKEMPublicKey<MLKEM1024>
    /// An ML-KEM-1024 decapsulation key.
    public typealias PrivateKey = MLKEMPrivateKey<MLKEM1024>
}

/// The result of an encapsulation: the shared secret and the ciphertext to send to the key's owner.
public struct MLKEMEncapsulationResult: Sendable {
    /// The shared secret K (32 bytes).
    public let sharedSecret: SymmetricKey
    /// The ciphertext c.
    public let encapsulated: Data
}

/// An ML-KEM encapsulation key ek for parameter set `Set` (use `MLKEM768.PublicKey` etc.).
public struct MLKEMPublicKey<Set: MLKEMParameterSet>: Sendable, Equatable {
    let bytes: [UInt8]
    /// H(ek), computed once: every encapsulation needs it.
    let hash: [UInt8]

    /// Imports an encoded encapsulation key (384k + 32 bytes), running the FIPS 203 §7.2 checks:
    /// the length, then that every coefficient is < q. Throws `MLKEMError.invalidKeyLength` or `.keyCheckFailed`.
    public init<D: DataProtocol>(rawRepresentation: D) throws {
        let bytes = [UInt8](rawRepresentation)
        try MLKEM.checkEncapsulationKey(Set.parameters, bytes)
        var hash = [UInt8](repeating: 0, count: 32)
        bytes.withUnsafeBytes { ek in
            hash.withUnsafeMutableBufferPointer { MLKEMEngine.hashH(ek, into: $0.baseAddress!, PQKernels.active) }
        }
        self.init(checkedBytes: bytes, hash: hash)
    }

    init(checkedBytes: [UInt8], hash: [UInt8]) {
        bytes = checkedBytes
        self.hash = hash
    }

    /// Keys are equal when their encodings are (the hash follows from the encoding).
    public static func == (lhs: MLKEMPublicKey, rhs: MLKEMPublicKey) -> Bool {
        lhs.bytes == rhs.bytes
    }

    /// The encoded encapsulation key (384k + 32 bytes).
    public var rawRepresentation: Data { Data(bytes) }

    /// Encapsulates a fresh shared secret with randomness m from the secure generator (`SecureRandom`).
    public func encapsulate() throws -> MLKEMEncapsulationResult {
        let m = SecretBytes(randomCount: 32)
        defer { m.zero() }
        return m.withUnsafeBytes { encapsulate(m: $0) }
    }

    /// Deterministic ML-KEM.Encaps_internal(ek, m) with the given 32 bytes of randomness m.
    /// For known-answer tests and benchmarks: reusing m reveals the shared secret.
    public func encapsulate<D: DataProtocol>(randomness: D) throws -> MLKEMEncapsulationResult {
        guard randomness.count == 32 else { throw MLKEMError.invalidSeedLength(expected: 32, actual: randomness.count) }
        let m = SecretBytes(randomness)
        defer { m.zero() }
        return m.withUnsafeBytes { encapsulate(m: $0) }
    }

    private func encapsulate(m: UnsafeRawBufferPointer) -> MLKEMEncapsulationResult {
        let p = Set.parameters
        var ciphertext = [UInt8](repeating: 0, count: p.ciphertextByteCount)
        let secret = SecretBytes(count: 32) { key in
            bytes.withUnsafeBufferPointer { ek in
                hash.withUnsafeBufferPointer { h in
                    ciphertext.withUnsafeMutableBufferPointer { c in
                        MLKEMEngine.encapsulate(
                            p, ek: ek.baseAddress!, ekHash: h.baseAddress!, m: m.baseAddress!.assumingMemoryBound(to: UInt8.self),
                            c: c.baseAddress!, key: key.baseAddress!)
                    }
                }
            }
        }
        return MLKEMEncapsulationResult(sharedSecret: SymmetricKey(secret: secret), encapsulated: Data(ciphertext))
    }
}

/// An ML-KEM decapsulation key for parameter set `Set` (use `MLKEM768.PrivateKey` etc.), kept as its
/// 64-byte seed d‖z and the expanded key dk, both wiped from memory when released.
public struct MLKEMPrivateKey<Set: MLKEMParameterSet>: Sendable {
    /// d‖z, or nil for a key imported in expanded form.
    let seed: SecretBytes?
    let expanded: SecretBytes
    /// The matching encapsulation key.
    public let publicKey: MLKEMPublicKey<Set>

    /// Generates a new key from a 64-byte seed d‖z drawn from the secure generator (`SecureRandom`).
    /// Throws nothing in practice; `throws` keeps the shape of swift-crypto's initialiser.
    public init() throws {
        self.init(seed: SecretBytes(randomCount: 64))
    }

    /// Generates a new key (see `init()`).
    public static func generate() throws -> MLKEMPrivateKey {
        try MLKEMPrivateKey()
    }

    /// ML-KEM.KeyGen_internal(d, z) from the 64-byte seed d‖z. When `publicKey` is given, the derived
    /// encapsulation key must equal it, else `MLKEMError.keyCheckFailed`.
    public init<D: DataProtocol>(seedRepresentation: D, publicKey: MLKEMPublicKey<Set>? = nil) throws {
        guard seedRepresentation.count == 64 else {
            throw MLKEMError.invalidSeedLength(expected: 64, actual: seedRepresentation.count)
        }
        self.init(seed: SecretBytes(seedRepresentation))
        if let publicKey, publicKey != self.publicKey { throw MLKEMError.keyCheckFailed }
    }

    /// KeyGen_internal from a 64-byte seed already in secret storage.
    private init(seed: SecretBytes) {
        let p = Set.parameters
        var ek = [UInt8](repeating: 0, count: p.encapsulationKeyByteCount)
        let expanded = SecretBytes(count: p.decapsulationKeyByteCount) { dk in
            seed.withUnsafeBytes { s in
                ek.withUnsafeMutableBufferPointer { e in
                    let d = s.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    MLKEMEngine.keyGen(p, d: d, z: d + 32, ek: e.baseAddress!, dk: dk.baseAddress!)
                }
            }
        }
        self.seed = seed
        self.expanded = expanded
        self.publicKey = MLKEMPublicKey(checkedBytes: ek, hash: Self.storedHash(expanded))
    }

    /// Imports an expanded decapsulation key dk (768k + 96 bytes) after the FIPS 203 §7.3 checks (length,
    /// H(ek) stored in dk) and the §7.2 check of the ek inside it (it becomes `publicKey`).
    /// Such a key has no seed: `seedRepresentation` of it is nil.
    public init<D: DataProtocol>(integrityCheckedRepresentation: D) throws {
        let p = Set.parameters
        guard integrityCheckedRepresentation.count == p.decapsulationKeyByteCount else {
            throw MLKEMError.invalidKeyLength(
                expected: p.decapsulationKeyByteCount, actual: integrityCheckedRepresentation.count)
        }
        let expanded = SecretBytes(integrityCheckedRepresentation)
        let ekRange = (384 * p.k)..<(768 * p.k + 32)
        try expanded.withUnsafeBytes { dk in
            try MLKEM.checkDecapsulationKey(p, dk)
            // Beyond §7.3: the embedded ek becomes `publicKey`, so it must pass the §7.2 check as well.
            try MLKEM.checkEncapsulationKey(p, UnsafeRawBufferPointer(rebasing: dk[ekRange]))
        }
        self.publicKey = MLKEMPublicKey(
            checkedBytes: expanded.withUnsafeBytes { [UInt8]($0[ekRange]) }, hash: Self.storedHash(expanded))
        self.expanded = expanded
        self.seed = nil
    }

    /// H(ek) as stored in dk (public).
    private static func storedHash(_ expanded: SecretBytes) -> [UInt8] {
        let k = Set.parameters.k
        return expanded.withUnsafeBytes { [UInt8]($0[(768 * k + 32)..<(768 * k + 64)]) }
    }

    /// The 64-byte seed d‖z this key was generated from (the portable private-key format), or nil for
    /// a key imported from its expanded form.
    public var seedRepresentation: Data? {
        seed?.withUnsafeBytes { Data($0) }
    }

    /// The expanded decapsulation key dk = dk_PKE ‖ ek ‖ H(ek) ‖ z (768k + 96 bytes) of FIPS 203.
    public var integrityCheckedRepresentation: Data {
        expanded.withUnsafeBytes { Data($0) }
    }

    /// ML-KEM.Decaps: the shared secret for ciphertext `encapsulated`, or — for a ciphertext that was not
    /// produced for this key — the implicit-rejection key J(z ‖ c). Only a wrong length throws
    /// (`MLKEMError.invalidCiphertextLength`).
    public func decapsulate<D: DataProtocol>(_ encapsulated: D) throws -> SymmetricKey {
        let p = Set.parameters
        guard encapsulated.count == p.ciphertextByteCount else {
            throw MLKEMError.invalidCiphertextLength(expected: p.ciphertextByteCount, actual: encapsulated.count)
        }
        let ciphertext = [UInt8](encapsulated)
        let secret = SecretBytes(count: 32) { key in
            expanded.withUnsafeBytes { dk in
                ciphertext.withUnsafeBufferPointer { c in
                    MLKEMEngine.decapsulate(
                        p, dk: dk.baseAddress!.assumingMemoryBound(to: UInt8.self), c: c.baseAddress!, key: key.baseAddress!)
                }
            }
        }
        return SymmetricKey(secret: secret)
    }
}

/// The FIPS 203 algorithms on bytes, for known-answer tests, interoperability and benchmarks. The raw-pointer entry
/// points are `package`: the benchmark and the tests use them; applications use the typed keys above.
/// Each checks its buffer lengths and throws `MLKEMError` on a mismatch.
public enum MLKEM {
    /// ML-KEM.KeyGen_internal(d, z) from the 64-byte `seed` d‖z into `encapsulationKey` (384k + 32 bytes)
    /// and `decapsulationKey` (768k + 96 bytes).
    package static func keyGenInternal(
        _ p: MLKEMParameters, seed: UnsafeRawBufferPointer,
        encapsulationKey: UnsafeMutableRawBufferPointer, decapsulationKey: UnsafeMutableRawBufferPointer
    ) throws {
        guard seed.count == 64 else { throw MLKEMError.invalidSeedLength(expected: 64, actual: seed.count) }
        try checkLength(p.encapsulationKeyByteCount, encapsulationKey.count)
        try checkLength(p.decapsulationKeyByteCount, decapsulationKey.count)
        let d = seed.baseAddress!.assumingMemoryBound(to: UInt8.self)
        MLKEMEngine.keyGen(
            p, d: d, z: d + 32, ek: encapsulationKey.baseAddress!.assumingMemoryBound(to: UInt8.self),
            dk: decapsulationKey.baseAddress!.assumingMemoryBound(to: UInt8.self))
    }

    /// ML-KEM.Encaps_internal(ek, m) into `ciphertext` and the 32-byte `sharedSecret`. Does not run the
    /// §7.2 check; callers with an untrusted ek run `checkEncapsulationKey` first (as `MLKEMPublicKey` does).
    package static func encapsulateInternal(
        _ p: MLKEMParameters, encapsulationKey: UnsafeRawBufferPointer, randomness: UnsafeRawBufferPointer,
        ciphertext: UnsafeMutableRawBufferPointer, sharedSecret: UnsafeMutableRawBufferPointer
    ) throws {
        try checkLength(p.encapsulationKeyByteCount, encapsulationKey.count)
        guard randomness.count == 32 else { throw MLKEMError.invalidSeedLength(expected: 32, actual: randomness.count) }
        guard ciphertext.count == p.ciphertextByteCount else {
            throw MLKEMError.invalidCiphertextLength(expected: p.ciphertextByteCount, actual: ciphertext.count)
        }
        guard sharedSecret.count == 32 else { throw MLKEMError.invalidSeedLength(expected: 32, actual: sharedSecret.count) }
        MLKEMEngine.encapsulate(
            p, ek: encapsulationKey.baseAddress!.assumingMemoryBound(to: UInt8.self),
            m: randomness.baseAddress!.assumingMemoryBound(to: UInt8.self),
            c: ciphertext.baseAddress!.assumingMemoryBound(to: UInt8.self),
            key: sharedSecret.baseAddress!.assumingMemoryBound(to: UInt8.self))
    }

    /// ML-KEM.Decaps_internal(dk, c) into the 32-byte `sharedSecret` (implicit rejection included). Does not
    /// run the §7.3 check; callers with an untrusted dk run `checkDecapsulationKey` first.
    package static func decapsulateInternal(
        _ p: MLKEMParameters, decapsulationKey: UnsafeRawBufferPointer, ciphertext: UnsafeRawBufferPointer,
        sharedSecret: UnsafeMutableRawBufferPointer
    ) throws {
        try checkLength(p.decapsulationKeyByteCount, decapsulationKey.count)
        guard ciphertext.count == p.ciphertextByteCount else {
            throw MLKEMError.invalidCiphertextLength(expected: p.ciphertextByteCount, actual: ciphertext.count)
        }
        guard sharedSecret.count == 32 else { throw MLKEMError.invalidSeedLength(expected: 32, actual: sharedSecret.count) }
        MLKEMEngine.decapsulate(
            p, dk: decapsulationKey.baseAddress!.assumingMemoryBound(to: UInt8.self),
            c: ciphertext.baseAddress!.assumingMemoryBound(to: UInt8.self),
            key: sharedSecret.baseAddress!.assumingMemoryBound(to: UInt8.self))
    }

    /// The FIPS 203 §7.2 encapsulation-key check: length 384k + 32, and ByteEncode₁₂(ByteDecode₁₂(ek)) == ek.
    public static func checkEncapsulationKey<C: Collection<UInt8>>(_ p: MLKEMParameters, _ ek: C) throws {
        try checkLength(p.encapsulationKeyByteCount, ek.count)
        try [UInt8](ek).withUnsafeBytes { try checkEncapsulationKey(p, $0) }
    }

    /// The FIPS 203 §7.2 encapsulation-key check on a byte buffer (no copy).
    package static func checkEncapsulationKey(_ p: MLKEMParameters, _ ek: UnsafeRawBufferPointer) throws {
        try checkLength(p.encapsulationKeyByteCount, ek.count)
        let e = ek.baseAddress!.assumingMemoryBound(to: UInt8.self)
        guard (0..<p.k).allSatisfy({ MLKEMPoly.isCanonical12(e + 384 * $0) }) else { throw MLKEMError.keyCheckFailed }
    }

    /// The FIPS 203 §7.3 decapsulation-key check: length 768k + 96, and H(dk[384k : 768k+32]) equals
    /// the 32 bytes stored at dk[768k+32 : 768k+64].
    package static func checkDecapsulationKey(_ p: MLKEMParameters, _ dk: UnsafeRawBufferPointer) throws {
        try checkLength(p.decapsulationKeyByteCount, dk.count)
        let k = p.k
        var hash = [UInt8](repeating: 0, count: 32)
        hash.withUnsafeMutableBufferPointer { h in
            MLKEMEngine.hashH(
                UnsafeRawBufferPointer(rebasing: dk[(384 * k)..<(768 * k + 32)]), into: h.baseAddress!, PQKernels.active)
        }
        let stored = UnsafeRawBufferPointer(rebasing: dk[(768 * k + 32)..<(768 * k + 64)])
        let ok = hash.withUnsafeBytes { constantTimeEquals($0, stored) }
        guard ok else { throw MLKEMError.keyCheckFailed }
    }

    private static func checkLength(_ expected: Int, _ actual: Int) throws {
        guard expected == actual else { throw MLKEMError.invalidKeyLength(expected: expected, actual: actual) }
    }
}
