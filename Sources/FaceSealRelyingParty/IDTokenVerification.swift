import Foundation
import FaceSealCrypto
public import FaceSealWire

extension RelyingParty {
    /// Verifies an ID token for `handle` against the authority's JWKS: signature (RS256, EdDSA, ES256 or
    /// ML-DSA-65; the JWKS is fetched again once when the token names an unknown key), `iss`, `aud` (and
    /// `azp` with several audiences), `exp` and `iat` with the configured leeway, `sub`, the `auth_req_id`
    /// claim, and for a ceremony `pki_kind` and the receipt `pki_result_sha256` = base64url SHA-256 of the
    /// delivery body this relying party accepted.
    public func verify(_ tokens: TokenResponse, for handle: PendingRequestHandle) async throws(RelyingPartyError) -> VerifiedResult {
        let found: (request: PendingRequest, delivery: AcceptedDelivery?)?
        do {
            found = try await pendingRequests.request(handle.authReqId)
        } catch {
            throw .storage("cannot read the pending request: \(error)")
        }
        guard let (request, delivery) = found else { throw .unknownRequest(handle.authReqId) }
        var checks = delivery?.checks ?? []
        let (verified, subject) = try await verifyIDTokenSignature(tokens.idToken, checks: &checks)
        let claims = verified.claims
        guard claims[CIBANames.authReqIdClaim]?.stringValue == request.authReqId else {
            throw .invalidIDToken("\(CIBANames.authReqIdClaim) is not this request")
        }
        checks.append("id_token: \(CIBANames.authReqIdClaim) is this request (\(request.authReqId))")

        let value: VerifiedValue
        if let kind = request.expected.pkiKind {
            guard claims[CIBANames.pkiKindClaim]?.stringValue == kind.rawValue else {
                throw .invalidIDToken("\(CIBANames.pkiKindClaim) is not \(kind.rawValue)")
            }
            guard let delivery else {
                throw .receiptMismatch("the authority issued a token but no delivery was accepted")
            }
            guard let receiptText = claims[CIBANames.receiptClaim]?.stringValue,
                  let receipt = try? Base64URL.decode(receiptText, maximumDecodedCount: 64) else {
                throw .receiptMismatch("the ID token carries no \(CIBANames.receiptClaim)")
            }
            guard constantTimeEquals(receipt, delivery.bodySHA256) else {
                throw .receiptMismatch("\(CIBANames.receiptClaim) is not the SHA-256 of the accepted body")
            }
            checks.append("receipt: \(CIBANames.receiptClaim) equals base64url SHA-256 of the accepted delivery body")
            switch delivery.result {
            case .publicKeys(let keys): value = .publicKeys(keys)
            case .signature(let signature): value = .signature(signature)
            case .sharedSecret(let secret): value = .sharedSecret(SymmetricKey(secret: SecretBytes(secret.copyBytes())))
            }
        } else {
            guard claims[CIBANames.pkiKindClaim] == nil, claims[CIBANames.receiptClaim] == nil else {
                throw .invalidIDToken("a sign-in token carries ceremony claims")
            }
            value = .signIn
        }
        let amr = claims["amr"]?.arrayValue?.compactMap(\.stringValue) ?? []
        let idToken = IDTokenClaims(rawToken: tokens.idToken, algorithm: verified.header.algorithm, keyID: verified.header.keyID,
                                    subject: subject, authTime: try? claims.date("auth_time"), amr: amr, claims: claims)
        return VerifiedResult(authReqId: request.authReqId, value: value, idToken: idToken, checks: checks)
    }

    /// The checks every ID token gets: signature against the authority's JWKS (fetched again once for an unknown
    /// key), `iss`, `aud` (and `azp` with several audiences), `exp`, `iat`, a `sub`.
    func verifyIDTokenSignature(_ idToken: String, checks: inout [String])
        async throws(RelyingPartyError) -> (verified: (header: JWSHeader, claims: JWTClaims), subject: String) {
        let metadata = try await authority.metadata()
        let validation = JWTValidation(now: configuration.clock.now(), leeway: configuration.leeway, issuer: metadata.issuer,
                                       audience: configuration.clientID, requireExpiration: true, requireIssuedAt: true)
        let options = JWSParsingOptions(allowedAlgorithms: Self.idTokenAlgorithms)
        let verified: (header: JWSHeader, claims: JWTClaims)
        do {
            verified = try JWT.verify(idToken, keySet: try await authority.keySet(), factory: .includingMLDSA65,
                                      validation: validation, options: options)
        } catch JOSEError.keyNotFound {
            // The authority may have rotated its signing key since the JWKS was cached.
            do {
                verified = try JWT.verify(idToken, keySet: try await authority.keySet(refresh: true),
                                          factory: .includingMLDSA65, validation: validation, options: options)
            } catch {
                throw Self.idTokenError(error)
            }
        } catch {
            throw Self.idTokenError(error)
        }
        let claims = verified.claims
        checks.append("id_token: \(verified.header.algorithm.rawValue) signature verifies with the authority's key \(verified.header.keyID ?? "(no kid)") from its JWKS")
        checks.append("id_token: iss is \(metadata.issuer), aud contains \(configuration.clientID), exp and iat valid (leeway \(Int(configuration.leeway)) s)")
        let audiences = (try? claims.audience()) ?? []
        if audiences.count > 1 {
            guard claims["azp"]?.stringValue == configuration.clientID else {
                throw .invalidIDToken("several audiences and azp is not this client")
            }
        }
        guard let subject = claims.subject, !subject.isEmpty else { throw .invalidIDToken("no sub") }
        return (verified, subject)
    }

    private static func idTokenError(_ error: any Error) -> RelyingPartyError {
        if let error = error as? RelyingPartyError { return error }
        guard let jose = error as? JOSEError else { return .invalidIDToken("\(error)") }
        switch jose {
        case .invalidSignature: return .invalidIDToken("the signature does not verify")
        case .invalidIssuer: return .invalidIDToken("wrong issuer")
        case .invalidAudience: return .invalidIDToken("wrong audience")
        case .expired: return .invalidIDToken("expired")
        case .issuedInFuture: return .invalidIDToken("issued in the future")
        case .keyNotFound: return .invalidIDToken("signed with a key the authority does not publish")
        default: return .invalidIDToken("\(jose)")
        }
    }
}
