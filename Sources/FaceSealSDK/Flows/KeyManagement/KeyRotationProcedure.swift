import Foundation

/// The make-before-break rotation of every held key (SPEC §6.2). Each step is persisted before the
/// next starts, so a crash after any step leaves records that `Authenticator.open()` reconciles:
///
/// 0. a rotation left pending by an earlier attempt (its answer lost) is settled with the authority first — its new
///    keys may be registered, so they are promoted, never overwritten;
/// 1. new keys created and recorded as an unregistered pending rotation;
/// 2. registered with the authority (proved by the old user-present key and both new keys), then
///    the pending rotation is marked registered; keys the authority had revoked are dropped;
/// 3. promoted: the new keys become current, the old ones retired;
/// 4. the retired hardware keys are deleted.
///
/// A failure after step 1 never deletes new keys the authority may hold: every pending rotation is settled by asking
/// the authority (as `open()` does) and, when it does not know the new keys, by sending the same rotation again; one
/// that cannot be settled stays pending for the next attempt or `open()`.
struct KeyRotationProcedure: Sendable {
    let ring: KeyRing

    func run(keys: [Key], presence: UserPresenceProof) async -> Result<[RevokedKeyNotice], FlowFailure> {
        var notices: [RevokedKeyNotice] = []

        // Step 0: settle what an earlier attempt left pending.
        var settled = Set<String>()
        for key in keys where ring.record(keyId: key.id)?.pendingRotation != nil {
            switch await ring.resolvePendingRotation(keyId: key.id, queue: false, presence: presence) {
            case .promoted: settled.insert(key.id)
            case .removed(let notice): notices.append(notice)
            case .none, .discarded: break
            case .unresolved(let reason): return .failure(FlowFailure(reason: reason))
            }
        }
        let keyIds = Set(keys.map(\.id)).subtracting(settled).filter { ring.record(keyId: $0) != nil }
        guard !keyIds.isEmpty else { return finish(rotated: settled.count, notices: notices) }

        // Step 1: create and record the replacement keys.
        let vault = ring.vault
        var created: [String: PendingRotation] = [:]
        for keyId in keyIds.sorted() {
            var ambient: DeviceKeyDescriptor?
            do {
                let newAmbient = try vault.createKey(protection: .ambient, alias: "faceseal.rotation.\(keyId).ambient")
                ambient = newAmbient
                let newUserPresent = try vault.createKey(protection: .userPresent, alias: "faceseal.rotation.\(keyId).user-present",
                                                         presence: presence)
                created[keyId] = PendingRotation(ambient: DeviceKeyRecord(newAmbient), userPresent: DeviceKeyRecord(newUserPresent), registered: false)
            } catch {
                discard(created)
                ring.deleteDeviceKeys(ambient.map { [$0.deviceKeyId] } ?? [])
                return .failure(FlowFailure(reason: .vaultFailure(String(describing: error))))
            }
        }
        do {
            try ring.updateRecords { records in
                for index in records.indices where keyIds.contains(records[index].key.id) {
                    records[index].pendingRotation = created[records[index].key.id]
                }
            }
        } catch {
            discard(created)
            return .failure(FlowFailure(reason: .vaultFailure(String(describing: error))))
        }

        // Step 2: register with the authority.
        var submissions: [KeyRotationSubmission] = []
        do throws(AuthorityFailure) {
            for record in ring.records where keyIds.contains(record.key.id) {
                guard let pending = record.pendingRotation else { continue }
                submissions.append(KeyRotationSubmission(
                    keyId: record.key.id,
                    currentUserPresent: try ring.signer(deviceKeyId: record.userPresent.deviceKeyId, presence: presence),
                    newAmbient: pending.ambient.descriptor, newUserPresent: pending.userPresent.descriptor,
                    newAmbientSigner: try ring.signer(deviceKeyId: pending.ambient.deviceKeyId, presence: nil),
                    newUserPresentSigner: try ring.signer(deviceKeyId: pending.userPresent.deviceKeyId, presence: presence)
                ))
            }
        } catch {
            // Nothing was sent yet: the new keys are nobody's.
            clearPending(keyIds)
            return .failure(FlowFailure(reason: ApprovalStateMachine.failureReason(for: error)))
        }
        let outcomes: [KeyRotationOutcome]
        do {
            outcomes = ring.absorb(try await ring.environment.authority.rotateKeys(submissions))
        } catch {
            // Some keys may be registered (an answer lost, a failure at key N after keys 1…N-1): ask about each.
            await ring.absorb(error)
            for keyId in keyIds.sorted() { _ = await ring.resolvePendingRotation(keyId: keyId, presence: presence) }
            return .failure(FlowFailure(reason: ApprovalStateMachine.failureReason(for: error)))
        }

        var registered = Set<String>()
        for outcome in outcomes {
            switch outcome {
            case .rotated(let keyId) where keyIds.contains(keyId):
                registered.insert(keyId)
            case .revoked(let keyId, let terminated, let replaced) where keyIds.contains(keyId):
                if let notice = ring.removeRecord(keyId: keyId, terminated: terminated, replaced: replaced, auditKind: .keyRemovedByAuthority) {
                    notices.append(notice)
                }
            default:
                continue
            }
        }
        do {
            try ring.updateRecords { records in
                for index in records.indices where registered.contains(records[index].key.id) {
                    records[index].pendingRotation?.registered = true
                }
            }
            // Step 3: promote.
            let now = ring.clock.now()
            try ring.updateRecords { records in
                for index in records.indices where registered.contains(records[index].key.id) {
                    records[index] = records[index].promotingPendingRotation(at: now)
                }
            }
            // Step 4: delete the retired keys.
            let retired = ring.records.filter { registered.contains($0.key.id) }.flatMap(\.retiredDeviceKeyIds)
            ring.deleteDeviceKeys(retired)
            try ring.updateRecords { records in
                for index in records.indices where registered.contains(records[index].key.id) {
                    records[index].retiredDeviceKeyIds = []
                }
            }
        } catch {
            // What was persisted is consistent; open() finishes the rest.
            return .failure(FlowFailure(reason: .vaultFailure(String(describing: error))))
        }
        // A key the answer left out (a misbehaving authority) keeps its pending rotation for the next attempt to settle.
        return finish(rotated: settled.count + registered.count, notices: notices)
    }

    private func finish(rotated: Int, notices: [RevokedKeyNotice]) -> Result<[RevokedKeyNotice], FlowFailure> {
        ring.audit(.keyRotation, identityId: nil, note: "rotated \(rotated) key(s); \(notices.count) dead key(s) dropped")
        return .success(notices)
    }

    private func discard(_ created: [String: PendingRotation]) {
        ring.deleteDeviceKeys(created.values.flatMap { [$0.ambient.deviceKeyId, $0.userPresent.deviceKeyId] })
    }

    private func clearPending(_ keyIds: Set<String>) {
        let pending = ring.records.filter { keyIds.contains($0.key.id) }.compactMap(\.pendingRotation)
        ring.deleteDeviceKeys(pending.flatMap { [$0.ambient.deviceKeyId, $0.userPresent.deviceKeyId] })
        try? ring.updateRecords { records in
            for index in records.indices where keyIds.contains(records[index].key.id) {
                records[index].pendingRotation = nil
            }
        }
    }
}
