public import FaceSealCrypto
public import Foundation

/// The protection level of a device key, fixed at creation and stored with it (SPEC §6.1).
public enum KeyProtection: String, Sendable, Hashable, Codable, CaseIterable {
    /// Signs without prompting: reads and background sync.
    case ambient
    /// Every use needs the user (biometric or device credential); the only key invalidated by a
    /// biometric enrolment change.
    case userPresent = "user_present"

    /// Parses a stored protection tag. An unrecognised tag is a hard failure, never a default:
    /// the policy was baked into the key at creation and cannot be guessed.
    public init(tag: String) throws(VaultError) {
        guard let value = KeyProtection(rawValue: tag) else { throw .unknownProtectionTag(tag) }
        self = value
    }
}

/// A hardware key as the vault created it.
public struct DeviceKeyDescriptor: Sendable, Hashable, Codable {
    /// The key's id (distinct for every key, ambient and user-present alike).
    public let deviceKeyId: String
    /// Its protection level.
    public let protection: KeyProtection
    /// The public key (P-256 SEC1 uncompressed on Apple and Linux).
    public let publicKey: [UInt8]

    /// Creates a descriptor.
    public init(deviceKeyId: String, protection: KeyProtection, publicKey: [UInt8]) {
        self.deviceKeyId = deviceKeyId
        self.protection = protection
        self.publicKey = publicKey
    }
}

/// The device's secure key store: Secure Enclave on Apple platforms, a sealed file vault on Linux.
///
/// Key management is synchronous (a keychain query or a file read); only signing, which may prompt,
/// is asynchronous. The vault also stores the SDK's sealed key-record file (``KeyRecordStore``) and its sealed
/// activity file (the audit log).
public protocol KeyVault: Sendable {
    /// Creates a hardware key with the given permanent protection. `alias` names it in the store. A user-present key
    /// may need the user at creation: the Linux vault seals it under the device passphrase `presence` carries.
    func createKey(protection: KeyProtection, alias: String, presence: UserPresenceProof?) throws(VaultError) -> DeviceKeyDescriptor

    /// Deletes a hardware key; deleting a missing key is not an error.
    func deleteKey(deviceKeyId: String) throws(VaultError)

    /// Whether the key material still exists (a wiped key, or one invalidated by a biometric change, does not).
    func hasKeyMaterial(deviceKeyId: String) -> Bool

    /// A signer for the key. A user-present key's signer needs `presence` and fails with
    /// `SignKeypairError` (`.keyInvalidated` after a biometric enrolment change).
    func signer(deviceKeyId: String, presence: UserPresenceProof?) throws(VaultError) -> any DeviceRequestSigner

    /// Reads the sealed key-record file, or nil when there is none.
    func readRecordFile() throws(VaultError) -> [UInt8]?

    /// Replaces the sealed key-record file atomically.
    func writeRecordFile(_ bytes: [UInt8]) throws(VaultError)

    /// Reads the sealed activity file (the audit log), or nil when there is none.
    func readAuditFile() throws(VaultError) -> [UInt8]?

    /// Replaces the sealed activity file atomically.
    func writeAuditFile(_ bytes: [UInt8]) throws(VaultError)

    /// True when the app's own storage was reset (a reinstall) while the vault survived.
    func isFreshInstall() -> Bool

    /// Records that this installation has opened the vault.
    func markInstalled() throws(VaultError)

    /// The provider that confirms the user's presence for user-present keys.
    var userPresence: any UserPresence { get }
}

extension KeyVault {
    /// Creates a key that needs no presence at creation (an ambient key).
    public func createKey(protection: KeyProtection, alias: String) throws(VaultError) -> DeviceKeyDescriptor {
        try createKey(protection: protection, alias: alias, presence: nil)
    }
}

/// Confirms that the user is present: biometric or device credential on a phone, a passphrase
/// prompt on a terminal, a scripted answer in tests and the demo.
public protocol UserPresence: Sendable {
    /// Asks the user; throws `.userCancelled`, `.notAvailable` or `.keyInvalidated`.
    func confirm(reason: String) async throws(SignKeypairError) -> UserPresenceProof
}

/// Proof that the user was present, passed to the vault when a user-present key is created or signs.
public struct UserPresenceProof: Sendable, Hashable {
    /// When the user confirmed.
    public let confirmedAt: Date
    /// The key the device passphrase derives (the Linux file vault seals user-present keys under it); nil where
    /// secure hardware checks the user itself.
    public let passphraseKey: SymmetricKey?

    /// Creates a proof.
    public init(confirmedAt: Date, passphraseKey: SymmetricKey? = nil) {
        self.confirmedAt = confirmedAt
        self.passphraseKey = passphraseKey
    }

    /// The time only: a hash never depends on a key.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(confirmedAt)
    }
}

/// Seals and opens the key-record file. The Linux file vault will implement it with AES-256-GCM
/// (`FaceSealCrypto`) under a key kept outside the file; tests use a fake.
public protocol RecordSealer: Sendable {
    /// Seals plaintext record bytes.
    func seal(_ plaintext: [UInt8]) throws(VaultError) -> [UInt8]
    /// Opens sealed record bytes; a wrong key or damaged file throws.
    func open(_ sealed: [UInt8]) throws(VaultError) -> [UInt8]
}

/// What the vault can fail with.
public enum VaultError: Error, Sendable, Hashable {
    /// A stored protection tag is not one this SDK knows: a hard failure, never a default.
    case unknownProtectionTag(String)
    /// No key with this id.
    case keyNotFound(String)
    /// A user-present key was asked to sign without a presence proof.
    case userPresenceRequired
    /// The key-record file does not parse, described.
    case corruptRecords(String)
    /// The key-record file is larger than the limit.
    case recordsTooLarge(Int)
    /// The record file could not be opened (wrong key, damaged), described.
    case sealFailure(String)
    /// The store failed (I/O), described.
    case storageFailed(String)
}
