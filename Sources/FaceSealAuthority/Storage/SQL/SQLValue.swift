import Foundation

/// A value bound to or read from a SQL statement. Both backends use only these four storage classes,
/// so one statement text serves both (booleans are 0/1 integers, instants integer milliseconds).
enum SQLValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case text(String)
    case blob([UInt8])
}

/// The dialect differences the shared store logic has to know about.
enum SQLDialect: Sendable {
    case sqlite
    case postgres

    /// Row lock for read-modify-write inside a transaction. SQLite's write transaction
    /// (`BEGIN IMMEDIATE`) already excludes other writers, so it needs none.
    var forUpdate: String {
        switch self {
        case .sqlite: return ""
        case .postgres: return " FOR UPDATE"
        }
    }
}

/// Failures a backend reports, before the store turns them into `AuthorityStoreError`.
enum SQLError: Error, Sendable {
    /// A UNIQUE or PRIMARY KEY constraint was violated.
    case uniqueViolation(String)
    /// `CREATE … IF NOT EXISTS` raced with another session creating the same object (PostgreSQL).
    case alreadyExists(String)
    /// A FOREIGN KEY constraint was violated.
    case foreignKeyViolation(String)
    /// The database cannot be opened or reached.
    case unavailable(String)
    /// Anything else.
    case failed(String)
    /// Another process holds the lock and the connection was told not to wait (SQLite).
    case busy(String)
    /// A column held a type the reader did not expect.
    case typeMismatch(column: String)
}

/// The column names of one statement's result, shared by all its rows (a row is then an array, not a dictionary).
///
/// A name is found by a scan over the columns' prints (length and first seven bytes in one word), confirmed by
/// comparing the whole name: a result has tens of columns at most, and a scan of words costs less than hashing the
/// name with the standard library's seeded hash at every column a row is read by.
final class SQLColumns: Sendable {
    let names: [String]
    private let prints: [UInt64]

    init(_ names: [String]) {
        self.names = names
        prints = names.map(Self.print)
    }

    /// The first column named `name` (a repeated name, a join's `id`, answers its first column).
    func index(_ name: String) -> Int? {
        let wanted = Self.print(name)
        for (index, print) in prints.enumerated() where print == wanted && names[index] == name {
            return index
        }
        return nil
    }

    /// The name's UTF-8 length in the top byte and its first seven bytes below it. Read from the string's contiguous
    /// UTF-8 (`withUTF8`, as `HTTPHeaders.namesEqual` and the statement cache's key do): iterating `utf8.prefix(7)`
    /// checks the string's form at every byte, and a ceremony looks up ~1,000 columns.
    private static func print(_ name: String) -> UInt64 {
        var name = name
        return name.withUTF8 { bytes in
            var word = UInt64(truncatingIfNeeded: min(bytes.count, 255)) << 56
            for index in 0..<min(bytes.count, 7) {
                word |= UInt64(bytes[index]) << UInt64(8 * index)
            }
            return word
        }
    }
}

/// One result row, addressed by column name.
struct SQLRow: Sendable {
    let columns: SQLColumns
    let values: [SQLValue]

    /// The value of column `name`, if the result has one.
    subscript(_ name: String) -> SQLValue? {
        columns.index(name).map { values[$0] }
    }

    private func value(_ name: String) throws -> SQLValue {
        guard let value = self[name] else { throw SQLError.typeMismatch(column: name) }
        return value
    }

    func int(_ name: String) throws -> Int64 {
        guard case .integer(let v) = try value(name) else { throw SQLError.typeMismatch(column: name) }
        return v
    }

    func optionalInt(_ name: String) throws -> Int64? {
        switch try value(name) {
        case .null: return nil
        case .integer(let v): return v
        default: throw SQLError.typeMismatch(column: name)
        }
    }

    func text(_ name: String) throws -> String {
        guard case .text(let v) = try value(name) else { throw SQLError.typeMismatch(column: name) }
        return v
    }

    func optionalText(_ name: String) throws -> String? {
        switch try value(name) {
        case .null: return nil
        case .text(let v): return v
        default: throw SQLError.typeMismatch(column: name)
        }
    }

    func blob(_ name: String) throws -> [UInt8] {
        guard case .blob(let v) = try value(name) else { throw SQLError.typeMismatch(column: name) }
        return v
    }

    func optionalBlob(_ name: String) throws -> [UInt8]? {
        switch try value(name) {
        case .null: return nil
        case .blob(let v): return v
        default: throw SQLError.typeMismatch(column: name)
        }
    }

    func bool(_ name: String) throws -> Bool { try int(name) != 0 }

    func date(_ name: String) throws -> Date { SQLTime.date(try int(name)) }

    func optionalDate(_ name: String) throws -> Date? { try optionalInt(name).map(SQLTime.date) }
}

/// Instants are stored as integer milliseconds since 1970 in both databases.
enum SQLTime {
    /// Saturates instead of trapping: a date no caller should produce still cannot crash the process.
    static func millis(_ date: Date) -> Int64 {
        Int64(exactly: (date.timeIntervalSince1970 * 1000).rounded()) ?? (date.timeIntervalSince1970 > 0 ? .max : .min)
    }

    static func date(_ millis: Int64) -> Date {
        Date(timeIntervalSince1970: Double(millis) / 1000)
    }
}

extension SQLValue {
    static func date(_ date: Date) -> SQLValue { .integer(SQLTime.millis(date)) }
    static func optionalDate(_ date: Date?) -> SQLValue { date.map { .integer(SQLTime.millis($0)) } ?? .null }
    static func bool(_ value: Bool) -> SQLValue { .integer(value ? 1 : 0) }
    static func int(_ value: Int) -> SQLValue { .integer(Int64(value)) }
    static func optionalText(_ value: String?) -> SQLValue { value.map { .text($0) } ?? .null }
    static func optionalBlob(_ value: [UInt8]?) -> SQLValue { value.map { .blob($0) } ?? .null }
    static func optionalInt(_ value: Int64?) -> SQLValue { value.map { .integer($0) } ?? .null }
}

/// The statements of one open transaction. Statement text uses `?` placeholders; backends translate.
protocol SQLTransaction {
    /// Runs a statement and returns the number of rows it changed.
    @discardableResult
    func execute(_ sql: String, _ parameters: [SQLValue]) throws -> Int
    /// Runs a query and returns its rows.
    func query(_ sql: String, _ parameters: [SQLValue]) throws -> [SQLRow]
    /// Runs a statement whose result the caller does not wait for, at the latest before the transaction commits, in
    /// the order written: PostgreSQL sends it with the next statement or the commit, in one round trip; SQLite runs it
    /// at once. `check`, given the number of rows it changed, may throw. A failure of either is thrown by the call
    /// that sent the statement (this one, the next statement's, or the commit), and so fails the transaction.
    func executeDeferred(_ sql: String, _ parameters: [SQLValue], check: (@Sendable (Int) throws -> Void)?) throws
}

extension SQLTransaction {
    func executeDeferred(_ sql: String, _ parameters: [SQLValue], check: (@Sendable (Int) throws -> Void)?) throws {
        let changed = try execute(sql, parameters)
        try check?(changed)
    }

    /// `executeDeferred` without a check of the rows changed.
    func executeDeferred(_ sql: String, _ parameters: [SQLValue]) throws {
        try executeDeferred(sql, parameters, check: nil)
    }
}

extension SQLDatabase {
    /// A read-write transaction.
    func transaction<T: Sendable>(_ body: @escaping @Sendable (any SQLTransaction) throws -> T) async throws -> T {
        try await transaction(readOnly: false, body)
    }
}

/// The statement of a `readStatement` body: the first runs, a second throws (it would not read the first one's snapshot).
final class SingleStatement: SQLTransaction {
    private let base: any SQLTransaction
    private var ran = false

    init(_ base: any SQLTransaction) { self.base = base }

    private func take() throws {
        guard !ran else { throw SQLError.failed("a one-statement read ran a second statement") }
        ran = true
    }

    func execute(_ sql: String, _ parameters: [SQLValue]) throws -> Int {
        try take()
        return try base.execute(sql, parameters)
    }

    func query(_ sql: String, _ parameters: [SQLValue]) throws -> [SQLRow] {
        try take()
        return try base.query(sql, parameters)
    }
}

extension SQLTransaction {
    func queryOne(_ sql: String, _ parameters: [SQLValue]) throws -> SQLRow? {
        try query(sql, parameters).first
    }
}

/// A database the SQL store runs on. `transaction` runs `body` inside one transaction on one
/// connection: commit when it returns, roll back when it throws. The body runs synchronously on a
/// thread of the backend's own (blocking calls into the C library never occupy the cooperative pool);
/// the caller awaits its result.
protocol SQLDatabase: Sendable {
    var dialect: SQLDialect { get }
    /// - Parameter readOnly: the body only reads. SQLite then takes no write lock (`BEGIN DEFERRED`);
    ///   PostgreSQL runs each statement on its own (no BEGIN/COMMIT round trips).
    func transaction<T: Sendable>(readOnly: Bool, _ body: @escaping @Sendable (any SQLTransaction) throws -> T) async throws -> T
    /// Runs `body`, a read of one statement (a second throws), on its own: SQLite then opens no transaction around it
    /// (a statement reads one snapshot by itself), saving a `BEGIN` and a `COMMIT`; PostgreSQL runs it as any read.
    func readStatement<T: Sendable>(_ body: @escaping @Sendable (any SQLTransaction) throws -> T) async throws -> T
    /// Runs statements outside any transaction (schema set-up that must precede locking).
    func executeStandalone(_ sql: String) async throws
    /// Takes content that committed transactions deleted out of the files beside the database where the engine still
    /// keeps it (SQLite's WAL: copied back and truncated); nothing to do on PostgreSQL.
    func truncateJournal() async throws
    /// Releases connections.
    func close() async
    /// The channel a queued link is announced on to every process on this database (PostgreSQL `NOTIFY`, sent at
    /// commit); nil when no other process can hear it (SQLite).
    var outboxChannel: String? { get }
    /// Calls `handler` with the device id of every link queued from now on by any process on this database; returns
    /// once it listens. Does nothing where `outboxChannel` is nil.
    func observeOutbox(_ handler: @escaping @Sendable (String) -> Void) async
}
