import CFaceSealEd25519
import CSodium
import Foundation
import Synchronization

/// Ed25519 verification for keys that verify many signatures (a device's pinned authority key verifies every answer
/// and link), on FaceSeal's own tables (`CFaceSealEd25519`): the key's multiples are computed once, so each
/// verification is two fixed-base combs instead of libsodium's decompression and double scalar multiplication, about
/// a third of the time. A key's table is built at its `threshold`-th verification (building costs about two
/// verifications); keys seen less often keep libsodium's verifier. Only keys libsodium calls valid points (canonical,
/// on the curve, in the prime-order subgroup, not of small order) get a table; the checks on `S` and `R` are
/// libsodium's own, so both verifiers accept exactly the same signatures (`Ed25519TableTests`).
final class Ed25519Tables: Sendable {
    static let shared = Ed25519Tables(limit: 64, threshold: 4)

    private enum Entry {
        /// Verifications so far, below the threshold.
        case counting(Int)
        /// The key's table.
        case table([UInt64])
        /// Not a valid point: libsodium decides (and refuses).
        case unusable
    }

    private let entries = Mutex<[Data: Entry]>([:])
    private let limit: Int
    private let threshold: Int

    /// The base point's table, shared by every key.
    private static let baseTable: [UInt64]? = {
        // B = (x, 4/5) with x positive: 0x58 followed by 31 bytes 0x66.
        table(for: Data([0x58] + [UInt8](repeating: 0x66, count: 31)))
    }()

    init(limit: Int, threshold: Int) {
        self.limit = limit
        self.threshold = max(1, threshold)
    }

    /// Whether `signature` (64 bytes) verifies `message` under `key` on the tables; nil when the key has none (yet):
    /// the caller then asks libsodium.
    func verify(_ signature: UnsafeRawBufferPointer, message: UnsafeRawBufferPointer, key: Data) -> Bool? {
        guard signature.count == 64, key.count == 32, let base = Self.baseTable, let table = table(for: key) else { return nil }
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

    /// The table of `key` once it was asked for `threshold` times; builds it then.
    private func table(for key: Data) -> [UInt64]? {
        enum Decision { case use([UInt64]), build, fallBack }
        let decision = entries.withLock { entries -> Decision in
            switch entries[key] {
            case .table(let table):
                return .use(table)
            case .unusable:
                return .fallBack
            case .counting(let count):
                guard count + 1 < threshold else { return .build }
                entries[key] = .counting(count + 1)
                return .fallBack
            case nil:
                if entries.count >= limit { entries.removeAll(keepingCapacity: true) }
                guard threshold > 1 else { return .build }
                entries[key] = .counting(1)
                return .fallBack
            }
        }
        switch decision {
        case .use(let table):
            return table
        case .fallBack:
            return nil
        case .build:
            let built = Self.table(for: key)
            entries.withLock { $0[key] = built.map(Entry.table) ?? .unusable }
            return built
        }
    }

    /// A fresh table for `key`, or nil when libsodium does not call it a valid point.
    private static func table(for key: Data) -> [UInt64]? {
        Sodium.initialise()
        let valid = key.withUnsafeBytes { crypto_core_ed25519_is_valid_point($0.uint8Base) == 1 }
        guard valid else { return nil }
        var table = [UInt64](repeating: 0, count: fs_ed25519_table_size() / MemoryLayout<UInt64>.size)
        let built = key.withUnsafeBytes { key in
            table.withUnsafeMutableBufferPointer { fs_ed25519_table_init($0.baseAddress, key.uint8Base) == 0 }
        }
        return built ? table : nil
    }

    /// Whether `key` has a table (tests).
    func hasTable(_ key: Data) -> Bool {
        entries.withLock { entries in
            if case .table = entries[key] { return true }
            return false
        }
    }
}
