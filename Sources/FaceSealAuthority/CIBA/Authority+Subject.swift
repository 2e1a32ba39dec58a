import FaceSealCrypto

extension Authority {
    /// The pairwise subject identifier (OIDC Core §8.1) of a user as one application sees it: the `sub` of its ID
    /// tokens and the identity id of the enrolment response.
    ///
    /// base64url(HMAC-SHA256(K, len(sector) ‖ sector ‖ user subject)) with K derived from the master key and the
    /// sector being the application's client id (there are no redirect URIs to group clients by). Deterministic, so
    /// every process of an authority computes the same value; unlinkable across applications and irreversible
    /// without the master key. The length prefix keeps `("ab", "c")` and `("a", "bc")` apart.
    public func pairwiseSubject(userSubject: String, clientID: String) -> String {
        let sector = Array(clientID.utf8)
        var message: [UInt8] = withUnsafeBytes(of: UInt32(sector.count).bigEndian) { Array($0) }
        message += sector
        message += Array(userSubject.utf8)
        let code = HMAC<SHA256>.authenticationCode(for: message, using: keys.pairwiseKey)
        return Base64URL.encode(code.bytes)
    }
}
