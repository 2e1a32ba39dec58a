public import FaceSealWire
import Foundation
import Synchronization

/// Where an `SQLAuthorityStore` keeps its data.
public enum StoreLocation: Sendable, Hashable {
    /// An SQLite file (created if missing), in WAL mode.
    case sqlite(path: String, busyTimeoutMilliseconds: Int32 = 5_000, synchronous: SQLiteSynchronous = .normal)
    /// A PostgreSQL database reached through a libpq URI (`postgres://user@host:port/db`), with a pool of
    /// `poolSize` connections. `schema` (lower-case letters, digits, `_`) isolates the store in its own
    /// schema, created if missing; `nil` uses the server's default search path.
    case postgres(url: String, poolSize: Int = 4, schema: String? = nil)

    /// Parses a `--database` value: a `postgres://` or `postgresql://` URI, else an SQLite file path.
    public static func parse(_ value: String) -> StoreLocation {
        if value.hasPrefix("postgres://") || value.hasPrefix("postgresql://") {
            return .postgres(url: value)
        }
        return .sqlite(path: value)
    }
}

/// The authority's store on SQL: one implementation of every operation over two backends, SQLite (the
/// embedded default) and PostgreSQL. Open it with `open(_:clock:)`; the schema is migrated on open.
public final class SQLAuthorityStore: AuthorityStore {
    let database: any SQLDatabase
    /// `database` when it is SQLite, called as such: its generic transactions are then specialised for each result type
    /// (through the existential they ran unspecialised, looking up type metadata and copying results through witness
    /// tables at every call).
    private let sqlite: SQLiteDatabase?
    let clock: any WallClock
    private let databaseErrors = Atomic<UInt64>(0)
    /// When the replay cache's expired entries are next deleted (`insertJTI`), in milliseconds since 1970.
    let nextJTISweep = Atomic<Int64>(0)

    init(database: any SQLDatabase, clock: any WallClock) {
        self.database = database
        sqlite = database as? SQLiteDatabase
        self.clock = clock
    }

    /// Opens (and migrates) the store at `location`. Throws `.unavailable` when the database cannot be
    /// opened or reached, `.schemaTooNew` when a newer build already migrated it.
    public static func open(_ location: StoreLocation, clock: any WallClock = SystemWallClock()) async throws -> SQLAuthorityStore {
        let database: any SQLDatabase
        do {
            switch location {
            case .sqlite(let path, let busyTimeout, let synchronous):
                database = try SQLiteDatabase(path: path, busyTimeoutMilliseconds: busyTimeout, synchronous: synchronous)
            case .postgres(let url, let poolSize, let schema):
                database = try await PostgresDatabase(url: url, schema: schema, poolSize: poolSize)
            }
        } catch {
            throw Self.storeError(error)
        }
        do {
            try await SchemaMigrator.migrate(database, clock: clock)
        } catch {
            await database.close()
            throw Self.storeError(error)
        }
        return SQLAuthorityStore(database: database, clock: clock)
    }

    /// The schema versions recorded in `schema_migrations`, ascending.
    public func appliedSchemaVersions() async throws -> [Int] {
        try await readStatement { tx, _ in
            try tx.query("SELECT version FROM schema_migrations ORDER BY version", []).map { Int(try $0.int("version")) }
        }
    }

    public func close() async {
        await database.close()
    }

    // MARK: Transactions and error mapping

    /// Runs `body` in one transaction with the clock's current instant, after remembering `replay`'s `jti` (a seen one
    /// throws `ReplayedRequest`). A unique violation becomes `.conflict(conflict)`, other database failures typed errors;
    /// a throw rolls everything back. `statement`: a read of one statement (`SQLDatabase.readStatement`).
    func transact<T: Sendable>(
        conflict: (StoredEntity, String)? = nil, readOnly: Bool = false, statement: Bool = false, registering replay: JTIRegistration? = nil,
        _ body: @escaping @Sendable (any SQLTransaction, Date) throws -> T
    ) async throws -> T {
        let clock = self.clock
        if let replay { try Self.checkIdentifier(replay.jti, field: "jti") }
        let run: @Sendable (any SQLTransaction) throws -> T = { tx in
            let now = clock.now()
            if let replay { try self.insertJTI(tx, replay, now: now) }
            return try body(tx, now)
        }
        do {
            if let sqlite { return try await statement ? sqlite.readStatement(run) : sqlite.transaction(readOnly: readOnly, run) }
            return try await statement ? database.readStatement(run) : database.transaction(readOnly: readOnly, run)
        } catch SQLError.uniqueViolation(let message) {
            if let conflict { throw AuthorityStoreError.conflict(conflict.0, id: conflict.1) }
            throw AuthorityStoreError.database("unique constraint: \(message)")
        } catch let limit as PendingRequestLimitReached {
            throw limit
        } catch let limit as BrowserSignInLimitReached {
            throw limit
        } catch let replayed as ReplayedRequest {
            throw replayed
        } catch {
            let mapped = Self.storeError(error)
            switch mapped {
            case .database, .unavailable: databaseErrors.add(1, ordering: .relaxed)
            default: break
            }
            throw mapped
        }
    }

    public var databaseErrorCount: UInt64 { databaseErrors.load(ordering: .relaxed) }

    /// Reads only: no write lock on SQLite, no BEGIN/COMMIT on PostgreSQL.
    func read<T: Sendable>(_ body: @escaping @Sendable (any SQLTransaction, Date) throws -> T) async throws -> T {
        try await transact(readOnly: true, body)
    }

    /// A read of one statement (a second throws): on SQLite not even a BEGIN/COMMIT around it.
    func readStatement<T: Sendable>(_ body: @escaping @Sendable (any SQLTransaction, Date) throws -> T) async throws -> T {
        try await transact(statement: true, body)
    }

    static func storeError(_ error: any Error) -> AuthorityStoreError {
        switch error {
        case let error as AuthorityStoreError:
            return error
        case SQLError.unavailable(let message):
            return .unavailable(message)
        case SQLError.uniqueViolation(let message):
            return .database("unique constraint: \(message)")
        case SQLError.foreignKeyViolation(let message):
            return .database("foreign key: \(message)")
        case SQLError.alreadyExists(let message):
            return .database(message)
        case SQLError.failed(let message), SQLError.busy(let message):
            return .database(message)
        case SQLError.typeMismatch(let column):
            return .database("unexpected value in column \(column)")
        default:
            return .database(String(describing: error))
        }
    }
}

// MARK: - Input checks shared by the operations

extension SQLAuthorityStore {
    /// Identifiers are non-empty, at most 256 bytes, and free of control characters.
    static func checkIdentifier(_ value: String, field: String) throws {
        guard !value.isEmpty else { throw AuthorityStoreError.invalidInput(field: field, reason: "empty") }
        guard value.utf8.count <= 256 else { throw AuthorityStoreError.invalidInput(field: field, reason: "longer than 256 bytes") }
        guard !value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw AuthorityStoreError.invalidInput(field: field, reason: "contains control characters")
        }
    }

    static func checkLength(_ value: String, field: String, max: Int) throws {
        guard value.utf8.count <= max else { throw AuthorityStoreError.invalidInput(field: field, reason: "longer than \(max) bytes") }
    }

    /// Thresholds are stored in millionths.
    static let thresholdScale = 1_000_000.0

    /// A threshold within `MatchPolicy.thresholdRange` in millionths (checked by `checkPolicy` before it is stored).
    static func thresholdMicros(_ threshold: Double) -> Int64 { Int64((threshold * thresholdScale).rounded()) }

    static func checkPolicy(_ policy: TenantPolicy) throws {
        guard !policy.keyAlgorithms.isEmpty else { throw AuthorityStoreError.invalidInput(field: "keyAlgorithms", reason: "empty") }
        for algorithm in policy.keyAlgorithms {
            try checkIdentifier(algorithm, field: "keyAlgorithms")
            guard !algorithm.contains(",") else { throw AuthorityStoreError.invalidInput(field: "keyAlgorithms", reason: "contains a comma") }
        }
        guard Set(policy.keyAlgorithms).count == policy.keyAlgorithms.count else {
            throw AuthorityStoreError.invalidInput(field: "keyAlgorithms", reason: "duplicates")
        }
        guard (1...100).contains(policy.attemptsMax) else { throw AuthorityStoreError.invalidInput(field: "attemptsMax", reason: "outside 1…100") }
        guard (1...100).contains(policy.captureRetriesMax) else {
            throw AuthorityStoreError.invalidInput(field: "captureRetriesMax", reason: "outside 1…100")
        }
        // Range first (it excludes NaN and infinities), then exactness in millionths, as stored.
        guard MatchPolicy.thresholdRange.contains(policy.matchThreshold),
              Double(thresholdMicros(policy.matchThreshold)) / thresholdScale == policy.matchThreshold else {
            throw AuthorityStoreError.invalidInput(field: "matchThreshold", reason: "outside 0.1…1.0 or more than 6 decimals")
        }
        guard (0...1024).contains(policy.passwordPolicy.minimumLength) else {
            throw AuthorityStoreError.invalidInput(field: "passwordPolicy.minimumLength", reason: "outside 0…1024")
        }
        guard (1...86_400).contains(policy.requestLifetimeSeconds) else {
            throw AuthorityStoreError.invalidInput(field: "requestLifetimeSeconds", reason: "outside 1…86400")
        }
    }
}
