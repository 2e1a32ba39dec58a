public import FaceSealCrypto
import Foundation

/// Why a face token could not be opened or sealed.
public enum FaceTokenError: Error, Equatable, Sendable {
    /// The envelope, header or a layer is malformed, or its parameters are out of bounds.
    case malformed(String)
    /// The token needs a password and none was given.
    case passwordRequired
    /// The AEAD failed: a wrong password (or a wrong server share).
    case wrongPassword
}

/// Seals and opens face tokens (SPEC §5.1). Format 2 has two AES-256-GCM layers, each with the exact header bytes
/// as additional data: the templates layer and the keys layer, under
/// `HKDF-SHA256(ikm: serverShare ‖ passwordKey?, salt: tid ‖ 0 ‖ gen (8 bytes, big-endian), info: "faceseal/token/v2/templates")`
/// and the same with `info: "faceseal/token/v2/keys"`. So a device opens the templates for the match and the masters
/// only after it. Format 1 (read only) has one body under `info: "faceseal/token/v1"`.
/// `passwordKey = scrypt(password, salt, N, r, p)` (32 bytes).
public enum FaceTokenSeal {
    /// The length of a server share.
    public static let serverShareByteCount = 32

    /// The keys of one token generation's two layers (format 1: the same key twice, for its one body).
    public struct LayerKeys: Sendable {
        /// Opens the templates layer.
        public let templates: SymmetricKey
        /// Opens the keys layer.
        public let keys: SymmetricKey
    }

    /// The password key for a header's scrypt parameters (expensive on purpose: ~100 ms at N = 2^15).
    public static func passwordKey(password: String, parameters: ScryptParameters) throws(FaceTokenError) -> SymmetricKey {
        guard parameters.isWithinLimits else { throw .malformed("scrypt parameters out of bounds") }
        do {
            return try Scrypt.deriveKey(
                password: Array(password.utf8), salt: parameters.salt.bytes,
                parameters: Scrypt.Parameters(n: 1 << UInt64(parameters.logN), r: UInt64(parameters.r), p: UInt64(parameters.p)),
                outputByteCount: 32)
        } catch {
            throw .malformed("scrypt failed")
        }
    }

    /// The layer keys of `header`'s generation; `passwordKey` is used only when the header requires a password.
    public static func layerKeys(serverShare: SecretBytes, passwordKey: SymmetricKey?, header: FaceTokenHeader) throws(FaceTokenError) -> LayerKeys {
        guard serverShare.count == serverShareByteCount else { throw .malformed("server share length") }
        var password: SymmetricKey?
        if header.passwordRequired {
            guard let passwordKey else { throw .passwordRequired }
            password = passwordKey
        }
        let ikm = SecretBytes(count: serverShare.count + (password?.secret.count ?? 0)) { out in
            let raw = UnsafeMutableRawBufferPointer(out)
            serverShare.withUnsafeBytes { raw.copyMemory(from: $0) }
            password?.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: raw[serverShare.count...]).copyMemory(from: $0) }
        }
        var salt = Array(header.tid.utf8) + [0]
        withUnsafeBytes(of: UInt64(bitPattern: Int64(header.gen)).bigEndian) { salt += $0 }
        func derive(_ info: String) throws(FaceTokenError) -> SymmetricKey {
            do {
                return try HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(secret: ikm), salt: salt, info: Array(info.utf8),
                                                  outputByteCount: 32)
            } catch {
                throw .malformed("key derivation failed")
            }
        }
        switch header.v {
        case 1:
            let body = try derive("faceseal/token/v1")
            return LayerKeys(templates: body, keys: body)
        case 2:
            return LayerKeys(templates: try derive("faceseal/token/v2/templates"), keys: try derive("faceseal/token/v2/keys"))
        default:
            throw .malformed("token format \(header.v)")
        }
    }

    /// Seals a format-2 token: `templates` into the templates layer, `masters` into the keys layer.
    public static func seal(header: FaceTokenHeader, templates: [[Float]], masters: FaceTokenMasters, serverShare: SecretBytes,
                            passwordKey: SymmetricKey?) throws(FaceTokenError) -> FaceTokenEnvelope {
        guard header.v == FaceTokenHeader.currentFormat else { throw .malformed("tokens are sealed in format \(FaceTokenHeader.currentFormat)") }
        guard header.passwordRequired == (passwordKey != nil) else { throw .passwordRequired }
        let keys = try layerKeys(serverShare: serverShare, passwordKey: passwordKey, header: header)
        let headerBytes = header.encoded()
        do {
            let templatesBox = try AES.GCM.seal(try FaceTokenTemplates.encode(templates), using: keys.templates, authenticating: headerBytes)
            let keysBox = try AES.GCM.seal(masters.encodedLayer(), using: keys.keys, authenticating: headerBytes)
            return FaceTokenEnvelope(header: headerBytes, nonce: Array(templatesBox.nonce), sealed: Array(templatesBox.ciphertext + templatesBox.tag),
                                     keysNonce: Array(keysBox.nonce), keysSealed: Array(keysBox.ciphertext + keysBox.tag))
        } catch let error as FaceTokenError {
            throw error
        } catch {
            throw .malformed("sealing failed")
        }
    }

    /// Opens the templates layer (format 1: the body, whose masters are skipped and wiped with the plaintext).
    /// A failing AEAD is `wrongPassword`.
    public static func openTemplates(_ envelope: FaceTokenEnvelope, keys: LayerKeys) throws(FaceTokenError) -> [[Float]] {
        let header = try envelope.checkedHeader()
        let plaintext = try open(nonce: envelope.nonce.bytes, sealed: envelope.sealed.bytes, key: keys.templates, header: envelope.header.bytes)
        return header.v == 1 ? try FaceTokenV1Body.templates(plaintext) : try FaceTokenTemplates.decode(plaintext)
    }

    /// Opens the keys layer (format 1: the body again); each master goes from the AEAD straight into ``SecretBytes``.
    public static func openMasters(_ envelope: FaceTokenEnvelope, keys: LayerKeys) throws(FaceTokenError) -> FaceTokenMasters {
        let header = try envelope.checkedHeader()
        guard header.v == 2, let nonce = envelope.keysNonce, let sealed = envelope.keysSealed else {
            return try FaceTokenV1Body.masters(open(nonce: envelope.nonce.bytes, sealed: envelope.sealed.bytes, key: keys.keys,
                                                    header: envelope.header.bytes))
        }
        return try FaceTokenMasters.decodeLayer(open(nonce: nonce.bytes, sealed: sealed.bytes, key: keys.keys, header: envelope.header.bytes))
    }

    private static func open(nonce: [UInt8], sealed: [UInt8], key: SymmetricKey, header: [UInt8]) throws(FaceTokenError) -> SecretBytes {
        do {
            let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: nonce), ciphertext: sealed.dropLast(AES.GCM.tagByteCount),
                                            tag: sealed.suffix(AES.GCM.tagByteCount))
            return try AES.GCM.openSecret(box, using: key, authenticating: header)
        } catch CryptoError.authenticationFailure {
            throw .wrongPassword
        } catch {
            throw .malformed("sealed layer")
        }
    }
}
