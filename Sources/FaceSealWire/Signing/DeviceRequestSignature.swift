public import FaceSealCrypto

/// Signs device → authority requests and checks them on the authority (SPEC §4.2).
public enum DeviceRequestSignature {
    /// The JWS `typ` of a device-request signature.
    public static let type = "faceseal-device+jwt"

    /// base64url SHA-256 of `body`.
    public static func bodyHash(_ body: [UInt8]) -> String { Base64URL.encode(SHA256.hash(data: body).bytes) }

    /// A fresh `jti`: 128 random bits, base64url.
    public static func newJTI() -> String { Base64URL.encode(SecureRandom.bytes(count: 16)) }

    /// The header value for a request, signed with a device key (ES256), and the `jti` it carries.
    public static func make(method: String, path: String, body: [UInt8], kid: String, signer: any JWSSigner,
                            now: Int64, jti: String = newJTI()) throws(JOSEError) -> (header: String, jti: String) {
        let claims = DeviceRequestClaims(method: method.uppercased(), path: path, bsha: bodyHash(body), iat: now, jti: jti, kid: kid)
        let header = try JWS.sign(payload: claims.encoded(), signer: signer, keyID: kid, type: type)
        return (header, jti)
    }

    /// Parses a header value without checking the signature, so the authority can look the key up by `kid`.
    public static func parse(_ header: String?) throws(DeviceErrorCode) -> UnverifiedDeviceRequest {
        guard let header else { throw .invalidSignature }
        do {
            let jws = try JWS.parse(header, options: JWSParsingOptions(maximumSize: 4096, allowedAlgorithms: [.es256]))
            guard jws.header.type == type else { throw DeviceErrorCode.invalidSignature }
            let claims = try DeviceRequestClaims.decode(jws.payload)
            guard jws.header.keyID == claims.kid else { throw DeviceErrorCode.invalidSignature }
            return UnverifiedDeviceRequest(claims: claims, jws: jws)
        } catch {
            throw .invalidSignature
        }
    }
}

/// A device-request signature whose signature is not checked yet.
public struct UnverifiedDeviceRequest: Sendable {
    /// The claims as sent (`kid` names the key to check with).
    public let claims: DeviceRequestClaims
    let jws: UnverifiedJWS

    /// Checks the signature with the registered key, that method, path and body hash match this request, and
    /// that `iat` is within ±120 s of `now`. Replay (`jti`) is the caller's check, against its store.
    public func verify(with key: P256.Signing.PublicKey, method: String, path: String, body: [UInt8],
                       now: Int64) throws(DeviceErrorCode) -> DeviceRequestClaims {
        do {
            _ = try JWS.verify(jws, verifier: key)
        } catch {
            throw .invalidSignature
        }
        guard claims.method == method.uppercased(), claims.path == path,
              constantTimeEquals(Array(claims.bsha.utf8), Array(DeviceRequestSignature.bodyHash(body).utf8)) else {
            throw .invalidSignature
        }
        guard DeviceSigning.isWithinSkew(claims.iat, of: now) else { throw .clockSkew }
        return claims
    }
}

/// Signs authority → device responses (Ed25519) and checks them on the device.
public enum AuthorityResponseSignature {
    /// The JWS `typ` of a response signature.
    public static let type = "faceseal-authority+jwt"

    /// The header value for a response to the request that carried `requestJTI`.
    public static func make(body: [UInt8], requestJTI: String, status: Int, hint: Bool, key: Curve25519.Signing.PrivateKey,
                            now: Int64) throws(JOSEError) -> String {
        let claims = AuthorityResponseClaims(bsha: DeviceRequestSignature.bodyHash(body), jti: requestJTI, status: status,
                                             iat: now, hint: hint ? true : nil)
        return try JWS.sign(payload: claims.encoded(), signer: key, type: type)
    }

    /// Checks a response: signed by the pinned authority key, for this request, this status and these body bytes.
    public static func verify(_ header: String?, body: [UInt8], requestJTI: String, status: Int,
                              key: Curve25519.Signing.PublicKey) throws(WireError) -> AuthorityResponseClaims {
        guard let header else { throw .badSignature }
        do {
            let verified = try JWS.verify(header, verifier: key, options: JWSParsingOptions(maximumSize: 4096, allowedAlgorithms: [.edDSA]))
            guard verified.header.type == type else { throw WireError.badSignature }
            let claims = try AuthorityResponseClaims.decode(verified.payload)
            guard claims.jti == requestJTI, claims.status == status,
                  claims.bsha == DeviceRequestSignature.bodyHash(body) else { throw WireError.badSignature }
            return claims
        } catch {
            throw .badSignature
        }
    }
}
