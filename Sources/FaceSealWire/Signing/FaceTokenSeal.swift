import FaceSealCrypto
import Foundation

/// Why a face token could not be opened or sealed.
public enum FaceTokenError: Error, Equatable, Sendable {
    /// The envelope or header is malformed, or its parameters are out of bounds.
    case malformed(String)
    /// The token needs a password and none was given.
    case passwordRequired
    /// The AEAD failed: a wrong password (or a wrong server share).
    case wrongPassword
}

/// Seals and opens face tokens (SPEC §5.1): AES-256-GCM under
/// `HKDF-SHA256(ikm: serverShare ‖ passwordKey?, salt: tid ‖ 0 ‖ gen (8 bytes, big-endian), info: "faceseal/token/v1")`,
/// with the exact header bytes as additional data; `passwordKey = scrypt(password, salt, N, r, p)` (32 bytes).
public enum FaceTokenSeal {
    /// The length of a server share.
    public static let serverShareByteCount = 32

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

    /// The sealing key of a token generation.
    public static func sealingKey(serverShare: [UInt8], passwordKey: SymmetricKey?, tid: String, gen: Int) throws(FaceTokenError) -> SymmetricKey {
        guard serverShare.count == serverShareByteCount else { throw .malformed("server share length") }
        var ikm = serverShare
        if let passwordKey { ikm += passwordKey.secret.copyBytes() }
        defer { secureZero(&ikm) }
        var salt = Array(tid.utf8) + [0]
        withUnsafeBytes(of: UInt64(gen).bigEndian) { salt += $0 }
        do {
            return try HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: ikm), salt: salt,
                                      info: Array("faceseal/token/v1".utf8), outputByteCount: 32)
        } catch {
            throw .malformed("key derivation failed")
        }
    }

    /// Seals `body` under `header` (whose exact encoding becomes the AAD).
    public static func seal(header: FaceTokenHeader, body: FaceTokenBody, serverShare: [UInt8],
                            passwordKey: SymmetricKey?) throws(FaceTokenError) -> FaceTokenEnvelope {
        guard header.passwordRequired == (passwordKey != nil) else { throw .passwordRequired }
        let key = try sealingKey(serverShare: serverShare, passwordKey: passwordKey, tid: header.tid, gen: header.gen)
        let headerBytes = header.encoded()
        var plaintext = body.encoded()
        defer { secureZero(&plaintext) }
        do {
            let box = try AES.GCM.seal(plaintext, using: key, authenticating: headerBytes)
            return FaceTokenEnvelope(header: headerBytes, nonce: Array(box.nonce), sealed: Array(box.ciphertext) + Array(box.tag))
        } catch {
            throw .malformed("sealing failed")
        }
    }

    /// Opens a token with the server share and, when the header says so, the password key.
    public static func open(_ envelope: FaceTokenEnvelope, serverShare: [UInt8],
                            passwordKey: SymmetricKey?) throws(FaceTokenError) -> (header: FaceTokenHeader, body: FaceTokenBody) {
        let header: FaceTokenHeader
        do {
            header = try envelope.parsedHeader()
        } catch {
            throw .malformed("header")
        }
        if header.passwordRequired && passwordKey == nil { throw .passwordRequired }
        let key = try sealingKey(serverShare: serverShare, passwordKey: header.passwordRequired ? passwordKey : nil,
                                 tid: header.tid, gen: header.gen)
        let sealed = envelope.sealed.bytes
        guard sealed.count >= AES.GCM.tagByteCount else { throw .malformed("sealed body too short") }
        let secret: SecretBytes
        do {
            let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: envelope.nonce.bytes),
                                            ciphertext: sealed.dropLast(AES.GCM.tagByteCount),
                                            tag: sealed.suffix(AES.GCM.tagByteCount))
            secret = try AES.GCM.openSecret(box, using: key, authenticating: envelope.header.bytes)
        } catch CryptoError.authenticationFailure {
            throw .wrongPassword
        } catch {
            throw .malformed("sealed body")
        }
        do {
            let body = try secret.withUnsafeBytes { raw throws(WireError) in
                try FaceTokenBody.decode(UnsafeRawBufferPointer(raw))
            }
            return (header, body)
        } catch {
            throw .malformed("body")
        }
    }
}
