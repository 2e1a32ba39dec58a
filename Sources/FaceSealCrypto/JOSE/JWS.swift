public import Foundation

/// A JWS protected header.
public struct JWSHeader: Sendable, Hashable {
    /// `alg`.
    public var algorithm: JWSAlgorithm
    /// `kid`, if any.
    public var keyID: String?
    /// `typ`, if any (e.g. `JWT`).
    public var type: String?
    /// Other members, kept as parsed (e.g. `jwk`, `nonce`). Never contains `alg`, `kid`, `typ` or `crit`.
    public var additionalMembers: [String: JSONValue]

    /// A header; `additionalMembers` must not repeat `alg`, `kid`, `typ` or hold `crit`.
    public init(algorithm: JWSAlgorithm, keyID: String? = nil, type: String? = nil,
                additionalMembers: [String: JSONValue] = [:]) {
        self.algorithm = algorithm
        self.keyID = keyID
        self.type = type
        self.additionalMembers = additionalMembers
    }

    /// The serialised header: ``jsonValue``'s bytes, written directly when there are no additional members.
    var serialized: [UInt8] {
        guard additionalMembers.isEmpty else { return jsonValue.serialized }
        // The members in sorted order: alg, kid, typ.
        var out = Array(#"{"alg":"#.utf8)
        JSONValue.writeString(algorithm.rawValue, into: &out)
        if let keyID {
            out += #","kid":"#.utf8
            JSONValue.writeString(keyID, into: &out)
        }
        if let type {
            out += #","typ":"#.utf8
            JSONValue.writeString(type, into: &out)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// The header as a JSON object.
    public var jsonValue: JSONValue {
        var members = additionalMembers
        members["alg"] = .string(algorithm.rawValue)
        if let keyID { members["kid"] = .string(keyID) }
        if let type { members["typ"] = .string(type) }
        return .object(members)
    }

    /// Parses and checks a decoded header: a JSON object with a supported `alg`, string `kid`/`typ`, no `crit`.
    init(json bytes: [UInt8]) throws(JOSEError) {
        guard case .object(var members) = try JSONValue.parse(bytes, part: "header") else {
            throw .malformedJSON(part: "header", reason: "not a JSON object")
        }
        // No extension is understood, so a critical one can never be honoured (RFC 7515 §4.1.11).
        guard members["crit"] == nil else { throw .criticalHeaderUnsupported }
        guard let algValue = members.removeValue(forKey: "alg") else { throw .missingField("alg") }
        guard case .string(let alg) = algValue else { throw .invalidField("alg") }
        algorithm = try JWSAlgorithm(headerValue: alg)
        switch members.removeValue(forKey: "kid") {
        case nil: keyID = nil
        case .string(let kid)?: keyID = kid
        default: throw .invalidField("kid")
        }
        switch members.removeValue(forKey: "typ") {
        case nil: type = nil
        case .string(let typ)?: type = typ
        default: throw .invalidField("typ")
        }
        // RFC 7797 unencoded payloads change what is signed; refuse rather than misread them.
        if let b64 = members["b64"], b64 != .bool(true) { throw .invalidField("b64") }
        additionalMembers = members
    }
}

/// Limits for parsing a compact JWS.
public struct JWSParsingOptions: Sendable, Hashable {
    /// The largest compact serialisation accepted, in bytes (default 64 KiB).
    public var maximumSize: Int
    /// Algorithms accepted; `nil` accepts every ``JWSAlgorithm`` (the key still has to match).
    public var allowedAlgorithms: Set<JWSAlgorithm>?

    /// Options with the given limits.
    public init(maximumSize: Int = JWS.defaultMaximumSize, allowedAlgorithms: Set<JWSAlgorithm>? = nil) {
        self.maximumSize = maximumSize
        self.allowedAlgorithms = allowedAlgorithms
    }
}

/// A compact JWS split and decoded, signature not yet checked.
public struct UnverifiedJWS: Sendable, Hashable {
    /// The parsed protected header.
    public let header: JWSHeader
    /// The decoded payload bytes.
    public let payload: [UInt8]
    /// The decoded signature bytes.
    public let signature: [UInt8]
    /// ASCII `base64url(header) '.' base64url(payload)`: the bytes the signature covers.
    public let signingInput: [UInt8]
}

/// A JWS whose signature verified.
public struct VerifiedJWS: Sendable, Hashable {
    /// The protected header.
    public let header: JWSHeader
    /// The payload bytes, exactly as signed.
    public let payload: [UInt8]
}

/// JWS compact serialisation (RFC 7515 §7.1): sign and verify.
public enum JWS {
    /// Default limit on a compact JWS (64 KiB).
    public static let defaultMaximumSize = 64 * 1024

    /// Signs `payload` and returns `header.payload.signature`.
    /// The header is serialised with sorted members, so equal headers give equal bytes.
    /// - Throws: ``JOSEError/algorithmMismatch(header:key:)`` if `header.algorithm` is not the signer's,
    ///   ``JOSEError/invalidField(_:)`` if `additionalMembers` repeats a registered member or holds `crit`,
    ///   ``JOSEError/signingFailed(_:)`` if the signer fails.
    public static func sign<P: DataProtocol>(payload: P, header: JWSHeader, signer: any JWSSigner) throws(JOSEError) -> String {
        guard header.algorithm == signer.algorithm else {
            throw .algorithmMismatch(header: header.algorithm.rawValue, key: signer.algorithm.rawValue)
        }
        if !header.additionalMembers.isEmpty {
            for reserved in ["alg", "kid", "typ", "crit"] where header.additionalMembers[reserved] != nil {
                throw .invalidField(reserved)
            }
        }
        // One buffer: the signing input, then the signature appended to it.
        var compact: [UInt8] = []
        Base64URL.append(header.serialized, to: &compact)
        compact.append(UInt8(ascii: "."))
        Base64URL.append(payload, to: &compact)
        let signature: [UInt8]
        do {
            signature = try signer.sign(compact)
        } catch {
            throw .signingFailed(String(describing: error))
        }
        compact.append(UInt8(ascii: "."))
        Base64URL.append(signature, to: &compact)
        return String(decoding: compact, as: UTF8.self)
    }

    /// Signs `payload` with a header of the signer's algorithm and the given `kid` and `typ`.
    public static func sign<P: DataProtocol>(
        payload: P, signer: any JWSSigner, keyID: String? = nil, type: String? = nil
    ) throws(JOSEError) -> String {
        try sign(payload: payload, header: JWSHeader(algorithm: signer.algorithm, keyID: keyID, type: type), signer: signer)
    }

    /// Splits and decodes a compact JWS without checking the signature (to read `kid` before choosing a key).
    /// Never trust its content before a `verify` succeeds.
    /// - Throws: ``JOSEError/inputTooLarge(limit:)``, ``JOSEError/wrongSegmentCount(_:)``,
    ///   ``JOSEError/invalidBase64URL(part:)``, header errors (``JOSEError/algorithmNone``, …).
    public static func parse<S: StringProtocol>(_ compact: S, options: JWSParsingOptions = .init()) throws(JOSEError) -> UnverifiedJWS {
        guard compact.utf8.count <= options.maximumSize else { throw .inputTooLarge(limit: options.maximumSize) }
        let bytes = Array(compact.utf8)
        let dots = bytes.indices.filter { bytes[$0] == UInt8(ascii: ".") }
        guard dots.count == 2 else { throw .wrongSegmentCount(dots.count + 1) }
        let headerBytes = try Base64URL.decode(utf8: bytes[..<dots[0]], part: "header", maximumDecodedCount: options.maximumSize)
        let payload = try Base64URL.decode(utf8: bytes[(dots[0] + 1)..<dots[1]], part: "payload", maximumDecodedCount: options.maximumSize)
        let signature = try Base64URL.decode(utf8: bytes[(dots[1] + 1)...], part: "signature", maximumDecodedCount: options.maximumSize)
        let header = try JWSHeader(json: headerBytes)
        if let allowed = options.allowedAlgorithms, !allowed.contains(header.algorithm) {
            throw .unsupportedAlgorithm(header.algorithm.rawValue)
        }
        return UnverifiedJWS(header: header, payload: payload, signature: signature, signingInput: Array(bytes[..<dots[1]]))
    }

    /// Verifies a compact JWS with one key.
    /// - Throws: every ``parse(_:options:)`` error, ``JOSEError/algorithmMismatch(header:key:)`` when the
    ///   header's `alg` is not the verifier's, ``JOSEError/invalidSignature``.
    public static func verify<S: StringProtocol>(
        _ compact: S, verifier: any JWSVerifier, options: JWSParsingOptions = .init()
    ) throws(JOSEError) -> VerifiedJWS {
        let jws = try parse(compact, options: options)
        return try verify(jws, verifier: verifier)
    }

    /// Verifies a compact JWS against a key set: the key named by `kid`, or without `kid` the only key
    /// that fits `alg`. Keys a built-in verifier cannot handle (ML-DSA) come from `factory`.
    /// - Throws: every ``verify(_:verifier:options:)`` error, ``JOSEError/keyNotFound(keyID:)``,
    ///   ``JOSEError/ambiguousKey``, ``JOSEError/unsupportedKeyType(_:)``.
    public static func verify<S: StringProtocol>(
        _ compact: S, keySet: JWKSet, factory: JWSVerifierFactory = .builtIn, options: JWSParsingOptions = .init()
    ) throws(JOSEError) -> VerifiedJWS {
        let jws = try parse(compact, options: options)
        let key = try keySet.key(for: jws.header)
        return try verify(jws, verifier: key.verifier(factory: factory))
    }

    /// Verifies an already parsed JWS.
    public static func verify(_ jws: UnverifiedJWS, verifier: any JWSVerifier) throws(JOSEError) -> VerifiedJWS {
        guard jws.header.algorithm == verifier.algorithm else {
            throw .algorithmMismatch(header: jws.header.algorithm.rawValue, key: verifier.algorithm.rawValue)
        }
        guard verifier.verify(jws.signingInput, signature: jws.signature) else { throw .invalidSignature }
        return VerifiedJWS(header: jws.header, payload: jws.payload)
    }
}
