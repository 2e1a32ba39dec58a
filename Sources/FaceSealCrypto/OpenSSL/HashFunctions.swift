import COpenSSL
import COpenSSLShims
public import Foundation

/// A cryptographic hash function (SHA-2, SHA3), usable one-shot or incrementally, as in swift-crypto.
///
/// Incremental use: `var h = SHA256(); h.update(data: a); h.update(data: b); let d = h.finalize()`.
/// A hasher is a value: copying it forks the running state.
public protocol HashFunction {
    /// The digest this function produces.
    associatedtype Digest: FaceSealCrypto.Digest
    /// OpenSSL's name for the algorithm ("SHA256", "SHA3-256", …).
    static var algorithmName: String { get }
    /// The digest length in bytes.
    static var byteCount: Int { get }
    /// The internal block length in bytes (HMAC's key block).
    static var blockByteCount: Int { get }
    /// A hasher with empty input.
    init()
    /// Feeds more input.
    mutating func update<D: DataProtocol>(data: D)
    /// Feeds more input from a raw buffer.
    mutating func update(bufferPointer: UnsafeRawBufferPointer)
    /// The digest of everything fed so far. The hasher itself is left unchanged and can keep going.
    func finalize() -> Digest
    /// The digest of `data` in one call.
    static func hash<D: DataProtocol>(data: D) -> Digest
}

extension HashFunction {
    /// The digest of `data` in one call, through a hasher (FaceSeal's own hash functions digest in one OpenSSL call).
    public static func hash<D: DataProtocol>(data: D) -> Digest {
        var hasher = Self()
        hasher.update(data: data)
        return hasher.finalize()
    }
}

/// A hash value: fixed-length bytes, compared in constant time.
public protocol Digest: Hashable, Sendable, Sequence, ContiguousBytes, CustomStringConvertible
where Element == UInt8 {
    /// The digest length in bytes.
    static var byteCount: Int { get }
}

/// The digest of hash function `Function` (e.g. `SHA256Digest` = `HashDigest<SHA256>`).
public struct HashDigest<Function: HashFunction>: Digest {
    /// The digest bytes.
    public let bytes: [UInt8]

    /// The digest length in bytes.
    public static var byteCount: Int { Function.byteCount }

    init(bytes: [UInt8]) { self.bytes = bytes }

    /// Compares in constant time, as digests often stand in for secrets (MAC keys, token hashes).
    public static func == (lhs: Self, rhs: Self) -> Bool { constantTimeEquals(lhs.bytes, rhs.bytes) }
    /// Hashes the digest bytes (for use as a dictionary key).
    public func hash(into hasher: inout Hasher) { hasher.combine(bytes) }
    /// Iterates over the digest bytes.
    public func makeIterator() -> IndexingIterator<[UInt8]> { bytes.makeIterator() }
    /// Calls `body` with the digest bytes.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes(body)
    }
    /// The algorithm and the lowercase hex of the digest.
    public var description: String {
        "\(Function.algorithmName) digest: " + bytes.map { String(format: "%02x", $0) }.joined()
    }
}

/// A SHA-256 digest.
public typealias SHA256Digest = HashDigest<SHA256>
/// A SHA-384 digest.
public typealias SHA384Digest = HashDigest<SHA384>
/// A SHA-512 digest.
public typealias SHA512Digest = HashDigest<SHA512>
/// A SHA3-256 digest.
public typealias SHA3_256Digest = HashDigest<SHA3_256>
/// A SHA3-512 digest.
public typealias SHA3_512Digest = HashDigest<SHA3_512>

/// An `EVP_MD_CTX` owned by one hasher value; copied on write so hasher copies stay independent.
final class DigestContext {
    let context: OpaquePointer

    /// A context of the digest `algorithm` (fetched once per process, `fs_md`).
    init(_ algorithm: fs_algorithm) {
        guard let md = fs_md(algorithm), let context = EVP_MD_CTX_new() else {
            fatalError("OpenSSL lacks digest \(algorithm.rawValue): \(LibCrypto.drainErrors())")
        }
        self.context = context
        guard EVP_DigestInit_ex(context, md, nil) == 1 else {
            fatalError("EVP_DigestInit_ex(\(algorithm.rawValue)) failed: \(LibCrypto.drainErrors())")
        }
    }

    /// The digest of `data` in one `EVP_Digest` call (no hasher, no context copy).
    static func digest<D: DataProtocol>(_ algorithm: fs_algorithm, _ data: D, byteCount: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        // An array's own storage when it has one (`DataProtocol.withContiguousBytes` is generic at run time).
        let length = data.withContiguousStorageIfAvailable { bytes in fs_digest(algorithm, bytes.baseAddress, bytes.count, &out) }
            ?? data.withContiguousBytes { raw in fs_digest(algorithm, raw.baseAddress, raw.count, &out) }
        guard Int(length) == byteCount else { fatalError("EVP_Digest(\(algorithm.rawValue)) failed: \(LibCrypto.drainErrors())") }
        out.removeLast(out.count - byteCount)
        return out
    }

    private init(copying other: DigestContext) {
        guard let context = EVP_MD_CTX_new() else { fatalError("EVP_MD_CTX_new failed") }
        self.context = context
        guard EVP_MD_CTX_copy_ex(context, other.context) == 1 else {
            fatalError("EVP_MD_CTX_copy_ex failed: \(LibCrypto.drainErrors())")
        }
    }

    deinit { EVP_MD_CTX_free(context) }

    func copy() -> DigestContext { DigestContext(copying: self) }

    func update(_ raw: UnsafeRawBufferPointer) {
        guard raw.count > 0 else { return }
        // EVP_DigestUpdate only fails on a context that was never initialised, which cannot happen here.
        _ = EVP_DigestUpdate(context, raw.baseAddress, raw.count)
    }

    func finalizeCopy(byteCount: Int) -> [UInt8] {
        // Finalise a copy so the running state survives (swift-crypto's finalize is non-mutating).
        let scratch = copy()
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard EVP_DigestFinal_ex(scratch.context, &out, &length) == 1, Int(length) == byteCount else {
            fatalError("EVP_DigestFinal_ex failed: \(LibCrypto.drainErrors())")
        }
        return Array(out.prefix(byteCount))
    }
}

/// Shared implementation of the OpenSSL-backed hashers.
protocol OpenSSLHasher: HashFunction where Digest == HashDigest<Self> {
    var state: DigestContext { get set }
    /// The shim's index of the algorithm.
    static var algorithm: fs_algorithm { get }
}

extension OpenSSLHasher {
    /// Feeds more input.
    public mutating func update<D: DataProtocol>(data: D) {
        if !isKnownUniquelyReferenced(&state) { state = state.copy() }
        for region in data.regions {
            region.withUnsafeBytes { state.update($0) }
        }
    }

    /// Feeds more input from a raw buffer.
    public mutating func update(bufferPointer: UnsafeRawBufferPointer) {
        if !isKnownUniquelyReferenced(&state) { state = state.copy() }
        state.update(bufferPointer)
    }

    /// The digest of everything fed so far; the hasher can keep going.
    public func finalize() -> HashDigest<Self> {
        HashDigest(bytes: state.finalizeCopy(byteCount: Self.byteCount))
    }

    /// The digest of `data` in one OpenSSL call.
    static func oneShot<D: DataProtocol>(_ data: D) -> HashDigest<Self> {
        HashDigest(bytes: DigestContext.digest(algorithm, data, byteCount: byteCount))
    }
}

/// SHA-256 (FIPS 180-4).
public struct SHA256: HashFunction, OpenSSLHasher {
    var state = DigestContext(Self.algorithm)
    static var algorithm: fs_algorithm { FS_SHA256 }
    /// "SHA256".
    public static let algorithmName = "SHA256"
    /// 32.
    public static let byteCount = 32
    /// 64.
    public static let blockByteCount = 64
    /// A hasher with empty input.
    public init() {}
    /// The digest of `data` in one OpenSSL call.
    public static func hash<D: DataProtocol>(data: D) -> HashDigest<Self> { oneShot(data) }
    /// The digest of `data` in one OpenSSL call (bytes: no generic detour from another module).
    public static func hash(data: [UInt8]) -> HashDigest<Self> { oneShot(data) }
}

/// SHA-384 (FIPS 180-4).
public struct SHA384: HashFunction, OpenSSLHasher {
    var state = DigestContext(Self.algorithm)
    static var algorithm: fs_algorithm { FS_SHA384 }
    /// "SHA384".
    public static let algorithmName = "SHA384"
    /// 48.
    public static let byteCount = 48
    /// 128.
    public static let blockByteCount = 128
    /// A hasher with empty input.
    public init() {}
    /// The digest of `data` in one OpenSSL call.
    public static func hash<D: DataProtocol>(data: D) -> HashDigest<Self> { oneShot(data) }
    /// The digest of `data` in one OpenSSL call (bytes: no generic detour from another module).
    public static func hash(data: [UInt8]) -> HashDigest<Self> { oneShot(data) }
}

/// SHA-512 (FIPS 180-4).
public struct SHA512: HashFunction, OpenSSLHasher {
    var state = DigestContext(Self.algorithm)
    static var algorithm: fs_algorithm { FS_SHA512 }
    /// "SHA512".
    public static let algorithmName = "SHA512"
    /// 64.
    public static let byteCount = 64
    /// 128.
    public static let blockByteCount = 128
    /// A hasher with empty input.
    public init() {}
    /// The digest of `data` in one OpenSSL call.
    public static func hash<D: DataProtocol>(data: D) -> HashDigest<Self> { oneShot(data) }
    /// The digest of `data` in one OpenSSL call (bytes: no generic detour from another module).
    public static func hash(data: [UInt8]) -> HashDigest<Self> { oneShot(data) }
}

/// SHA3-256 (FIPS 202).
public struct SHA3_256: HashFunction, OpenSSLHasher {
    var state = DigestContext(Self.algorithm)
    static var algorithm: fs_algorithm { FS_SHA3_256 }
    /// "SHA3-256".
    public static let algorithmName = "SHA3-256"
    /// 32.
    public static let byteCount = 32
    /// 136 (the sponge rate).
    public static let blockByteCount = 136
    /// A hasher with empty input.
    public init() {}
    /// The digest of `data` in one OpenSSL call.
    public static func hash<D: DataProtocol>(data: D) -> HashDigest<Self> { oneShot(data) }
    /// The digest of `data` in one OpenSSL call (bytes: no generic detour from another module).
    public static func hash(data: [UInt8]) -> HashDigest<Self> { oneShot(data) }
}

/// SHA3-512 (FIPS 202).
public struct SHA3_512: HashFunction, OpenSSLHasher {
    var state = DigestContext(Self.algorithm)
    static var algorithm: fs_algorithm { FS_SHA3_512 }
    /// "SHA3-512".
    public static let algorithmName = "SHA3-512"
    /// 64.
    public static let byteCount = 64
    /// 72 (the sponge rate).
    public static let blockByteCount = 72
    /// A hasher with empty input.
    public init() {}
    /// The digest of `data` in one OpenSSL call.
    public static func hash<D: DataProtocol>(data: D) -> HashDigest<Self> { oneShot(data) }
    /// The digest of `data` in one OpenSSL call (bytes: no generic detour from another module).
    public static func hash(data: [UInt8]) -> HashDigest<Self> { oneShot(data) }
}

/// SHAKE128 extendable-output function (FIPS 202), one-shot.
public enum SHAKE128 {
    /// `outputByteCount` bytes of SHAKE128(`data`).
    public static func hash<D: DataProtocol>(data: D, outputByteCount: Int) -> [UInt8] {
        ExtendableOutput.squeeze(FS_SHAKE128, data: data, outputByteCount: outputByteCount)
    }
}

/// SHAKE256 extendable-output function (FIPS 202), one-shot.
public enum SHAKE256 {
    /// `outputByteCount` bytes of SHAKE256(`data`).
    public static func hash<D: DataProtocol>(data: D, outputByteCount: Int) -> [UInt8] {
        ExtendableOutput.squeeze(FS_SHAKE256, data: data, outputByteCount: outputByteCount)
    }
}

enum ExtendableOutput {
    static func squeeze<D: DataProtocol>(_ algorithm: fs_algorithm, data: D, outputByteCount: Int) -> [UInt8] {
        precondition(outputByteCount >= 0, "SHAKE output length must not be negative")
        let state = DigestContext(algorithm)
        for region in data.regions { region.withUnsafeBytes { state.update($0) } }
        var out = [UInt8](repeating: 0, count: outputByteCount)
        guard outputByteCount > 0 else { return out }
        guard EVP_DigestFinalXOF(state.context, &out, outputByteCount) == 1 else {
            fatalError("EVP_DigestFinalXOF failed: \(LibCrypto.drainErrors())")
        }
        return out
    }
}
