import COpenSSL
public import Foundation

/// scrypt password-based key derivation (RFC 7914).
public enum Scrypt {
    /// Cost parameters. FaceSeal's password key uses ``recommended`` (N = 2^15, r = 8, p = 1: 32 MiB, ~0.1 s).
    public struct Parameters: Sendable, Hashable, Codable {
        /// CPU/memory cost N: a power of two, at least 2.
        public var n: UInt64
        /// Block size r.
        public var r: UInt64
        /// Parallelism p.
        public var p: UInt64

        /// Parameters N, r, p.
        public init(n: UInt64, r: UInt64, p: UInt64) {
            self.n = n
            self.r = r
            self.p = p
        }

        /// N = 2^15, r = 8, p = 1.
        public static let recommended = Parameters(n: 1 << 15, r: 8, p: 1)

        /// Memory scrypt needs for these parameters: 128·r·(N + p) bytes plus slack.
        var memoryBytes: UInt64 { 128 * r * (n + p) + 1 << 20 }
    }

    /// The largest memory a derivation may take (1 GiB): parameters read from a stored token cannot make
    /// the process allocate more.
    public static let maximumMemoryBytes: UInt64 = 1 << 30

    /// `outputByteCount` bytes of scrypt(`password`, `salt`, parameters).
    /// - Throws: ``CryptoError/incorrectParameterSize(_:)`` for N not a power of two ≥ 2, r or p zero,
    ///   more than ``maximumMemoryBytes`` of memory, or an output length outside 1…4096.
    public static func deriveKey<Password: DataProtocol, Salt: DataProtocol>(
        password: Password, salt: Salt, parameters: Parameters, outputByteCount: Int
    ) throws(CryptoError) -> SymmetricKey {
        let p = parameters
        guard p.n >= 2, p.n & (p.n - 1) == 0, p.r >= 1, p.p >= 1, p.r <= 1 << 20, p.p <= 1 << 20,
              p.n <= 1 << 30 else {
            throw .incorrectParameterSize("scrypt parameters N=\(p.n) r=\(p.r) p=\(p.p)")
        }
        guard p.memoryBytes <= maximumMemoryBytes else {
            throw .incorrectParameterSize("scrypt parameters need \(p.memoryBytes) bytes of memory")
        }
        guard (1...4096).contains(outputByteCount) else {
            throw .incorrectParameterSize("scrypt output length \(outputByteCount) not in 1...4096")
        }
        let saltBytes = [UInt8](salt)
        var failed = false
        let output = SecretBytes(count: outputByteCount) { out in
            let ok = password.withContiguousBytes { pw in
                saltBytes.withUnsafeBytes { s in
                    pw.withMemoryRebound(to: CChar.self) { pwChars in
                        // maxmem 0 would cap at 32 MiB, too little for N = 2^15, r = 8.
                        EVP_PBE_scrypt(pwChars.baseAddress ?? UnsafePointer(OpaquePointer(LibCrypto.emptyByte)), pw.count,
                                       s.uint8Base, s.count, p.n, p.r, p.p, p.memoryBytes,
                                       out.baseAddress, out.count)
                    }
                }
            }
            failed = ok != 1
        }
        guard !failed else { throw LibCrypto.failure("scrypt") }
        return SymmetricKey(secret: output)
    }
}
