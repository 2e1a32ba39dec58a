import Foundation

/// What `open()` does to the records before the app sees any key (pure).
enum VaultReconciliation {
    /// The local part of the plan.
    struct Plan: Equatable {
        /// The records to keep (possibly promoted).
        var records: [KeyRecord]
        /// Hardware keys to delete.
        var deleteDeviceKeyIds: [String]
        /// Keys with a pending rotation the authority must be asked about.
        var keyIdsToCheck: [String]
        /// What changed, for the audit log.
        var notes: [String]
    }

    /// Plans the local reconciliation:
    /// * after a reinstall every surviving record and its hardware keys are cleared;
    /// * a registered pending rotation is promoted (the crash came after the authority accepted it);
    /// * an unregistered pending rotation whose keys are gone is discarded; one whose keys exist is
    ///   checked with the authority;
    /// * retired keys left by a crash after promotion are deleted.
    static func plan(records: [KeyRecord], freshInstall: Bool, hasKeyMaterial: (String) -> Bool, now: Date) -> Plan {
        if freshInstall {
            return Plan(
                records: [], deleteDeviceKeyIds: records.flatMap(\.allDeviceKeyIds), keyIdsToCheck: [],
                notes: records.isEmpty ? [] : ["reinstall: cleared \(records.count) surviving key record(s)"]
            )
        }
        var plan = Plan(records: [], deleteDeviceKeyIds: [], keyIdsToCheck: [], notes: [])
        for var record in records {
            if let pending = record.pendingRotation {
                let pendingPresent = hasKeyMaterial(pending.ambient.deviceKeyId) && hasKeyMaterial(pending.userPresent.deviceKeyId)
                if pending.registered && pendingPresent {
                    record = record.promotingPendingRotation(at: now)
                    plan.notes.append("key \(record.key.id): promoted an interrupted rotation")
                } else if !pendingPresent {
                    plan.deleteDeviceKeyIds += [pending.ambient.deviceKeyId, pending.userPresent.deviceKeyId]
                    record.pendingRotation = nil
                    plan.notes.append("key \(record.key.id): discarded an interrupted rotation")
                } else {
                    plan.keyIdsToCheck.append(record.key.id)
                }
            }
            if !record.retiredDeviceKeyIds.isEmpty {
                plan.deleteDeviceKeyIds += record.retiredDeviceKeyIds
                record.retiredDeviceKeyIds = []
                plan.notes.append("key \(record.key.id): deleted retired device keys")
            }
            plan.records.append(record)
        }
        return plan
    }

    /// Resolves one unregistered pending rotation from the authority's view of the new ambient key.
    /// Answers the record to keep (nil: drop it), hardware keys to delete and a notice if the key is dead.
    static func resolve(_ record: KeyRecord, newKeyStatus: DeviceKeyStatus, now: Date) -> (record: KeyRecord?, delete: [String], notice: RevokedKeyNotice?) {
        guard let pending = record.pendingRotation else { return (record, [], nil) }
        switch newKeyStatus {
        case .active, .previous:
            let promoted = record.promotingPendingRotation(at: now)
            var kept = promoted
            kept.retiredDeviceKeyIds = []
            return (kept, promoted.retiredDeviceKeyIds, nil)
        case .unknown:
            var kept = record
            kept.pendingRotation = nil
            return (kept, [pending.ambient.deviceKeyId, pending.userPresent.deviceKeyId], nil)
        case .revoked(let terminated, let replaced):
            return (nil, record.allDeviceKeyIds, RevokedKeyNotice(key: record.key, terminated: terminated, replaced: replaced))
        }
    }

    /// The keys the app may use: records whose ambient hardware key still exists.
    static func usableKeys(_ records: [KeyRecord], hasKeyMaterial: (String) -> Bool) -> [Key] {
        records.filter { hasKeyMaterial($0.ambient.deviceKeyId) }.map(\.key)
    }
}
