import Foundation
import Testing
@testable import FaceSealCrypto

/// ML-DSA-65 as JOSE `ML-DSA-65`: sign and verify compact JWS through the JOSE layer.
@Suite struct MLDSAJWSTests {
    @Test func compactJWSRoundTripAndTamper() throws {
        let key = try MLDSA65.PrivateKey(seedRepresentation: [UInt8](repeating: 0x65, count: 32))
        let payload = Array(#"{"sub":"device-1"}"#.utf8)
        let token = try JWS.sign(payload: payload, header: JWSHeader(algorithm: .mlDSA65), signer: key)
        let verified = try JWS.verify(token, verifier: key.publicKey)
        #expect(verified.payload == payload)
        // Through a JWKS: the built-in factory includes ML-DSA-65; an empty one refuses the key type.
        let jwk = try JWK(mlDSA65PublicKey: key.publicKey.rawRepresentation)
        let set = JWKSet(keys: [jwk])
        #expect(try JWS.verify(token, keySet: set).payload == payload)
        #expect(throws: JOSEError.self) { try JWS.verify(token, keySet: set, factory: JWSVerifierFactory()) }
        // A changed payload fails.
        var parts = token.split(separator: ".").map(String.init)
        parts[1] = Base64URL.encode(Array(#"{"sub":"device-2"}"#.utf8))
        #expect(throws: JOSEError.invalidSignature) { try JWS.verify(parts.joined(separator: "."), verifier: key.publicKey) }
    }
}
