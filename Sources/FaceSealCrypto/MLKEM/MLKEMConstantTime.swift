import CFaceSealPQ

/// Wiping of the ML-KEM scratch memory (stack buffers that held secrets).
enum MLKEMMemory {
    /// Overwrites `count` bytes with zeros in a way the optimiser may not remove as a dead store
    /// (`memset` behind a compiler barrier: vector stores, where a byte-wise cleanse cost 4 % of a decapsulation).
    @inline(__always)
    static func wipe(_ pointer: UnsafeMutableRawPointer, count: Int) {
        guard count > 0 else { return }
        fs_pq_wipe(pointer, count)
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

/// The branch-free compare-and-select of implicit rejection (FIPS 203 Alg. 18, lines 9–10).
/// Both are kept out of line so the optimiser cannot specialise the selection on the comparison.
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
}
