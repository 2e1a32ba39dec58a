import CFaceSealCurves
import CSodium
import Foundation

/// Ed25519 verification for keys that verify many signatures (a device's pinned authority key verifies every answer
/// and link), on FaceSeal's own tables (`CFaceSealCurves`): the key's multiples are computed once, so a verification is
/// two fixed-base combs instead of libsodium's decompression and double scalar multiplication, well under half the
/// time. Only keys libsodium calls valid points (canonical, on the curve, in the prime-order subgroup, not of small
/// order) get a table; the checks on `S` and `R` are libsodium's own, so both verifiers accept exactly the same
/// signatures (`Ed25519TableTests`).
final class Ed25519Tables: Sendable {
    static let shared = Ed25519Tables(limit: 64, threshold: 4)

    private let cache: KeyTableCache

    /// The base point's table, shared by every key: B = (x, 4/5) with x positive, encoded 0x58 then 31 bytes 0x66.
    private static let baseTable: [UInt64]? = table(for: Data([0x58] + [UInt8](repeating: 0x66, count: 31)))

    init(limit: Int, threshold: Int) {
        cache = KeyTableCache(limit: limit, threshold: threshold, build: Self.table(for:))
    }

    /// Whether `signature` (64 bytes) verifies `message` under `key` on the tables; nil when the key has none (yet):
    /// the caller then asks libsodium.
    func verify(_ signature: UnsafeRawBufferPointer, message: UnsafeRawBufferPointer, key: Data) -> Bool? {
        guard signature.count == 64, key.count == 32, let base = Self.baseTable, let table = cache.table(for: key) else { return nil }
        // h = SHA-512(R ‖ A ‖ M) mod L, as libsodium computes it.
        var hash = [UInt8](repeating: 0, count: 64)
        var state = crypto_hash_sha512_state()
        crypto_hash_sha512_init(&state)
        crypto_hash_sha512_update(&state, signature.uint8Base, 32)
        key.withUnsafeBytes { _ = crypto_hash_sha512_update(&state, $0.uint8Base, 32) }
        crypto_hash_sha512_update(&state, message.uint8Base, UInt64(message.count))
        crypto_hash_sha512_final(&state, &hash)
        var reduced = [UInt8](repeating: 0, count: 32)
        crypto_core_ed25519_scalar_reduce(&reduced, hash)
        return base.withUnsafeBufferPointer { base in
            table.withUnsafeBufferPointer { table in
                fs_ed25519_verify_with_tables(base.baseAddress, table.baseAddress, signature.uint8Base, reduced) == 0
            }
        }
    }

    /// A fresh table for `key`, or nil when libsodium does not call it a valid point.
    private static func table(for key: Data) -> [UInt64]? {
        Sodium.initialise()
        guard key.count == 32, key.withUnsafeBytes({ crypto_core_ed25519_is_valid_point($0.uint8Base) == 1 }) else { return nil }
        var table = [UInt64](repeating: 0, count: fs_ed25519_table_size() / MemoryLayout<UInt64>.size)
        let built = key.withUnsafeBytes { key in
            table.withUnsafeMutableBufferPointer { fs_ed25519_table_init($0.baseAddress, key.uint8Base) == 0 }
        }
        return built ? table : nil
    }

    /// Whether `key` has a table (tests).
    func hasTable(_ key: Data) -> Bool { cache.hasTable(key) }
}
