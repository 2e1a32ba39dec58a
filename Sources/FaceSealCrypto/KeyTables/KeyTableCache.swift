import Foundation
import Synchronization

/// Precomputed tables of public keys that verify many signatures (`CFaceSealCurves`): a key's table is built at its
/// `threshold`-th verification (building costs a few verifications, so keys seen once or twice never pay it), then
/// kept, up to `limit` keys (all are dropped when the limit is reached, and rebuilt as their keys come back). A key
/// `build` refuses is remembered as unusable: its verifications stay with the library's generic verifier.
final class KeyTableCache: Sendable {
    private enum Entry {
        /// Verifications so far, below the threshold.
        case counting(Int)
        /// The key's table.
        case table([UInt64])
        /// `build` refused the key.
        case unusable
    }

    private let entries = Mutex<[Data: Entry]>([:])
    private let limit: Int
    private let threshold: Int
    private let build: @Sendable (Data) -> [UInt64]?

    init(limit: Int, threshold: Int, build: @escaping @Sendable (Data) -> [UInt64]?) {
        self.limit = max(1, limit)
        self.threshold = max(1, threshold)
        self.build = build
    }

    /// The table of `key`, counting this as one of its verifications; nil until the threshold, or for an unusable key.
    func table(for key: Data) -> [UInt64]? {
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
            // Built outside the lock: two threads may both build a new key's table once; the second simply replaces it.
            let built = build(key)
            entries.withLock { $0[key] = built.map(Entry.table) ?? .unusable }
            return built
        }
    }

    /// Whether `key` has a table (tests).
    func hasTable(_ key: Data) -> Bool {
        entries.withLock { entries in
            if case .table = entries[key] { return true }
            return false
        }
    }
}
