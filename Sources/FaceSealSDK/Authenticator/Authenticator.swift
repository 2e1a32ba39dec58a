import Foundation

/// The device SDK's entry point: the keys this device holds and the flows that use them.
///
/// Open it once per process with ``open(environment:)``. Properties and `start…` calls are
/// synchronous and cheap; flows run their network, vault and face work on their own tasks.
public final class Authenticator: Sendable {
    private let ring: KeyRing

    private init(ring: KeyRing) {
        self.ring = ring
    }

    /// Opens the vault and reconciles it before any key is shown: clears records that survived a
    /// reinstall, finishes or rolls back an interrupted rotation, and deletes retired keys.
    public static func open(environment: AuthenticatorEnvironment) async throws(AuthnRuntimeError) -> Authenticator {
        let vault = environment.vault
        let store = KeyRecordStore(vault: vault, sealer: environment.recordSealer)
        let freshInstall = vault.isFreshInstall()
        let stored: [KeyRecord]
        do {
            stored = try store.load()
        } catch {
            throw .vault(error)
        }
        let plan = VaultReconciliation.plan(
            records: stored, freshInstall: freshInstall, hasKeyMaterial: { vault.hasKeyMaterial(deviceKeyId: $0) },
            now: environment.clock.now()
        )
        let ring = KeyRing(environment: environment, records: stored)
        do {
            try ring.updateRecords { $0 = plan.records }
            // Always: a first launch with no records must also be recognised as installed,
            // or the records it writes would look like survivors of a reinstall next time.
            try vault.markInstalled()
        } catch {
            throw .vault(error)
        }
        ring.deleteDeviceKeys(plan.deleteDeviceKeyIds)
        for note in plan.notes { ring.audit(.vaultReconciled, identityId: nil, note: note) }
        for keyId in plan.keyIdsToCheck {
            await resolvePendingRotation(keyId: keyId, ring: ring)
        }
        return Authenticator(ring: ring)
    }

    /// Asks the authority whether an interrupted rotation's new key was registered, then promotes
    /// or discards it. Unreachable authority: left pending for the next `open()`.
    private static func resolvePendingRotation(keyId: String, ring: KeyRing) async {
        guard let record = ring.record(keyId: keyId), let pending = record.pendingRotation else { return }
        let status: DeviceKeyStatus
        do {
            let signer = try ring.signer(deviceKeyId: pending.ambient.deviceKeyId, presence: nil)
            status = ring.absorb(try await ring.environment.authority.deviceKeyStatus(keyId: keyId, signer: signer))
        } catch {
            ring.audit(.vaultReconciled, identityId: record.key.identityId, note: "key \(keyId): rotation still pending (\(error))")
            return
        }
        let resolution = VaultReconciliation.resolve(record, newKeyStatus: status, now: ring.clock.now())
        do {
            try ring.updateRecords { records in
                records.removeAll { $0.key.id == keyId }
                if let kept = resolution.record { records.append(kept) }
            }
        } catch {
            ring.audit(.vaultReconciled, identityId: record.key.identityId, note: "key \(keyId): could not store reconciliation (\(error))")
            return
        }
        ring.deleteDeviceKeys(resolution.delete)
        ring.audit(.vaultReconciled, identityId: record.key.identityId, note: "key \(keyId): interrupted rotation resolved as \(status)")
    }

    // MARK: Keys

    /// The usable keys: records whose hardware key was wiped are left out.
    public var keys: [Key] { ring.usableKeys }

    /// The most recently enrolled or rotated usable key, or nil when the device holds none.
    public var currentKey: Key? { keys.max { $0.createdAt < $1.createdAt } }

    /// The cached branding for a key, or nil (fall back to a default icon or a monogram).
    public func brandingFor(keyId: String) -> Branding? {
        ring.record(keyId: keyId)?.branding
    }

    /// True once after the authority signalled that this device still uses its previous key; reading clears it.
    public func takeKeyRotationHint() -> Bool { ring.takeRotationHint() }

    /// The local activity record, newest first, at most `limit` entries.
    public func auditLog(limit: Int = 50) -> [AuditEntry] { ring.auditEntries(limit: limit) }

    // MARK: Flows

    /// Starts an enrolment. Submit the enrolment link to it.
    public func startRegistrationFlow() -> RegistrationFlow { RegistrationFlow(ring: ring) }

    /// Starts a sign-in approval. Submit the link to it.
    public func startLoginFlow() -> LoginFlow { LoginFlow(ring: ring) }

    /// Starts a face-PKI ceremony. Does not throw; start it when a link arrives.
    public func startPkiCeremonyFlow() -> PkiCeremonyFlow { PkiCeremonyFlow(ring: ring) }

    /// Starts a rotation of every usable key. Throws `.noKeys` when the device holds none.
    public func startKeyRotationFlow() throws(AuthnRuntimeError) -> KeyRotationFlow {
        let keys = self.keys
        guard !keys.isEmpty else { throw .noKeys }
        return KeyRotationFlow(keys: keys, ring: ring)
    }

    /// Starts the revocation of one key. Throws `UnknownKey(keyId)` for an id this device does not hold.
    public func startRevocationFlow(keyId: String) throws(AuthnRuntimeError) -> RevocationFlow {
        guard let key = keys.first(where: { $0.id == keyId }) else { throw .UnknownKey(keyId) }
        return RevocationFlow(key: key, ring: ring)
    }

    // MARK: Branding sync

    /// Refreshes the cached branding of every key and drops keys the authority revoked or terminated.
    public func syncBranding() async throws(AuthnRuntimeError) -> BrandingSyncSummary {
        let records = ring.records.filter { ring.vault.hasKeyMaterial(deviceKeyId: $0.ambient.deviceKeyId) }
        guard !records.isEmpty else { throw .noKeys }
        var signed: [SignedKey] = []
        for record in records {
            do {
                signed.append(SignedKey(key: record.key, signer: try ring.ambientSigner(record), userPresentKeyId: record.userPresent.deviceKeyId))
            } catch {
                throw .vault(error)
            }
        }
        let result: BrandingSyncResult
        do {
            result = ring.absorb(try await ring.environment.authority.syncBranding(signed))
        } catch {
            throw Self.runtimeError(for: error, ring: ring)
        }
        let updated: [String]
        do {
            updated = try ring.updateRecords { records in
                var changed: [String] = []
                for index in records.indices {
                    guard let branding = result.branding[records[index].key.id], records[index].branding != branding else { continue }
                    records[index].branding = branding
                    changed.append(records[index].key.id)
                }
                return changed
            }
        } catch {
            throw .vault(error)
        }
        var notices: [RevokedKeyNotice] = []
        for (keyId, status) in result.revoked.sorted(by: { $0.key < $1.key }) {
            guard case .revoked(let terminated, let replaced) = status else { continue }
            if let notice = ring.removeRecord(keyId: keyId, terminated: terminated, replaced: replaced, auditKind: .keyRemovedByAuthority) {
                notices.append(notice)
            }
        }
        ring.audit(.brandingSync, identityId: nil, note: "branding updated for \(updated.count) key(s); \(notices.count) key(s) removed")
        return BrandingSyncSummary(updatedKeyIds: updated, replacedKeys: notices)
    }

    private static func runtimeError(for failure: AuthorityFailure, ring: KeyRing) -> AuthnRuntimeError {
        let owner: (String) -> String = { deviceKeyId in
            ring.records.first { $0.allDeviceKeyIds.contains(deviceKeyId) }?.key.id ?? deviceKeyId
        }
        switch failure {
        case .deviceKeyRevoked(let deviceKeyId), .deviceKeyReplaced(let deviceKeyId):
            let keyId = owner(deviceKeyId)
            ring.absorb(failure)
            return .deviceKeyRevoked(keyId: keyId)
        case .deviceKeyTerminated(let deviceKeyId):
            let keyId = owner(deviceKeyId)
            ring.absorb(failure)
            return .deviceKeyTerminated(keyId: keyId)
        case .signing(let error):
            return .signKeypair(error)
        default:
            return .authorityUnavailable(String(describing: failure))
        }
    }

    /// The shared device state, for tests.
    func keyRing() -> KeyRing { ring }
}
