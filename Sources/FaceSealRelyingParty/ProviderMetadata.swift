public import Foundation
import FaceSealCrypto
import FaceSealWire

/// The parts of the authority's discovery document (OIDC Discovery 1.0) a relying party uses.
public struct ProviderMetadata: Sendable, Equatable, Decodable {
    /// The issuer identifier; must equal the configured issuer exactly.
    public var issuer: String
    /// The authorization endpoint of the browser sign-in (absent at a CIBA-only authority).
    public var authorizationEndpoint: URL?
    /// The token endpoint.
    public var tokenEndpoint: URL
    /// The CIBA backchannel authentication endpoint.
    public var backchannelAuthenticationEndpoint: URL
    /// The JWKS with the ID-token keys.
    public var jwksURI: URL
    /// The grant types offered; must include the CIBA grant.
    public var grantTypesSupported: [String]?
    /// The client authentication methods offered.
    public var tokenEndpointAuthMethodsSupported: [String]?
    /// Poll and/or ping.
    public var backchannelTokenDeliveryModesSupported: [String]?

    enum CodingKeys: String, CodingKey {
        case issuer
        case authorizationEndpoint = "authorization_endpoint"
        case tokenEndpoint = "token_endpoint"
        case backchannelAuthenticationEndpoint = "backchannel_authentication_endpoint"
        case jwksURI = "jwks_uri"
        case grantTypesSupported = "grant_types_supported"
        case tokenEndpointAuthMethodsSupported = "token_endpoint_auth_methods_supported"
        case backchannelTokenDeliveryModesSupported = "backchannel_token_delivery_modes_supported"
    }

    /// The largest discovery document read.
    public static let maxBytes = 64 * 1024

    /// Parses and checks a discovery document for `expectedIssuer` and this relying party's needs.
    public static func parse(_ bytes: [UInt8], expectedIssuer: String, authenticationMethod: String,
                             mode: TokenDeliveryMode) throws(RelyingPartyError) -> ProviderMetadata {
        guard bytes.count <= maxBytes else { throw .discovery("discovery document exceeds \(maxBytes) bytes") }
        let metadata: ProviderMetadata
        do {
            metadata = try JSONDecoder().decode(ProviderMetadata.self, from: Data(bytes))
        } catch {
            throw .discovery("discovery document is malformed: \(error)")
        }
        // OIDC Discovery §4.3: the issuer must be exactly the one the document was fetched for.
        guard metadata.issuer == expectedIssuer else {
            throw .discovery("issuer \(metadata.issuer) is not the configured \(expectedIssuer)")
        }
        for url in [metadata.tokenEndpoint, metadata.backchannelAuthenticationEndpoint, metadata.jwksURI] + [metadata.authorizationEndpoint].compactMap({ $0 }) {
            guard let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http", url.host != nil else {
                throw .discovery("endpoint \(url.absoluteString) is not an http(s) URL")
            }
        }
        if let grants = metadata.grantTypesSupported, !grants.contains(CIBANames.grantType) {
            throw .discovery("the authority does not offer the CIBA grant")
        }
        if let methods = metadata.tokenEndpointAuthMethodsSupported, !methods.contains(authenticationMethod) {
            throw .discovery("the authority does not offer \(authenticationMethod)")
        }
        if let modes = metadata.backchannelTokenDeliveryModesSupported, !modes.contains(mode.rawValue) {
            throw .discovery("the authority does not offer \(mode.rawValue) mode")
        }
        return metadata
    }
}
