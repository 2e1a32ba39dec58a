import CLibPQ
import Foundation
import Synchronization

/// PostgreSQL through libpq: a small pool of connections, each used by one transaction at a time.
/// Every statement is sent with binary parameters (never string-spliced values), prepared once per connection; a
/// transaction's `BEGIN` and its deferred statements (`SQLTransaction.executeDeferred`) go in one pipeline with its next
/// statement or its `COMMIT`, one round trip for all.
final class PostgresDatabase: SQLDatabase {
    let dialect = SQLDialect.postgres
    private let pool: PostgresPool
    /// Hears the links other processes queue (started by the first `observeOutbox`).
    private let listener: PostgresListener

    /// - Parameters:
    ///   - url: a libpq connection URI (`postgres://user@host:port/db`).
    ///   - schema: the schema the store lives in (created if missing); `nil` keeps the server's default.
    init(url: String, schema: String?, poolSize: Int) async throws {
        if let schema {
            guard !schema.isEmpty, schema.count <= 63,
                schema.utf8.allSatisfy({ ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5F }),
                let first = schema.utf8.first, !(first >= 0x30 && first <= 0x39)
            else {
                throw AuthorityStoreError.invalidInput(field: "schema", reason: "lower-case letters, digits and _ only, not starting with a digit, at most 63")
            }
        }
        pool = PostgresPool(url: url, schema: schema, maxSize: max(1, poolSize))
        listener = PostgresListener(url: url, channel: PostgresListener.channel(schema: schema))
        // Fail now, not at the first request, when the server is unreachable.
        let connection = try await pool.acquire()
        pool.release(connection)
    }

    func transaction<T: Sendable>(readOnly: Bool, _ body: @escaping @Sendable (any SQLTransaction) throws -> T) async throws -> T {
        var attempt = 0
        while true {
            attempt += 1
            let pooled = try await pool.acquire()
            defer { pool.release(pooled) }
            do {
                return try await pooled.run { connection -> T in
                    try connection.prepareForUse()
                    // Reads need no atomicity: skipping BEGIN/COMMIT saves two round trips.
                    if readOnly {
                        let result = try body(connection)
                        try connection.flush()
                        return result
                    }
                    connection.begin()
                    do {
                        let result = try body(connection)
                        try connection.commit()
                        return result
                    } catch {
                        connection.rollbackQuietly()
                        throw error
                    }
                }
            } catch PostgresRetry.serializationFailure where attempt < 5 {
                // A deadlock or serialization failure rolled everything back: the body may run again.
                continue
            } catch PostgresRetry.serializationFailure {
                throw SQLError.failed("transaction aborted by repeated serialization failures")
            }
        }
    }

    func readStatement<T: Sendable>(_ body: @escaping @Sendable (any SQLTransaction) throws -> T) async throws -> T {
        try await transaction(readOnly: true) { try body(SingleStatement($0)) }
    }

    func executeStandalone(_ sql: String) async throws {
        let pooled = try await pool.acquire()
        defer { pool.release(pooled) }
        try await pooled.run { connection in
            try connection.prepareForUse()
            _ = try connection.execute(sql, [])
        }
    }

    /// PostgreSQL keeps no deleted row's content in a file beside the database the way SQLite's WAL does.
    func truncateJournal() async throws {}

    var outboxChannel: String? { listener.channel }

    func observeOutbox(_ handler: @escaping @Sendable (String) -> Void) async {
        await listener.add(handler)
    }

    func close() async {
        listener.stop()
        pool.close()
    }
}

/// Signals a transaction the server aborted for concurrency reasons (SQLSTATE 40001, 40P01).
enum PostgresRetry: Error {
    case serializationFailure
}

/// A pooled connection with its own serial dispatch queue: libpq blocks on the network, so its calls run
/// on that queue's thread and never occupy Swift's cooperative pool. The pool hands the connection to one
/// transaction at a time; the mutex makes that exclusive ownership checkable and is never contended.
final class PooledPostgresConnection: Sendable {
    let connection: Mutex<PostgresConnection>
    private let queue = DispatchQueue(label: "faceseal.store.postgres")

    init(_ connection: sending PostgresConnection) {
        self.connection = Mutex(connection)
    }

    /// Runs `body` with the connection on the connection's queue and awaits its result.
    func run<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { try self.connection.withLock { try body($0) } })
            }
        }
    }
}

/// A bounded pool: idle connections are reused, new ones opened up to `maxSize`, and callers beyond
/// that wait (without blocking a thread) until one is released.
final class PostgresPool: Sendable {
    private struct State {
        var idle: [PooledPostgresConnection] = []
        var open = 0
        var waiters: [CheckedContinuation<PooledPostgresConnection, any Error>] = []
        var closed = false
    }

    private enum Decision {
        case use(PooledPostgresConnection)
        case create
        case wait
        case closed
    }

    private let state = Mutex(State())
    private let url: String
    private let schema: String?
    private let maxSize: Int

    init(url: String, schema: String?, maxSize: Int) {
        self.url = url
        self.schema = schema
        self.maxSize = maxSize
    }

    func acquire() async throws -> PooledPostgresConnection {
        let decision = state.withLock { state -> Decision in
            if state.closed { return .closed }
            if let connection = state.idle.popLast() { return .use(connection) }
            if state.open < maxSize {
                state.open += 1
                return .create
            }
            return .wait
        }
        switch decision {
        case .use(let connection):
            return connection
        case .closed:
            throw SQLError.unavailable("the PostgreSQL store is closed")
        case .create:
            do {
                return try await Self.connect(url: url, schema: schema)
            } catch {
                state.withLock { $0.open -= 1 }
                throw error
            }
        case .wait:
            return try await withCheckedThrowingContinuation { continuation in
                let ready = state.withLock { state -> PooledPostgresConnection? in
                    if let connection = state.idle.popLast() { return connection }
                    state.waiters.append(continuation)
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }
    }

    /// Connecting blocks on the network too: do it on a dispatch thread.
    private static func connect(url: String, schema: String?) async throws -> PooledPostgresConnection {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue(label: "faceseal.store.postgres.connect").async {
                continuation.resume(with: Result { PooledPostgresConnection(try PostgresConnection(url: url, schema: schema)) })
            }
        }
    }

    func release(_ connection: PooledPostgresConnection) {
        let waiter = state.withLock { state -> CheckedContinuation<PooledPostgresConnection, any Error>? in
            if !state.waiters.isEmpty { return state.waiters.removeFirst() }
            if state.closed {
                state.open -= 1
            } else {
                state.idle.append(connection)
            }
            return nil
        }
        waiter?.resume(returning: connection)
    }

    func close() {
        let waiters = state.withLock { state -> [CheckedContinuation<PooledPostgresConnection, any Error>] in
            state.closed = true
            state.open -= state.idle.count
            state.idle.removeAll()
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(throwing: SQLError.unavailable("the PostgreSQL store is closed")) }
    }
}

/// One libpq connection. Used only while its pool lends it out.
final class PostgresConnection: SQLTransaction {
    private let conn: OpaquePointer

    private static let int8OID: Oid = 20
    private static let int2OID: Oid = 21
    private static let int4OID: Oid = 23
    private static let boolOID: Oid = 16
    private static let byteaOID: Oid = 17
    private static let textOID: Oid = 25

    private let schema: String?
    /// Whether this session has its settings (encoding, search path). A reset session starts without them
    /// and without its prepared statements.
    private var sessionReady = false

    init(url: String, schema: String?) throws {
        guard let conn = PQconnectdb(url) else { throw SQLError.unavailable("libpq could not allocate a connection") }
        guard PQstatus(conn) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(conn)).trimmingCharacters(in: .whitespacesAndNewlines)
            PQfinish(conn)
            throw SQLError.unavailable("cannot connect to PostgreSQL: \(message)")
        }
        self.conn = conn
        self.schema = schema
        // Without a notice processor libpq prints NOTICEs (e.g. "relation already exists") to stderr.
        // It belongs to the PGconn object, so it survives PQreset.
        PQsetNoticeProcessor(conn, { _, _ in }, nil)
        do {
            try prepareForUse()
        } catch {
            PQfinish(conn)
            throw error
        }
    }

    deinit { PQfinish(conn) }

    /// Called before each transaction (never inside one, where a silent reconnect would lose atomicity):
    /// reconnects a broken session and restores its settings.
    func prepareForUse() throws {
        if PQstatus(conn) != CONNECTION_OK {
            PQreset(conn)
            sessionReady = false
            guard PQstatus(conn) == CONNECTION_OK else {
                let message = String(cString: PQerrorMessage(conn)).trimmingCharacters(in: .whitespacesAndNewlines)
                throw SQLError.unavailable("lost the PostgreSQL connection: \(message)")
            }
        }
        // A pipeline a broken connection left unfinished goes with the session.
        if PQpipelineStatus(conn) != PQ_PIPELINE_OFF {
            PQreset(conn)
            sessionReady = false
        }
        queued = []
        // A transaction left open by a failure between statements must not swallow the next caller's work.
        let transaction = PQtransactionStatus(conn)
        if transaction == PQTRANS_INTRANS || transaction == PQTRANS_INERROR { rollbackQuietly() }
        if sessionReady { return }
        preparedNames.removeAll()
        _ = try execute("SET client_encoding = 'UTF8'", [])
        if let schema {
            // The schema name was validated to [a-z0-9_], so quoting it is enough.
            do {
                _ = try execute("CREATE SCHEMA IF NOT EXISTS \"\(schema)\"", [])
            } catch SQLError.uniqueViolation, SQLError.alreadyExists {
                // Created concurrently by another connection: it exists, which is what we need.
            }
            _ = try execute("SET search_path TO \"\(schema)\"", [])
        }
        sessionReady = true
    }

    /// Rolls back whatever is open and forgets what was queued (a `BEGIN` never sent leaves nothing to roll back).
    func rollbackQuietly() {
        queued = []
        guard PQtransactionStatus(conn) != PQTRANS_IDLE else { return }
        if let result = PQexec(conn, "ROLLBACK") { PQclear(result) }
    }

    /// `?` placeholders become `$1, $2, …`; the store's statements have no `?` inside literals.
    private static func numberedPlaceholders(_ sql: String) -> String {
        var output = ""
        output.reserveCapacity(sql.utf8.count + 16)
        var index = 0
        for character in sql {
            if character == "?" {
                index += 1
                output += "$\(index)"
            } else {
                output.append(character)
            }
        }
        return output
    }

    /// Statement text → server-side prepared statement name, for statements with parameters.
    private var preparedNames: [String: String] = [:]
    private var nextPreparedNumber = 0

    /// Prepares `sql` once per connection (parameter types from the first call; NULLs left to the server).
    private func preparedName(for sql: String, types: [Oid]) throws -> String {
        if let name = preparedNames[sql] { return name }
        let text = Self.numberedPlaceholders(sql)
        nextPreparedNumber += 1
        let name = "faceseal_\(nextPreparedNumber)"
        guard let result = PQprepare(conn, name, text, Int32(types.count), types) else {
            throw SQLError.unavailable(String(cString: PQerrorMessage(conn)))
        }
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_COMMAND_OK else {
            throw Self.error(from: result, connection: conn)
        }
        preparedNames[sql] = name
        return name
    }

    /// Runs one statement and returns its result, checked (the caller clears it). Statements queued before it (the
    /// transaction's `BEGIN`, `executeDeferred`) go in the same pipeline, ahead of it: one round trip for all.
    private func run(_ sql: String, _ parameters: [SQLValue]) throws -> OpaquePointer {
        if !queued.isEmpty {
            let statements = queued + [Queued(sql: sql, parameters: parameters)]
            queued = []
            guard let result = try pipeline(statements) else { throw SQLError.failed("a pipeline gave no result for its last statement") }
            return result
        }
        let prepared = try preparedName(for: sql, parameters)
        let result = withBound(parameters) { count, types, values, lengths, formats in
            if let prepared { return PQexecPrepared(conn, prepared, count, values, lengths, formats, 1) }
            return PQexecParams(conn, sql, count, types, values, lengths, formats, 1)
        }
        guard let result else { throw SQLError.unavailable(String(cString: PQerrorMessage(conn))) }
        return try checked(result, prepared: prepared != nil)
    }

    /// The name of `sql`'s prepared statement on this connection, prepared now if it is not yet; nil for a statement
    /// without parameters (BEGIN, COMMIT, DDL: they cannot all be prepared, and run rarely enough not to matter).
    private func preparedName(for sql: String, _ parameters: [SQLValue]) throws -> String? {
        parameters.isEmpty ? nil : try preparedName(for: sql, types: parameters.map(Self.type))
    }

    /// The type a parameter is sent as (0 for NULL: the server infers it).
    private static func type(_ parameter: SQLValue) -> Oid {
        switch parameter {
        case .null: 0
        case .integer: int8OID
        case .text: textOID
        case .blob: byteaOID
        }
    }

    /// Calls `send` with `parameters` in binary, which live only during the call (libpq copies them into its output
    /// buffer).
    private func withBound<R>(
        _ parameters: [SQLValue],
        _ send: (_ count: Int32, _ types: [Oid], _ values: UnsafePointer<UnsafePointer<CChar>?>?,
                 _ lengths: [Int32], _ formats: [Int32]) -> R
    ) -> R {
        var types: [Oid] = []
        var buffers: [UnsafeMutablePointer<CChar>?] = []
        var lengths: [Int32] = []
        var formats: [Int32] = []
        defer { for buffer in buffers { buffer?.deallocate() } }

        func append(_ bytes: [UInt8]) {
            let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: max(bytes.count, 1))
            bytes.withUnsafeBytes { raw in
                if let base = raw.baseAddress { UnsafeMutableRawPointer(buffer).copyMemory(from: base, byteCount: raw.count) }
            }
            buffers.append(buffer)
            lengths.append(Int32(bytes.count))
        }

        for parameter in parameters {
            types.append(Self.type(parameter))
            formats.append(1)
            switch parameter {
            case .null:
                buffers.append(nil)
                lengths.append(0)
            case .integer(let value):
                append(withUnsafeBytes(of: value.bigEndian) { Array($0) })
            case .text(let value):
                append(Array(value.utf8))
            case .blob(let bytes):
                append(bytes)
            }
        }

        return buffers.withUnsafeBufferPointer { values in
            values.withMemoryRebound(to: UnsafePointer<CChar>?.self) { values in
                send(Int32(parameters.count), types, values.baseAddress, lengths, formats)
            }
        }
    }

    /// `result` when its statement succeeded; else it is cleared and the statement's error thrown.
    private func checked(_ result: OpaquePointer, prepared: Bool) throws -> OpaquePointer {
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            defer { PQclear(result) }
            let error = Self.error(from: result, connection: conn)
            if prepared, Self.errorField(result, UInt8(ascii: "C")) == "0A000" {
                // Another process changed the schema under a cached plan ("cached plan must not change
                // result type"): forget the plans and let the transaction run again.
                preparedNames.removeAll()
                throw PostgresRetry.serializationFailure
            }
            throw error
        }
        return result
    }

    // MARK: Pipelines (fewer round trips)

    /// A statement sent with the next one, and what must hold of the rows it changed.
    private struct Queued {
        let sql: String
        let parameters: [SQLValue]
        var check: (@Sendable (Int) throws -> Void)? = nil
    }

    /// Statements sent with the next one: the transaction's `BEGIN` (`begin()`) and `executeDeferred` statements.
    private var queued: [Queued] = []

    /// Opens a transaction. Its `BEGIN` waits to go with the transaction's first statement, in one round trip.
    func begin() {
        queued = [Queued(sql: "BEGIN", parameters: [])]
    }

    /// Commits the transaction `begin()` opened, with any statement still queued in the same round trip; nothing is
    /// sent when the transaction ran no statement.
    func commit() throws {
        if queued.count == 1, queued[0].sql == "BEGIN" {
            queued = []
            return
        }
        PQclear(try run("COMMIT", []))
    }

    /// Sends what is still queued outside a transaction (a read-only body's deferred statements).
    func flush() throws {
        guard !queued.isEmpty else { return }
        let statements = queued
        queued = []
        if let result = try pipeline(statements) { PQclear(result) }
    }

    /// Queues the statement for the next statement's (or the commit's) round trip (`SQLTransaction.executeDeferred`).
    func executeDeferred(_ sql: String, _ parameters: [SQLValue], check: (@Sendable (Int) throws -> Void)?) throws {
        queued.append(Queued(sql: sql, parameters: parameters, check: check))
    }

    /// Sends `statements` in one pipeline and one sync, reads every result and returns the last statement's (nil
    /// when there is none); the first failure is thrown (the statements after it were not run: aborted).
    private func pipeline(_ statements: [Queued]) throws -> OpaquePointer? {
        // Statements are prepared first, outside the pipeline (a round trip once per connection and statement).
        let names = try statements.map { try preparedName(for: $0.sql, $0.parameters) }
        guard PQenterPipelineMode(conn) == 1 else { throw SQLError.unavailable(String(cString: PQerrorMessage(conn))) }
        var sentPrepared: [Bool] = []
        var failure: (any Error)?
        for (statement, prepared) in zip(statements, names) {
            let sent = withBound(statement.parameters) { count, types, values, lengths, formats in
                if let prepared { return PQsendQueryPrepared(conn, prepared, count, values, lengths, formats, 1) }
                return PQsendQueryParams(conn, statement.sql, count, types, values, lengths, formats, 1)
            }
            guard sent == 1 else {
                failure = SQLError.unavailable(String(cString: PQerrorMessage(conn)))
                break
            }
            sentPrepared.append(prepared != nil)
        }
        if PQpipelineSync(conn) != 1, failure == nil { failure = SQLError.unavailable(String(cString: PQerrorMessage(conn))) }
        var last: OpaquePointer?
        for (index, prepared) in sentPrepared.enumerated() {
            // One result a statement, then NULL.
            guard let result = PQgetResult(conn) else {
                failure = failure ?? SQLError.unavailable(String(cString: PQerrorMessage(conn)))
                break
            }
            while let extra = PQgetResult(conn) { PQclear(extra) }
            if failure != nil || PQresultStatus(result) == PGRES_PIPELINE_ABORTED {
                PQclear(result)
                continue
            }
            do {
                let good = try checked(result, prepared: prepared)
                if index == statements.count - 1 {
                    last = good
                } else {
                    defer { PQclear(good) }
                    try statements[index].check?(Self.changedRows(good))
                }
            } catch {
                failure = error
            }
        }
        // The sync's own result ends the pipeline.
        while let result = PQgetResult(conn) {
            let status = PQresultStatus(result)
            PQclear(result)
            if status == PGRES_PIPELINE_SYNC { break }
        }
        if PQexitPipelineMode(conn) != 1, failure == nil { failure = SQLError.unavailable(String(cString: PQerrorMessage(conn))) }
        if let failure {
            if let last { PQclear(last) }
            throw failure
        }
        return last
    }

    private static func errorField(_ result: OpaquePointer, _ code: UInt8) -> String {
        guard let field = PQresultErrorField(result, Int32(code)) else { return "" }
        return String(cString: field)
    }

    private static func error(from result: OpaquePointer, connection: OpaquePointer) -> any Error {
        let state = errorField(result, UInt8(ascii: "C"))
        var message = errorField(result, UInt8(ascii: "M"))
        if message.isEmpty {
            message = String(cString: PQerrorMessage(connection)).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        switch state {
        case "23505": return SQLError.uniqueViolation(message)
        case "23503": return SQLError.foreignKeyViolation(message)
        case "42P06", "42P07", "42710": return SQLError.alreadyExists(message)
        case "40001", "40P01": return PostgresRetry.serializationFailure
        case "": return SQLError.unavailable(message)
        default: return SQLError.failed("PostgreSQL \(state): \(message)")
        }
    }

    private static func bigEndianInteger(_ bytes: UnsafeRawBufferPointer) -> Int64 {
        var value: Int64 = 0
        for byte in bytes { value = (value << 8) | Int64(byte) }
        // Sign-extend values narrower than 8 bytes (int2, int4).
        let unused = 64 - 8 * bytes.count
        return unused > 0 ? (value << unused) >> unused : value
    }

    @discardableResult
    func execute(_ sql: String, _ parameters: [SQLValue]) throws -> Int {
        let result = try run(sql, parameters)
        defer { PQclear(result) }
        return Self.changedRows(result)
    }

    /// The rows a statement's `result` says it changed (0 for one that says nothing).
    private static func changedRows(_ result: OpaquePointer) -> Int {
        Int(String(cString: PQcmdTuples(result))) ?? 0
    }

    func query(_ sql: String, _ parameters: [SQLValue]) throws -> [SQLRow] {
        let result = try run(sql, parameters)
        defer { PQclear(result) }
        let rowCount = PQntuples(result)
        let columnCount = PQnfields(result)
        guard rowCount > 0 else { return [] }
        let columns = SQLColumns((0..<columnCount).map { String(cString: PQfname(result, $0)) })
        let types = (0..<columnCount).map { PQftype(result, $0) }
        var rows: [SQLRow] = []
        rows.reserveCapacity(Int(rowCount))
        for row in 0..<rowCount {
            var values: [SQLValue] = []
            values.reserveCapacity(Int(columnCount))
            for column in 0..<columnCount {
                if PQgetisnull(result, row, column) == 1 {
                    values.append(.null)
                    continue
                }
                let length = Int(PQgetlength(result, row, column))
                let bytes = UnsafeRawBufferPointer(start: PQgetvalue(result, row, column), count: length)
                switch types[Int(column)] {
                case Self.int8OID, Self.int4OID, Self.int2OID:
                    values.append(.integer(Self.bigEndianInteger(bytes)))
                case Self.boolOID:
                    values.append(.integer(bytes.first == 1 ? 1 : 0))
                case Self.byteaOID:
                    values.append(.blob(Array(bytes)))
                default:
                    // text, varchar, name: binary format is the UTF-8 bytes.
                    values.append(.text(String(decoding: bytes, as: UTF8.self)))
                }
            }
            rows.append(SQLRow(columns: columns, values: values))
        }
        return rows
    }
}
