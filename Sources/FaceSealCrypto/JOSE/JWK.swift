public import Foundation
import Synchronization

/// A public JSON Web Key (RFC 7517) of one of FaceSeal's JWS algorithms.
///
/// Parsing refuses private members (`d`, `priv`, …): a JWK that arrives here is published material,
/// and a private key in it is a mistake that must not spread.
public struct JWK: Sendable, Hashable {
    /// The key material, by key type.
    public enum KeyMaterial: Sendable, Hashable {
        /// `kty: OKP`, `crv: Ed25519`, `x` (32 bytes).
        case ed25519(x: [UInt8])
        /// `kty: EC`, `crv: P-256`, `x`, `y` (32 bytes each, a point on the curve).
        case p256(x: [UInt8], y: [UInt8])
        /// `kty: RSA`, modulus `n` and exponent `e` (big endian, minimal).
        case rsa(n: [UInt8], e: [UInt8])
        /// `kty: AKP`, `alg: ML-DSA-65`, `pub` (the 1952-byte FIPS 204 public key).
        case mlDSA65(publicKey: [UInt8])
    }

    /// Length of an ML-DSA-65 public key (FIPS 204).
    public static let mlDSA65PublicKeyByteCount = 1952
    /// Default limit on one JWK's JSON (16 KiB).
    public static let defaultMaximumSize = 16 * 1024

    /// The key material.
    public let material: KeyMaterial
    /// `kid`, if any.
    public var keyID: String?
    /// `use`, if any (`sig`; keys with another use are never picked to verify).
    public var use: String?
    /// Whether the JSON carries `alg` (always true for `AKP`, where `alg` is part of the key type).
    public var includesAlgorithm: Bool

    /// A JWK from material; the material is validated as for parsing.
    /// - Throws: ``JOSEError/invalidKey(_:)`` for lengths or values that are not a key.
    public init(material: KeyMaterial, keyID: String? = nil, use: String? = nil, includesAlgorithm: Bool = true) throws(JOSEError) {
        try Self.validate(material)
        self.material = material
        self.keyID = keyID
        self.use = use
        if case .mlDSA65 = material { self.includesAlgorithm = true } else { self.includesAlgorithm = includesAlgorithm }
    }

    /// The JWK of an Ed25519 public key.
    public init(publicKey: Curve25519.Signing.PublicKey, keyID: String? = nil) {
        self.init(validated: .ed25519(x: [UInt8](publicKey.rawRepresentation)), keyID: keyID)
    }

    /// The JWK of a P-256 public key.
    public init(publicKey: P256.Signing.PublicKey, keyID: String? = nil) {
        self.init(validated: .p256(x: [UInt8](publicKey.x), y: [UInt8](publicKey.y)), keyID: keyID)
    }

    /// The JWK of an RSA public key.
    public init(publicKey: RSA.Signing.PublicKey, keyID: String? = nil) {
        self.init(validated: .rsa(n: [UInt8](publicKey.modulus), e: [UInt8](publicKey.publicExponent)), keyID: keyID)
    }

    /// The `AKP` JWK of an ML-DSA-65 public key given as its encoded bytes.
    /// - Throws: ``JOSEError/invalidKey(_:)`` unless it is 1952 bytes.
    public init<D: DataProtocol>(mlDSA65PublicKey: D, keyID: String? = nil) throws(JOSEError) {
        try self.init(material: .mlDSA65(publicKey: [UInt8](mlDSA65PublicKey)), keyID: keyID)
    }

    private init(validated material: KeyMaterial, keyID: String?) {
        self.material = material
        self.keyID = keyID
        self.use = nil
        self.includesAlgorithm = true
    }

    /// Parses one JWK from JSON.
    /// - Throws: ``JOSEError/inputTooLarge(limit:)``, ``JOSEError/malformedJSON(part:reason:)``,
    ///   ``JOSEError/missingField(_:)``, ``JOSEError/invalidField(_:)``, ``JOSEError/invalidBase64URL(part:)``,
    ///   ``JOSEError/unsupportedKeyType(_:)``, ``JOSEError/algorithmMismatch(header:key:)``, ``JOSEError/invalidKey(_:)``.
    public init<D: DataProtocol>(json: D, maximumSize: Int = JWK.defaultMaximumSize) throws(JOSEError) {
        guard json.count <= maximumSize else { throw .inputTooLarge(limit: maximumSize) }
        guard case .object(let members) = try JSONValue.parse(json, part: "JWK") else {
            throw .malformedJSON(part: "JWK", reason: "not a JSON object")
        }
        try self.init(members: members)
    }

    /// Builds a JWK from a parsed JSON object (see ``init(json:maximumSize:)``).
    public init(members: [String: JSONValue]) throws(JOSEError) {
        func string(_ name: String) throws(JOSEError) -> String? {
            switch members[name] {
            case nil: return nil
            case .string(let value)?: return value
            default: throw .invalidField(name)
            }
        }
        func required(_ name: String) throws(JOSEError) -> String {
            guard let value = try string(name) else { throw .missingField(name) }
            return value
        }
        func bytes(_ name: String) throws(JOSEError) -> [UInt8] {
            try Base64URL.decode(try required(name), part: name, maximumDecodedCount: Self.defaultMaximumSize)
        }

        for member in ["d", "p", "q", "dp", "dq", "qi", "oth", "k", "priv", "seed"] where members[member] != nil {
            throw .invalidKey("private key member \"\(member)\" in a public JWK")
        }
        let kty = try required("kty")
        let alg = try string("alg")
        let material: KeyMaterial
        switch kty {
        case "OKP":
            let crv = try required("crv")
            guard crv == "Ed25519" else { throw .unsupportedKeyType("OKP \(crv)") }
            material = .ed25519(x: try bytes("x"))
        case "EC":
            let crv = try required("crv")
            guard crv == "P-256" else { throw .unsupportedKeyType("EC \(crv)") }
            material = .p256(x: try bytes("x"), y: try bytes("y"))
        case "RSA":
            let n = try bytes("n")
            let e = try bytes("e")
            // RFC 7518 §6.3.1: minimal encodings, so a key has one JWK form (and one thumbprint).
            guard n.first != 0 else { throw .invalidField("n") }
            guard e.first != 0 else { throw .invalidField("e") }
            material = .rsa(n: n, e: e)
        case "AKP":
            guard let alg else { throw .missingField("alg") }
            guard alg == JWSAlgorithm.mlDSA65.rawValue else {
                if alg.lowercased() == "none" { throw .algorithmNone }
                throw .unsupportedKeyType("AKP \(alg)")
            }
            material = .mlDSA65(publicKey: try bytes("pub"))
        default:
            throw .unsupportedKeyType(kty)
        }
        try Self.validate(material)
        self.material = material
        if let alg {
            let parsed = try JWSAlgorithm(headerValue: alg)
            guard parsed == material.algorithm else {
                throw .algorithmMismatch(header: alg, key: material.algorithm.rawValue)
            }
        }
        includesAlgorithm = alg != nil
        keyID = try string("kid")
        use = try string("use")
    }

    /// The checks of a key that cost more than parsing: OpenSSL's public-key check of an RSA modulus (a
    /// primality test, milliseconds per key) and a full decode of an ML-DSA-65 key. Run once, where a foreign key
    /// set is registered; parsing (and so every later use of the stored set) checks sizes and curve points only.
    /// - Throws: ``JOSEError/invalidKey(_:)``.
    public func checkPublicKey() throws(JOSEError) {
        do {
            switch material {
            case .rsa(let n, let e): try RSA.Signing.PublicKey(modulus: n, publicExponent: e).check()
            case .mlDSA65(let publicKey): _ = try MLDSA65.PublicKey(rawRepresentation: publicKey)
            case .ed25519, .p256: break
            }
        } catch {
            throw .invalidKey(String(describing: error))
        }
    }

    private static func validate(_ material: KeyMaterial) throws(JOSEError) {
        do {
            switch material {
            case .ed25519(let x):
                _ = try Curve25519.Signing.PublicKey(rawRepresentation: x)
            case .p256(let x, let y):
                _ = try P256.Signing.PublicKey(x: x, y: y)
            case .rsa(let n, let e):
                guard n.first != 0, e.first != 0 else { throw JOSEError.invalidKey("RSA n and e must be minimal") }
                _ = try RSA.Signing.PublicKey(modulus: n, publicExponent: e)
            case .mlDSA65(let publicKey):
                guard publicKey.count == mlDSA65PublicKeyByteCount else {
                    throw JOSEError.invalidKey("ML-DSA-65 public key must be \(mlDSA65PublicKeyByteCount) bytes, got \(publicKey.count)")
                }
            }
        } catch let error as JOSEError {
            throw error
        } catch {
            throw .invalidKey(String(describing: error))
        }
    }

    /// `kty`: `OKP`, `EC`, `RSA` or `AKP`.
    public var keyType: String {
        switch material {
        case .ed25519: "OKP"
        case .p256: "EC"
        case .rsa: "RSA"
        case .mlDSA65: "AKP"
        }
    }

    /// The one JWS algorithm this key verifies.
    public var algorithm: JWSAlgorithm { material.algorithm }

    /// The members RFC 7638 hashes for a thumbprint (and that identify the key).
    private var requiredMembers: [String: JSONValue] {
        switch material {
        case .ed25519(let x):
            ["kty": "OKP", "crv": "Ed25519", "x": .string(Base64URL.encode(x))]
        case .p256(let x, let y):
            ["kty": "EC", "crv": "P-256", "x": .string(Base64URL.encode(x)), "y": .string(Base64URL.encode(y))]
        case .rsa(let n, let e):
            ["kty": "RSA", "n": .string(Base64URL.encode(n)), "e": .string(Base64URL.encode(e))]
        case .mlDSA65(let publicKey):
            // The ML-DSA draft makes `alg` a required member of AKP keys, so it is part of the thumbprint.
            ["kty": "AKP", "alg": .string(JWSAlgorithm.mlDSA65.rawValue), "pub": .string(Base64URL.encode(publicKey))]
        }
    }

    /// The JWK as a JSON object (public members only).
    public var jsonValue: JSONValue {
        var members = requiredMembers
        if includesAlgorithm { members["alg"] = .string(algorithm.rawValue) }
        if let keyID { members["kid"] = .string(keyID) }
        if let use { members["use"] = .string(use) }
        return .object(members)
    }

    /// The JWK's JSON (members sorted).
    public var jsonData: Data { Data(jsonValue.serialized) }

    /// The RFC 7638 SHA-256 thumbprint.
    public var thumbprint: SHA256Digest { SHA256.hash(data: JSONValue.object(requiredMembers).serialized) }

    /// The RFC 7638 SHA-256 thumbprint in base64url (a natural `kid`).
    public var thumbprintBase64URL: String { Base64URL.encode(thumbprint.bytes) }

    /// A verifier for this key; ML-DSA-65 keys need `factory.mlDSA65`.
    /// - Throws: ``JOSEError/unsupportedKeyType(_:)`` when the factory has no ML-DSA-65 maker,
    ///   ``JOSEError/invalidKey(_:)`` when the material is refused.
    public func verifier(factory: JWSVerifierFactory = .builtIn) throws(JOSEError) -> any JWSVerifier {
        do {
            switch material {
            case .ed25519(let x):
                return try JWKVerifierCache.shared.verifier(for: material) { try Curve25519.Signing.PublicKey(rawRepresentation: x) }
            case .p256(let x, let y):
                return try JWKVerifierCache.shared.verifier(for: material) { try P256.Signing.PublicKey(x: x, y: y) }
            case .rsa(let n, let e):
                return try JWKVerifierCache.shared.verifier(for: material) { try RSA.Signing.PublicKey(modulus: n, publicExponent: e) }
            case .mlDSA65(let publicKey):
                guard let make = factory.mlDSA65 else { throw JOSEError.unsupportedKeyType("AKP ML-DSA-65 (no verifier installed)") }
                let verifier = try make(publicKey)
                guard verifier.algorithm == .mlDSA65 else {
                    throw JOSEError.algorithmMismatch(header: JWSAlgorithm.mlDSA65.rawValue, key: verifier.algorithm.rawValue)
                }
                return verifier
            }
        } catch let error as JOSEError {
            throw error
        } catch {
            throw .invalidKey(String(describing: error))
        }
    }
}

extension JWK.KeyMaterial {
    /// The JWS algorithm of this key type.
    public var algorithm: JWSAlgorithm {
        switch self {
        case .ed25519: .edDSA
        case .p256: .es256
        case .rsa: .rs256
        case .mlDSA65: .mlDSA65
        }
    }
}

/// The built-in verifiers made from JWKs, by key material, so a key set's keys are parsed once rather than at every
/// token: a relying party (and the benchmark's) verifies each ID token against the same published keys, and an RSA
/// key's OpenSSL object with its Montgomery set-up costs more to build than a verification. Bounded: emptied when
/// full, so keys from many sets cost rebuilds, never memory. (ML-DSA-65 verifiers come from a caller's factory and are
/// not kept.)
final class JWKVerifierCache: Sendable {
    static let shared = JWKVerifierCache(limit: 128)

    private let entries = Mutex<[JWK.KeyMaterial: any JWSVerifier]>([:])
    private let limit: Int

    init(limit: Int) { self.limit = limit }

    /// The kept verifier of `material`, or the one `make` builds (kept unless building threw).
    func verifier(for material: JWK.KeyMaterial, make: () throws -> any JWSVerifier) throws -> any JWSVerifier {
        if let kept = entries.withLock({ $0[material] }) { return kept }
        let made = try make()
        entries.withLock { entries in
            if entries.count >= limit { entries.removeAll(keepingCapacity: true) }
            entries[material] = made
        }
        return made
    }

    /// How many verifiers are kept (tests).
    var count: Int { entries.withLock { $0.count } }
}

/// Makes verifiers for key types whose implementation lives outside the JOSE layer (ML-DSA-65).
///
/// The pure-Swift ML-DSA plugs in here without changes to JOSE:
/// `JWSVerifierFactory(mlDSA65: { try MLDSA65.PublicKey(rawRepresentation: $0) })`, where the public key
/// conforms to ``JWSVerifier``.
public struct JWSVerifierFactory: Sendable {
    /// Builds an ML-DSA-65 verifier from the 1952-byte public key, or `nil` if none is installed.
    public var mlDSA65: (@Sendable (_ publicKey: [UInt8]) throws -> any JWSVerifier)?

    /// A factory with the given makers.
    public init(mlDSA65: (@Sendable (_ publicKey: [UInt8]) throws -> any JWSVerifier)? = nil) {
        self.mlDSA65 = mlDSA65
    }

    /// Ed25519, P-256, RSA and the module's pure-Swift ML-DSA-65.
    public static var builtIn: JWSVerifierFactory { .includingMLDSA65 }
}

/// A JWK Set (RFC 7517 §5): the keys an issuer publishes at its `jwks_uri`.
public struct JWKSet: Sendable, Hashable {
    /// Default limit on a JWKS document (256 KiB: room for dozens of ML-DSA keys).
    public static let defaultMaximumSize = 256 * 1024
    /// Default limit on the number of keys.
    public static let defaultMaximumKeyCount = 64

    /// The keys.
    public var keys: [JWK]

    /// A set of `keys`.
    public init(keys: [JWK]) { self.keys = keys }

    /// Parses `{"keys": [...]}`. Keys of a type FaceSeal does not support are skipped (RFC 7517 §5);
    /// a malformed key of a supported type, or a private member anywhere, fails the whole set.
    public init<D: DataProtocol>(
        json: D, maximumSize: Int = JWKSet.defaultMaximumSize, maximumKeyCount: Int = JWKSet.defaultMaximumKeyCount
    ) throws(JOSEError) {
        guard json.count <= maximumSize else { throw .inputTooLarge(limit: maximumSize) }
        guard case .object(let members) = try JSONValue.parse(json, part: "JWKS") else {
            throw .malformedJSON(part: "JWKS", reason: "not a JSON object")
        }
        guard let keysValue = members["keys"] else { throw .missingField("keys") }
        guard case .array(let entries) = keysValue else { throw .invalidField("keys") }
        guard entries.count <= maximumKeyCount else { throw .inputTooLarge(limit: maximumKeyCount) }
        var keys: [JWK] = []
        for entry in entries {
            guard case .object(let keyMembers) = entry else { throw .invalidField("keys") }
            do {
                keys.append(try JWK(members: keyMembers))
            } catch .unsupportedKeyType {
                continue
            }
        }
        self.keys = keys
    }

    /// `{"keys":[...]}` with sorted members.
    public var jsonData: Data { Data(JSONValue.object(["keys": .array(keys.map(\.jsonValue))]).serialized) }

    /// The key that should verify a JWS with `header`.
    /// - Throws: ``JOSEError/keyNotFound(keyID:)`` (no key of that `kid`, or none for the `alg`),
    ///   ``JOSEError/algorithmMismatch(header:key:)`` (the `kid` names a key of another algorithm),
    ///   ``JOSEError/ambiguousKey`` (no `kid` and several candidates).
    public func key(for header: JWSHeader) throws(JOSEError) -> JWK {
        let usable = keys.filter { $0.use == nil || $0.use == "sig" }
        if let keyID = header.keyID {
            let named = usable.filter { $0.keyID == keyID }
            guard let first = named.first else { throw .keyNotFound(keyID: keyID) }
            let fitting = named.filter { $0.algorithm == header.algorithm }
            guard let key = fitting.first else {
                throw .algorithmMismatch(header: header.algorithm.rawValue, key: first.algorithm.rawValue)
            }
            guard fitting.count == 1 else { throw .ambiguousKey }
            return key
        }
        let fitting = usable.filter { $0.algorithm == header.algorithm }
        guard let key = fitting.first else { throw .keyNotFound(keyID: nil) }
        guard fitting.count == 1 else { throw .ambiguousKey }
        return key
    }
}
