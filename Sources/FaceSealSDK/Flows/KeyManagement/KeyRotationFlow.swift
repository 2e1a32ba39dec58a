/// Replaces the key material of every key the device holds (make-before-break, SPEC §6.2).
/// `confirming` lists every key; `approve()` → the user-present gate → `submitting` → the result.
public final class KeyRotationFlow: Sendable {
    /// The rotation's states.
    public enum State: Sendable, Hashable {
        /// Show what is affected ("Rotate 3 keys"), then `approve()` or `cancel()`.
        case confirming(keys: [Key])
        /// Waiting for the user's biometric or device credential.
        case awaitingUserPresence
        /// Rotating; cannot be cancelled (an interruption is reconciled by the next `open()`).
        case submitting
        /// Done. `revokedKeys` lists dead keys found and dropped (empty when every key rotated). Terminal.
        case succeeded(revokedKeys: [RevokedKeyNotice])
        /// Ended without rotating; every key is kept. Terminal.
        case failed(reason: FailureReason)

        /// True for `succeeded` and `failed`.
        public var isTerminal: Bool {
            switch self {
            case .succeeded, .failed: true
            default: false
            }
        }

        init(_ view: GatedSubmissionStateMachine<[Key], [RevokedKeyNotice]>.View) {
            switch view {
            case .confirming(let keys): self = .confirming(keys: keys)
            case .awaitingUserPresence: self = .awaitingUserPresence
            case .submitting: self = .submitting
            case .succeeded(let notices): self = .succeeded(revokedKeys: notices)
            case .failed(let reason): self = .failed(reason: reason)
            }
        }
    }

    private let broadcaster: StateBroadcaster<State>
    private let driver: GatedSubmissionDriver<[Key], [RevokedKeyNotice]>

    init(keys: [Key], ring: KeyRing) {
        let broadcaster = StateBroadcaster<State>(.confirming(keys: keys))
        self.broadcaster = broadcaster
        let procedure = KeyRotationProcedure(ring: ring)
        driver = GatedSubmissionDriver(
            subject: keys, userPresence: ring.vault.userPresence, presenceReason: "Rotate \(keys.count) key(s)",
            submission: { keys, proof in await procedure.run(keys: keys, presence: proof) },
            publish: { view, terminal in broadcaster.publish(State(view), terminal: terminal) }
        )
    }

    /// The current state first, then every change; finishes after a terminal state.
    public func stateStream() -> AsyncStream<State> { broadcaster.stream() }

    /// The current state.
    public var state: State { broadcaster.current }

    /// Proceeds (from `confirming`).
    public func approve() { driver.approve() }

    /// Abandons (before submitting).
    public func cancel() { driver.cancel() }

    /// Waits until the flow's background work has finished, including a fire-and-forget abort or
    /// rollback after the flow ended. For hosts that exit after a flow (the `faceseal device` CLI).
    public func waitUntilIdle() async { await driver.waitUntilIdle() }
}
