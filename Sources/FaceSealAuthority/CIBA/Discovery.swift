import FaceSealCrypto
import FaceSealHTTP
import FaceSealWire

/// The OpenID Provider metadata (OIDC Discovery 1.0 §3, CIBA Core §4) with FaceSeal's face-PKI fields.
struct DiscoveryDocument: Codable, Sendable, Equatable {
    var issuer: String
    /// The browser sign-in (authorization code flow with PKCE).
    var authorizationEndpoint: String
    var tokenEndpoint: String
    var jwksURI: String
    var responseTypesSupported: [String]
    var responseModesSupported: [String]
    /// RFC 8414: PKCE methods (only S256; `plain` is refused).
    var codeChallengeMethodsSupported: [String]
    /// RFC 9207: the authorization response carries `iss`.
    var authorizationResponseIssParameterSupported: Bool
    var subjectTypesSupported: [String]
    var idTokenSigningAlgValuesSupported: [String]
    var scopesSupported: [String]
    var claimsSupported: [String]
    var grantTypesSupported: [String]
    var tokenEndpointAuthMethodsSupported: [String]
    var tokenEndpointAuthSigningAlgValuesSupported: [String]
    var backchannelAuthenticationEndpoint: String
    var backchannelTokenDeliveryModesSupported: [String]
    var backchannelUserCodeParameterSupported: Bool
    /// FaceSeal: the `pki_kind` values of the backchannel endpoint.
    var pkiKindsSupported: [String]
    /// FaceSeal: the device protocol version the authority speaks.
    var protocolVersion: Int
    /// FaceSeal: the lowest device protocol a ceremony accepts.
    var ceremonyMinimumProtocolVersion: Int

    enum CodingKeys: String, CodingKey {
        case issuer
        case authorizationEndpoint = "authorization_endpoint"
        case tokenEndpoint = "token_endpoint"
        case jwksURI = "jwks_uri"
        case responseTypesSupported = "response_types_supported"
        case responseModesSupported = "response_modes_supported"
        case codeChallengeMethodsSupported = "code_challenge_methods_supported"
        case authorizationResponseIssParameterSupported = "authorization_response_iss_parameter_supported"
        case subjectTypesSupported = "subject_types_supported"
        case idTokenSigningAlgValuesSupported = "id_token_signing_alg_values_supported"
        case scopesSupported = "scopes_supported"
        case claimsSupported = "claims_supported"
        case grantTypesSupported = "grant_types_supported"
        case tokenEndpointAuthMethodsSupported = "token_endpoint_auth_methods_supported"
        case tokenEndpointAuthSigningAlgValuesSupported = "token_endpoint_auth_signing_alg_values_supported"
        case backchannelAuthenticationEndpoint = "backchannel_authentication_endpoint"
        case backchannelTokenDeliveryModesSupported = "backchannel_token_delivery_modes_supported"
        case backchannelUserCodeParameterSupported = "backchannel_user_code_parameter_supported"
        case pkiKindsSupported = "faceseal_pki_kinds_supported"
        case protocolVersion = "faceseal_protocol_version"
        case ceremonyMinimumProtocolVersion = "faceseal_ceremony_minimum_protocol_version"
    }
}

extension Authority {
    /// The metadata of this authority.
    var discoveryDocument: DiscoveryDocument {
        let algorithms = IDTokenSigningKey.algorithms.map(\.rawValue)
        return DiscoveryDocument(
            issuer: issuer,
            authorizationEndpoint: issuer + CIBAPaths.authorize,
            tokenEndpoint: issuer + CIBAPaths.token,
            jwksURI: issuer + CIBAPaths.jwks,
            // The browser sign-in answers a code at the redirect URI; CIBA answers nothing there.
            responseTypesSupported: [AuthorizationCodeNames.responseType],
            responseModesSupported: ["query"],
            codeChallengeMethodsSupported: [AuthorizationCodeNames.challengeMethod],
            authorizationResponseIssParameterSupported: true,
            subjectTypesSupported: ["pairwise"],
            idTokenSigningAlgValuesSupported: algorithms,
            scopesSupported: ["openid"],
            claimsSupported: ["iss", "sub", "aud", "exp", "iat", "jti", "auth_time", "amr", AuthorizationCodeNames.nonceClaim, CIBANames.authReqIdClaim,
                              CIBANames.pkiKindClaim, CIBANames.receiptClaim],
            grantTypesSupported: [AuthorizationCodeNames.grantType, CIBANames.grantType],
            tokenEndpointAuthMethodsSupported: ClientAuthenticationMethod.allCases.map(\.rawValue),
            tokenEndpointAuthSigningAlgValuesSupported: algorithms,
            backchannelAuthenticationEndpoint: issuer + CIBAPaths.backchannel,
            backchannelTokenDeliveryModesSupported: DeliveryMode.allCases.map(\.rawValue),
            backchannelUserCodeParameterSupported: false,
            pkiKindsSupported: PKIKind.allCases.map(\.rawValue),
            protocolVersion: ProtocolVersion.current,
            ceremonyMinimumProtocolVersion: ProtocolVersion.ceremonyMinimum
        )
    }

    func discoveryResponse() throws -> HTTPResponse {
        try HTTPResponse.json(discoveryDocument, headers: ["Cache-Control": "public, max-age=300"])
    }

    /// `/jwks`: every ID-token public key, retired ones included.
    func jwksResponse() async throws -> HTTPResponse {
        let ring = try await idTokenKeyRing()
        return HTTPResponse(jsonBytes: [UInt8](ring.published.jsonData), headers: ["Cache-Control": "public, max-age=300"])
    }
}
