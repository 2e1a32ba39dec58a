import FaceSealCrypto
import Foundation
import Testing
@testable import FaceSealSDK

/// The Linux vault's user presence against the real authority (SPEC §6.1): the user-present key works only with the
/// device passphrase; a wrong one is refused as not available, changes nothing on either side, and the right one
/// approves the next request.
@Suite(.serialized, .timeLimit(.minutes(1))) struct VaultPresenceTests {
    @Test func aWrongDevicePassphraseApprovesNothingAndTheRightOneApprovesTheNextRequest() async throws {
        // Enrolled with scripted presence, whose passphrase then seals the user-present key.
        let e = try await Enrolled.make()
        defer { Task { await e.system.stop() } }
        // The same device directory at a terminal.
        let terminal = UserPresenceProviderTests.ScriptedTerminal(["wrong", "also wrong", "still wrong"])
        let passphrase = DevicePassphrase(directory: e.device.directory.appendingPathComponent("vault"), logN: 10)
        let vault = try FileKeyVault(
            directory: e.device.directory.appendingPathComponent("vault"), installationMarker: e.device.directory.appendingPathComponent("installed"),
            factory: P256SoftwareKeyFactory(), sealer: try AESRecordSealer(keyFile: e.device.directory.appendingPathComponent("secrets/vault.key")),
            userPresence: TerminalUserPresence(terminal: terminal.terminal(), passphrase: passphrase, maximumTries: 3),
            enrolmentEpoch: { e.device.epoch.value.withLock { $0 } })
        var environment = e.device.environment
        environment.vault = vault
        let authn = try await Authenticator.open(environment: environment)

        let refused = try await e.request("public_keys")
        let flow = authn.startPkiCeremonyFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: refused.link)
        func stops(_ state: PkiCeremonyFlow.State) -> Bool {
            switch state {
            case .failed, .postingResultFailed: true
            default: false
            }
        }
        var stopped = await states.until { $0.isAwaitingFaceCapture || stops($0) }
        if stopped?.isAwaitingFaceCapture == true {
            flow.submitFaceCapture(captureSession: capture("ada"))
            stopped = await states.until(stops)
        }
        // Wherever the approval needs the user-present key, three wrong passphrases stop it as not available.
        switch stopped {
        case .failed(reason: .userPresence(.notAvailable)), .postingResultFailed(reason: .userPresence(.notAvailable), retryable: _): break
        default: Issue.record("not refused as not available: \(states.seen)")
        }
        flow.cancel()
        #expect(terminal.output.withLock { $0 }.contains("Device passphrase"))
        #expect(try await e.system.token(e.client, rid: refused.rid).status != 200)
        #expect(authn.keys == [e.key])
        let record = try #require(authn.keyRing().records.first)
        #expect(vault.hasKeyMaterial(deviceKeyId: record.userPresent.deviceKeyId))

        // The right passphrase: the next request is approved end to end.
        terminal.type([ScriptedUserPresence.scriptedPassphrase])
        let approved = try await e.request("public_keys")
        let good = authn.startPkiCeremonyFlow()
        var goodStates = Observed(good.stateStream())
        good.submitLinkPayload(payload: approved.link)
        _ = await goodStates.until(\.isAwaitingFaceCapture)
        good.submitFaceCapture(captureSession: capture("ada"))
        #expect(await goodStates.rest().last?.isSucceeded == true, "\(goodStates.seen)")
        #expect(try await e.system.token(e.client, rid: approved.rid).status == 200)
    }
}
