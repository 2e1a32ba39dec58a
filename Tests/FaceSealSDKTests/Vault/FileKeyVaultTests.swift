import Foundation
import Synchronization
import Testing
@testable import FaceSealSDK

/// A stand-in for the P-256 factory of `FaceSealCrypto`: "signs" by prefixing the private key.
struct FakeKeyFactory: SoftwareKeyFactory {
    func generate() throws(VaultError) -> (privateKey: [UInt8], publicKey: [UInt8]) {
        let secret = (0..<4).map { _ in UInt8.random(in: 0...255) }
        return (secret, [0x04] + secret)
    }
    func sign(_ message: [UInt8], privateKey: [UInt8]) throws(VaultError) -> [UInt8] { privateKey + message }
}

@Suite struct FileKeyVaultTests {
    final class Epoch: Sendable {
        let value = Mutex("epoch-1")
    }

    struct Fixture {
        let root: URL
        let epoch = Epoch()
        let clock = FixedClock()
        let passphrase: DevicePassphrase
        let presence: ScriptedUserPresence

        init() {
            root = FileManager.default.temporaryDirectory.appendingPathComponent("faceseal-vault-\(UUID().uuidString)")
            passphrase = DevicePassphrase(directory: root.appendingPathComponent("vault"), clock: clock, logN: 10, maximumFailures: 3, lockout: 60)
            presence = ScriptedUserPresence(clock: clock, passphrase: passphrase)
        }

        var vaultDirectory: URL { root.appendingPathComponent("vault") }
        var marker: URL { root.appendingPathComponent("app-installed") }

        func vault() throws -> FileKeyVault {
            let epoch = self.epoch
            return try FileKeyVault(
                directory: vaultDirectory, installationMarker: marker, factory: FakeKeyFactory(), sealer: FakeSealer(),
                userPresence: presence, enrolmentEpoch: { epoch.value.withLock { $0 } }
            )
        }

        func permissions(_ url: URL) throws -> Int {
            try #require(FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int)
        }
    }

    @Test func keysAreSealedPrivateFilesWithTheirProtectionAndDistinctIds() async throws {
        let f = Fixture()
        defer { try? FileManager.default.removeItem(at: f.root) }
        let vault = try f.vault()
        let ambient = try vault.createKey(protection: .ambient, alias: "a")
        let userPresent = try vault.createKey(protection: .userPresent, alias: "u", presence: try await f.presence.confirm(reason: "enrol"))
        #expect(ambient.deviceKeyId != userPresent.deviceKeyId)
        #expect(try f.permissions(f.vaultDirectory) == 0o700)
        let file = f.vaultDirectory.appendingPathComponent("keys/\(ambient.deviceKeyId).key")
        #expect(try f.permissions(file) == 0o600)
        #expect(try Data(contentsOf: file).starts(with: FakeSealer.magic))

        let signature = try await vault.signer(deviceKeyId: ambient.deviceKeyId, presence: nil).sign([9])
        #expect(signature == Array(ambient.publicKey.dropFirst()) + [9])
        #expect(throws: VaultError.userPresenceRequired) { try vault.signer(deviceKeyId: userPresent.deviceKeyId, presence: nil) }
        let proof = try await f.presence.confirm(reason: "test")
        #expect(try vault.signer(deviceKeyId: userPresent.deviceKeyId, presence: proof).protection == .userPresent)
    }

    @Test func aPresenceEnrolmentChangeInvalidatesOnlyTheUserPresentKey() async throws {
        let f = Fixture()
        defer { try? FileManager.default.removeItem(at: f.root) }
        let vault = try f.vault()
        let proof = try await f.presence.confirm(reason: "test")
        let ambient = try vault.createKey(protection: .ambient, alias: "a")
        let userPresent = try vault.createKey(protection: .userPresent, alias: "u", presence: proof)
        f.epoch.value.withLock { $0 = "epoch-2" }
        await #expect(throws: SignKeypairError(code: .keyInvalidated, message: "the presence enrolment changed")) {
            try await vault.signer(deviceKeyId: userPresent.deviceKeyId, presence: proof).sign([1])
        }
        _ = try await vault.signer(deviceKeyId: ambient.deviceKeyId, presence: nil).sign([1])
        #expect(!vault.hasKeyMaterial(deviceKeyId: userPresent.deviceKeyId), "an invalidated key is as gone as a deleted one")
        #expect(vault.hasKeyMaterial(deviceKeyId: ambient.deviceKeyId))
    }

    @Test func anUnknownProtectionTagInAKeyFileIsAHardFailure() throws {
        let f = Fixture()
        defer { try? FileManager.default.removeItem(at: f.root) }
        let vault = try f.vault()
        let key = try vault.createKey(protection: .ambient, alias: "a")
        let path = f.vaultDirectory.appendingPathComponent("keys/\(key.deviceKeyId).key")
        let plain = try FakeSealer().open(Array(try Data(contentsOf: path)))
        let tampered = String(decoding: plain, as: UTF8.self).replacingOccurrences(of: "\"ambient\"", with: "\"silent\"")
        try Data(try FakeSealer().seal(Array(tampered.utf8))).write(to: path)
        #expect(throws: VaultError.unknownProtectionTag("silent")) { try vault.signer(deviceKeyId: key.deviceKeyId, presence: nil) }
    }

    @Test(arguments: ["../records", "a/b", "", "ABC", String(repeating: "a", count: 65)])
    func idsThatCouldNameAnotherPathAreRefused(id: String) throws {
        let f = Fixture()
        defer { try? FileManager.default.removeItem(at: f.root) }
        let vault = try f.vault()
        #expect(!vault.hasKeyMaterial(deviceKeyId: id))
        #expect(throws: VaultError.keyNotFound(id)) { try vault.signer(deviceKeyId: id, presence: nil) }
    }

    @Test func deletedKeysAreGoneAndDeletingTwiceIsFine() throws {
        let f = Fixture()
        defer { try? FileManager.default.removeItem(at: f.root) }
        let vault = try f.vault()
        let key = try vault.createKey(protection: .ambient, alias: "a")
        try vault.deleteKey(deviceKeyId: key.deviceKeyId)
        try vault.deleteKey(deviceKeyId: key.deviceKeyId)
        #expect(!vault.hasKeyMaterial(deviceKeyId: key.deviceKeyId))
    }

    @Test func aReinstallIsTheRecordFileWithoutTheAppsMarker() throws {
        let f = Fixture()
        defer { try? FileManager.default.removeItem(at: f.root) }
        let vault = try f.vault()
        #expect(!vault.isFreshInstall(), "a first launch has nothing to clear")
        try vault.writeRecordFile([1, 2, 3])
        #expect(try f.permissions(f.vaultDirectory.appendingPathComponent("records.sealed")) == 0o600)
        #expect(vault.isFreshInstall())
        try vault.markInstalled()
        #expect(!vault.isFreshInstall())
        #expect(try vault.readRecordFile() == [1, 2, 3])
    }

    @Test func theAuthenticatorRunsOnTheFileVault() async throws {
        let f = Fixture()
        defer { try? FileManager.default.removeItem(at: f.root) }
        let h = Harness()
        h.scriptEnrolment(payload: "enrol", requestId: "enr-1", hasFaceToken: false)
        var environment = h.environment
        environment.vault = try f.vault()
        let authn = try await Authenticator.open(environment: environment)
        let flow = authn.startRegistrationFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: Array("enrol".utf8))
        _ = await states.until(\.isAwaitingFaceCapture)
        flow.submitFaceCapture(captureSession: capture("grace"))
        #expect(await states.rest().last.map { if case .succeeded = $0 { true } else { false } } == true)

        // A second process sees the same key; after a reinstall it is cleared.
        let reopened = try await Authenticator.open(environment: environment)
        #expect(reopened.keys.map(\.email) == ["grace@example.com"])
        try FileManager.default.removeItem(at: f.marker)
        let reinstalled = try await Authenticator.open(environment: environment)
        #expect(reinstalled.keys.isEmpty)
        let leftover = try FileManager.default.contentsOfDirectory(atPath: f.vaultDirectory.appendingPathComponent("keys").path)
        #expect(leftover.isEmpty)
    }
}
