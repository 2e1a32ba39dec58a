import Synchronization

/// A `UserPresence` provider that answers from a script: for tests and the demo, where no person
/// sits at the device. Each `confirm` takes the next scripted answer; with none left it confirms.
public final class ScriptedUserPresence: UserPresence {
    private struct State {
        var answers: [SignKeypairError?] = []
        var reasons: [String] = []
    }

    private let state = Mutex(State())
    private let clock: any WallClock

    /// Creates a provider stamping its proofs with `clock`.
    public init(clock: any WallClock = SystemWallClock()) {
        self.clock = clock
    }

    /// Queues the next answer: nil confirms, an error refuses with it.
    public func enqueue(_ answer: SignKeypairError?) {
        state.withLock { $0.answers.append(answer) }
    }

    /// The reasons the SDK asked with, oldest first.
    public var askedReasons: [String] { state.withLock { $0.reasons } }

    /// How many times the SDK asked.
    public var callCount: Int { state.withLock { $0.reasons.count } }

    /// Answers with the next scripted answer.
    public func confirm(reason: String) async throws(SignKeypairError) -> UserPresenceProof {
        let answer = state.withLock { s -> SignKeypairError? in
            s.reasons.append(reason)
            return s.answers.isEmpty ? nil : s.answers.removeFirst()
        }
        if let answer { throw answer }
        return UserPresenceProof(confirmedAt: clock.now())
    }
}
