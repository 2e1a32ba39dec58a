import CFaceSealCurves
import Foundation

/// ECDSA P-256 verification for keys that verify many signatures (the authority checks a device key's signature at
/// every device request), on FaceSeal's own tables (`CFaceSealCurves`): the key's multiples are computed once, so
/// a verification is two fixed-base combs, under half of OpenSSL's time. The same decision as OpenSSL's verification
/// (r and s in 1..<n, the point not at infinity, x mod n = r), tested against it (`P256TableTests`).
final class P256Tables: Sendable {
    static let shared = P256Tables(limit: 512, threshold: 4)

    private let cache: KeyTableCache

    /// The generator's table, shared by every key.
    private static let generatorTable: [UInt64]? = {
        var table = [UInt64](repeating: 0, count: fs_p256_generator_table_size() / MemoryLayout<UInt64>.size)
        let built = table.withUnsafeMutableBufferPointer { fs_p256_generator_table_init($0.baseAddress) == 0 }
        return built ? table : nil
    }()

    init(limit: Int, threshold: Int) {
        cache = KeyTableCache(limit: limit, threshold: threshold, build: Self.table(for:))
    }

    /// Whether `signature` (r ‖ s, 64 bytes) is a valid signature of SHA-256(`message`) under `key` (the 65-byte
    /// uncompressed point) on the tables; nil when the key has none (yet): the caller then asks OpenSSL.
    func verify<D: DataProtocol>(_ signature: Data, message: D, key: Data) -> Bool? {
        guard signature.count == 64, Self.generatorTable != nil, let table = cache.table(for: key) else { return nil }
        return table.withUnsafeBufferPointer { Self.verify(signature, digest: SHA256.hash(data: message), keyTable: $0) }
    }

    /// The verification on a key table wherever it lies: false when it is not where it was filled (its entries start
    /// at a cache-line boundary found from its own address: a copy elsewhere would read them a few words off).
    static func verify(_ signature: Data, digest: SHA256Digest, keyTable: UnsafeBufferPointer<UInt64>) -> Bool {
        guard signature.count == 64, let generator = generatorTable,
              keyTable.count * MemoryLayout<UInt64>.size >= fs_p256_table_size() else { return false }
        return generator.withUnsafeBufferPointer { generator in
            digest.withUnsafeBytes { digest in
                signature.withUnsafeBytes { signature in
                    fs_p256_verify_with_tables(generator.baseAddress, keyTable.baseAddress, digest.uint8Base, signature.uint8Base) == 0
                }
            }
        }
    }

    /// A fresh table for the uncompressed point `key` (0x04 ‖ x ‖ y), or nil when it is not a point of the curve.
    static func table(for key: Data) -> [UInt64]? {
        let point = [UInt8](key)
        guard point.count == 65, point[0] == 0x04 else { return nil }
        var table = [UInt64](repeating: 0, count: fs_p256_table_size() / MemoryLayout<UInt64>.size)
        let built = table.withUnsafeMutableBufferPointer { table in
            point.withUnsafeBufferPointer { fs_p256_table_init(table.baseAddress, $0.baseAddress! + 1, $0.baseAddress! + 33) == 0 }
        }
        return built ? table : nil
    }

    /// Whether `key` has a table (tests).
    func hasTable(_ key: Data) -> Bool { cache.hasTable(key) }
}
