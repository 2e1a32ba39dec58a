import FaceSealCrypto
import FaceSealWire
import Foundation

/// The application's ID-token algorithm is one the authority has no key for (a registration error).
struct IDTokenAlgorithmUnavailable: Error, CustomStringConvertible {
    let algorithm: String
    var description: String { "no ID-token signing key for algorithm \(algorithm)" }
}

extension Authority {
    /// The ID token of a completed request (SPEC §4.3), signed with the application's `id_token_signed_response_alg`:
    /// `iss`, pairwise `sub`, `aud`, `exp`, `iat`, `jti`, `auth_time` (the completion), the CIBA `auth_req_id` claim, `amr`,
    /// and for a ceremony `pki_kind` and the receipt `pki_result_sha256` (base64url of the stored SHA-256); a browser
    /// sign-in adds its authorization request's `nonce`.
    func makeIDToken(for request: CIBARequestRecord, application: ApplicationRecord, nonce: String? = nil) async throws -> String {
        let ring = try await idTokenKeyRing()
        guard let algorithm = JWSAlgorithm(rawValue: application.idTokenSignedResponseAlg),
              let key = ring.signers[algorithm] else {
            throw IDTokenAlgorithmUnavailable(algorithm: application.idTokenSignedResponseAlg)
        }
        let now = clock.now()
        let authTime = request.finishedAt ?? now
        var members: [String: JSONValue] = [
            "auth_time": .integer(Int64(authTime.timeIntervalSince1970.rounded(.down))),
            CIBANames.authReqIdClaim: .string(request.authReqID),
            "amr": .array(authenticationMethods(of: request).map(JSONValue.string)),
        ]
        if let nonce { members[AuthorizationCodeNames.nonceClaim] = .string(nonce) }
        if request.kind == .ceremony {
            if let pkiKind = request.pkiKind { members[CIBANames.pkiKindClaim] = .string(pkiKind) }
            if let receipt = request.receiptSHA256 { members[CIBANames.receiptClaim] = .string(Base64URL.encode(receipt)) }
        }
        let claims = JWTClaims(
            issuer: issuer, subject: pairwiseSubject(userSubject: request.subject, clientID: application.clientID),
            audience: [application.clientID], issuedAt: now, expiresAt: now.addingTimeInterval(TimeInterval(configuration.tokenLifetime)),
            // A random jti makes every signing unique, so of concurrent redemptions exactly one token is stored.
            jwtID: Base64URL.encode(SecureRandom.bytes(count: 16)), additionalMembers: members
        )
        return try JWT.sign(claims, signer: key.signer, keyID: key.keyID)
    }

    /// `amr` (RFC 8176): a face match (`face`) unlocking a hardware-held device key (`hwk`), and `pwd` when the
    /// device reported that the face token also needed the user's password.
    func authenticationMethods(of request: CIBARequestRecord) -> [String] {
        request.passwordUsed ? ["face", "hwk", "pwd"] : ["face", "hwk"]
    }
}
