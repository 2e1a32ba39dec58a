public import FaceSealCrypto

/// Why link bytes were refused before any network call (SPEC §4.1).
public enum LinkError: Error, Equatable, Sendable {
    /// Not a compact JWS of link claims (or a universal link carrying one), or over the size limit.
    case malformed
    /// The signature does not verify with the pinned authority key.
    case badSignature
    /// The link's `exp` has passed.
    case expired
}

/// Signs and verifies links: compact JWS (EdDSA) over `LinkClaims`.
public enum LinkSignature {
    /// The JWS `typ` of a link.
    public static let type = "faceseal-link+jwt"

    /// Signs `claims` with the authority's key.
    public static func make(_ claims: LinkClaims, key: Curve25519.Signing.PrivateKey) throws(JOSEError) -> String {
        try JWS.sign(payload: claims.encoded(), signer: key, type: type)
    }

    /// Parses link bytes — a compact JWS, or a universal link `https://<authority>/l/<JWS>` — without checking the
    /// signature, so the caller can pick the pinned key by issuer.
    public static func parse(_ payload: [UInt8]) throws(LinkError) -> UnverifiedLink {
        guard payload.count <= LinkLimits.maxBytes, let text = String(validating: payload, as: UTF8.self) else {
            throw .malformed
        }
        var compact = Substring(text.trimmingWhitespace())
        // A URL is looked into only when it is one (Foundation's search costs more than the rest of the parse).
        if compact.hasPrefix("https://") || compact.hasPrefix("http://"), let range = compact.range(of: LinkLimits.universalLinkPath) {
            compact = compact[range.upperBound...]
        }
        do {
            let jws = try JWS.parse(compact, options: JWSParsingOptions(maximumSize: LinkLimits.maxBytes, allowedAlgorithms: [.edDSA]))
            guard jws.header.type == type else { throw LinkError.malformed }
            let claims = try LinkClaims.decode(jws.payload)
            return UnverifiedLink(claims: claims, jws: jws)
        } catch {
            throw .malformed
        }
    }
}

/// A parsed link whose signature is not checked yet. Never act on `claims` before `verify` succeeds.
public struct UnverifiedLink: Sendable {
    /// The claims as sent.
    public let claims: LinkClaims
    let jws: UnverifiedJWS

    /// Checks the signature with `key` and the expiry against `now` (Unix seconds).
    public func verify(with key: Curve25519.Signing.PublicKey, now: Int64) throws(LinkError) -> LinkClaims {
        try jws.check(key: key, exp: claims.exp, now: now)
        return claims
    }
}

extension UnverifiedJWS {
    /// The check of an authority-signed outbox entry (a link or a notice): the signature with `key`, then `exp` after `now`.
    func check(key: Curve25519.Signing.PublicKey, exp: Int64, now: Int64) throws(LinkError) {
        do {
            _ = try JWS.verify(self, verifier: key)
        } catch {
            throw .badSignature
        }
        guard exp > now else { throw .expired }
    }
}

extension String {
    fileprivate func trimmingWhitespace() -> Substring {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
              let last = scalars.lastIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        return Substring(scalars[first...last])
    }
}
