import Foundation

/// One hardware key as the record file stores it: its id and its permanent protection tag.
struct DeviceKeyRecord: Sendable, Hashable, Codable {
    let deviceKeyId: String
    let protection: KeyProtection
    /// The public key (not secret), kept so a rotation can register it again.
    let publicKey: [UInt8]

    init(deviceKeyId: String, protection: KeyProtection, publicKey: [UInt8] = []) {
        self.deviceKeyId = deviceKeyId
        self.protection = protection
        self.publicKey = publicKey
    }

    init(_ descriptor: DeviceKeyDescriptor) {
        self.init(deviceKeyId: descriptor.deviceKeyId, protection: descriptor.protection, publicKey: descriptor.publicKey)
    }

    var descriptor: DeviceKeyDescriptor {
        DeviceKeyDescriptor(deviceKeyId: deviceKeyId, protection: protection, publicKey: publicKey)
    }

    private enum CodingKeys: String, CodingKey {
        case deviceKeyId = "device_key_id"
        case protection
        case publicKey = "public_key"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        deviceKeyId = try container.decode(String.self, forKey: .deviceKeyId)
        // An unknown tag is a hard failure: guessing a default could turn a prompting key silent.
        protection = try KeyProtection(tag: container.decode(String.self, forKey: .protection))
        publicKey = try container.decode([UInt8].self, forKey: .publicKey)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(deviceKeyId, forKey: .deviceKeyId)
        try container.encode(protection.rawValue, forKey: .protection)
        try container.encode(publicKey, forKey: .publicKey)
    }
}

/// Replacement keys of a rotation in progress (make-before-break, SPEC §6.2).
struct PendingRotation: Sendable, Hashable, Codable {
    var ambient: DeviceKeyRecord
    var userPresent: DeviceKeyRecord
    /// True once the authority accepted the replacement keys.
    var registered: Bool
}

/// What the device records for one enrolment. Persisted sealed by the vault.
struct KeyRecord: Sendable, Hashable, Codable {
    var key: Key
    /// The authority that enrolled it (the links' `iss`).
    var issuer: String
    var ambient: DeviceKeyRecord
    var userPresent: DeviceKeyRecord
    /// Branding cached for key lists.
    var branding: Branding?
    var pendingRotation: PendingRotation?
    /// Old hardware keys of a promoted rotation still to be deleted.
    var retiredDeviceKeyIds: [String] = []

    /// Every hardware key id the record owns (current, pending and retired).
    var allDeviceKeyIds: [String] {
        var ids = [ambient.deviceKeyId, userPresent.deviceKeyId]
        if let pending = pendingRotation { ids += [pending.ambient.deviceKeyId, pending.userPresent.deviceKeyId] }
        return ids + retiredDeviceKeyIds
    }

    /// Checks the two-key invariants: one ambient and one user-present key with distinct ids.
    func validate() throws(VaultError) {
        guard ambient.protection == .ambient, userPresent.protection == .userPresent else {
            throw .corruptRecords("key \(key.id): protections swapped")
        }
        guard ambient.deviceKeyId != userPresent.deviceKeyId else {
            throw .corruptRecords("key \(key.id): both device keys share an id")
        }
        if let pending = pendingRotation {
            guard pending.ambient.protection == .ambient, pending.userPresent.protection == .userPresent,
                pending.ambient.deviceKeyId != pending.userPresent.deviceKeyId
            else { throw .corruptRecords("key \(key.id): pending rotation malformed") }
        }
    }

    /// The record after its replacement keys were promoted: the old keys become retired.
    func promotingPendingRotation(at date: Date) -> KeyRecord {
        guard let pending = pendingRotation else { return self }
        var next = self
        next.retiredDeviceKeyIds += [ambient.deviceKeyId, userPresent.deviceKeyId]
        next.ambient = pending.ambient
        next.userPresent = pending.userPresent
        next.pendingRotation = nil
        next.key = Key(id: key.id, identityId: key.identityId, email: key.email, clientId: key.clientId, appLabel: key.appLabel, createdAt: date)
        return next
    }
}

/// The record file's plaintext format (before sealing): versioned JSON with sorted keys.
enum KeyRecordCodec {
    /// The largest record file accepted.
    static let maximumSize = 1 << 20
    static let version = 1

    private struct File: Codable {
        var v: Int
        var records: [KeyRecord]
    }

    static func encode(_ records: [KeyRecord]) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .secondsSince1970
        do {
            return Array(try encoder.encode(File(v: version, records: records)))
        } catch {
            // Every field is a plain string, number, bool or array: encoding cannot fail.
            preconditionFailure("key records failed to encode: \(error)")
        }
    }

    static func decode(_ bytes: [UInt8]) throws(VaultError) -> [KeyRecord] {
        guard bytes.count <= maximumSize else { throw .recordsTooLarge(bytes.count) }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        let file: File
        do {
            file = try decoder.decode(File.self, from: Data(bytes))
        } catch let error as VaultError {
            throw error
        } catch {
            throw .corruptRecords("record file does not parse")
        }
        guard file.v == version else { throw .corruptRecords("record file version \(file.v)") }
        var seen = Set<String>()
        for record in file.records {
            try record.validate()
            guard seen.insert(record.key.id).inserted else { throw .corruptRecords("key \(record.key.id) recorded twice") }
        }
        return file.records
    }
}

/// Reads and writes the sealed record file through the vault and the sealer.
struct KeyRecordStore: Sendable {
    let vault: any KeyVault
    let sealer: any RecordSealer

    func load() throws(VaultError) -> [KeyRecord] {
        guard let sealed = try vault.readRecordFile() else { return [] }
        return try KeyRecordCodec.decode(try sealer.open(sealed))
    }

    func save(_ records: [KeyRecord]) throws(VaultError) {
        try vault.writeRecordFile(try sealer.seal(KeyRecordCodec.encode(records)))
    }
}
