import FaceSealCrypto
import FaceSealWire
import Foundation

/// How the authority keeps face tokens (SPEC §5.1): the envelope as the device sent it, and the server share
/// encrypted (AES-256-GCM) under the share-wrapping key derived from the master key, in its own column. The share's box is bound to the token's
/// subject, id and generation (its additional data), so a share cannot be moved onto another token row. The share
/// goes from the request straight into that box and from the box straight into the download: only ever in `SecretBytes`.
///
/// The stored sealed body is `nonce ‖ sealed` for format 1 and `nonce ‖ len(sealed) (4 bytes, big-endian) ‖ sealed ‖
/// keys_nonce ‖ keys_sealed` for format 2; the stored header says which.
enum FaceTokenCustody {
    /// Bytes of a server share.
    static let shareByteCount = 32

    /// The additional data binding a share to one token generation.
    static func shareAAD(subject: String, tokenID: String, generation: Int64) -> [UInt8] {
        var aad = Array("faceseal/server-share/v1".utf8) + [0]
        aad += Array(subject.utf8) + [0] + Array(tokenID.utf8) + [0]
        aad += withUnsafeBytes(of: UInt64(bitPattern: generation).bigEndian) { Array($0) }
        return aad
    }

    /// Bytes of a password verifier (an Ed25519 public key).
    static let verifierByteCount = 32

    /// The additional data binding a password verifier to one token (its id, not a generation: a rotation without a
    /// verifier keeps the stored one).
    static func verifierAAD(subject: String, tokenID: String) -> [UInt8] {
        Array("faceseal/password-verifier/v1".utf8) + [0] + Array(subject.utf8) + [0] + Array(tokenID.utf8)
    }

    /// An uploaded password verifier, sealed like the share (a database thief cannot guess passwords against it).
    static func sealVerifier(_ verifier: [UInt8], subject: String, tokenID: String, wrappingKey: SymmetricKey) throws -> [UInt8] {
        guard verifier.count == verifierByteCount, (try? Curve25519.Signing.PublicKey(rawRepresentation: verifier)) != nil else {
            throw DeviceFailure.invalidRequest("password_verifier must be an Ed25519 public key")
        }
        do {
            return Array(try AES.GCM.seal(verifier, using: wrappingKey, authenticating: verifierAAD(subject: subject, tokenID: tokenID)).combined)
        } catch {
            throw DeviceFailure(.serverError, "verifier encryption failed")
        }
    }

    /// The stored token's password verifier, or nil when it has none.
    static func verifier(of token: FaceTokenRecord, wrappingKey: SymmetricKey) throws -> Curve25519.Signing.PublicKey? {
        guard let sealed = token.encryptedPasswordVerifier else { return nil }
        do {
            let box = try AES.GCM.SealedBox(combined: sealed)
            let raw = try AES.GCM.open(box, using: wrappingKey, authenticating: verifierAAD(subject: token.subject, tokenID: token.tokenID))
            return try Curve25519.Signing.PublicKey(rawRepresentation: raw)
        } catch {
            throw DeviceFailure(.serverError, "stored verifier unreadable")
        }
    }

    /// A record for an uploaded token envelope (checked by ``uploadedHeader(of:)``) and its share.
    static func record(envelope: FaceTokenEnvelope, header: FaceTokenHeader, subject: String, serverShare: SecretBytes,
                       passwordVerifier: [UInt8]? = nil, wrappingKey: SymmetricKey) throws -> FaceTokenRecord {
        guard passwordVerifier == nil || header.passwordRequired else {
            throw DeviceFailure.invalidRequest("password_verifier belongs to a password-protected token")
        }
        let sealedVerifier = try passwordVerifier.map {
            try sealVerifier($0, subject: subject, tokenID: header.tid, wrappingKey: wrappingKey)
        }
        guard serverShare.count == shareByteCount else {
            throw DeviceFailure.invalidRequest("server_share must be \(shareByteCount) bytes")
        }
        let generation = Int64(header.gen)
        let aad = shareAAD(subject: subject, tokenID: header.tid, generation: generation)
        let box: AES.GCM.SealedBox
        do {
            box = try AES.GCM.seal(serverShare, using: wrappingKey, authenticating: aad)
        } catch {
            throw DeviceFailure(.serverError, "share encryption failed")
        }
        var body = envelope.nonce.bytes
        if let keysNonce = envelope.keysNonce, let keysSealed = envelope.keysSealed {
            body += withUnsafeBytes(of: UInt32(envelope.sealed.bytes.count).bigEndian) { Array($0) }
            body += envelope.sealed.bytes + keysNonce.bytes + keysSealed.bytes
        } else {
            body += envelope.sealed.bytes
        }
        return FaceTokenRecord(subject: subject, tokenID: header.tid, generation: generation, headerJSON: envelope.header.bytes,
                               sealedBody: body, encryptedServerShare: Array(box.combined), encryptedPasswordVerifier: sealedVerifier)
    }

    /// The envelope and the decrypted share of a stored token, as a download.
    static func download(_ token: FaceTokenRecord, wrappingKey: SymmetricKey) throws -> FaceTokenDownload {
        let aad = shareAAD(subject: token.subject, tokenID: token.tokenID, generation: token.generation)
        let share: SecretBytes
        do {
            let box = try AES.GCM.SealedBox(combined: token.encryptedServerShare)
            share = try AES.GCM.openSecret(box, using: wrappingKey, authenticating: aad)
        } catch {
            throw DeviceFailure(.serverError, "stored share unreadable")
        }
        return FaceTokenDownload(token: try envelope(token), serverShare: share)
    }

    /// The envelope of a stored token, in the layout its header's format names.
    static func envelope(_ token: FaceTokenRecord) throws -> FaceTokenEnvelope {
        let unreadable = DeviceFailure(.serverError, "stored token unreadable")
        guard let header = try? FaceTokenHeader.decode(token.headerJSON) else { throw unreadable }
        let body = token.sealedBody
        let nonceCount = AES.GCM.nonceByteCount
        guard body.count > nonceCount else { throw unreadable }
        let nonce = Array(body.prefix(nonceCount))
        guard header.v == 2 else {
            return FaceTokenEnvelope(header: token.headerJSON, nonce: nonce, sealed: Array(body.dropFirst(nonceCount)))
        }
        guard body.count >= nonceCount + 4 else { throw unreadable }
        let length = body[nonceCount..<(nonceCount + 4)].reduce(0) { $0 << 8 | Int($1) }
        let keysStart = nonceCount + 4 + length
        guard body.count > keysStart + nonceCount else { throw unreadable }
        return FaceTokenEnvelope(header: token.headerJSON, nonce: nonce, sealed: Array(body[(nonceCount + 4)..<keysStart]),
                                 keysNonce: Array(body[keysStart..<(keysStart + nonceCount)]),
                                 keysSealed: Array(body[(keysStart + nonceCount)...]))
    }

    /// The header of a token a device uploads (a first token or a rotation): always the current format, with layers
    /// that fit it. A stored format-1 token is only ever read; its next rotation stores format 2.
    static func uploadedHeader(of envelope: FaceTokenEnvelope) throws -> FaceTokenHeader {
        let header: FaceTokenHeader
        do {
            header = try envelope.checkedHeader()
        } catch {
            throw DeviceFailure.invalidRequest("the token is malformed: \(error)")
        }
        guard header.v == FaceTokenHeader.currentFormat else {
            throw DeviceFailure.invalidRequest("a token is uploaded in format \(FaceTokenHeader.currentFormat)")
        }
        return header
    }
}
