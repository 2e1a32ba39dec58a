public import Foundation
import COpenSSLShims
import Synchronization

/// Secret bytes (keys, seeds, shared secrets) in storage this object alone owns.
///
/// The storage is wiped with `fs_secure_zero` (OPENSSL_cleanse, which the optimiser may not remove)
/// when the object is released, or earlier by ``zero()``. The content is never part of `description`,
/// `debugDescription` or a reflection dump, so a secret cannot leak through logging or string interpolation.
///
/// Access goes through ``withUnsafeBytes(_:)``; the pointer must not escape the closure. Accesses are
/// serialised by a lock, so do not call a method of the *same* `SecretBytes` from inside its
/// `withUnsafeBytes` closure (other instances are fine).
public final class SecretBytes: Sendable {
    /// The bytes live in an array that never leaves the lock and is never copied or resized,
    /// so the one buffer that is zeroed is the only buffer that ever held the secret.
    private let storage: Mutex<[UInt8]>
    /// Called from `deinit` after wiping (tests only): whether every byte read back as zero, and whether
    /// the wiped buffer is the very one the secret was written into (no copy-on-write copy in between).
    private let releaseObserver: (@Sendable (_ allZero: Bool, _ sameBuffer: Bool) -> Void)?
    /// Address of the buffer at creation, compared in `deinit` for the observer.
    private let initialAddress: UInt

    /// The number of secret bytes. Fixed at creation; ``zero()`` does not change it.
    public let count: Int

    /// Copies `bytes` into secret storage. The caller remains responsible for wiping its own copy.
    public convenience init<D: DataProtocol>(_ bytes: D) {
        self.init(count: bytes.count) { buffer in
            _ = buffer.initialize(from: bytes)
        }
    }

    /// `count` bytes from the operating system's secure random generator (OpenSSL `RAND_bytes`).
    public convenience init(randomCount count: Int) {
        self.init(count: count) { buffer in
            SecureRandom.fill(UnsafeMutableRawBufferPointer(buffer))
        }
    }

    /// Creates `count` zero bytes and lets `initializer` write the secret straight into the storage,
    /// so the secret never exists in an intermediate buffer.
    public convenience init<E: Error>(
        count: Int,
        initializer: (UnsafeMutableBufferPointer<UInt8>) throws(E) -> Void
    ) throws(E) {
        try self.init(count: count, releaseObserver: nil, initializer: initializer)
    }

    init<E: Error>(
        count: Int,
        releaseObserver: (@Sendable (_ allZero: Bool, _ sameBuffer: Bool) -> Void)?,
        initializer: (UnsafeMutableBufferPointer<UInt8>) throws(E) -> Void
    ) throws(E) {
        precondition(count >= 0, "SecretBytes count must not be negative")
        var bytes = [UInt8](repeating: 0, count: count)
        do {
            try bytes.withUnsafeMutableBufferPointer { (buffer) throws(E) in try initializer(buffer) }
        } catch {
            bytes.withUnsafeMutableBytes { Self.wipe($0) }
            throw error
        }
        self.count = count
        self.releaseObserver = releaseObserver
        self.initialAddress = bytes.withUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
        self.storage = Mutex(bytes)
    }

    deinit {
        let observer = releaseObserver
        let initialAddress = initialAddress
        storage.withLock { bytes in
            bytes.withUnsafeMutableBytes { raw in
                Self.wipe(raw)
                observer?(raw.allSatisfy { $0 == 0 }, UInt(bitPattern: raw.baseAddress) == initialAddress)
            }
        }
    }

    /// Calls `body` with the secret bytes. The pointer is valid only inside `body`.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        // The result travels through a captured variable: `Mutex.withLock` wants a `sending` result,
        // which a caller-provided closure's result cannot promise.
        var result: Result<R, E>?
        storage.withLock { bytes in
            bytes.withUnsafeBytes { raw in
                do throws(E) { result = .success(try body(raw)) } catch { result = .failure(error) }
            }
        }
        // `withLock` runs its closure exactly once, so `result` is set here.
        switch result! {
        case .success(let value): return value
        case .failure(let error): throw error
        }
    }

    /// Wipes the content now (the count stays). Use it when a secret is done with before its owner is released.
    public func zero() {
        storage.withLock { bytes in
            bytes.withUnsafeMutableBytes { Self.wipe($0) }
        }
    }

    /// A copy of the secret as a plain array, for APIs that need one. The copy is *not* wiped
    /// automatically: prefer ``withUnsafeBytes(_:)``.
    public func copyBytes() -> [UInt8] {
        withUnsafeBytes { Array($0) }
    }

    static func wipe(_ raw: UnsafeMutableRawBufferPointer) {
        guard let base = raw.baseAddress, raw.count > 0 else { return }
        fs_secure_zero(base, raw.count)
    }
}

extension SecretBytes: Equatable {
    /// Constant-time content comparison (only the lengths may leak).
    public static func == (lhs: SecretBytes, rhs: SecretBytes) -> Bool {
        // The same object would deadlock on its own lock; it is trivially equal to itself.
        if lhs === rhs { return true }
        guard lhs.count == rhs.count else { return false }
        // Never hold both locks at once: `a == b` on one thread and `b == a` on another would deadlock.
        // The left side is copied into scratch memory that is wiped before it is freed.
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: max(lhs.count, 1), alignment: 1)
        defer {
            SecretBytes.wipe(scratch)
            scratch.deallocate()
        }
        let copy = UnsafeMutableRawBufferPointer(rebasing: scratch[..<lhs.count])
        lhs.withUnsafeBytes { copy.copyMemory(from: $0) }
        return rhs.withUnsafeBytes { constantTimeEquals(UnsafeRawBufferPointer(copy), $0) }
    }
}

extension SecretBytes: Hashable {
    /// Hashes the length only: equal contents have equal lengths, and a hash value must never depend on a secret.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
    }
}

extension SecretBytes: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// Names the type and the length, never the content.
    public var description: String { "SecretBytes(\(count) bytes, redacted)" }
    /// Same as ``description``: the content is never printed.
    public var debugDescription: String { description }
    /// A reflection without children, so `dump` and the debugger cannot show the content.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .class) }
}
