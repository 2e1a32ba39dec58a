import CSQLiteShims
import CSQLite
import Foundation
import Synchronization

/// How hard SQLite pushes commits to disk. In WAL mode `normal` never corrupts and never tears a
/// transaction (a completion is stored whole or not at all) but may lose the newest commits on power
/// loss; `full` syncs at every commit.
public enum SQLiteSynchronous: String, Sendable {
    /// `PRAGMA synchronous = NORMAL`.
    case normal = "NORMAL"
    /// `PRAGMA synchronous = FULL`.
    case full = "FULL"
}

/// SQLite through its C library in WAL mode: one writing connection, used from one serial dispatch queue (so a
/// busy wait or an fsync blocks that queue's thread, never Swift's cooperative pool), write transactions started with
/// `BEGIN IMMEDIATE` so that several processes on one file queue on the busy timeout instead of failing
/// mid-transaction; and, once the schema is migrated, read-only connections on queues of their own for read
/// transactions (WAL readers see the last commit and never wait for the writer), so reads neither queue behind
/// writes nor hold them up. Prepared statements are cached per connection.
final class SQLiteDatabase: SQLDatabase {
    /// One connection and the serial queue that is its only user; the mutex, never contended, lets the compiler check that.
    private final class Lane: Sendable {
        let connection: Mutex<SQLiteConnection?>
        let queue: DispatchQueue

        init(_ connection: sending SQLiteConnection, label: String) {
            self.connection = Mutex(connection)
            queue = DispatchQueue(label: label)
        }

        func run<T: Sendable>(_ work: @escaping @Sendable (SQLiteConnection) throws -> T) async throws -> T {
            try await withCheckedThrowingContinuation { continuation in
                queue.async {
                    continuation.resume(with: Result {
                        try self.connection.withLock { slot -> T in
                            guard let connection = slot else { throw SQLError.unavailable("the SQLite store is closed") }
                            return try work(connection)
                        }
                    })
                }
            }
        }

        func close() async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                queue.async {
                    self.connection.withLock { $0 = nil }
                    continuation.resume()
                }
            }
        }
    }

    let dialect = SQLDialect.sqlite
    private let path: String
    private let busyTimeoutMilliseconds: Int32
    private let writer: Lane
    /// The read-only lanes, opened by `openReaders()`; empty before (and for in-memory databases, which a second
    /// connection would not share).
    private let readers = Mutex<[Lane]>([])
    private let nextReader = Atomic<Int>(0)

    /// Read-only connections opened after migration: one per core of this machine's two, more would only queue on the CPU.
    static let readerCount = 2

    init(path: String, busyTimeoutMilliseconds: Int32, synchronous: SQLiteSynchronous) throws {
        self.path = path
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        writer = Lane(try SQLiteConnection(path: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds, synchronous: synchronous),
                      label: "faceseal.store.sqlite")
    }

    /// Opens the read-only connections (after the schema is migrated, so they never see a half-made schema).
    func openReaders() throws {
        guard path != ":memory:", !path.hasPrefix("file:") else { return }
        let lanes = try (0..<Self.readerCount).map { index in
            Lane(try SQLiteConnection(path: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds, readOnly: true),
                 label: "faceseal.store.sqlite.read\(index)")
        }
        readers.withLock { $0 = lanes }
    }

    func transaction<T: Sendable>(readOnly: Bool, _ body: @escaping @Sendable (any SQLTransaction) throws -> T) async throws -> T {
        let lane = readOnly ? readers.withLock { lanes in
            lanes.isEmpty ? nil : lanes[nextReader.add(1, ordering: .relaxed).oldValue % lanes.count]
        } : nil
        return try await (lane ?? writer).run { connection in
            try Self.runTransaction(connection, readOnly: readOnly, body)
        }
    }

    private static func runTransaction<T: Sendable>(_ connection: SQLiteConnection, readOnly: Bool,
                                                    _ body: (any SQLTransaction) throws -> T) throws -> T {
        try connection.execute(readOnly ? "BEGIN DEFERRED" : "BEGIN IMMEDIATE", [])
        do {
            let result = try body(connection)
            try connection.execute("COMMIT", [])
            return result
        } catch {
            // A failed COMMIT leaves the transaction open; ROLLBACK ends it either way.
            _ = try? connection.execute("ROLLBACK", [])
            throw error
        }
    }

    func executeStandalone(_ sql: String) async throws {
        try await writer.run { connection in _ = try connection.execute(sql, []) }
    }

    /// One process owns the file's outbox wake-ups: nothing to announce or hear.
    var outboxChannel: String? { nil }

    func observeOutbox(_ handler: @escaping @Sendable (String) -> Void) async {}

    func close() async {
        for reader in readers.withLock({ lanes in defer { lanes = [] }; return lanes }) { await reader.close() }
        await writer.close()
    }
}

/// One SQLite connection and its statement cache. Used only under `SQLiteDatabase`'s mutex.
final class SQLiteConnection: SQLTransaction {
    private let db: OpaquePointer
    private var statements: [String: OpaquePointer] = [:]

    private static let constraintUnique: Int32 = 2067 // SQLITE_CONSTRAINT_UNIQUE
    private static let constraintPrimaryKey: Int32 = 1555 // SQLITE_CONSTRAINT_PRIMARYKEY
    private static let constraintForeignKey: Int32 = 787 // SQLITE_CONSTRAINT_FOREIGNKEY
    private static let preparePersistent: UInt32 = 0x01 // SQLITE_PREPARE_PERSISTENT

    /// A connection; `readOnly` opens an existing file for reading only (its WAL mode and pragmas are the writer's).
    init(path: String, busyTimeoutMilliseconds: Int32, synchronous: SQLiteSynchronous = .normal, readOnly: Bool = false) throws {
        var handle: OpaquePointer?
        // NOMUTEX: the Swift mutex around the connection already serialises every use.
        let flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &handle, flags, nil)
        guard rc == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            if let handle { sqlite3_close_v2(handle) }
            throw SQLError.unavailable("cannot open SQLite database: \(message)")
        }
        db = handle
        // The file holds encrypted server shares and credential hashes: owner-only, like the master key.
        // SQLite gives the -wal and -shm files the database file's permissions.
        if !readOnly && path != ":memory:" && !path.hasPrefix("file:") {
            try? FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        }
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, busyTimeoutMilliseconds)
        guard !readOnly else { return }
        do {
            let mode = try switchToWAL(busyTimeoutMilliseconds: busyTimeoutMilliseconds)
            guard case .text(let granted)? = mode.first?.columns["journal_mode"], granted.lowercased() == "wal" else {
                throw SQLError.unavailable("SQLite refused WAL mode for \(path)")
            }
            try execute("PRAGMA synchronous = \(synchronous.rawValue)", [])
            try execute("PRAGMA foreign_keys = ON", [])
            // A deleted row's bytes are overwritten, not left in free pages: a deleted user's face token is gone from the file.
            _ = try query("PRAGMA secure_delete = ON", [])
        } catch {
            finalizeAll()
            sqlite3_close_v2(db)
            throw error
        }
    }

    /// `PRAGMA journal_mode = WAL` (it answers with a row, so it goes through the statement path). On a new file
    /// that several processes open at once, each holds a shared lock and wants an exclusive one; SQLite answers one
    /// of them `SQLITE_BUSY` at once rather than calling the busy handler (it would deadlock), so the switch is
    /// tried again, 1 ms apart, for up to the busy timeout.
    private func switchToWAL(busyTimeoutMilliseconds: Int32) throws -> [SQLRow] {
        let deadline = ContinuousClock.now + .milliseconds(Int(busyTimeoutMilliseconds))
        while true {
            do {
                return try query("PRAGMA journal_mode = WAL", [])
            } catch {
                guard sqlite3_errcode(db) & 0xff == SQLITE_BUSY, ContinuousClock.now < deadline else { throw error }
                usleep(1_000)
            }
        }
    }

    deinit {
        finalizeAll()
        sqlite3_close_v2(db)
    }

    private func finalizeAll() {
        for statement in statements.values { sqlite3_finalize(statement) }
        statements.removeAll()
    }

    private func error(_ rc: Int32) -> SQLError {
        let message = String(cString: sqlite3_errmsg(db))
        switch rc {
        case Self.constraintUnique, Self.constraintPrimaryKey:
            return .uniqueViolation(message)
        case Self.constraintForeignKey:
            return .foreignKeyViolation(message)
        default:
            return .failed("SQLite error \(rc): \(message)")
        }
    }

    private func prepare(_ sql: String) throws -> OpaquePointer {
        if let cached = statements[sql] { return cached }
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v3(db, sql, -1, Self.preparePersistent, &statement, nil)
        guard rc == SQLITE_OK, let statement else { throw error(rc) }
        statements[sql] = statement
        return statement
    }

    private func bind(_ parameters: [SQLValue], to statement: OpaquePointer) throws {
        guard Int(sqlite3_bind_parameter_count(statement)) == parameters.count else {
            throw SQLError.failed("statement expects \(sqlite3_bind_parameter_count(statement)) parameters, got \(parameters.count)")
        }
        for (offset, value) in parameters.enumerated() {
            let index = Int32(offset + 1)
            let rc: Int32
            switch value {
            case .null:
                rc = sqlite3_bind_null(statement, index)
            case .integer(let v):
                rc = sqlite3_bind_int64(statement, index, v)
            case .text(let s):
                var s = s
                rc = s.withUTF8 { utf8 in
                    utf8.withMemoryRebound(to: CChar.self) { chars in
                        fs_sqlite_bind_text(statement, index, chars.baseAddress, Int32(chars.count))
                    }
                }
            case .blob(let bytes):
                rc = bytes.withUnsafeBytes { raw in
                    fs_sqlite_bind_blob(statement, index, raw.baseAddress, Int32(raw.count))
                }
            }
            guard rc == SQLITE_OK else { throw error(rc) }
        }
    }

    private func readRow(_ statement: OpaquePointer) -> SQLRow {
        var columns: [String: SQLValue] = [:]
        let count = sqlite3_column_count(statement)
        for column in 0..<count {
            let name = String(cString: sqlite3_column_name(statement, column))
            switch sqlite3_column_type(statement, column) {
            case SQLITE_INTEGER:
                columns[name] = .integer(sqlite3_column_int64(statement, column))
            case SQLITE_TEXT:
                let length = Int(sqlite3_column_bytes(statement, column))
                if let text = sqlite3_column_text(statement, column) {
                    columns[name] = .text(String(decoding: UnsafeBufferPointer(start: text, count: length), as: UTF8.self))
                } else {
                    columns[name] = .text("")
                }
            case SQLITE_BLOB:
                let length = Int(sqlite3_column_bytes(statement, column))
                if let bytes = sqlite3_column_blob(statement, column), length > 0 {
                    columns[name] = .blob(Array(UnsafeRawBufferPointer(start: bytes, count: length)))
                } else {
                    columns[name] = .blob([])
                }
            case SQLITE_FLOAT:
                columns[name] = .integer(Int64(sqlite3_column_double(statement, column)))
            default:
                columns[name] = .null
            }
        }
        return SQLRow(columns: columns)
    }

    private func run(_ sql: String, _ parameters: [SQLValue], collect: Bool) throws -> [SQLRow] {
        let statement = try prepare(sql)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        try bind(parameters, to: statement)
        var rows: [SQLRow] = []
        while true {
            let rc = sqlite3_step(statement)
            if rc == SQLITE_ROW {
                if collect { rows.append(readRow(statement)) }
            } else if rc == SQLITE_DONE {
                return rows
            } else {
                throw error(rc)
            }
        }
    }

    @discardableResult
    func execute(_ sql: String, _ parameters: [SQLValue]) throws -> Int {
        _ = try run(sql, parameters, collect: false)
        return Int(sqlite3_changes(db))
    }

    func query(_ sql: String, _ parameters: [SQLValue]) throws -> [SQLRow] {
        try run(sql, parameters, collect: true)
    }
}
