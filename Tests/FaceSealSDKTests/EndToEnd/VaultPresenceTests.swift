import FaceSealCrypto
import Foundation
import Testing
@testable import FaceSealSDK

/// The Linux vault's user presence against the real authority (SPEC §6.1): the user-present key works only with the
/// device passphrase; a wrong one is refused as not available, changes nothing on either side, and the right one
/// approves the next request; a copy of the whole device directory, `vault.key` included, signs as ambient only.
@Suite(.serialized, .timeLimit(.minutes(1))) struct VaultPresenceTests {
    /// The file vault of `directory` (real P-256 keys, sealed under its `vault.key`) with a terminal asking for the
    /// device passphrase, as `faceseal device` opens it without `--presence scripted`.
    static func terminalVault(_ directory: URL, _ terminal: UserPresenceProviderTests.ScriptedTerminal,
                              epoch: Device.Epoch) throws -> FileKeyVault {
        let passphrase = DevicePassphrase(directory: directory.appendingPathComponent("vault"), logN: 10)
        return try FileKeyVault(
            directory: directory.appendingPathComponent("vault"), installationMarker: directory.appendingPathComponent("installed"),
            factory: P256SoftwareKeyFactory(), sealer: try AESRecordSealer(keyFile: directory.appendingPathComponent("secrets/vault.key")),
            userPresence: TerminalUserPresence(terminal: terminal.terminal(), passphrase: passphrase, maximumTries: 3),
            enrolmentEpoch: { epoch.value.withLock { $0 } })
    }

    /// Runs a ceremony link with a good capture until it succeeds or stops; answers the last state.
    static func approve(_ authn: Authenticator, _ link: [UInt8]) async -> [PkiCeremonyFlow.State] {
        let flow = authn.startPkiCeremonyFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: link)
        func stops(_ state: PkiCeremonyFlow.State) -> Bool {
            switch state {
            case .failed, .postingResultFailed, .succeeded: true
            default: false
            }
        }
        if await states.until({ $0.isAwaitingFaceCapture || stops($0) })?.isAwaitingFaceCapture == true {
            flow.submitFaceCapture(captureSession: capture("ada"))
            _ = await states.until(stops)
        }
        flow.cancel()
        await flow.waitUntilIdle()
        return states.seen
    }

    /// Whether the approval stopped because the user-present key could not be used.
    static func refusedAsNotAvailable(_ states: [PkiCeremonyFlow.State]) -> Bool {
        switch states.last {
        case .failed(reason: .userPresence(.notAvailable)), .postingResultFailed(reason: .userPresence(.notAvailable)): true
        default: false
        }
    }

    @Test func aWrongDevicePassphraseApprovesNothingAndTheRightOneApprovesTheNextRequest() async throws {
        // Enrolled with scripted presence, whose passphrase then seals the user-present key.
        let e = try await Enrolled.make()
        defer { Task { await e.system.stop() } }
        // The same device directory at a terminal.
        let terminal = UserPresenceProviderTests.ScriptedTerminal(["wrong", "also wrong", "still wrong"])
        let vault = try Self.terminalVault(e.device.directory, terminal, epoch: e.device.epoch)
        var environment = e.device.environment
        environment.vault = vault
        let authn = try await Authenticator.open(environment: environment)

        // Wherever the approval needs the user-present key, three wrong passphrases stop it as not available.
        let refused = try await e.request("public_keys")
        let states = await Self.approve(authn, refused.link)
        #expect(Self.refusedAsNotAvailable(states), "not refused as not available: \(states)")
        #expect(terminal.output.withLock { $0 }.contains("Device passphrase"))
        #expect(try await e.system.token(e.client, rid: refused.rid).status != 200)
        #expect(authn.keys == [e.key])
        let record = try #require(authn.keyRing().records.first)
        #expect(vault.hasKeyMaterial(deviceKeyId: record.userPresent.deviceKeyId))

        // The right passphrase: the next request is approved end to end.
        terminal.type([ScriptedUserPresence.scriptedPassphrase])
        let approved = try await e.request("public_keys")
        #expect(await Self.approve(authn, approved.link).last?.isSucceeded == true)
        #expect(try await e.system.token(e.client, rid: approved.rid).status == 200)
    }

    @Test func aCopyOfTheDeviceDirectoryWithItsVaultKeyCannotSignAsUserPresent() async throws {
        let system = try await LiveSystem.start()
        defer { Task { await system.stop() } }
        let client = try await system.createApplication(label: "Acme Billing")
        _ = try await system.createUser(email: "ada@example.com")
        let device = try system.device()
        // The owner enrols at the terminal, choosing the device passphrase (typed twice), and approves with it later.
        let chosen = "a passphrase only the owner knows"
        let ownerTerminal = UserPresenceProviderTests.ScriptedTerminal([chosen, chosen])
        var ownerEnvironment = device.environment
        ownerEnvironment.vault = try Self.terminalVault(device.directory, ownerTerminal, epoch: device.epoch)
        let owner = try await Authenticator.open(environment: ownerEnvironment)
        let key = try await device.enrol(owner, link: try await system.invitation(email: "ada@example.com", client: client))
        let record = try #require(owner.keyRing().records.first)

        // A thief copies everything the device holds: the vault directory, vault.key, the records, the pin.
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("faceseal-stolen-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: copy) }
        try FileManager.default.copyItem(at: device.directory, to: copy)
        let vaultCopy = copy.appendingPathComponent("vault")

        // Scripted presence's passphrase (the one in the source) is not this vault's.
        let scripted = ScriptedUserPresence(passphrase: DevicePassphrase(directory: vaultCopy, logN: 10))
        await #expect(throws: SignKeypairError(code: .notAvailable, message: "the vault's passphrase is not the scripted one")) {
            try await scripted.confirm(reason: "steal")
        }
        // Replacing the passphrase file with one of the thief's own yields a proof whose key opens nothing.
        for name in ["passphrase.json", "passphrase-failures.json"] {
            try? FileManager.default.removeItem(at: vaultCopy.appendingPathComponent(name))
        }
        let thiefTerminal = UserPresenceProviderTests.ScriptedTerminal(["the thief's own passphrase", "the thief's own passphrase"])
        let stolen = try Self.terminalVault(copy, thiefTerminal, epoch: device.epoch)
        let thiefProof = try await stolen.userPresence.confirm(reason: "steal")
        await #expect(throws: SignKeypairError(code: .notAvailable, message: "the device passphrase does not open this key")) {
            try await stolen.signer(deviceKeyId: record.userPresent.deviceKeyId, presence: thiefProof).sign([1])
        }
        // The ambient key does sign (reading the outbox: the documented limit); an approval does not go through.
        var thiefEnvironment = device.environment
        thiefEnvironment.vault = stolen
        thiefEnvironment.recordSealer = try AESRecordSealer(keyFile: copy.appendingPathComponent("secrets/vault.key"))
        let thief = try await Authenticator.open(environment: thiefEnvironment)
        #expect(thief.keys == [key])
        let rid = try await system.backchannel(client, email: "ada@example.com", pkiKind: "sign", context: Array("invoices".utf8), data: [7])
        let link = try await device.link(thief, rid: rid)
        thiefTerminal.type(["the thief's own passphrase"])
        let states = await Self.approve(thief, link)
        #expect(Self.refusedAsNotAvailable(states), "not refused as not available: \(states)")
        #expect(try await system.token(client, rid: rid).status != 200)
        #expect(stolen.hasKeyMaterial(deviceKeyId: record.userPresent.deviceKeyId))

        // The owner's passphrase still opens the owner's key: the next request is approved.
        ownerTerminal.type([chosen])
        let next = try await system.backchannel(client, email: "ada@example.com", pkiKind: "public_keys", context: Array("invoices".utf8), data: nil)
        #expect(await Self.approve(owner, try await device.link(owner, rid: next)).last?.isSucceeded == true)
        #expect(try await system.token(client, rid: next).status == 200)
    }
}
