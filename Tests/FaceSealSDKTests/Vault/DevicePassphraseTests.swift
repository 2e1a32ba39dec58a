import FaceSealCrypto
import Foundation
import Testing
@testable import FaceSealSDK

/// The Linux vault means user presence (SPEC §6.1): user-present keys are sealed under the device passphrase, so
/// `vault.key` and the device directory alone sign as ambient only; wrong passphrases are counted and lock out, and
/// never remove a key.
@Suite struct DevicePassphraseTests {
    typealias Fixture = FileKeyVaultTests.Fixture

    /// A key file's JSON as whoever holds `vault.key` reads it (the fixture's sealer is the fake, so: in the clear).
    static func keyFile(_ f: Fixture, _ id: String) throws -> [String: Any] {
        let sealed = Array(try Data(contentsOf: f.vaultDirectory.appendingPathComponent("keys/\(id).key")))
        return try #require(try JSONSerialization.jsonObject(with: Data(try FakeSealer().open(sealed))) as? [String: Any])
    }

    @Test func aUserPresentKeyNeedsThePassphraseToBeMadeAndUsedAndTheVaultKeyAloneDoesNotHoldIt() async throws {
        let f = Fixture()
        defer { try? FileManager.default.removeItem(at: f.root) }
        let vault = try f.vault()
        #expect(throws: VaultError.userPresenceRequired) { try vault.createKey(protection: .userPresent, alias: "u") }
        #expect(throws: VaultError.userPresenceRequired) {
            try vault.createKey(protection: .userPresent, alias: "u", presence: UserPresenceProof(confirmedAt: f.clock.now()))
        }
        let proof = try await f.presence.confirm(reason: "enrol")
        let key = try vault.createKey(protection: .userPresent, alias: "u", presence: proof)
        let ambient = try vault.createKey(protection: .ambient, alias: "a")

        // Everything but the private key is readable with vault.key; the private key is sealed under the passphrase.
        let file = try Self.keyFile(f, key.deviceKeyId)
        #expect(file["v"] as? Int == 2 && file["protection"] as? String == "user_present" && file["privateKey"] == nil)
        let sealed = try #require(file["sealedPrivateKey"] as? [Int]).map(UInt8.init)
        let secret = Array(key.publicKey.dropFirst())
        let opened = try AES.GCM.open(AES.GCM.SealedBox(combined: sealed), using: try #require(proof.passphraseKey),
                                      authenticating: FileKeyVault.userPresentLabel + Array(key.deviceKeyId.utf8))
        #expect(Array(opened) == secret)
        #expect(try Self.keyFile(f, ambient.deviceKeyId)["privateKey"] != nil, "an ambient key stays under vault.key alone")

        // Signing needs the proof's passphrase key: without one it is refused, with another passphrase's it fails as
        // not available, and the key stays.
        #expect(throws: VaultError.userPresenceRequired) {
            try vault.signer(deviceKeyId: key.deviceKeyId, presence: UserPresenceProof(confirmedAt: f.clock.now()))
        }
        let stranger = UserPresenceProof(confirmedAt: f.clock.now(), passphraseKey: SymmetricKey(size: .bits256))
        await #expect(throws: SignKeypairError(code: .notAvailable, message: "the device passphrase does not open this key")) {
            try await vault.signer(deviceKeyId: key.deviceKeyId, presence: stranger).sign([1])
        }
        #expect(vault.hasKeyMaterial(deviceKeyId: key.deviceKeyId))
        #expect(try await vault.signer(deviceKeyId: key.deviceKeyId, presence: proof).sign([1]) == secret + [1])
        #expect(try await vault.signer(deviceKeyId: ambient.deviceKeyId, presence: nil).sign([2]) == Array(ambient.publicKey.dropFirst()) + [2])
        for name in ["passphrase.json", "keys/\(key.deviceKeyId).key"] {
            #expect(try f.permissions(f.vaultDirectory.appendingPathComponent(name)) == 0o600)
        }
    }

    @Test func wrongPassphrasesAreCountedAcrossProcessesLockOutAndNeverRemoveAKey() async throws {
        let f = Fixture()
        defer { try? FileManager.default.removeItem(at: f.root) }
        let vault = try f.vault()
        let proof = try f.passphrase.set("correct horse")
        let key = try vault.createKey(protection: .userPresent, alias: "u", presence: proof)
        #expect(throws: SignKeypairError(code: .notAvailable, message: "a device passphrase is already set")) { try f.passphrase.set("other one") }

        for _ in 0..<3 { #expect(try f.passphrase.unlock("wrong") == nil) }
        // Locked out: even the right passphrase is not tried, here or in another process, until the lock-out ends.
        let lockedOut = SignKeypairError(code: .notAvailable, message: "locked out after 3 wrong passphrases")
        #expect(throws: lockedOut) { try f.passphrase.unlock("correct horse") }
        let otherProcess = DevicePassphrase(directory: f.vaultDirectory, clock: f.clock, logN: 10, maximumFailures: 3, lockout: 60)
        #expect(throws: lockedOut) { try otherProcess.unlock("correct horse") }
        #expect(vault.hasKeyMaterial(deviceKeyId: key.deviceKeyId))

        f.clock.advance(61)
        let again = try #require(try f.passphrase.unlock("correct horse"))
        #expect(again.passphraseKey == proof.passphraseKey)
        _ = try await vault.signer(deviceKeyId: key.deviceKeyId, presence: again).sign([1])
        // The right passphrase reset the count: one wrong one does not lock out.
        #expect(try f.passphrase.unlock("wrong") == nil)
        #expect(try f.passphrase.unlock("correct horse") != nil)
    }

    @Test func aKeyFileFromBeforeThePassphraseIsSealedUnderItAtItsNextUse() async throws {
        let f = Fixture()
        defer { try? FileManager.default.removeItem(at: f.root) }
        let vault = try f.vault()
        let id = "0123456789abcdef0123456789abcdef"
        let v1 = #"{"epoch":"epoch-1","id":"\#(id)","privateKey":[1,2,3,4],"protection":"user_present","publicKey":[4,1,2,3,4],"v":1}"#
        try Data(try FakeSealer().seal(Array(v1.utf8))).write(to: f.vaultDirectory.appendingPathComponent("keys/\(id).key"))
        #expect(throws: VaultError.userPresenceRequired) { try vault.signer(deviceKeyId: id, presence: nil) }
        let proof = try await f.presence.confirm(reason: "use")
        #expect(try await vault.signer(deviceKeyId: id, presence: proof).sign([9]) == [1, 2, 3, 4, 9])
        let file = try Self.keyFile(f, id)
        #expect(file["v"] as? Int == 2 && file["privateKey"] == nil && file["sealedPrivateKey"] != nil)
        // A version-2 user-present file that holds its key in the clear is damaged, not trusted.
        let forged = #"{"epoch":"epoch-1","id":"\#(id)","privateKey":[1,2,3,4],"protection":"user_present","publicKey":[4,1,2,3,4],"v":2}"#
        try Data(try FakeSealer().seal(Array(forged.utf8))).write(to: f.vaultDirectory.appendingPathComponent("keys/\(id).key"))
        #expect(throws: VaultError.corruptRecords("key file \(id) does not fit its protection")) { try vault.signer(deviceKeyId: id, presence: proof) }
    }

    @Test func aTamperedPassphraseFileCannotMakeTheDeviceSpendWithoutLimit() throws {
        let f = Fixture()
        defer { try? FileManager.default.removeItem(at: f.root) }
        _ = try f.vault()
        _ = try f.passphrase.set("correct horse")
        let path = f.vaultDirectory.appendingPathComponent("passphrase.json")
        var stored = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: path)) as? [String: Any])
        stored["log_n"] = 30
        try JSONSerialization.data(withJSONObject: stored).write(to: path)
        #expect(throws: SignKeypairError(code: .notAvailable, message: "the passphrase file's scrypt parameters are out of bounds")) {
            try f.passphrase.unlock("correct horse")
        }
    }
}
