import FaceSealCrypto
public import FaceSealWire
public import Foundation
import Synchronization

/// The Linux vault's device passphrase (SPEC §6.1): set at the first enrolment, it seals every user-present key
/// (the ambient keys stay under `vault.key`), so reading the device directory is not enough to sign as user-present.
///
/// The passphrase itself is never stored: `passphrase.json` holds its scrypt parameters and a check value (an
/// AES-GCM tag under the derived key). Wrong passphrases are counted in `passphrase-failures.json`, across prompts and
/// processes: after ``maximumFailures`` in a row every attempt is refused as locked out for ``lockout`` seconds
/// (`SignKeypairError.Code.notAvailable`). A wrong passphrase never deletes or changes a key; the right one resets the count.
public final class DevicePassphrase: Sendable {
    /// Wrong passphrases in a row before the lock-out.
    public let maximumFailures: Int
    /// How long a lock-out lasts, from the last wrong passphrase.
    public let lockout: TimeInterval

    private let directory: URL
    private let clock: any WallClock
    private let logN: Int
    /// Serialises the read-modify-write of the failure count within this process.
    private let lock = Mutex(())

    private struct Stored: Codable {
        var v: Int
        var logN: Int
        var r: Int
        var p: Int
        var salt: [UInt8]
        /// nonce ‖ tag of an empty AES-GCM plaintext under the derived key, with ``checkLabel`` as associated data.
        var check: [UInt8]

        enum CodingKeys: String, CodingKey {
            case v, r, p, salt, check
            case logN = "log_n"
        }
    }

    private struct Failures: Codable {
        var count: Int
        var last: Int64
    }

    static let checkLabel = Array("faceseal/vault/passphrase-check/v1".utf8)

    /// The passphrase of the vault in `directory` (its two files live there, mode 0600).
    /// - Parameters:
    ///   - logN: scrypt cost of a new passphrase (log2 N, 10…20; 15 ≈ 100 ms; tests use 10).
    public init(directory: URL, clock: any WallClock = SystemWallClock(), logN: Int = 15, maximumFailures: Int = 5,
                lockout: TimeInterval = 300) {
        self.directory = directory
        self.clock = clock
        self.logN = min(max(logN, 10), 20)
        self.maximumFailures = max(1, maximumFailures)
        self.lockout = max(0, lockout)
    }

    private var file: URL { directory.appendingPathComponent("passphrase.json") }
    private var failuresFile: URL { directory.appendingPathComponent("passphrase-failures.json") }

    /// Whether a passphrase was set (at the first enrolment).
    public var isSet: Bool { FileManager.default.fileExists(atPath: file.path) }

    /// Sets the passphrase and answers a proof carrying its key. Refused when one is already set.
    public func set(_ passphrase: String) throws(SignKeypairError) -> UserPresenceProof {
        guard !isSet else { throw SignKeypairError(code: .notAvailable, message: "a device passphrase is already set") }
        guard !passphrase.isEmpty else { throw SignKeypairError(code: .userCancelled, message: "an empty passphrase") }
        let salt = SecureRandom.bytes(count: 16)
        let key = try derive(passphrase, logN: logN, r: 8, p: 1, salt: salt)
        let check: [UInt8]
        do {
            let box = try AES.GCM.seal([UInt8](), using: key, authenticating: Self.checkLabel)
            check = Array(box.nonce) + Array(box.tag)
        } catch {
            throw SignKeypairError(code: .notAvailable, message: "the passphrase check could not be sealed")
        }
        let stored = Stored(v: 1, logN: logN, r: 8, p: 1, salt: salt, check: check)
        try write(stored, to: file)
        return UserPresenceProof(confirmedAt: clock.now(), passphraseKey: key)
    }

    /// Checks a typed passphrase: a proof carrying its key, or nil for a wrong one (counted). Throws `.notAvailable`
    /// while locked out (the passphrase is then not even tried) or when no passphrase is set.
    public func unlock(_ passphrase: String) throws(SignKeypairError) -> UserPresenceProof? {
        guard let stored: Stored = try read(file) else {
            throw SignKeypairError(code: .notAvailable, message: "no device passphrase is set")
        }
        let now = Int64(clock.now().timeIntervalSince1970)
        if let failures: Failures = try read(failuresFile), failures.count >= maximumFailures,
           Double(now) < Double(failures.last) + lockout {
            throw SignKeypairError(code: .notAvailable, message: "locked out after \(failures.count) wrong passphrases")
        }
        let key = try derive(passphrase, logN: stored.logN, r: stored.r, p: stored.p, salt: stored.salt)
        let matches: Bool
        if stored.check.count == AES.GCM.nonceByteCount + AES.GCM.tagByteCount,
           let nonce = try? AES.GCM.Nonce(data: stored.check.prefix(AES.GCM.nonceByteCount)),
           let box = try? AES.GCM.SealedBox(nonce: nonce, ciphertext: [UInt8](), tag: stored.check.suffix(AES.GCM.tagByteCount)) {
            matches = (try? AES.GCM.open(box, using: key, authenticating: Self.checkLabel)) != nil
        } else {
            throw SignKeypairError(code: .notAvailable, message: "the passphrase file is damaged")
        }
        try lock.withLock { _ throws(SignKeypairError) in
            if matches {
                try? FileManager.default.removeItem(at: failuresFile)
            } else {
                let previous: Failures? = try read(failuresFile)
                try write(Failures(count: (previous?.count ?? 0) + 1, last: now), to: failuresFile)
            }
        }
        return matches ? UserPresenceProof(confirmedAt: clock.now(), passphraseKey: key) : nil
    }

    /// The scrypt key of `passphrase` (32 bytes). Parameters read from the file are bounded like a token's
    /// (N ≤ 2^20, r ≤ 16, p ≤ 4), so a tampered file cannot make the device spend without limit.
    private func derive(_ passphrase: String, logN: Int, r: Int, p: Int, salt: [UInt8]) throws(SignKeypairError) -> SymmetricKey {
        guard (10...20).contains(logN), (1...16).contains(r), (1...4).contains(p), salt.count == 16 else {
            throw SignKeypairError(code: .notAvailable, message: "the passphrase file's scrypt parameters are out of bounds")
        }
        var password = Array(passphrase.utf8)
        defer { secureZero(&password) }
        do {
            return try Scrypt.deriveKey(password: password, salt: salt,
                                        parameters: Scrypt.Parameters(n: 1 << UInt64(logN), r: UInt64(r), p: UInt64(p)), outputByteCount: 32)
        } catch {
            throw SignKeypairError(code: .notAvailable, message: "scrypt failed")
        }
    }

    private func read<T: Decodable>(_ url: URL) throws(SignKeypairError) -> T? {
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        guard let data = try? Data(contentsOf: url), data.count <= 4096, let value = try? JSONDecoder().decode(T.self, from: data) else {
            throw SignKeypairError(code: .notAvailable, message: "\(url.lastPathComponent) does not parse")
        }
        return value
    }

    private func write<T: Encodable>(_ value: T, to url: URL) throws(SignKeypairError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).tmp")
        guard let data = try? encoder.encode(value),
              FileManager.default.createFile(atPath: temporary.path, contents: data, attributes: [.posixPermissions: 0o600]),
              rename(temporary.path, url.path) == 0 else {
            throw SignKeypairError(code: .notAvailable, message: "cannot write \(url.lastPathComponent)")
        }
    }
}
