import FaceSealCrypto

extension Authority {
    /// Placeholder until authcore's `Authority+Subject.swift` is merged (same name, signature and value): the
    /// pairwise subject of a user for one application, base64url(HMAC-SHA256(K, len(client id) ‖ client id ‖
    /// subject)) with K derived from the master key.
    public func pairwiseSubject(userSubject: String, clientID: String) -> String {
        let key = (try? HKDF<SHA256>.deriveKey(inputKeyMaterial: keys.masterKey, info: Array("faceseal/pairwise-subject/v1".utf8),
                                               outputByteCount: 32)) ?? keys.masterKey
        let sector = Array(clientID.utf8)
        var message: [UInt8] = withUnsafeBytes(of: UInt32(sector.count).bigEndian) { Array($0) }
        message += sector
        message += Array(userSubject.utf8)
        return Base64URL.encode(HMAC<SHA256>.authenticationCode(for: message, using: key).bytes)
    }
}
