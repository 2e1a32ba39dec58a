import FaceSealWire
import Foundation
import Synchronization

/// The authenticator's shared, mutable device state: key records (persisted sealed through the
/// vault after every change), the rotation hint and the activity file (audit log and unreported dead-key
/// notices, persisted sealed too). Flows reach the device's keys only through it.
final class KeyRing: Sendable {
    private struct State {
        var records: [KeyRecord]
        var rotationHint = false
        var activity: ActivityFile
    }

    /// How an interrupted or failed rotation's pending keys were settled with the authority.
    enum PendingResolution: Equatable, Sendable {
        /// The record has no pending rotation.
        case none
        /// The authority holds the new keys: they are now current, the old ones deleted.
        case promoted
        /// The authority never registered them: they are deleted, the old keys stay current.
        case discarded
        /// The authority had ended the enrolment: the record is gone.
        case removed(RevokedKeyNotice)
        /// The authority could not be asked (or the answer not stored): the rotation stays pending.
        case unresolved(FailureReason)
    }

    let environment: AuthenticatorEnvironment
    private let store: KeyRecordStore
    private let activityStore: ActivityStore
    private let state: Mutex<State>

    init(environment: AuthenticatorEnvironment, records: [KeyRecord], activity: ActivityFile) {
        self.environment = environment
        store = KeyRecordStore(vault: environment.vault, sealer: environment.recordSealer)
        activityStore = ActivityStore(vault: environment.vault, sealer: environment.recordSealer)
        state = Mutex(State(records: records, activity: activity))
    }

    var vault: any KeyVault { environment.vault }
    var clock: any WallClock { environment.clock }

    // MARK: Records

    var records: [KeyRecord] { state.withLock { $0.records } }

    /// Whether both hardware keys of a record still exist (neither wiped nor invalidated).
    func isUsable(_ record: KeyRecord) -> Bool {
        vault.hasKeyMaterial(deviceKeyId: record.ambient.deviceKeyId) && vault.hasKeyMaterial(deviceKeyId: record.userPresent.deviceKeyId)
    }

    /// Usable keys: records whose ambient and user-present hardware keys both still exist.
    var usableKeys: [Key] { records.filter(isUsable).map(\.key) }

    /// Held keys that can no longer sign as the user: a hardware key wiped or invalidated (a biometric change).
    var unusableKeys: [Key] { records.filter { !isUsable($0) }.map(\.key) }

    func record(keyId: String) -> KeyRecord? {
        records.first { $0.key.id == keyId }
    }

    /// A record of `issuer` whose ambient key can still read.
    func usableRecord(issuer: String) -> KeyRecord? {
        usableRecords(issuer: issuer).first
    }

    /// Every record of `issuer` whose ambient key can still read, most recent first. A record whose user-present key
    /// was invalidated stays a candidate, so a flow reports `keyInvalidated` rather than an unknown identity.
    func usableRecords(issuer: String) -> [KeyRecord] {
        let vault = environment.vault
        return records.filter { $0.issuer == issuer && vault.hasKeyMaterial(deviceKeyId: $0.ambient.deviceKeyId) }
            .sorted { $0.key.createdAt > $1.key.createdAt }
    }

    /// Changes the records and persists them; on a failed write the change is not kept.
    func updateRecords<T: Sendable>(_ body: (inout [KeyRecord]) -> T) throws(VaultError) -> T {
        try state.withLock { s throws(VaultError) -> T in
            var next = s.records
            let result = body(&next)
            try store.save(next)
            s.records = next
            return result
        }
    }

    // MARK: Signers

    func ambientSigner(_ record: KeyRecord) throws(VaultError) -> any DeviceRequestSigner {
        try environment.vault.signer(deviceKeyId: record.ambient.deviceKeyId, presence: nil)
    }

    /// Asks the user to be present, then answers the user-present signer.
    func userPresentSigner(_ record: KeyRecord, reason: String) async throws(AuthorityFailure) -> any DeviceRequestSigner {
        let proof: UserPresenceProof
        do {
            proof = try await environment.vault.userPresence.confirm(reason: reason)
        } catch {
            throw .signing(error)
        }
        return try signer(deviceKeyId: record.userPresent.deviceKeyId, presence: proof)
    }

    func signer(deviceKeyId: String, presence: UserPresenceProof?) throws(AuthorityFailure) -> any DeviceRequestSigner {
        do {
            return try environment.vault.signer(deviceKeyId: deviceKeyId, presence: presence)
        } catch {
            throw Self.signingFailure(for: error)
        }
    }

    /// A vault failure while picking a signer, as the flows see it (SPEC §6.1): a key that is gone or whose file can
    /// never be read again is `keyInvalidated` (re-enrol); only a store that may recover is `notAvailable` (ask later).
    static func signingFailure(for error: VaultError) -> AuthorityFailure {
        let code: SignKeypairError.Code
        switch error {
        case .storageFailed, .userPresenceRequired: code = .notAvailable
        case .keyNotFound, .unknownProtectionTag, .corruptRecords, .recordsTooLarge, .sealFailure: code = .keyInvalidated
        }
        return .signing(SignKeypairError(code: code, message: String(describing: error)))
    }

    // MARK: Authority replies

    /// Takes a reply's payload and remembers its rotation hint.
    func absorb<T>(_ reply: AuthorityReply<T>) -> T {
        if reply.rotationHint { state.withLock { $0.rotationHint = true } }
        return reply.value
    }

    /// Reacts to a failure: a revoked, terminated or replaced device key removes its record and keys, and answers its
    /// notice. A record with a pending rotation is settled first: when the authority holds its new keys (the old key
    /// only outlived its overlap), they are promoted and nothing is removed. `queue`: keep the notice for the next
    /// branding sync (false when the caller reports it itself).
    @discardableResult
    func absorb(_ failure: AuthorityFailure, queue: Bool = true) async -> RevokedKeyNotice? {
        let deviceKeyId: String
        let terminated: Bool, replaced: Bool
        switch failure {
        case .deviceKeyRevoked(let id): (deviceKeyId, terminated, replaced) = (id, false, false)
        case .deviceKeyTerminated(let id): (deviceKeyId, terminated, replaced) = (id, true, false)
        case .deviceKeyReplaced(let id): (deviceKeyId, terminated, replaced) = (id, false, true)
        default: return nil
        }
        guard let record = records.first(where: { $0.allDeviceKeyIds.contains(deviceKeyId) }) else { return nil }
        if let pending = record.pendingRotation, ![pending.ambient.deviceKeyId, pending.userPresent.deviceKeyId].contains(deviceKeyId) {
            switch await resolvePendingRotation(keyId: record.key.id, queue: queue) {
            case .promoted: return nil
            case .removed(let notice): return notice
            case .none, .discarded, .unresolved: break
            }
        }
        return removeRecord(keyId: record.key.id, terminated: terminated, replaced: replaced, auditKind: .keyRemovedByAuthority, queue: queue)
    }

    /// Asks the authority (with the pending ambient key) whether a rotation's new keys were registered, then
    /// promotes or discards them (SPEC §6.2). Never discards keys the authority may hold: when it does not know them
    /// (the rotation may still be in flight) the same rotation is sent again with `presence`, and the keys are discarded
    /// only when the authority refuses it; without `presence` or a definite answer the rotation stays pending.
    func resolvePendingRotation(keyId: String, queue: Bool = true, presence: UserPresenceProof? = nil) async -> PendingResolution {
        guard let record = record(keyId: keyId), let pending = record.pendingRotation else { return .none }
        let identity = record.key.identityId
        let status: DeviceKeyStatus
        if !vault.hasKeyMaterial(deviceKeyId: pending.ambient.deviceKeyId) || !vault.hasKeyMaterial(deviceKeyId: pending.userPresent.deviceKeyId) {
            // The new keys can never sign: whatever the authority holds, they are of no use.
            status = .unknown
        } else {
            do {
                let signer = try signer(deviceKeyId: pending.ambient.deviceKeyId, presence: nil)
                status = try await resend(record, pending, presence: presence,
                                          unless: absorb(try await environment.authority.deviceKeyStatus(keyId: keyId, signer: signer)))
            } catch {
                audit(.vaultReconciled, identityId: identity, note: "key \(keyId): rotation still pending (\(error))")
                return .unresolved(ApprovalStateMachine.failureReason(for: error))
            }
        }
        let resolution = VaultReconciliation.resolve(record, newKeyStatus: status, now: clock.now())
        do {
            try updateRecords { records in
                records.removeAll { $0.key.id == keyId }
                if let kept = resolution.record { records.append(kept) }
            }
        } catch {
            audit(.vaultReconciled, identityId: identity, note: "key \(keyId): could not store the rotation's resolution (\(error))")
            return .unresolved(.vaultFailure(String(describing: error)))
        }
        deleteDeviceKeys(resolution.delete)
        audit(.vaultReconciled, identityId: identity, note: "key \(keyId): pending rotation resolved as \(status)")
        if let notice = resolution.notice {
            if queue { queueNotice(notice) }
            return .removed(notice)
        }
        return resolution.record?.ambient == pending.ambient ? .promoted : .discarded
    }

    /// `status` unless it is `.unknown`: then the authority's answer to the same rotation sent again. A repeat of a
    /// registered rotation succeeds (`.active`); only `invalid_request` refuses it for sure (`.unknown`); anything
    /// else throws and leaves the rotation pending.
    private func resend(_ record: KeyRecord, _ pending: PendingRotation, presence: UserPresenceProof?,
                        unless status: DeviceKeyStatus) async throws(AuthorityFailure) -> DeviceKeyStatus {
        guard case .unknown = status else { return status }
        guard let presence else { throw AuthorityFailure.transient("the rotation's outcome is unknown until it is sent again") }
        let submission = KeyRotationSubmission(
            keyId: record.key.id,
            currentUserPresent: try signer(deviceKeyId: record.userPresent.deviceKeyId, presence: presence),
            newAmbient: pending.ambient.descriptor, newUserPresent: pending.userPresent.descriptor,
            newAmbientSigner: try signer(deviceKeyId: pending.ambient.deviceKeyId, presence: nil),
            newUserPresentSigner: try signer(deviceKeyId: pending.userPresent.deviceKeyId, presence: presence))
        do throws(AuthorityFailure) {
            switch absorb(try await environment.authority.rotateKeys([submission])).first {
            case .rotated(record.key.id)?: return .active
            case .revoked(record.key.id, let terminated, let replaced)?: return .revoked(terminated: terminated, replaced: replaced)
            default: throw AuthorityFailure.invalidResponse("the rotation answer left the key out")
            }
        } catch .refused(let code, _) where code == "invalid_request" {
            return .unknown
        }
    }

    /// Removes one record and deletes its hardware keys. Answers the notice for it; `queue` keeps it for the next
    /// branding sync.
    @discardableResult
    func removeRecord(keyId: String, terminated: Bool, replaced: Bool, auditKind: AuditEntry.Kind, queue: Bool = false) -> RevokedKeyNotice? {
        let removed: KeyRecord?
        do {
            removed = try updateRecords { records -> KeyRecord? in
                guard let index = records.firstIndex(where: { $0.key.id == keyId }) else { return nil }
                return records.remove(at: index)
            }
        } catch {
            audit(.vaultReconciled, identityId: nil, note: "could not remove key \(keyId): \(error)")
            return nil
        }
        guard let removed else { return nil }
        deleteDeviceKeys(removed.allDeviceKeyIds)
        audit(auditKind, identityId: removed.key.identityId, note: "removed key \(keyId) (\(removed.key.appLabel))")
        let notice = RevokedKeyNotice(key: removed.key, terminated: terminated, replaced: replaced)
        if queue { queueNotice(notice) }
        return notice
    }

    /// Deletes hardware keys, best effort (a missing key is not an error; a failure is audited).
    func deleteDeviceKeys(_ ids: [String]) {
        for id in ids {
            do {
                try environment.vault.deleteKey(deviceKeyId: id)
            } catch {
                audit(.vaultReconciled, identityId: nil, note: "could not delete device key \(id): \(error)")
            }
        }
    }

    // MARK: Hint, notices and audit

    /// The hint of a success reply, or of a signed error answer or outbox read the client saw.
    func takeRotationHint() -> Bool {
        let fromClient = environment.authority.takeRotationHint()
        return state.withLock { s in
            defer { s.rotationHint = false }
            return s.rotationHint || fromClient
        }
    }

    /// Keeps a dead key's notice until a branding sync reports it (persisted with the audit log).
    func queueNotice(_ notice: RevokedKeyNotice) {
        updateActivity { $0.queue(notice) }
    }

    /// The notices not yet reported, oldest first; taking them clears them.
    func takeUnreportedNotices() -> [RevokedKeyNotice] {
        updateActivity { file in
            defer { file.unreported = [] }
            return file.unreported
        }
    }

    func audit(_ kind: AuditEntry.Kind, identityId: String?, note: String) {
        let entry = AuditEntry(timestamp: environment.clock.now(), kind: kind, identityId: identityId, note: note)
        updateActivity { $0.log.append(entry) }
    }

    func auditEntries(limit: Int) -> [AuditEntry] {
        state.withLock { $0.activity.log.newest(limit: limit) }
    }

    /// Changes the activity file and persists it, best effort: a write that fails keeps the change in memory (the
    /// audit log must never fail the action it records).
    private func updateActivity<T: Sendable>(_ body: (inout ActivityFile) -> T) -> T {
        state.withLock { s in
            let result = body(&s.activity)
            try? activityStore.save(s.activity)
            return result
        }
    }
}
