import FaceSealHTTP

/// The paths of the OpenID Provider endpoints (relative to the issuer).
public enum CIBAPaths {
    /// OIDC Discovery 1.0.
    public static let discovery = "/.well-known/openid-configuration"
    /// The ID-token verification keys.
    public static let jwks = "/jwks"
    /// The CIBA backchannel authentication endpoint.
    public static let backchannel = "/backchannel"
    /// The token endpoint.
    public static let token = "/token"
    /// The authorization endpoint of the browser sign-in (the authorization code flow with PKCE).
    public static let authorize = "/authorize"
}

extension Authority {
    /// Installs discovery, JWKS, the backchannel authentication endpoint and the token endpoint.
    func installCIBARoutes(into router: inout Router) {
        router.get(CIBAPaths.discovery) { [self] _ in try discoveryResponse() }
        router.get(CIBAPaths.jwks) { [self] _ in try await jwksResponse() }
        router.post(CIBAPaths.backchannel) { [self] request in try await backchannelAuthentication(request) }
        router.post(CIBAPaths.token) { [self] request in try await tokenRequest(request) }
    }

    /// Whether `value` can name a stored record: 1–`maxBytes` bytes, no control characters (NUL in particular, which
    /// PostgreSQL text cannot hold). Anything else names nothing and is answered as unknown before any lookup.
    static func isPlausibleIdentifier(_ value: String, maxBytes: Int = 256) -> Bool {
        !value.isEmpty && value.utf8.count <= maxBytes && !value.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
    }

    /// The issuer identifier: the configured base URL without a trailing slash (endpoint URLs are built on it).
    var issuer: String {
        var issuer = configuration.issuer
        while issuer.hasSuffix("/") { issuer.removeLast() }
        return issuer
    }
}
