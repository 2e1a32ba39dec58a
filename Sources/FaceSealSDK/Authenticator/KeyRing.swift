import Foundation
import Synchronization

/// The authenticator's shared, mutable device state: key records (persisted sealed through the
/// vault after every change), the rotation hint and the audit log. Flows reach the device's keys
/// only through it.
final class KeyRing: Sendable {
    private struct State {
        var records: [KeyRecord]
        var rotationHint = false
        var audit: AuditLog
    }

    let environment: AuthenticatorEnvironment
    private let store: KeyRecordStore
    private let state: Mutex<State>

    init(environment: AuthenticatorEnvironment, records: [KeyRecord]) {
        self.environment = environment
        store = KeyRecordStore(vault: environment.vault, sealer: environment.recordSealer)
        state = Mutex(State(records: records, audit: AuditLog(capacity: environment.auditCapacity)))
    }

    var vault: any KeyVault { environment.vault }
    var clock: any WallClock { environment.clock }

    // MARK: Records

    var records: [KeyRecord] { state.withLock { $0.records } }

    /// Usable keys: records whose ambient hardware key still exists.
    var usableKeys: [Key] {
        let vault = environment.vault
        return VaultReconciliation.usableKeys(records, hasKeyMaterial: { vault.hasKeyMaterial(deviceKeyId: $0) })
    }

    func record(keyId: String) -> KeyRecord? {
        records.first { $0.key.id == keyId }
    }

    /// A usable record of `issuer`.
    func usableRecord(issuer: String) -> KeyRecord? {
        let vault = environment.vault
        return records.first { $0.issuer == issuer && vault.hasKeyMaterial(deviceKeyId: $0.ambient.deviceKeyId) }
    }

    /// Every usable record of `issuer`, most recent first.
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

    /// A vault failure while picking a signer, as the flows see it.
    static func signingFailure(for error: VaultError) -> AuthorityFailure {
        .signing(SignKeypairError(code: .notAvailable, message: String(describing: error)))
    }

    // MARK: Authority replies

    /// Takes a reply's payload and remembers its rotation hint.
    func absorb<T>(_ reply: AuthorityReply<T>) -> T {
        if reply.rotationHint { state.withLock { $0.rotationHint = true } }
        return reply.value
    }

    /// Reacts to a failure: a revoked or terminated device key removes its record and keys.
    @discardableResult
    func absorb(_ failure: AuthorityFailure) -> RevokedKeyNotice? {
        switch failure {
        case .deviceKeyRevoked(let deviceKeyId):
            return removeRecord(owning: deviceKeyId, terminated: false)
        case .deviceKeyTerminated(let deviceKeyId):
            return removeRecord(owning: deviceKeyId, terminated: true)
        case .deviceKeyReplaced(let deviceKeyId):
            return removeRecord(owning: deviceKeyId, terminated: false, replaced: true)
        default:
            return nil
        }
    }

    /// Removes the record that owns `deviceKeyId` (and its hardware keys) after the authority said
    /// it is revoked or terminated.
    func removeRecord(owning deviceKeyId: String, terminated: Bool, replaced: Bool = false) -> RevokedKeyNotice? {
        guard let record = records.first(where: { $0.allDeviceKeyIds.contains(deviceKeyId) }) else { return nil }
        return removeRecord(keyId: record.key.id, terminated: terminated, replaced: replaced, auditKind: .keyRemovedByAuthority)
    }

    /// Removes one record and deletes its hardware keys. Answers the notice for it.
    @discardableResult
    func removeRecord(keyId: String, terminated: Bool, replaced: Bool, auditKind: AuditEntry.Kind) -> RevokedKeyNotice? {
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
        return RevokedKeyNotice(key: removed.key, terminated: terminated, replaced: replaced)
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

    // MARK: Hint and audit

    func takeRotationHint() -> Bool {
        state.withLock { s in
            defer { s.rotationHint = false }
            return s.rotationHint
        }
    }

    func audit(_ kind: AuditEntry.Kind, identityId: String?, note: String) {
        let entry = AuditEntry(timestamp: environment.clock.now(), kind: kind, identityId: identityId, note: note)
        state.withLock { $0.audit.append(entry) }
    }

    func auditEntries(limit: Int) -> [AuditEntry] {
        state.withLock { $0.audit.newest(limit: limit) }
    }
}
