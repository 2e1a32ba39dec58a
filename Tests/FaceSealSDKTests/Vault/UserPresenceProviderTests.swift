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
    }

    static func provider(_ terminal: ScriptedTerminal, available: Bool = true) -> TerminalUserPresence {
        TerminalUserPresence(terminal: terminal.terminal(available: available), maximumTries: 3, clock: FixedClock()) { $0 == "correct horse" }
    }

    @Test func theRightPassphraseConfirmsWithEchoOff() async throws {
        let terminal = ScriptedTerminal(["wrong", "correct horse"])
        let proof = try await Self.provider(terminal).confirm(reason: "Approve Acme")
        #expect(proof.confirmedAt == FixedClock().now())
        #expect(terminal.hiddenReads.withLock { $0 } == 2)
        #expect(terminal.output.withLock { $0 }.contains("Approve Acme"))
    }

    @Test func anEmptyLineOrEndOfInputIsACancel() async {
        await #expect(throws: SignKeypairError(code: .userCancelled, message: "cancelled at the prompt")) {
            try await Self.provider(ScriptedTerminal([""])).confirm(reason: "r")
        }
        await #expect(throws: SignKeypairError(code: .userCancelled, message: "cancelled at the prompt")) {
            try await Self.provider(ScriptedTerminal([])).confirm(reason: "r")
        }
    }

    @Test func threeWrongPassphrasesLockOutAndNoTerminalIsNotAvailable() async {
        await #expect(throws: SignKeypairError(code: .notAvailable, message: "locked out after 3 wrong passphrases")) {
            try await Self.provider(ScriptedTerminal(["a", "b", "c", "correct horse"])).confirm(reason: "r")
        }
        await #expect(throws: SignKeypairError(code: .notAvailable, message: "no terminal")) {
            try await Self.provider(ScriptedTerminal(["correct horse"]), available: false).confirm(reason: "r")
        }
    }

    @Test func anOverlongPassphraseIsRefusedNotTruncated() async {
        let long = "correct horse" + String(repeating: "x", count: TerminalUserPresence.maximumLength)
        let provider = TerminalUserPresence(terminal: ScriptedTerminal([long]).terminal(), maximumTries: 1, clock: FixedClock()) { $0.hasPrefix("correct horse") }
        await #expect(throws: SignKeypairError.self) { try await provider.confirm(reason: "r") }
    }

    @Test func theScriptedProviderAnswersInOrderThenConfirms() async throws {
        let provider = ScriptedUserPresence(clock: FixedClock())
        provider.enqueue(SignKeypairError(code: .keyInvalidated))
        await #expect(throws: SignKeypairError(code: .keyInvalidated)) { try await provider.confirm(reason: "one") }
        _ = try await provider.confirm(reason: "two")
        #expect(provider.askedReasons == ["one", "two"])
    }
}
