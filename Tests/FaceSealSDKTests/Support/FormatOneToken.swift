import FaceSealCrypto
import FaceSealWire
import Foundation

/// A face token as format 1 sealed it (before format 2): one JSON body with the templates and base64url masters,
/// AES-256-GCM under HKDF-SHA256(share, tid ‖ 0 ‖ gen, "faceseal/token/v1"). Written here by hand, independently of
/// the SDK, for the tests of opening and migrating such tokens.
enum FormatOneToken {
    private struct Body: Encodable {
        var templates: [[Float]]
        var masters: [String: Base64URLBytes]
    }

    static func seal(header: FaceTokenHeader, templates: [[Float]], masters: [String: [UInt8]], share: SecretBytes) throws -> FaceSealWire.FaceTokenEnvelope {
        precondition(header.v == 1 && !header.passwordRequired)
        let salt = Array(header.tid.utf8) + [0] + withUnsafeBytes(of: UInt64(header.gen).bigEndian) { Array($0) }
        let key = try HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(secret: share), salt: salt, info: Array("faceseal/token/v1".utf8),
                                             outputByteCount: 32)
        let body = WireJSON.encode(Body(templates: templates, masters: masters.mapValues(Base64URLBytes.init)))
        let headerBytes = header.encoded()
        let box = try AES.GCM.seal(body, using: key, authenticating: headerBytes)
        return FaceSealWire.FaceTokenEnvelope(header: headerBytes, nonce: Array(box.nonce), sealed: Array(box.ciphertext + box.tag))
    }
}
