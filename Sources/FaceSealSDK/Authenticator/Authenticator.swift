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
    /// reinstall, finishes or rolls back an interrupted rotation, and deletes retired keys. A key the authority
    /// turns out to have ended is removed, audited, and its notice kept for the next ``syncBranding()``.
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
        // The activity file is a record of what happened, never a reason not to open: an unreadable one starts anew.
        let activityStore = ActivityStore(vault: vault, sealer: environment.recordSealer)
        let activity: ActivityFile
        var activityNote: String?
        do {
            activity = try activityStore.load(capacity: environment.auditCapacity)
        } catch {
            activity = ActivityFile(log: AuditLog(capacity: environment.auditCapacity))
            activityNote = "the activity file could not be read (\(error)); it starts anew"
        }
        let plan = VaultReconciliation.plan(
            records: stored, freshInstall: freshInstall, hasKeyMaterial: { vault.hasKeyMaterial(deviceKeyId: $0) },
            now: environment.clock.now()
        )
        let ring = KeyRing(environment: environment, records: stored, activity: activity)
        if let activityNote { ring.audit(.vaultReconciled, identityId: nil, note: activityNote) }
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
            _ = await ring.resolvePendingRotation(keyId: keyId)
        }
        return Authenticator(ring: ring)
    }

    // MARK: Keys

    /// The usable keys: records whose ambient or user-present hardware key was wiped or invalidated are left out.
    public var keys: [Key] { ring.usableKeys }

    /// Keys this device still holds but can no longer use as the user (SPEC §6.1): the user-present key was
    /// invalidated by a biometric enrolment change, or a hardware key is gone. Show them as needing re-enrolment;
    /// `startRevocationFlow(keyId:)` removes one from this device (the authority cannot be told without that key's
    /// signature), after which the user enrols again with a new invitation.
    public var unusableKeys: [Key] { ring.unusableKeys }

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

    /// Starts the revocation of one key (of ``keys`` or ``unusableKeys``). Throws `UnknownKey(keyId)` for an id this
    /// device does not hold.
    public func startRevocationFlow(keyId: String) throws(AuthnRuntimeError) -> RevocationFlow {
        guard let key = ring.record(keyId: keyId)?.key else { throw .UnknownKey(keyId) }
        return RevocationFlow(key: key, ring: ring)
    }

    // MARK: Branding sync

    /// Refreshes the cached branding of every key and drops the keys the authority ended. Each key is asked about with
    /// its own ambient key, so every identity's branding is refreshed and every dead key is reported — with
    /// `terminated` and `replaced` as the authority said — in `replacedKeys`, together with the keys found dead
    /// earlier (by `open()`, a flow or the outbox). A dead key is never an error; throws only when no key could
    /// be asked (the authority unreachable) and there is nothing to report.
    public func syncBranding() async throws(AuthnRuntimeError) -> BrandingSyncSummary {
        let records = ring.records.filter { ring.vault.hasKeyMaterial(deviceKeyId: $0.ambient.deviceKeyId) }
        var notices = ring.takeUnreportedNotices()
        guard !records.isEmpty || !notices.isEmpty else { throw .noKeys }
        var branding: [String: Branding] = [:]
        var failure: AuthnRuntimeError?
        var answered = 0
        for record in records {
            do {
                let signer = try ring.signer(deviceKeyId: record.ambient.deviceKeyId, presence: nil)
                let signed = SignedKey(key: record.key, signer: signer, userPresentKeyId: record.userPresent.deviceKeyId)
                let result = ring.absorb(try await ring.environment.authority.syncBranding([signed]))
                answered += 1
                if let current = result.branding[record.key.id] { branding[record.key.id] = current }
                if case .revoked(let terminated, let replaced)? = result.revoked[record.key.id],
                   let notice = ring.removeRecord(keyId: record.key.id, terminated: terminated, replaced: replaced, auditKind: .keyRemovedByAuthority) {
                    notices.append(notice)
                }
            } catch {
                switch error {
                case .deviceKeyRevoked, .deviceKeyTerminated, .deviceKeyReplaced:
                    answered += 1
                    if let notice = await ring.absorb(error, queue: false) { notices.append(notice) }
                default:
                    failure = Self.runtimeError(for: error)
                    ring.audit(.brandingSync, identityId: record.key.identityId, note: "key \(record.key.id) not synced: \(error)")
                }
            }
        }
        if answered == 0, notices.isEmpty, let failure { throw failure }
        let updated: [String]
        do {
            updated = try ring.updateRecords { records in
                var changed: [String] = []
                for index in records.indices {
                    guard let current = branding[records[index].key.id], records[index].branding != current else { continue }
                    records[index].branding = current
                    changed.append(records[index].key.id)
                }
                return changed
            }
        } catch {
            // The dead keys were removed already: keep their notices for the next sync.
            for notice in notices { ring.queueNotice(notice) }
            throw .vault(error)
        }
        ring.audit(.brandingSync, identityId: nil, note: "branding updated for \(updated.count) key(s); \(notices.count) dead key(s) reported")
        return BrandingSyncSummary(updatedKeyIds: updated, replacedKeys: notices)
    }

    /// A failure other than a dead key, as `Authenticator` calls throw it.
    private static func runtimeError(for failure: AuthorityFailure) -> AuthnRuntimeError {
        switch failure {
        case .signing(let error): .signKeypair(error)
        default: .authorityUnavailable(String(describing: failure))
        }
    }

    /// The shared device state, for tests.
    func keyRing() -> KeyRing { ring }
}
