public import FaceSealCrypto
public import Foundation

/// The file vault's ``RecordSealer``: AES-256-GCM under a 32-byte key kept in its own file (mode 0600),
/// outside the vault directory, created on first use. A sealed file is `nonce (12) ‖ ciphertext ‖ tag (16)`,
/// authenticated with a fixed label so a sealed record can never be taken for another kind of file.
public struct AESRecordSealer: RecordSealer {
    /// The additional data of every sealed vault file.
    static let label = Array("faceseal/vault/v1".utf8)
    private let key: SymmetricKey

    /// Uses an existing key (tests).
    public init(key: SymmetricKey) {
        self.key = key
    }

    /// Reads the key file, or creates it (mode 0600) with a fresh random key when it does not exist.
    public init(keyFile: URL) throws(VaultError) {
        let manager = FileManager.default
        if manager.fileExists(atPath: keyFile.path) {
            let data: Data
            do {
                data = try Data(contentsOf: keyFile)
            } catch {
                throw .storageFailed("cannot read the vault key file")
            }
            guard data.count == 32 else { throw .sealFailure("the vault key file is not a 32-byte key") }
            key = SymmetricKey(data: data)
            return
        }
        var fresh = SecureRandom.bytes(count: 32)
        defer { secureZero(&fresh) }
        do {
            try manager.createDirectory(at: keyFile.deletingLastPathComponent(), withIntermediateDirectories: true,
                                        attributes: [.posixPermissions: 0o700])
        } catch {
            throw .storageFailed("cannot create the vault key directory")
        }
        guard manager.createFile(atPath: keyFile.path, contents: Data(fresh), attributes: [.posixPermissions: 0o600]) else {
            throw .storageFailed("cannot write the vault key file")
        }
        key = SymmetricKey(data: fresh)
    }

    /// Seals with a fresh nonce.
    public func seal(_ plaintext: [UInt8]) throws(VaultError) -> [UInt8] {
        do {
            return Array(try AES.GCM.seal(plaintext, using: key, authenticating: Self.label).combined)
        } catch {
            throw .sealFailure("sealing failed")
        }
    }

    /// Opens; a wrong key or a damaged file is `sealFailure`.
    public func open(_ sealed: [UInt8]) throws(VaultError) -> [UInt8] {
        guard sealed.count >= AES.GCM.nonceByteCount + AES.GCM.tagByteCount else { throw .sealFailure("the sealed file is too short") }
        do {
            let box = try AES.GCM.SealedBox(combined: sealed)
            return Array(try AES.GCM.open(box, using: key, authenticating: Self.label))
        } catch {
            throw .sealFailure("the sealed file does not open (wrong key or damaged)")
        }
    }
}

/// The file vault's ``SoftwareKeyFactory``: P-256 (OpenSSL through FaceSealCrypto); signatures are ES256's
/// raw `r ‖ s` (64 bytes), as a compact JWS carries them.
public struct P256SoftwareKeyFactory: SoftwareKeyFactory {
    /// Creates the factory.
    public init() {}

    /// A new key: the 32-byte scalar and the SEC1 uncompressed public key.
    public func generate() throws(VaultError) -> (privateKey: [UInt8], publicKey: [UInt8]) {
        let key = P256.Signing.PrivateKey()
        return (key.secretRepresentation.copyBytes(), Array(key.publicKey.x963Representation))
    }

    /// ECDSA P-256 / SHA-256 over `message`, raw `r ‖ s`.
    public func sign(_ message: [UInt8], privateKey: [UInt8]) throws(VaultError) -> [UInt8] {
        do {
            let key = try P256.Signing.PrivateKey(rawRepresentation: privateKey)
            return Array(try key.signature(for: message).rawRepresentation)
        } catch {
            throw .sealFailure("the key does not sign: \(error)")
        }
    }
}
