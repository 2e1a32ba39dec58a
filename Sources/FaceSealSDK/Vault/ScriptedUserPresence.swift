public import FaceSealWire
import Synchronization

/// A `UserPresence` provider that answers from a script: for tests and the demo, where no person
/// sits at the device. Each `confirm` takes the next scripted answer; with none left it confirms.
///
/// With a ``DevicePassphrase`` (the Linux file vault) it "types" a fixed passphrase: it sets it on a device that has
/// none and unlocks with it afterwards, so the proof carries the key the vault needs. That passphrase is in this
/// source: a vault set up with scripted presence protects nothing — which is why `faceseal device` uses it only when
/// asked (`--presence scripted`) and says so.
public final class ScriptedUserPresence: UserPresence {
    /// The passphrase scripted presence types.
    public static let scriptedPassphrase = "faceseal scripted presence"

    private struct State {
        var answers: [SignKeypairError?] = []
        var reasons: [String] = []
    }

    private let state = Mutex(State())
    private let clock: any WallClock
    private let passphrase: DevicePassphrase?

    /// Creates a provider stamping its proofs with `clock`, typing ``scriptedPassphrase`` into `passphrase` if given.
    public init(clock: any WallClock = SystemWallClock(), passphrase: DevicePassphrase? = nil) {
        self.clock = clock
        self.passphrase = passphrase
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
        guard let passphrase else { return UserPresenceProof(confirmedAt: clock.now()) }
        guard passphrase.isSet else { return try passphrase.set(Self.scriptedPassphrase) }
        guard let proof = try passphrase.unlock(Self.scriptedPassphrase) else {
            throw SignKeypairError(code: .notAvailable, message: "the vault's passphrase is not the scripted one")
        }
        return proof
    }
}
