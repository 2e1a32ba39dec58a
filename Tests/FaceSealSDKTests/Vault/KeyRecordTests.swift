import Foundation
import Testing
@testable import FaceSealSDK

/// The key-record model: the permanent protection tag, the two-key invariants, size limits and
/// the pure reconciliation plan of `open()`.
@Suite struct KeyRecordTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func record(_ id: String = "key-1", ambient: String = "dk-a", userPresent: String = "dk-u") -> KeyRecord {
        KeyRecord(
            key: Key(id: id, identityId: "id-1", email: "ada@example.com", clientId: "acme", appLabel: "Acme", createdAt: Date(timeIntervalSince1970: 1_700_000_000)),
            issuer: "https://authority.test",
            ambient: DeviceKeyRecord(deviceKeyId: ambient, protection: .ambient, publicKey: [1]),
            userPresent: DeviceKeyRecord(deviceKeyId: userPresent, protection: .userPresent, publicKey: [2])
        )
    }

    @Test func recordsRoundTrip() throws {
        var pending = Self.record()
        pending.pendingRotation = PendingRotation(
            ambient: DeviceKeyRecord(deviceKeyId: "dk-a2", protection: .ambient, publicKey: [3]),
            userPresent: DeviceKeyRecord(deviceKeyId: "dk-u2", protection: .userPresent, publicKey: [4]), registered: false
        )
        pending.branding = Branding(displayName: "Acme", logoURL: URL(string: "https://acme.test/l.png"))
        let records = [pending, Self.record("key-2", ambient: "dk-b", userPresent: "dk-v")]
        #expect(try KeyRecordCodec.decode(KeyRecordCodec.encode(records)) == records)
        #expect(KeyRecordCodec.encode(records) == KeyRecordCodec.encode(records), "stable bytes (sorted keys)")
    }

    @Test(arguments: ["biometric", "", "USER_PRESENT", "ambient "])
    func anUnknownProtectionTagIsAHardFailure(tag: String) throws {
        let text = String(decoding: KeyRecordCodec.encode([Self.record()]), as: UTF8.self)
            .replacingOccurrences(of: "\"user_present\"", with: "\"\(tag)\"")
        #expect(throws: VaultError.unknownProtectionTag(tag)) { try KeyRecordCodec.decode(Array(text.utf8)) }
        #expect(throws: VaultError.unknownProtectionTag(tag)) { try KeyProtection(tag: tag) }
    }

    @Test func swappedProtectionsOrASharedIdAreRefused() {
        var swapped = Self.record()
        swapped.ambient = DeviceKeyRecord(deviceKeyId: "dk-a", protection: .userPresent)
        swapped.userPresent = DeviceKeyRecord(deviceKeyId: "dk-u", protection: .ambient)
        #expect(throws: VaultError.corruptRecords("key key-1: protections swapped")) { try KeyRecordCodec.decode(KeyRecordCodec.encode([swapped])) }
        let shared = Self.record(ambient: "dk-x", userPresent: "dk-x")
        #expect(throws: VaultError.corruptRecords("key key-1: both device keys share an id")) { try KeyRecordCodec.decode(KeyRecordCodec.encode([shared])) }
        #expect(throws: VaultError.corruptRecords("key key-1 recorded twice")) {
            try KeyRecordCodec.decode(KeyRecordCodec.encode([Self.record(), Self.record(ambient: "dk-b", userPresent: "dk-v")]))
        }
    }

    @Test func malformedOversizedOrFutureFilesAreRefused() {
        #expect(throws: VaultError.corruptRecords("record file does not parse")) { try KeyRecordCodec.decode(Array("{\"v\":1".utf8)) }
        #expect(throws: VaultError.recordsTooLarge(KeyRecordCodec.maximumSize + 1)) {
            try KeyRecordCodec.decode([UInt8](repeating: 0x20, count: KeyRecordCodec.maximumSize + 1))
        }
        #expect(throws: VaultError.corruptRecords("record file version 2")) { try KeyRecordCodec.decode(Array(#"{"records":[],"v":2}"#.utf8)) }
    }

    @Test func theStoreSealsWhatItWritesAndRefusesAForeignFile() throws {
        let clock = FixedClock()
        let vault = FakeVault(clock: clock)
        let store = KeyRecordStore(vault: vault, sealer: FakeSealer())
        try store.save([Self.record()])
        #expect(try vault.readRecordFile()?.starts(with: FakeSealer.magic) == true)
        #expect(try store.load() == [Self.record()])
        try vault.writeRecordFile(Array("plain".utf8))
        #expect(throws: VaultError.sealFailure("not sealed by this key")) { try store.load() }
    }

    @Test func thePlanPromotesRegisteredRotationsDiscardsVanishedOnesAndChecksTheRest() {
        func pending(_ record: KeyRecord, _ suffix: String, registered: Bool) -> KeyRecord {
            var r = record
            r.pendingRotation = PendingRotation(
                ambient: DeviceKeyRecord(deviceKeyId: "n-a-\(suffix)", protection: .ambient),
                userPresent: DeviceKeyRecord(deviceKeyId: "n-u-\(suffix)", protection: .userPresent), registered: registered
            )
            return r
        }
        let registered = pending(Self.record("k1", ambient: "a1", userPresent: "u1"), "1", registered: true)
        let vanished = pending(Self.record("k2", ambient: "a2", userPresent: "u2"), "2", registered: false)
        let unsure = pending(Self.record("k3", ambient: "a3", userPresent: "u3"), "3", registered: false)
        var retired = Self.record("k4", ambient: "a4", userPresent: "u4")
        retired.retiredDeviceKeyIds = ["old-a", "old-u"]
        let present: Set<String> = ["a1", "u1", "n-a-1", "n-u-1", "a2", "u2", "a3", "u3", "n-a-3", "n-u-3", "a4", "u4"]
        let plan = VaultReconciliation.plan(records: [registered, vanished, unsure, retired], freshInstall: false, hasKeyMaterial: present.contains, now: Self.now)
        #expect(plan.records[0].ambient.deviceKeyId == "n-a-1" && plan.records[0].pendingRotation == nil)
        #expect(plan.records[1].pendingRotation == nil && plan.records[1].ambient.deviceKeyId == "a2")
        #expect(plan.records[2] == unsure)
        #expect(plan.keyIdsToCheck == ["k3"])
        #expect(Set(plan.deleteDeviceKeyIds) == ["a1", "u1", "n-a-2", "n-u-2", "old-a", "old-u"])
        #expect(plan.records[0].retiredDeviceKeyIds.isEmpty && plan.records[3].retiredDeviceKeyIds.isEmpty)
    }

    @Test func aFreshInstallClearsEverything() {
        let plan = VaultReconciliation.plan(records: [Self.record()], freshInstall: true, hasKeyMaterial: { _ in true }, now: Self.now)
        #expect(plan.records.isEmpty)
        #expect(plan.deleteDeviceKeyIds == ["dk-a", "dk-u"])
    }

    @Test func resolvingAPendingRotationFollowsTheAuthority() {
        var record = Self.record()
        record.pendingRotation = PendingRotation(
            ambient: DeviceKeyRecord(deviceKeyId: "n-a", protection: .ambient),
            userPresent: DeviceKeyRecord(deviceKeyId: "n-u", protection: .userPresent), registered: false
        )
        let active = VaultReconciliation.resolve(record, newKeyStatus: .active, now: Self.now)
        #expect(active.record?.ambient.deviceKeyId == "n-a" && active.delete == ["dk-a", "dk-u"] && active.notice == nil)
        let unknown = VaultReconciliation.resolve(record, newKeyStatus: .unknown, now: Self.now)
        #expect(unknown.record == Self.record() && unknown.delete == ["n-a", "n-u"])
        let revoked = VaultReconciliation.resolve(record, newKeyStatus: .revoked(terminated: true, replaced: false), now: Self.now)
        #expect(revoked.record == nil && Set(revoked.delete) == ["dk-a", "dk-u", "n-a", "n-u"])
        #expect(revoked.notice == RevokedKeyNotice(key: record.key, terminated: true, replaced: false))
    }
}
