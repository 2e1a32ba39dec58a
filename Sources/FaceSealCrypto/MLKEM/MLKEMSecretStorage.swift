import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Wiping and constant-time helpers for the ML-KEM code (kept local until the module-wide secret type lands).
enum MLKEMMemory {
    /// Overwrites `count` bytes with zeros in a way the optimiser may not remove as a dead store.
    static func wipe(_ pointer: UnsafeMutableRawPointer, count: Int) {
        guard count > 0 else { return }
        #if canImport(Glibc)
        explicit_bzero(pointer, count)
        #elseif canImport(Darwin)
        _ = memset_s(pointer, count, 0, count)
        #else
        pointer.initializeMemory(as: UInt8.self, repeating: 0, count: count)
        #endif
    }

    /// Wipes a whole buffer.
    static func wipe(_ buffer: UnsafeMutableRawBufferPointer) {
        if let base = buffer.baseAddress { wipe(base, count: buffer.count) }
    }

    /// Typed convenience for `wipe(_:count:)`.
    static func wipe(_ pointer: UnsafeMutablePointer<UInt8>, count: Int) {
        wipe(UnsafeMutableRawPointer(pointer), count: count)
    }
}

/// Branch-free comparison and selection on secret bytes.
enum MLKEMConstantTime {
    /// 0xFF when the two buffers are equal, 0x00 otherwise; time depends only on `count`.
    @inline(never)
    static func equalMask(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, count: Int) -> UInt8 {
        var difference: UInt8 = 0
        for i in 0..<count { difference |= a[i] ^ b[i] }
        // (difference − 1) borrows into bit 8 exactly when difference == 0.
        return UInt8(truncatingIfNeeded: (UInt32(difference) &- 1) >> 8)
    }

    /// out = mask == 0xFF ? a : b, byte-wise without a branch.
    @inline(never)
    static func select(
        _ mask: UInt8, _ a: UnsafePointer<UInt8>, otherwise b: UnsafePointer<UInt8>,
        into out: UnsafeMutablePointer<UInt8>, count: Int
    ) {
        for i in 0..<count { out[i] = b[i] ^ (mask & (a[i] ^ b[i])) }
    }

    /// Constant-time equality of two byte sequences of the same length (length itself is public).
    static func equal(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count else { return false }
        guard a.count > 0 else { return true }
        let mask = equalMask(
            a.baseAddress!.assumingMemoryBound(to: UInt8.self), b.baseAddress!.assumingMemoryBound(to: UInt8.self),
            count: a.count)
        return mask == 0xFF
    }
}

/// Heap storage for secret bytes (an ML-KEM seed, an expanded decapsulation key, a shared secret) that
/// is wiped when the last reference goes away. The bytes never change after initialisation; the mutex
/// exists so the wipe in `deinit` is a checked mutation rather than an unchecked Sendable claim.
final class MLKEMSecretStorage: Sendable {
    private let bytes: Mutex<[UInt8]>
    /// Number of bytes held.
    let count: Int

    /// Allocates `count` zero bytes and lets `initialize` fill them.
    init(count: Int, initialize: (UnsafeMutableRawBufferPointer) throws -> Void) rethrows {
        var storage = [UInt8](repeating: 0, count: count)
        do {
            try storage.withUnsafeMutableBytes { try initialize($0) }
        } catch {
            storage.withUnsafeMutableBytes { MLKEMMemory.wipe($0) }
            throw error
        }
        self.count = count
        bytes = Mutex(storage)
    }

    deinit {
        bytes.withLock { storage in
            storage.withUnsafeMutableBytes { MLKEMMemory.wipe($0) }
        }
    }

    /// Read access to the bytes; the pointer must not escape `body`.
    func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        // The result leaves through a local rather than as the lock's result, which would have to be `sending`.
        var result: Result<R, E>?
        bytes.withLock { storage in
            storage.withUnsafeBytes { raw in
                result = Result { () throws(E) -> R in try body(raw) }
            }
        }
        return try result!.get()
    }
}
