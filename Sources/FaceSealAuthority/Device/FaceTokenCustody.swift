import FaceSealCrypto
import FaceSealWire
import Foundation

/// How the authority keeps face tokens (SPEC §5.1): the envelope as the device sent it, and the server share
/// encrypted under the master key (AES-256-GCM) in its own column. The share's box is bound to the token's
/// subject, id and generation (its additional data), so a share cannot be moved onto another token row.
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

    /// A record for a token envelope and its share. The stored sealed body is the GCM nonce followed by the box.
    static func record(envelope: FaceTokenEnvelope, header: FaceTokenHeader, subject: String, serverShare: [UInt8],
                       masterKey: SymmetricKey) throws -> FaceTokenRecord {
        guard envelope.nonce.bytes.count == AES.GCM.nonceByteCount else {
            throw DeviceFailure.invalidRequest("token nonce must be \(AES.GCM.nonceByteCount) bytes")
        }
        guard envelope.sealed.bytes.count > AES.GCM.tagByteCount else {
            throw DeviceFailure.invalidRequest("token box is shorter than its tag")
        }
        guard serverShare.count == shareByteCount else {
            throw DeviceFailure.invalidRequest("server_share must be \(shareByteCount) bytes")
        }
        let generation = Int64(header.gen)
        let aad = shareAAD(subject: subject, tokenID: header.tid, generation: generation)
        let box: AES.GCM.SealedBox
        do {
            box = try AES.GCM.seal(serverShare, using: masterKey, authenticating: aad)
        } catch {
            throw DeviceFailure(.serverError, "share encryption failed")
        }
        return FaceTokenRecord(subject: subject, tokenID: header.tid, generation: generation, headerJSON: envelope.header.bytes,
                               sealedBody: envelope.nonce.bytes + envelope.sealed.bytes, encryptedServerShare: Array(box.combined))
    }

    /// The envelope and the decrypted share of a stored token, as a download.
    static func download(_ token: FaceTokenRecord, masterKey: SymmetricKey) throws -> FaceTokenDownload {
        let nonceCount = AES.GCM.nonceByteCount
        guard token.sealedBody.count > nonceCount else { throw DeviceFailure(.serverError, "stored token unreadable") }
        let aad = shareAAD(subject: token.subject, tokenID: token.tokenID, generation: token.generation)
        let share: [UInt8]
        do {
            let box = try AES.GCM.SealedBox(combined: token.encryptedServerShare)
            share = Array(try AES.GCM.open(box, using: masterKey, authenticating: aad))
        } catch {
            throw DeviceFailure(.serverError, "stored share unreadable")
        }
        let envelope = FaceTokenEnvelope(header: token.headerJSON, nonce: Array(token.sealedBody.prefix(nonceCount)),
                                         sealed: Array(token.sealedBody.dropFirst(nonceCount)))
        return FaceTokenDownload(token: envelope, serverShare: share)
    }

    /// The parsed header of an uploaded token.
    static func header(of envelope: FaceTokenEnvelope) throws -> FaceTokenHeader {
        do {
            let header = try envelope.parsedHeader()
            guard header.v == 1 else { throw DeviceFailure.invalidRequest("unsupported token format \(header.v)") }
            return header
        } catch let failure as DeviceFailure {
            throw failure
        } catch {
            throw DeviceFailure.invalidRequest("token header is malformed")
        }
    }
}
