import FaceSealHTTPClient
public import FaceSealWire
public import Foundation

/// A Linux device with the real seams: the file vault (P-256 keys, AES-256-GCM sealed records) in
/// `vaultDirectory`, the HTTP authority client with the authority key pinned in the vault, the HTTP delivery
/// poster and the wire face tokens. The installation marker lives in `appDataDirectory`, so removing the app's
/// own data while the vault survives is seen as a reinstall.
///
/// Layout: `vaultDirectory/vault/` (keys, records, `authority.pin`, the device passphrase's check and failure count,
/// mode 0700), `vaultDirectory/vault.key` (the vault-sealing key, mode 0600), `appDataDirectory/installed`. The
/// user-present keys are sealed once more under the device passphrase (``DevicePassphrase``), which the presence
/// provider asks for: build it with ``devicePassphrase(vaultDirectory:clock:)``.
public struct FileBackedDevice: Sendable {
    /// The environment to pass to `Authenticator.open(environment:)`.
    public let environment: AuthenticatorEnvironment
    /// The authority client (also reads the link outbox: `pendingLinks(signer:wait:)`).
    public let authority: HTTPAuthorityClient
    /// The file vault.
    public let vault: FileKeyVault
    /// The pinned authority key (`vault/authority.pin`); ``AuthorityKeyPin/reset()`` is the only way to change it.
    public let authorityPin: AuthorityKeyPin

    /// Builds the device.
    /// - Parameters:
    ///   - enrolmentEpoch: the presence provider's enrolment state; a change invalidates user-present keys (the
    ///     Linux analogue of a biometric enrolment change). Constant by default.
    ///   - livenessRequired: header field of a first enrolment's new face token (see ``WireFaceTokens``); its `sub`
    ///     and `tenant` come from the enrolment details.
    public init(vaultDirectory: URL, appDataDirectory: URL, authorityURL: URL, faceVerifier: any FaceVerifier,
                userPresence: any UserPresence, deviceName: String = ProcessInfo.processInfo.hostName,
                deviceProtocol: Int = AuthenticatorEnvironment.currentDeviceProtocol, clock: any WallClock = SystemWallClock(),
                enrolmentEpoch: @escaping @Sendable () -> String = { "1" }, livenessRequired: Bool = true) throws(VaultError) {
        let sealer = try AESRecordSealer(keyFile: vaultDirectory.appendingPathComponent("vault.key"))
        let vaultRoot = vaultDirectory.appendingPathComponent("vault", isDirectory: true)
        vault = try FileKeyVault(directory: vaultRoot, installationMarker: appDataDirectory.appendingPathComponent("installed"),
                                 factory: P256SoftwareKeyFactory(), sealer: sealer, userPresence: userPresence,
                                 enrolmentEpoch: enrolmentEpoch)
        do {
            try FileManager.default.createDirectory(at: appDataDirectory, withIntermediateDirectories: true)
        } catch {
            throw .storageFailed("cannot create the app data directory")
        }
        authorityPin = try AuthorityKeyPin(file: vaultRoot.appendingPathComponent("authority.pin"))
        authority = HTTPAuthorityClient(baseURL: authorityURL, pin: authorityPin,
                                        deviceProtocol: deviceProtocol, deviceName: deviceName, clock: clock)
        environment = AuthenticatorEnvironment(
            authority: authority, delivery: HTTPDeliveryPoster(), faceVerifier: faceVerifier,
            faceTokens: WireFaceTokens(clock: clock, livenessRequired: livenessRequired),
            vault: vault, recordSealer: sealer, clock: clock, deviceProtocol: deviceProtocol)
    }
}

extension FileBackedDevice {
    /// The device passphrase of the vault under `vaultDirectory`, for the presence provider (``TerminalUserPresence``,
    /// or ``ScriptedUserPresence`` in tests and the demo).
    public static func devicePassphrase(vaultDirectory: URL, clock: any WallClock = SystemWallClock()) -> DevicePassphrase {
        DevicePassphrase(directory: vaultDirectory.appendingPathComponent("vault", isDirectory: true), clock: clock)
    }
}

extension Authenticator {
    /// The links waiting for this device on its authority (SPEC §4.6 outbox): ``pendingOutbox(from:wait:)`` without
    /// the notices (which still go to the audit log).
    public func pendingLinks(from authority: HTTPAuthorityClient, wait: Int = 0) async throws(AuthorityFailure) -> [[UInt8]] {
        try await pendingOutbox(from: authority, wait: wait).links
    }

    /// The links and notices waiting for this device on its authority (SPEC §4.6 outbox), read with each usable key's
    /// ambient key; `wait` long-polls up to that many seconds (0…30) when the device holds one key. A notice that
    /// verifies with the pinned key is recorded in the audit log; one that does not is dropped. A key the authority
    /// ended is removed (its notice kept for the next branding sync) and the other keys are still read; throws only
    /// when no key could read.
    public func pendingOutbox(from authority: HTTPAuthorityClient, wait: Int = 0) async throws(AuthorityFailure) -> PendingOutbox {
        let ring = keyRing()
        let records = ring.records.filter { ring.vault.hasKeyMaterial(deviceKeyId: $0.ambient.deviceKeyId) }
        var links: [[UInt8]] = []
        var failure: AuthorityFailure?
        var answered = false
        var queue = records[...]
        while let record = queue.popFirst() {
            do {
                let signer = try ring.signer(deviceKeyId: record.ambient.deviceKeyId, presence: nil)
                let batch = ring.absorb(try await authority.pendingLinks(signer: signer, wait: records.count == 1 ? wait : 0))
                answered = true
                for link in batch where !links.contains(Array(link.utf8)) { links.append(Array(link.utf8)) }
            } catch {
                switch error {
                case .deviceKeyRevoked, .deviceKeyTerminated, .deviceKeyReplaced:
                    answered = true
                    // A key that only outlived its rotation overlap was settled onto its new keys: read again with them.
                    if await ring.absorb(error) == nil, let settled = ring.record(keyId: record.key.id), settled.ambient != record.ambient {
                        queue.insert(settled, at: queue.startIndex)
                    }
                default:
                    failure = error
                }
            }
        }
        if !answered, let failure { throw failure }
        var notices: [DeviceNotice] = []
        for entry in links where NoticeSignature.isNotice(entry) {
            guard let notice = await authority.verifyNotice(entry), !notices.contains(notice) else { continue }
            notices.append(notice)
            ring.audit(.newDeviceNotice, identityId: nil, note: notice.summary)
        }
        return PendingOutbox(links: links.filter { !NoticeSignature.isNotice($0) }, notices: notices)
    }
}
