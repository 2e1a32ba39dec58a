import FaceSealCrypto
public import Foundation

/// Generates and uses the software device keys of the Linux file vault (P-256 via OpenSSL in `FaceSealCrypto`;
/// tests pass a fake).
public protocol SoftwareKeyFactory: Sendable {
    /// A new key pair: the private key's bytes and the public key (SEC1 uncompressed).
    func generate() throws(VaultError) -> (privateKey: [UInt8], publicKey: [UInt8])
    /// Signs `message` with `privateKey`.
    func sign(_ message: [UInt8], privateKey: [UInt8]) throws(VaultError) -> [UInt8]
}

/// The Linux vault (SPEC §6.1): one directory (mode 0700) holding one sealed file per device key,
/// the sealed key-record file and the sealed activity file, each written atomically with mode 0600.
///
/// Every file is sealed through the ``RecordSealer`` seam (AES-256-GCM under `vault.key`, kept outside the
/// directory). A user-present key's private key is sealed once more, under the key the device passphrase derives
/// (``DevicePassphrase``), which only a ``UserPresenceProof`` carries: whoever reads the device directory and
/// `vault.key` can sign with the ambient keys, not as user-present.
/// Each key file stores its protection tag; an unknown tag is a hard failure. A user-present key
/// also stores the presence enrolment epoch at its creation and is invalidated when the epoch
/// changes (the Linux analogue of a biometric enrolment change); the ambient key never is.
/// A reinstall is detected by the installation marker, which lives in the app's own data
/// directory while the vault directory survives.
public final class FileKeyVault: KeyVault {
    /// The largest key file accepted.
    public static let maximumKeyFileSize = 64 * 1_024

    private let directory: URL
    private let installationMarker: URL
    private let factory: any SoftwareKeyFactory
    private let sealer: any RecordSealer
    private let presence: any UserPresence
    private let enrolmentEpoch: @Sendable () -> String

    /// The provider asked before a user-present key signs.
    public var userPresence: any UserPresence { presence }

    /// Opens (creating if needed) the vault directory.
    public init(
        directory: URL, installationMarker: URL, factory: any SoftwareKeyFactory, sealer: any RecordSealer,
        userPresence: any UserPresence, enrolmentEpoch: @escaping @Sendable () -> String
    ) throws(VaultError) {
        self.directory = directory
        self.installationMarker = installationMarker
        self.factory = factory
        self.sealer = sealer
        self.presence = userPresence
        self.enrolmentEpoch = enrolmentEpoch
        do {
            try FileManager.default.createDirectory(at: keysDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: directory.path)
        } catch {
            throw .storageFailed("cannot create the vault directory: \(error.localizedDescription)")
        }
    }

    private var keysDirectory: URL { directory.appendingPathComponent("keys", isDirectory: true) }
    private var recordFile: URL { directory.appendingPathComponent("records.sealed") }
    private var auditFile: URL { directory.appendingPathComponent("audit.sealed") }

    // MARK: Key files

    /// Version 2: a user-present key holds `sealedPrivateKey` (nonce ‖ ciphertext ‖ tag under the passphrase key,
    /// ``userPresentLabel`` ‖ id as associated data) and no `privateKey`. Version 1 files (from before the device
    /// passphrase) are re-sealed at the user-present key's next use.
    private struct KeyFile: Codable {
        var v: Int
        var id: String
        var protection: String
        var epoch: String?
        var publicKey: [UInt8]
        var privateKey: [UInt8]?
        var sealedPrivateKey: [UInt8]?
    }

    static let userPresentLabel = Array("faceseal/vault/user-present/v1".utf8)

    /// Only ids the vault itself makes are accepted, so an id can never name a path outside the vault.
    static func isValidKeyId(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 64 && id.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x61 && byte <= 0x66) || byte == 0x2D
        }
    }

    private func keyPath(_ id: String) throws(VaultError) -> URL {
        guard Self.isValidKeyId(id) else { throw .keyNotFound(id) }
        return keysDirectory.appendingPathComponent("\(id).key")
    }

    /// Generates a key pair and stores it sealed with its permanent protection tag (and, for a user-present key, the
    /// current presence enrolment epoch and the private key sealed under `presence`'s passphrase key, so creating one
    /// needs the user). `alias` is not stored: ids are random.
    public func createKey(protection: KeyProtection, alias: String, presence: UserPresenceProof?) throws(VaultError) -> DeviceKeyDescriptor {
        var passphraseKey: SymmetricKey?
        if protection == .userPresent {
            guard let key = presence?.passphraseKey else { throw .userPresenceRequired }
            passphraseKey = key
        }
        let pair = try factory.generate()
        let id = Self.newKeyId()
        var file = KeyFile(v: 2, id: id, protection: protection.rawValue, epoch: protection == .userPresent ? enrolmentEpoch() : nil,
                           publicKey: pair.publicKey, privateKey: pair.privateKey, sealedPrivateKey: nil)
        if let passphraseKey { file = try Self.sealed(file, under: passphraseKey) }
        try store(file)
        return DeviceKeyDescriptor(deviceKeyId: id, protection: protection, publicKey: pair.publicKey)
    }

    private func store(_ file: KeyFile) throws(VaultError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var plaintext: [UInt8] = []
        do {
            plaintext = Array(try encoder.encode(file))
        } catch {
            throw .storageFailed("key file does not encode")
        }
        defer { secureZero(&plaintext) }
        try Self.writeAtomically(try sealer.seal(plaintext), to: try keyPath(file.id))
    }

    /// The file with its private key sealed under the passphrase key instead of in the clear.
    private static func sealed(_ file: KeyFile, under key: SymmetricKey) throws(VaultError) -> KeyFile {
        guard let privateKey = file.privateKey else { return file }
        var next = file
        do {
            next.sealedPrivateKey = Array(try AES.GCM.seal(privateKey, using: key, authenticating: userPresentLabel + Array(file.id.utf8)).combined)
        } catch {
            throw .sealFailure("the user-present key could not be sealed")
        }
        next.privateKey = nil
        next.v = 2
        return next
    }

    /// Deletes the key's file; a missing key is not an error.
    public func deleteKey(deviceKeyId: String) throws(VaultError) {
        let path = try keyPath(deviceKeyId)
        guard FileManager.default.fileExists(atPath: path.path) else { return }
        do {
            try FileManager.default.removeItem(at: path)
        } catch {
            throw .storageFailed("cannot delete key \(deviceKeyId)")
        }
    }

    /// Whether the key's file exists and, for a user-present key, was made under the current presence enrolment: an
    /// invalidated key is as gone as a deleted one (the Secure Enclave deletes it), since it can never sign again.
    public func hasKeyMaterial(deviceKeyId: String) -> Bool {
        guard let file = try? loadKeyFile(deviceKeyId) else { return false }
        return file.protection != KeyProtection.userPresent.rawValue || file.epoch == enrolmentEpoch()
    }

    /// A signer for the key; a user-present key needs `presence` with its passphrase key (a version-1 key file is
    /// re-sealed under it here).
    public func signer(deviceKeyId: String, presence: UserPresenceProof?) throws(VaultError) -> any DeviceRequestSigner {
        let file = try loadKeyFile(deviceKeyId)
        let protection = try KeyProtection(tag: file.protection)
        guard protection == .userPresent else { return FileVaultSigner(vault: self, deviceKeyId: deviceKeyId, protection: protection, passphraseKey: nil) }
        guard let passphraseKey = presence?.passphraseKey else { throw .userPresenceRequired }
        if file.sealedPrivateKey == nil { try store(try Self.sealed(file, under: passphraseKey)) }
        return FileVaultSigner(vault: self, deviceKeyId: deviceKeyId, protection: protection, passphraseKey: passphraseKey)
    }

    fileprivate func sign(_ message: [UInt8], deviceKeyId: String, passphraseKey: SymmetricKey?) throws(SignKeypairError) -> [UInt8] {
        let file: KeyFile
        let protection: KeyProtection
        do {
            file = try loadKeyFile(deviceKeyId)
            protection = try KeyProtection(tag: file.protection)
        } catch .keyNotFound {
            throw SignKeypairError(code: .keyInvalidated, message: "the key no longer exists")
        } catch {
            throw SignKeypairError(code: .notAvailable, message: String(describing: error))
        }
        if protection == .userPresent && file.epoch != enrolmentEpoch() {
            throw SignKeypairError(code: .keyInvalidated, message: "the presence enrolment changed")
        }
        var privateKey = try Self.privateKey(of: file, protection: protection, passphraseKey: passphraseKey)
        defer { secureZero(&privateKey) }
        do {
            return try factory.sign(message, privateKey: privateKey)
        } catch {
            throw SignKeypairError(code: .notAvailable, message: String(describing: error))
        }
    }

    /// The private key: in the clear for an ambient key, opened with the passphrase key for a user-present one. A key
    /// that does not open stays as it is: a wrong passphrase never removes a key.
    private static func privateKey(of file: KeyFile, protection: KeyProtection, passphraseKey: SymmetricKey?) throws(SignKeypairError) -> [UInt8] {
        guard protection == .userPresent else {
            guard let privateKey = file.privateKey else { throw SignKeypairError(code: .notAvailable, message: "the key file holds no key") }
            return privateKey
        }
        guard let passphraseKey, let sealed = file.sealedPrivateKey else {
            throw SignKeypairError(code: .notAvailable, message: "the user-present key needs the device passphrase")
        }
        do {
            let box = try AES.GCM.SealedBox(combined: sealed)
            return try AES.GCM.openSecret(box, using: passphraseKey, authenticating: userPresentLabel + Array(file.id.utf8)).copyBytes()
        } catch {
            throw SignKeypairError(code: .notAvailable, message: "the device passphrase does not open this key")
        }
    }

    private func loadKeyFile(_ id: String) throws(VaultError) -> KeyFile {
        let path = try keyPath(id)
        guard let sealed = try Self.read(path, limit: Self.maximumKeyFileSize) else { throw .keyNotFound(id) }
        let file: KeyFile
        do {
            file = try JSONDecoder().decode(KeyFile.self, from: Data(try sealer.open(sealed)))
        } catch let error as VaultError {
            throw error
        } catch {
            throw .corruptRecords("key file \(id) does not parse")
        }
        guard (1...2).contains(file.v), file.id == id else { throw .corruptRecords("key file \(id) is not this key") }
        let protection = try KeyProtection(tag: file.protection)
        // An ambient key is in the clear under vault.key; a version-2 user-present key only under the passphrase.
        let wellFormed = switch (protection, file.v) {
        case (.ambient, _): file.privateKey != nil && file.sealedPrivateKey == nil
        case (.userPresent, 1): file.privateKey != nil && file.sealedPrivateKey == nil
        case (.userPresent, _): file.privateKey == nil && file.sealedPrivateKey != nil
        }
        guard wellFormed else { throw .corruptRecords("key file \(id) does not fit its protection") }
        return file
    }

    // MARK: Records and installation

    /// Reads the sealed record file, or nil when there is none.
    public func readRecordFile() throws(VaultError) -> [UInt8]? {
        try Self.read(recordFile, limit: KeyRecordCodec.maximumSize + 4_096)
    }

    /// Replaces the sealed record file atomically (mode 0600).
    public func writeRecordFile(_ bytes: [UInt8]) throws(VaultError) {
        try Self.writeAtomically(bytes, to: recordFile)
    }

    /// Reads the sealed activity file, or nil when there is none.
    public func readAuditFile() throws(VaultError) -> [UInt8]? {
        try Self.read(auditFile, limit: ActivityFile.maximumSize + 4_096)
    }

    /// Replaces the sealed activity file atomically (mode 0600).
    public func writeAuditFile(_ bytes: [UInt8]) throws(VaultError) {
        try Self.writeAtomically(bytes, to: auditFile)
    }

    /// True when records exist but the app's installation marker does not (a reinstall).
    public func isFreshInstall() -> Bool {
        !FileManager.default.fileExists(atPath: installationMarker.path) && FileManager.default.fileExists(atPath: recordFile.path)
    }

    /// Writes the installation marker.
    public func markInstalled() throws(VaultError) {
        try Self.writeAtomically(Array("faceseal-installed\n".utf8), to: installationMarker)
    }

    // MARK: File helpers

    private static func newKeyId() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    private static func read(_ url: URL, limit: Int) throws(VaultError) -> [UInt8]? {
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        let data: Data
        do {
            let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
            if let size = attributes[.size] as? Int, size > limit { throw VaultError.recordsTooLarge(size) }
            data = try Data(contentsOf: url)
        } catch let error as VaultError {
            throw error
        } catch {
            throw .storageFailed("cannot read \(url.lastPathComponent)")
        }
        guard data.count <= limit else { throw .recordsTooLarge(data.count) }
        return Array(data)
    }

    /// Writes to a temporary file created with mode 0600 in the same directory, then renames it
    /// over the target, so a crash leaves the old file or the new one, never a torn one.
    private static func writeAtomically(_ bytes: [UInt8], to url: URL) throws(VaultError) {
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(newKeyId()).tmp")
        guard FileManager.default.createFile(atPath: temporary.path, contents: Data(bytes), attributes: [.posixPermissions: 0o600]) else {
            throw .storageFailed("cannot write \(url.lastPathComponent)")
        }
        guard rename(temporary.path, url.path) == 0 else {
            try? FileManager.default.removeItem(at: temporary)
            throw .storageFailed("cannot replace \(url.lastPathComponent)")
        }
    }
}

/// Signs with a file-vault key, re-reading the sealed key file for each signature; a user-present signer holds the
/// passphrase key of the presence proof it was made with.
private struct FileVaultSigner: DeviceRequestSigner {
    let vault: FileKeyVault
    let deviceKeyId: String
    let protection: KeyProtection
    let passphraseKey: SymmetricKey?

    func sign(_ message: [UInt8]) async throws(SignKeypairError) -> [UInt8] {
        try vault.sign(message, deviceKeyId: deviceKeyId, passphraseKey: passphraseKey)
    }
}
