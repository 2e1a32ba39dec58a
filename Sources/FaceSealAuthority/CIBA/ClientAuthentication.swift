import FaceSealCrypto
import FaceSealHTTP
import FaceSealWire
import Foundation

/// How a client proved who it is at the backchannel or token endpoint (OIDC Core §9).
public enum ClientAuthenticationMethod: String, Sendable, CaseIterable {
    /// `Authorization: Basic` with the client id and secret.
    case clientSecretBasic = "client_secret_basic"
    /// `client_id` and `client_secret` in the form body.
    case clientSecretPost = "client_secret_post"
    /// A JWT signed with one of the keys of the application's registered JWKS (RFC 7523).
    case privateKeyJWT = "private_key_jwt"
}

/// Client secrets: how the authority makes and keeps them.
///
/// A secret is 32 random bytes in base64url (256 bits of entropy), shown once at registration. Only its SHA-256 is
/// stored (`ClientCredential.secretHash`) and the hash of a presented secret is compared in constant time. A plain
/// hash suffices because the secret is random and long: no dictionary or brute-force attack applies, so a slow
/// password hash (scrypt) would only cost time at every token request. The management API must store
/// `ClientSecret.hash(secret)`.
public enum ClientSecret {
    /// The longest secret accepted from a client.
    public static let maxCharacters = 512

    /// A new random secret (base64url of 32 bytes).
    public static func generate() -> String { Base64URL.encode(SecureRandom.bytes(count: 32)) }

    /// The stored form of `secret`: SHA-256 of its UTF-8 bytes.
    public static func hash(_ secret: String) -> [UInt8] { SHA256.hash(data: Array(secret.utf8)).bytes }
}

/// The client an endpoint serves, once authenticated.
struct AuthenticatedClient: Sendable {
    /// The application (OIDC client).
    let application: ApplicationRecord
    /// How it authenticated.
    let method: ClientAuthenticationMethod
}

extension Authority {
    /// The form parameter names that belong to client authentication, not to the endpoint's own request.
    static let clientAuthenticationParameters: Set<String> = ["client_id", "client_secret", "client_assertion", "client_assertion_type"]
    /// `client_assertion_type` of `private_key_jwt`.
    static let jwtBearerAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    /// The most keys a client's JWKS may hold (each is checked in full once, at registration).
    static let maxClientKeys = 16
    /// The largest client JWKS accepted.
    static let maxClientJWKSBytes = 64 * 1024

    /// Authenticates the client of a backchannel or token request with exactly one of `client_secret_basic`,
    /// `client_secret_post` or `private_key_jwt`. Any failure is `invalid_client` (401, with
    /// `WWW-Authenticate: Basic` when the client tried Basic); using two methods at once is `invalid_request`.
    /// Storage failures propagate (the server answers 500).
    func authenticateClient(_ request: HTTPRequest, form: FormParameters) async throws -> AuthenticatedClient {
        let authorization = request.headers["Authorization"]
        let hasBasic = authorization.map { $0.lowercased().hasPrefix("basic ") } ?? false
        let hasPost = form["client_secret"] != nil
        let hasAssertion = form["client_assertion"] != nil || form["client_assertion_type"] != nil
        switch (hasBasic, hasPost, hasAssertion) {
        case (true, false, false):
            return try await authenticateBasic(authorization ?? "", formClientID: form["client_id"], request: request)
        case (false, true, false):
            return try await authenticatePost(form, request: request)
        case (false, false, true):
            return try await authenticateAssertion(form, request: request)
        case (false, false, false):
            throw CIBAFailure(.invalidClient, "client authentication is required (client_secret_basic, client_secret_post or private_key_jwt)",
                              headers: Self.basicChallenge)
        default:
            throw CIBAFailure(.invalidRequest, "use exactly one client authentication method")
        }
    }

    private static var basicChallenge: HTTPHeaders { ["WWW-Authenticate": #"Basic realm="faceseal", charset="UTF-8""#] }

    private func authenticateBasic(_ header: String, formClientID: String?, request: HTTPRequest) async throws -> AuthenticatedClient {
        let failure = CIBAFailure(.invalidClient, "client authentication failed", headers: Self.basicChallenge)
        let encoded = header.dropFirst("basic ".count).trimmingCharacters(in: .whitespaces)
        guard encoded.utf8.count <= 4 * ClientSecret.maxCharacters, let data = Data(base64Encoded: encoded),
              let text = String(data: data, encoding: .utf8), let colon = text.firstIndex(of: ":") else {
            throw CIBAFailure(.invalidClient, "malformed Basic credentials", headers: Self.basicChallenge)
        }
        // RFC 6749 §2.3.1: both parts are form-urlencoded before they are joined.
        guard let clientID = Self.formDecode(text[..<colon]), let secret = Self.formDecode(text[text.index(after: colon)...]) else {
            throw CIBAFailure(.invalidClient, "malformed Basic credentials", headers: Self.basicChallenge)
        }
        if let formClientID, formClientID != clientID { throw failure }
        guard let application = try await verifySecret(clientID: clientID, secret: secret, request: request) else { throw failure }
        return AuthenticatedClient(application: application, method: .clientSecretBasic)
    }

    private func authenticatePost(_ form: FormParameters, request: HTTPRequest) async throws -> AuthenticatedClient {
        guard let clientID = form["client_id"], let secret = form["client_secret"],
              let application = try await verifySecret(clientID: clientID, secret: secret, request: request) else {
            throw CIBAFailure(.invalidClient, "client authentication failed")
        }
        return AuthenticatedClient(application: application, method: .clientSecretPost)
    }

    /// The application whose stored secret hash equals the hash of `secret` (constant-time), or nil; a wrong
    /// secret for a known client counts against its failure budgets (429 once one is spent). A secret is checked
    /// whatever the budgets say: the check is one SHA-256, and 256 random bits cannot be guessed, so refusing
    /// unchecked would only lock out the genuine client.
    private func verifySecret(clientID: String, secret: String, request: HTTPRequest) async throws -> ApplicationRecord? {
        guard Self.isPlausibleIdentifier(clientID), secret.count <= ClientSecret.maxCharacters,
              let application = try await applicationIfExists(clientID: clientID) else { return nil }
        let presented = ClientSecret.hash(secret)
        if case .secretHash(let stored) = application.credential, constantTimeEquals(presented, stored) { return application }
        // The budgets decide nothing for a secret that verifies: they are read only for a failure.
        try await countFailure(try await failureBudget(.clientAuthentication(clientID: clientID), request: request), as: CIBAFailure.clientRateLimited)
        return nil
    }

    /// `private_key_jwt` (RFC 7523 §3, OIDC Core §9): `iss` = `sub` = client id, `aud` naming this authority,
    /// `exp` within `configuration.clientAssertionLimits.maxLifetime`, a `jti` never seen before, signed by a key of the client's JWKS.
    private func authenticateAssertion(_ form: FormParameters, request: HTTPRequest) async throws -> AuthenticatedClient {
        guard form["client_assertion_type"] == Self.jwtBearerAssertionType else {
            throw CIBAFailure(.invalidClient, "client_assertion_type must be \(Self.jwtBearerAssertionType)")
        }
        guard let assertion = form["client_assertion"] else { throw CIBAFailure(.invalidClient, "client_assertion is required") }
        let jws: UnverifiedJWS
        let claims: JWTClaims
        do {
            jws = try JWS.parse(assertion, options: JWSParsingOptions(maximumSize: configuration.clientAssertionLimits.maxBytes))
            claims = try JWTClaims(payload: jws.payload)
        } catch {
            throw CIBAFailure(.invalidClient, "client_assertion is not a signed JWT")
        }
        guard let clientID = claims.issuer, claims.subject == clientID, Self.isPlausibleIdentifier(clientID) else {
            throw CIBAFailure(.invalidClient, "client_assertion must have iss and sub equal to the client id")
        }
        if let formClientID = form["client_id"], formClientID != clientID {
            throw CIBAFailure(.invalidClient, "client_id does not match the client_assertion")
        }
        guard let application = try await applicationIfExists(clientID: clientID) else {
            throw CIBAFailure(.invalidClient, "client authentication failed")
        }
        // A signature verification is what a forger makes the authority spend: a spent budget refuses it unchecked.
        let budget = try await failureBudget(.clientAuthentication(clientID: clientID), request: request)
        try refuseUncheckable(budget, as: CIBAFailure.clientRateLimited)
        do {
            try await checkAssertion(jws, claims: claims, clientID: clientID, application: application)
        } catch let failure as CIBAFailure {
            try await countFailure(budget, as: CIBAFailure.clientRateLimited)
            throw failure
        }
        return AuthenticatedClient(application: application, method: .privateKeyJWT)
    }

    /// The checks of a known client's assertion: every cheap one before its one signature verification, the
    /// `jti` registered last.
    private func checkAssertion(_ jws: UnverifiedJWS, claims: JWTClaims, clientID: String, application: ApplicationRecord) async throws {
        guard case .jwks(let jwks) = application.credential else {
            throw CIBAFailure(.invalidClient, "the client is not registered for private_key_jwt")
        }
        let now = clock.now()
        do {
            try claims.validate(JWTValidation(now: now, leeway: configuration.clientAssertionLimits.leeway, requireExpiration: true))
        } catch {
            throw CIBAFailure(.invalidClient, "client_assertion is expired or not yet valid")
        }
        let audiences = (try? claims.audience()) ?? []
        guard audiences.contains(where: { acceptedAssertionAudiences.contains($0) }) else {
            throw CIBAFailure(.invalidClient, "client_assertion aud must be the issuer or the endpoint URL")
        }
        guard let expiresAt = try? claims.date("exp"), expiresAt.timeIntervalSince(now) <= configuration.clientAssertionLimits.maxLifetime else {
            throw CIBAFailure(.invalidClient, "client_assertion exp is too far in the future")
        }
        guard let jti = claims.jwtID, !jti.isEmpty, jti.count <= 256 else {
            throw CIBAFailure(.invalidClient, "client_assertion needs a jti")
        }
        do {
            try clientKeySets.verify(jws, clientID: clientID, jwks: jwks)
        } catch {
            throw CIBAFailure(.invalidClient, "client_assertion signature does not verify with the client's keys")
        }
        // The replay cache is shared with device requests and bounds its keys: remember a fixed-size digest of
        // (client id, jti), so any client id or jti fits and one client's jti never collides with another's.
        let replayKey = "client-assertion:" + Base64URL.encode(SHA256.hash(data: Array("\(clientID)\u{0}\(jti)".utf8)).bytes)
        let fresh = try await store.registerJTI(replayKey, expiresAt: expiresAt.addingTimeInterval(configuration.clientAssertionLimits.leeway))
        guard fresh else { throw CIBAFailure(.invalidClient, "client_assertion jti was already used") }
    }

    /// CIBA Core §7.1: the issuer, the token endpoint URL or the backchannel authentication endpoint URL.
    private var acceptedAssertionAudiences: Set<String> {
        [issuer, issuer + CIBAPaths.token, issuer + CIBAPaths.backchannel]
    }

    private func applicationIfExists(clientID: String) async throws -> ApplicationRecord? {
        do {
            return try await store.application(clientID: clientID)
        } catch AuthorityStoreError.notFound {
            return nil
        }
    }

    /// Percent-decoding of `application/x-www-form-urlencoded` (`+` is a space).
    private static func formDecode(_ text: Substring) -> String? {
        text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }
}
