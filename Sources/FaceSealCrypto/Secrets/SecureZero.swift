import COpenSSLShims

/// Overwrites every byte of `bytes` with zero in a way the optimiser may not remove (OPENSSL_cleanse).
/// For transient plain copies of secrets that must live in an ordinary array for a moment.
public func secureZero(_ bytes: inout [UInt8]) {
    bytes.withUnsafeMutableBytes { raw in
        guard let base = raw.baseAddress else { return }
        fs_secure_zero(base, raw.count)
    }
}
