public import FaceSealCrypto
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a master key file was refused.
public enum MasterKeyFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file cannot be read (missing, a directory, no permission); carries the errno text.
    case unreadable(path: String, reason: String)
    /// Group or others may read or write it: the key is not secret any more.
    case tooOpen(path: String, mode: UInt32)
    /// It does not hold exactly 32 bytes.
    case wrongLength(path: String, count: Int)
    /// A new key could not be written.
    case unwritable(path: String, reason: String)

    /// What went wrong and how to fix it.
    public var description: String {
        switch self {
        case .unreadable(let path, let reason): "cannot read the master key file \(path): \(reason)"
        case .tooOpen(let path, let mode):
            "the master key file \(path) has mode \(String(mode, radix: 8)); make it readable by its owner only (chmod 600)"
        case .wrongLength(let path, let count): "the master key file \(path) must hold exactly 32 bytes, it holds \(count)"
        case .unwritable(let path, let reason): "cannot create the master key file \(path): \(reason)"
        }
    }
}

/// The authority's master key on disk: exactly 32 raw bytes in a file only its owner can read.
public enum MasterKeyFile {
    /// Length of the key.
    public static let byteCount = 32

    /// Reads the key, refusing a file that group or others can access, or that is not 32 bytes.
    public static func load(path: String) throws(MasterKeyFileError) -> SymmetricKey {
        var info = stat()
        guard stat(path, &info) == 0 else { throw .unreadable(path: path, reason: String(cString: strerror(errno))) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw .unreadable(path: path, reason: "not a regular file") }
        let mode = UInt32(info.st_mode) & 0o777
        guard mode & 0o077 == 0 else { throw .tooOpen(path: path, mode: mode) }
        guard info.st_size == byteCount else { throw .wrongLength(path: path, count: Int(info.st_size)) }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .unreadable(path: path, reason: String(cString: strerror(errno))) }
        defer { close(descriptor) }
        var failure: MasterKeyFileError?
        let secret = SecretBytes(count: byteCount) { buffer in
            var filled = 0
            while filled < byteCount {
                let count = read(descriptor, buffer.baseAddress! + filled, byteCount - filled)
                if count <= 0 {
                    failure = .wrongLength(path: path, count: filled)
                    return
                }
                filled += count
            }
        }
        if let failure { throw failure }
        return SymmetricKey(secret: secret)
    }

    /// Reads the key at `path`, or — when no file exists there — creates one with a fresh random key, mode 0600.
    /// Returns whether it was created.
    public static func loadOrCreate(path: String) throws(MasterKeyFileError) -> (key: SymmetricKey, created: Bool) {
        if access(path, F_OK) == 0 { return (try load(path: path), false) }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .unwritable(path: path, reason: String(cString: strerror(errno))) }
        let secret = SecretBytes(randomCount: byteCount)
        let written = secret.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        let synced = fsync(descriptor) == 0
        close(descriptor)
        guard written == byteCount, synced else {
            unlink(path)
            throw .unwritable(path: path, reason: "short write")
        }
        return (SymmetricKey(secret: secret), true)
    }
}

extension AuthorityKeys {
    /// The authority's keys derived from its master key: the Ed25519 device key (links, device responses) is
    /// HKDF-SHA256(master key, "faceseal/device-key/v1") used as the Ed25519 seed. Derived rather than stored, every
    /// process sharing the master key (several authorities behind a load balancer) signs with the same key, and the key
    /// devices pinned survives restarts. Rotating it means rotating the master key.
    public init(derivingFrom masterKey: SymmetricKey) throws {
        let seed = try HKDF<SHA256>.deriveKey(inputKeyMaterial: masterKey, info: Array("faceseal/device-key/v1".utf8), outputByteCount: 32)
        let deviceKey = try seed.withUnsafeBytes { try Curve25519.Signing.PrivateKey(rawRepresentation: $0) }
        try self.init(deviceKey: deviceKey, masterKey: masterKey)
    }
}
