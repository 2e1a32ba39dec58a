import Foundation
import Synchronization
import Testing
@testable import FaceSealSDK

@Suite struct UserPresenceProviderTests {
    /// A terminal that answers from a script and records what was written.
    final class ScriptedTerminal: Sendable {
        let lines: Mutex<[String?]>
        let output = Mutex("")
        let hiddenReads = Mutex(0)
        init(_ lines: [String?]) { self.lines = Mutex(lines) }
        func terminal(available: Bool = true) -> TerminalUserPresence.Terminal {
            TerminalUserPresence.Terminal(
                readLine: { hidden in
                    if hidden { self.hiddenReads.withLock { $0 += 1 } }
                    return self.lines.withLock { $0.isEmpty ? nil : $0.removeFirst() }
                },
                write: { text in self.output.withLock { $0 += text } },
                isAvailable: { available }
            )
        }
        /// Queues more lines.
        func type(_ more: [String?]) { lines.withLock { $0 += more } }
    }

    /// A device passphrase in a fresh directory, set to "correct horse" unless `set` is false.
    static func passphrase(set: Bool = true, maximumFailures: Int = 5) throws -> DevicePassphrase {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("faceseal-passphrase-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let passphrase = DevicePassphrase(directory: directory, clock: FixedClock(), logN: 10, maximumFailures: maximumFailures, lockout: 60)
        if set { _ = try passphrase.set("correct horse") }
        return passphrase
    }

    static func provider(_ terminal: ScriptedTerminal, _ passphrase: DevicePassphrase, available: Bool = true) -> TerminalUserPresence {
        TerminalUserPresence(terminal: terminal.terminal(available: available), passphrase: passphrase, maximumTries: 3)
    }

    @Test func theRightPassphraseConfirmsWithEchoOffAndCarriesTheVaultKey() async throws {
        let passphrase = try Self.passphrase()
        let terminal = ScriptedTerminal(["wrong", "correct horse"])
        let proof = try await Self.provider(terminal, passphrase).confirm(reason: "Approve Acme")
        #expect(proof.confirmedAt == FixedClock().now())
        let again = try passphrase.unlock("correct horse")
        #expect(proof.passphraseKey != nil && proof.passphraseKey == again?.passphraseKey)
        #expect(terminal.hiddenReads.withLock { $0 } == 2)
        #expect(terminal.output.withLock { $0 }.contains("Approve Acme"))
        #expect(terminal.output.withLock { $0 }.contains("try 2 of 3"))
    }

    @Test func theFirstUseChoosesThePassphraseTypedTwice() async throws {
        let passphrase = try Self.passphrase(set: false)
        await #expect(throws: SignKeypairError(code: .userCancelled, message: "the two passphrases differ")) {
            try await Self.provider(ScriptedTerminal(["correct horse", "correct house"]), passphrase).confirm(reason: "Enrol")
        }
        await #expect(throws: SignKeypairError(code: .userCancelled, message: "a passphrase needs 8 to 1024 characters")) {
            try await Self.provider(ScriptedTerminal(["short"]), passphrase).confirm(reason: "Enrol")
        }
        #expect(!passphrase.isSet)
        let terminal = ScriptedTerminal(["correct horse", "correct horse"])
        let proof = try await Self.provider(terminal, passphrase).confirm(reason: "Enrol")
        #expect(passphrase.isSet && proof.passphraseKey != nil)
        #expect(terminal.output.withLock { $0 }.contains("choose one"))
        #expect(terminal.hiddenReads.withLock { $0 } == 2)
        #expect(try await Self.provider(ScriptedTerminal(["correct horse"]), passphrase).confirm(reason: "r").passphraseKey == proof.passphraseKey)
    }

    @Test func anEmptyLineOrEndOfInputIsACancel() async throws {
        let passphrase = try Self.passphrase()
        await #expect(throws: SignKeypairError(code: .userCancelled, message: "cancelled at the prompt")) {
            try await Self.provider(ScriptedTerminal([""]), passphrase).confirm(reason: "r")
        }
        await #expect(throws: SignKeypairError(code: .userCancelled, message: "cancelled at the prompt")) {
            try await Self.provider(ScriptedTerminal([]), passphrase).confirm(reason: "r")
        }
    }

    @Test func wrongPassphrasesAreNotAvailableAndTheLockOutOutlastsThePrompt() async throws {
        let passphrase = try Self.passphrase(maximumFailures: 5)
        await #expect(throws: SignKeypairError(code: .notAvailable, message: "3 wrong passphrases")) {
            try await Self.provider(ScriptedTerminal(["a", "b", "c", "correct horse"]), passphrase).confirm(reason: "r")
        }
        // Two more wrong ones reach the budget of 5: the next try, right or not, is the lock-out.
        await #expect(throws: SignKeypairError(code: .notAvailable, message: "locked out after 5 wrong passphrases")) {
            try await Self.provider(ScriptedTerminal(["d", "e", "correct horse"]), passphrase).confirm(reason: "r")
        }
        await #expect(throws: SignKeypairError(code: .notAvailable, message: "no terminal")) {
            try await Self.provider(ScriptedTerminal(["correct horse"]), passphrase, available: false).confirm(reason: "r")
        }
    }

    @Test func anOverlongPassphraseIsRefusedNotTruncated() async throws {
        let long = "correct horse" + String(repeating: "x", count: TerminalUserPresence.maximumLength)
        let passphrase = try Self.passphrase()
        await #expect(throws: SignKeypairError.self) {
            try await TerminalUserPresence(terminal: ScriptedTerminal([long]).terminal(), passphrase: passphrase, maximumTries: 1).confirm(reason: "r")
        }
    }

    @Test func theScriptedProviderAnswersInOrderThenConfirms() async throws {
        let provider = ScriptedUserPresence(clock: FixedClock())
        provider.enqueue(SignKeypairError(code: .keyInvalidated))
        await #expect(throws: SignKeypairError(code: .keyInvalidated)) { try await provider.confirm(reason: "one") }
        _ = try await provider.confirm(reason: "two")
        #expect(provider.askedReasons == ["one", "two"])
    }

    @Test func theScriptedProviderTypesItsPassphraseAndRefusesAnother() async throws {
        let unset = try Self.passphrase(set: false)
        let scripted = ScriptedUserPresence(clock: FixedClock(), passphrase: unset)
        let first = try await scripted.confirm(reason: "enrol")
        #expect(unset.isSet && first.passphraseKey != nil)
        #expect(try await scripted.confirm(reason: "again").passphraseKey == first.passphraseKey)
        // A vault whose passphrase a person chose is not opened by scripted presence.
        await #expect(throws: SignKeypairError(code: .notAvailable, message: "the vault's passphrase is not the scripted one")) {
            try await ScriptedUserPresence(clock: FixedClock(), passphrase: try Self.passphrase()).confirm(reason: "r")
        }
    }
}
