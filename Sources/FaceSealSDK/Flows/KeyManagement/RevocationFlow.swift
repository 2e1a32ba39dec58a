/// Removes one key from this device and from the authority (SPEC §6.2).
/// `confirming(key:)` → `approve()` → the user-present gate → `submitting` → the result.
public final class RevocationFlow: Sendable {
    /// The revocation's states.
    public enum State: Sendable, Hashable {
        /// Show the key, then `approve()` or `cancel()`.
        case confirming(key: Key)
        /// Waiting for the user's biometric or device credential.
        case awaitingUserPresence
        /// Revoking on the authority.
        case submitting
        /// The key is gone on both sides — or, for a key of `unusableKeys`, from this device (its invalidated
        /// user-present key cannot sign the revocation). Terminal.
        case succeeded(key: Key)
        /// Ended without revoking; the key is kept. Terminal.
        case failed(reason: FailureReason)

        /// True for `succeeded` and `failed`.
        public var isTerminal: Bool {
            switch self {
            case .succeeded, .failed: true
            default: false
            }
        }

        init(_ view: GatedSubmissionStateMachine<Key, Key>.View) {
            switch view {
            case .confirming(let key): self = .confirming(key: key)
            case .awaitingUserPresence: self = .awaitingUserPresence
            case .submitting: self = .submitting
            case .succeeded(let key): self = .succeeded(key: key)
            case .failed(let reason): self = .failed(reason: reason)
            }
        }
    }

    private let broadcaster: StateBroadcaster<State>
    private let driver: GatedSubmissionDriver<Key, Key>

    init(key: Key, ring: KeyRing) {
        let broadcaster = StateBroadcaster<State>(.confirming(key: key))
        self.broadcaster = broadcaster
        driver = GatedSubmissionDriver(
            subject: key, userPresence: ring.vault.userPresence, presenceReason: "Remove \(key.appLabel) for \(key.email)",
            submission: { key, proof in await Self.revoke(key, presence: proof, ring: ring) },
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

    private static func revoke(_ key: Key, presence: UserPresenceProof, ring: KeyRing) async -> Result<Key, FlowFailure> {
        guard let record = ring.record(keyId: key.id) else { return .failure(FlowFailure(reason: .vaultFailure("key \(key.id) is no longer held"))) }
        do {
            let signer = try ring.signer(deviceKeyId: record.userPresent.deviceKeyId, presence: presence)
            ring.absorb(try await ring.environment.authority.revokeKey(keyId: key.id, signer: signer))
        } catch {
            switch error {
            case .deviceKeyRevoked, .deviceKeyTerminated, .deviceKeyReplaced:
                // Already dead on the authority: removing it here is exactly what was asked.
                break
            case .signing(let failure) where failure.code == .keyInvalidated:
                // The way back from an invalidated user-present key (SPEC §6.1): it can never sign the revocation, so the
                // key is removed from this device only and the user enrols again.
                ring.audit(.keyRevocation, identityId: key.identityId, note: "key \(key.id): user-present key invalidated; removed from this device only")
            default:
                return .failure(FlowFailure(reason: ApprovalStateMachine.failureReason(for: error)))
            }
        }
        ring.removeRecord(keyId: key.id, terminated: false, replaced: false, auditKind: .keyRevocation)
        return .success(key)
    }
}
