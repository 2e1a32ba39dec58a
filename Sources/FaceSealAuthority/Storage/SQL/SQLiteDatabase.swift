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

/// SQLite through its C library in WAL mode, on one connection. A transaction runs on the calling thread whenever the
/// connection is free, so the common case costs no thread hand-off; callers that find it taken queue without blocking a
/// thread, and the thread that holds the connection runs what queued before it lets go.
///
/// * **Writes**: a caller that finds the connection idle runs its transaction at once — or, while another write is under
///   way, from a new task one turn of the task queue later, so the writes that come meanwhile join it — and then every
///   write that queued meanwhile, as one batch in one SQLite transaction (group commit; when one of them throws, the batch is rolled
///   back and run again with a savepoint each, so that one is rolled back alone: `runBatch`). No caller is answered
///   before the batch commits, so a write acknowledged is stored whole, and one that is not is absent. Write
///   transactions begin with `BEGIN IMMEDIATE`, so several processes on one file queue on the busy timeout instead of
///   failing mid-transaction. On a caller's thread SQLite never waits for another process's lock: a batch answered
///   busy moves to the connection's serial queue, whose thread waits the busy timeout out (a busy wait blocks that
///   thread, never Swift's pool).
/// * **Reads** run on the same connection, each in a read transaction of its own (a read of one statement,
///   `readStatement`, in none: a statement reads one snapshot by itself): at once when it is idle, else queued and run
///   before the batch of writes that waited with them (a read is linearised before a write no caller has seen
///   committed; one queued while a batch runs is answered after its commit, and sees it). Its page cache stays warm
///   across its own commits, where a second connection's is emptied at every commit of the writer and read back page
///   by page (the read-only connections of session 6 cost ten times what a read on the writing connection does,
///   docs/PERFORMANCE.md "Session 7: the store").
/// * **Checkpoints** (copying the WAL back into the file, with its fsyncs) run beside the writes: every
///   `backgroundCheckpointInterval` write batches on a second connection and a queue of their own, so commits go on
///   while a checkpoint copies and waits for the disk. One beside running writes never quite catches up (frames
///   appended meanwhile stay behind), and the WAL starts over from its beginning only once every frame was copied; so
///   every `checkpointInterval` batches one more checkpoint beside the writes catches up and, as soon as it is done,
///   the connection's own queue checkpoints, with work queued meanwhile, copying and syncing only the frames appended
///   while the one beside it ran. Erasing deleted content from the WAL (`truncateJournal`) runs on the
///   checkpoints' queue, after any running one.
///
/// Prepared statements are cached on the connection.
final class SQLiteDatabase: SQLDatabase {
    /// The connection and the serial queue that runs work for it when it cannot run on a caller's thread. The mutex
    /// makes every use exclusive; `WriterState.running` says who may take it.
    private final class Lane: Sendable {
        let connection: Mutex<SQLiteConnection?>
        let queue: DispatchQueue

        init(_ connection: sending SQLiteConnection, label: String) {
            self.connection = Mutex(connection)
            queue = DispatchQueue(label: label)
        }

        /// Runs `work` with the connection, waiting for it if needed.
        func runHere<T: Sendable>(_ work: (SQLiteConnection) throws -> T) throws -> T {
            try connection.withLock { slot -> T in
                guard let connection = slot else { throw SQLiteDatabase.closedError }
                return try work(connection)
            }
        }

        /// Runs `work` on the lane's queue (whose thread may wait on the connection and on SQLite's busy timeout).
        func run<T: Sendable>(_ work: @escaping @Sendable (SQLiteConnection) throws -> T) async throws -> T {
            try await withCheckedThrowingContinuation { continuation in
                queue.async { continuation.resume(with: Result { try self.runHere(work) }) }
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

    /// One caller's write transaction in a batch.
    private struct WriteJob: Sendable {
        /// Runs the body; tells whether it succeeded, and how to answer the caller once the batch's commit is known
        /// (nil: committed). A body that threw is answered with its own error whatever the commit did.
        let run: @Sendable (SQLiteConnection) -> (succeeded: Bool, answer: @Sendable ((any Error)?) -> Void)
        /// Answers the caller with `error` without running the body.
        let fail: @Sendable (any Error) -> Void

        init<T: Sendable>(_ body: @escaping @Sendable (any SQLTransaction) throws -> T, _ continuation: CheckedContinuation<T, any Error>) {
            run = { connection in
                let result = Result { try body(connection) }
                if case .failure = result { return (false, { _ in continuation.resume(with: result) }) }
                return (true, { commitError in continuation.resume(with: commitError.map { .failure($0) } ?? result) })
            }
            fail = { continuation.resume(throwing: $0) }
        }
    }

    /// One caller's read, queued while the connection was taken.
    private struct ReadJob: Sendable {
        /// Runs the body in a read transaction of its own and answers the caller; false, answering nobody, when SQLite
        /// was busy and the connection must not wait.
        let run: @Sendable (SQLiteConnection) -> Bool
        /// Answers the caller with `error` without running the body.
        let fail: @Sendable (any Error) -> Void

        init<T: Sendable>(_ body: @escaping @Sendable (any SQLTransaction) throws -> T, statement: Bool,
                          _ continuation: CheckedContinuation<T, any Error>) {
            run = { connection in
                let result = Result { try SQLiteDatabase.runRead(connection, statement: statement, body) }
                if case .failure(SQLError.busy) = result, !connection.waitsWhenBusy { return false }
                continuation.resume(with: result)
                return true
            }
            fail = { continuation.resume(throwing: $0) }
        }
    }

    /// Who is running work on the connection, and what waits for it.
    private struct WriterState {
        var running = false
        var closed = false
        var waiting: [WriteJob] = []
        var reads: [ReadJob] = []
    }

    static let closedError = SQLError.unavailable("the SQLite store is closed")
    /// Most writes in one batch (one transaction).
    static let batchLimit = 64
    /// Rounds of queued work (the waiting reads, then a batch of writes) a caller's thread runs before it hands the rest
    /// to the connection's queue (its own request waits meanwhile).
    static let inlineBatches = 2
    /// Write transactions under way (this one counted) from which a write that finds the connection idle waits one
    /// turn of the task queue before it runs, gathering the writes that come meanwhile into its batch
    /// (docs/PERFORMANCE.md, "Session 10"). One alone runs at once: waking a thread for it costs more than it saves.
    static let gatherWhenWritesInFlight = 2
    /// Write batches between two checkpoints beside the writes: about 1,000 WAL pages at the ceremony's 8–16 pages a
    /// commit, SQLite's default.
    static let backgroundCheckpointInterval = 100
    /// Write batches between two checkpoints on the writing connection, which hold its work and let the WAL start over.
    static let checkpointInterval = 4 * backgroundCheckpointInterval
    /// Write batches since the last checkpoint on the writing connection; only the thread running work touches it.
    private let batchesSinceCheckpoint = Atomic<Int>(0)
    /// A connection for checkpoints beside the writes (and `truncateJournal`), on a queue of its own.
    private let checkpointer: Lane
    /// Whether the catch-up checkpoint beside the writes started since the writing connection's last checkpoint;
    /// only the thread running work touches it.
    private let catchUpStarted = Atomic<Bool>(false)
    /// Whether a checkpoint beside the writes is queued or running.
    private let checkpointing = Atomic<Bool>(false)
    private let checkpointCounts = Mutex((beside: 0, caughtUp: 0, onWriter: 0))

    let dialect = SQLDialect.sqlite
    private let writer: Lane
    private let writerState = Mutex(WriterState())
    private let batchedWrites = Atomic<Int>(0)
    private let busyHandOffCount = Atomic<Int>(0)
    private let writesInFlight = Atomic<Int>(0)

    init(path: String, busyTimeoutMilliseconds: Int32, synchronous: SQLiteSynchronous) throws {
        let connection = try SQLiteConnection(path: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds, synchronous: synchronous)
        // Checkpoints are the writer queue's (`drainWrites`), not a commit's.
        try connection.execute("PRAGMA wal_autocheckpoint = 0", [])
        let second = try SQLiteConnection(path: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds, synchronous: synchronous)
        try second.execute("PRAGMA wal_autocheckpoint = 0", [])
        writer = Lane(connection, label: "faceseal.store.sqlite")
        checkpointer = Lane(second, label: "faceseal.store.sqlite.checkpoint")
    }

    func transaction<T: Sendable>(readOnly: Bool, _ body: @escaping @Sendable (any SQLTransaction) throws -> T) async throws -> T {
        if readOnly { return try await read(statement: false, body) }
        writesInFlight.add(1, ordering: .relaxed)
        defer { writesInFlight.subtract(1, ordering: .relaxed) }
        return try await withCheckedThrowingContinuation { continuation in
            submit(WriteJob(body, continuation))
        }
    }

    func readStatement<T: Sendable>(_ body: @escaping @Sendable (any SQLTransaction) throws -> T) async throws -> T {
        try await read(statement: true, body)
    }

    /// A read: on the calling thread when the connection is idle, else queued. With `statement`, `body` runs one
    /// statement and no transaction is opened around it.
    private func read<T: Sendable>(statement: Bool, _ body: @escaping @Sendable (any SQLTransaction) throws -> T) async throws -> T {
        if let result = try readHere(statement: statement, body) { return result }
        return try await withCheckedThrowingContinuation { continuation in
            submit(read: ReadJob(body, statement: statement, continuation))
        }
    }

    /// A read on the calling thread if the connection is idle. Nil when it is taken or SQLite is busy (another process
    /// recovering the WAL): the caller then queues.
    private func readHere<T: Sendable>(statement: Bool, _ body: @escaping @Sendable (any SQLTransaction) throws -> T) throws -> T? {
        guard takeWriter() else { return nil }
        let result = Result {
            try writer.runHere { connection -> T? in
                connection.waitsWhenBusy = false
                do {
                    return try Self.runRead(connection, statement: statement, body)
                } catch SQLError.busy {
                    return nil
                }
            }
        }
        drainWrites(inline: true)
        return try result.get()
    }

    /// Write transactions asked for and not yet answered, and how many so far ran in a batch with others.
    var writeQueue: (inFlight: Int, batched: Int) {
        (writesInFlight.load(ordering: .relaxed), batchedWrites.load(ordering: .relaxed))
    }

    /// How many times work a caller's thread took was handed to the connection's queue because SQLite answered busy
    /// (another process holding the write lock or recovering the WAL).
    var busyHandOffs: Int { busyHandOffCount.load(ordering: .relaxed) }

    /// Whether a thread holds the connection (or its queue will), and the reads and writes queued for it meanwhile.
    var connectionQueue: (taken: Bool, reads: Int, writes: Int) {
        writerState.withLock { ($0.running, $0.reads.count, $0.waiting.count) }
    }

    /// Takes the idle connection for the calling thread, which must then call `drainWrites(inline: true)`.
    private func takeWriter() -> Bool {
        writerState.withLock { state in
            guard !state.running, !state.closed else { return false }
            state.running = true
            return true
        }
    }

    /// Queues `job`; if the connection is idle, runs the queue on this thread, or from a new task when other writes are
    /// under way.
    private func submit(_ job: WriteJob) {
        guard let runsHere = enqueue({ $0.waiting.append(job) }) else { return job.fail(Self.closedError) }
        guard runsHere else { return }
        // Another write is under way: let the tasks ready to run go first, so the writes they reach queue behind this
        // one and commit with it (each commit writes every page it changed to the WAL, and consecutive commits change
        // the same pages: the ends of the tables and indexes that grow). Alone, it runs at once.
        if writesInFlight.load(ordering: .relaxed) >= Self.gatherWhenWritesInFlight {
            Task { self.drainWrites(inline: true) }
        } else {
            drainWrites(inline: true)
        }
    }

    /// Queues `read`; runs the queue on this thread if the connection is idle.
    private func submit(read job: ReadJob) {
        guard let runsHere = enqueue({ $0.reads.append(job) }) else { return job.fail(Self.closedError) }
        if runsHere { drainWrites(inline: true) }
    }

    /// Adds a job to the queue: nil when the store is closed, else whether this thread now runs the queue.
    private func enqueue(_ add: (inout WriterState) -> Void) -> Bool? {
        writerState.withLock { state -> Bool? in
            guard !state.closed else { return nil }
            add(&state)
            guard !state.running else { return false }
            state.running = true
            return true
        }
    }

    /// Runs the queued work in rounds until none waits, then leaves the connection idle. A round takes the reads and a
    /// batch of the writes waiting as it begins, and runs the reads first: a read is linearised before a write that no
    /// caller has seen committed, so it need not wait for that write's batch (while the batch runs, the reads' callers
    /// go on, on another core). A read queued while a round runs waits for the next one, after that round's commit. On
    /// a caller's thread (`inline`) it runs at most `inlineBatches` rounds, never waits for another process's lock and
    /// never checkpoints: the rest, work SQLite answers busy and a checkpoint due move to the connection's queue, which
    /// keeps the connection meanwhile.
    private func drainWrites(inline: Bool) {
        if !inline && checkpointDue { checkpoint() }
        var rounds = 0
        while true {
            let next = writerState.withLock { state -> (reads: [ReadJob], batch: [WriteJob])? in
                if state.waiting.isEmpty && state.reads.isEmpty {
                    state.running = false
                    return nil
                }
                if inline && rounds == Self.inlineBatches { return ([], []) }
                let count = min(state.waiting.count, Self.batchLimit)
                defer {
                    state.waiting.removeFirst(count)
                    state.reads.removeAll()
                }
                return (state.reads, Array(state.waiting.prefix(count)))
            }
            guard let (reads, batch) = next else { return }
            if inline && rounds == Self.inlineBatches { break }
            rounds += 1
            if !reads.isEmpty {
                let unread: [ReadJob]
                do {
                    unread = try writer.runHere { connection in
                        connection.waitsWhenBusy = !inline
                        return reads.filter { !$0.run(connection) }
                    }
                } catch {
                    for job in reads { job.fail(error) }
                    unread = []
                }
                if !unread.isEmpty {
                    // Busy on a caller's thread: the queue's thread runs them and the batch, waiting as long as it takes.
                    writerState.withLock {
                        $0.reads.insert(contentsOf: unread, at: 0)
                        $0.waiting.insert(contentsOf: batch, at: 0)
                    }
                    busyHandOffCount.add(1, ordering: .relaxed)
                    break
                }
            }
            if batch.isEmpty { continue }
            // Counted before the batch answers its callers; what it did not run is taken back before anyone is answered.
            if batch.count > 1 { batchedWrites.add(batch.count, ordering: .relaxed) }
            let outcome: (committed: Bool, notRun: [WriteJob])
            do {
                outcome = try writer.runHere { Self.runBatch(batch, on: $0, waitWhenBusy: !inline) }
            } catch {
                for job in batch { job.fail(error) }
                outcome = (false, [])
            }
            if batch.count > 1 { batchedWrites.subtract(outcome.notRun.count, ordering: .relaxed) }
            if !outcome.notRun.isEmpty {
                writerState.withLock { $0.waiting.insert(contentsOf: outcome.notRun, at: 0) }
                if inline {
                    busyHandOffCount.add(1, ordering: .relaxed)
                    break
                }
            }
            if outcome.committed {
                let batches = batchesSinceCheckpoint.add(1, ordering: .relaxed).newValue
                if batches % Self.backgroundCheckpointInterval == 0 && batches < Self.checkpointInterval
                    || batches >= Self.checkpointInterval && !catchUpStarted.load(ordering: .relaxed) {
                    checkpointBeside(at: batches)
                }
                if checkpointDue {
                    guard !inline else { break }
                    checkpoint()
                }
            }
        }
        writer.queue.async { self.drainWrites(inline: false) }
    }

    /// Whether the writing connection should checkpoint: the catch-up checkpoint beside it started, and none beside it
    /// is running any more (it would find the checkpoint lock taken).
    private var checkpointDue: Bool {
        catchUpStarted.load(ordering: .relaxed) && !checkpointing.load(ordering: .acquiring)
    }

    /// Copies the rest of the WAL back into the file (on the connection's queue, which holds it), so the next write
    /// starts the WAL over.
    private func checkpoint() {
        batchesSinceCheckpoint.store(0, ordering: .relaxed)
        catchUpStarted.store(false, ordering: .relaxed)
        // PASSIVE never waits for another process's reader; what it cannot copy yet goes at the next one.
        _ = try? writer.runHere { try $0.query("PRAGMA wal_checkpoint(PASSIVE)", []) }
        checkpointCounts.withLock { $0.onWriter += 1 }
    }

    /// Starts a checkpoint on the second connection unless one is queued or running; commits go on meanwhile. `batches`
    /// is the count of write batches since the writing connection's last checkpoint: from `checkpointInterval` on, the
    /// one started is the catch-up checkpoint, after which the writing connection's own is due.
    private func checkpointBeside(at batches: Int) {
        guard checkpointing.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else { return }
        let catchingUp = batches >= Self.checkpointInterval
        if catchingUp { catchUpStarted.store(true, ordering: .relaxed) }
        checkpointer.queue.async {
            let synced = try? self.checkpointer.runHere { connection in
                _ = try connection.query("PRAGMA wal_checkpoint(PASSIVE)", [])
                // A checkpoint that leaves frames behind does not sync the file it copied them to; the writing
                // connection's would, holding every write meanwhile. Synced here, its own sync flushes only its pages.
                if catchingUp { try connection.syncDatabaseFile() }
                return catchingUp
            }
            self.checkpointCounts.withLock {
                $0.beside += 1
                if synced == true { $0.caughtUp += 1 }
            }
            self.checkpointing.store(false, ordering: .releasing)
        }
    }

    /// Checkpoints so far beside the writes, of them the catch-up ones that synced the file, and on the writing
    /// connection (tests).
    var checkpoints: (beside: Int, caughtUp: Int, onWriter: Int) { checkpointCounts.withLock { $0 } }

    /// Runs `batch` in one write transaction and answers every job once the transaction's fate is known. Returns whether
    /// it committed and the jobs it did not run: all of them when SQLite is busy and `waitWhenBusy` is false, the rest
    /// when a failure ended the transaction midway.
    ///
    /// Several jobs first run one after the other with nothing between them: nearly always every one succeeds and the
    /// batch commits as one. When one fails, the transaction is rolled back with no job answered and the batch runs
    /// again, each job in a savepoint of its own, so the one that throws is rolled back alone (a body may run twice, as
    /// on PostgreSQL after a serialization failure; nothing of its first run was stored or answered).
    private static func runBatch(_ batch: [WriteJob], on connection: SQLiteConnection, waitWhenBusy: Bool) -> (committed: Bool, notRun: [WriteJob]) {
        connection.waitsWhenBusy = waitWhenBusy
        var savepoints = false
        while true {
            do {
                try connection.execute("BEGIN IMMEDIATE", [])
            } catch SQLError.busy where !waitWhenBusy {
                return (false, batch)
            } catch {
                for job in batch { job.fail(error) }
                return (false, [])
            }
            var answers: [@Sendable ((any Error)?) -> Void] = []
            answers.reserveCapacity(batch.count)
            var allSucceeded = true
            var runAgain = false
            for (index, job) in batch.enumerated() {
                do {
                    if savepoints { try connection.execute("SAVEPOINT faceseal_write", []) }
                    let (succeeded, answer) = job.run(connection)
                    if !succeeded && batch.count > 1 && !savepoints {
                        runAgain = true
                        break
                    }
                    answers.append(answer)
                    allSucceeded = allSucceeded && succeeded
                    if savepoints {
                        if !succeeded { try connection.execute("ROLLBACK TO faceseal_write", []) }
                        try connection.execute("RELEASE faceseal_write", [])
                    }
                    // A failure SQLite answers by rolling back the whole transaction (I/O error, full disk) took the
                    // earlier jobs' work with it: none of them is stored, so none may be answered as stored.
                    guard connection.inTransaction else { throw SQLError.failed("SQLite rolled the transaction back") }
                } catch {
                    _ = try? connection.execute("ROLLBACK", [])
                    // A job whose savepoint could not begin is answered with that error; the ones after it run again.
                    if answers.count == index { job.fail(error) }
                    for answer in answers { answer(error) }
                    return (false, Array(batch[(index + 1)...]))
                }
            }
            if runAgain {
                _ = try? connection.execute("ROLLBACK", [])
                savepoints = true
                continue
            }
            do {
                if !allSucceeded && !savepoints {
                    // One job alone, which failed.
                    try connection.execute("ROLLBACK", [])
                    for answer in answers { answer(nil) }
                    return (false, [])
                }
                try connection.execute("COMMIT", [])
            } catch {
                // A failed COMMIT leaves the transaction open; ROLLBACK ends it either way.
                _ = try? connection.execute("ROLLBACK", [])
                for answer in answers { answer(error) }
                return (false, [])
            }
            for answer in answers { answer(nil) }
            return (true, [])
        }
    }

    /// Runs `body` in a read transaction of its own (one snapshot for all its statements); with `statement`, its one
    /// statement alone (a statement is one snapshot by itself).
    private static func runRead<T: Sendable>(_ connection: SQLiteConnection, statement: Bool, _ body: (any SQLTransaction) throws -> T) throws -> T {
        if statement { return try body(SingleStatement(connection)) }
        try connection.execute("BEGIN DEFERRED", [])
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
        try await writer.run { connection in
            connection.waitsWhenBusy = true
            _ = try connection.execute(sql, [])
        }
    }

    /// Copies the whole WAL back into the file and truncates it, so content deleted by a committed transaction is left
    /// in neither. On the checkpoints' queue, after any checkpoint beside the writes (which would hold the checkpoint
    /// lock); it waits the busy timeout out for the write running meanwhile, and holds writes while it truncates.
    func truncateJournal() async throws {
        let row = try await checkpointer.run { try $0.queryOne("PRAGMA wal_checkpoint(TRUNCATE)", []) }
        guard case .integer(0)? = row?["busy"] else { throw SQLError.busy("the WAL could not be truncated") }
    }

    /// One process owns the file's outbox wake-ups: nothing to announce or hear.
    var outboxChannel: String? { nil }

    func observeOutbox(_ handler: @escaping @Sendable (String) -> Void) async {}

    func close() async {
        let (waiting, reads) = writerState.withLock { state in
            state.closed = true
            defer {
                state.waiting.removeAll()
                state.reads.removeAll()
            }
            return (state.waiting, state.reads)
        }
        for job in waiting { job.fail(Self.closedError) }
        for job in reads { job.fail(Self.closedError) }
        await checkpointer.close()
        await writer.close()
    }
}

/// One SQLite connection and its statement cache. Used only under `SQLiteDatabase`'s mutex.
final class SQLiteConnection: SQLTransaction {
    /// A prepared statement and its result's column names (read once, and again only if SQLite re-prepared it: a
    /// schema change can change what `SELECT *` returns).
    private final class Statement {
        let handle: OpaquePointer
        private var cachedColumns: SQLColumns?
        private var preparedCount: Int32 = 0

        init(_ handle: OpaquePointer) { self.handle = handle }

        var columns: SQLColumns {
            let prepared = sqlite3_stmt_status(handle, SQLITE_STMTSTATUS_REPREPARE, 0)
            if let cachedColumns, preparedCount == prepared { return cachedColumns }
            let columns = SQLColumns((0..<sqlite3_column_count(handle)).map { String(cString: sqlite3_column_name(handle, $0)) })
            cachedColumns = columns
            preparedCount = prepared
            return columns
        }
    }

    /// A statement's text as the cache's key, hashed on its length and a few of its bytes rather than all of them: the
    /// texts run to hundreds of bytes and one is looked up at every statement. Keys still compare whole.
    private struct StatementKey: Hashable {
        let text: String

        init(_ text: String) { self.text = text }

        static func == (lhs: StatementKey, rhs: StatementKey) -> Bool { lhs.text == rhs.text }

        func hash(into hasher: inout Hasher) {
            var text = text
            text.withUTF8 { bytes in
                hasher.combine(bytes.count)
                // Eight bytes at eight places spread over the text (texts that share them only share a bucket).
                guard bytes.count >= 8, let base = UnsafeRawPointer(bytes.baseAddress) else { return hasher.combine(bytes: UnsafeRawBufferPointer(bytes)) }
                let last = bytes.count - 8
                for sample in 0..<8 { hasher.combine(base.loadUnaligned(fromByteOffset: last * sample / 7, as: UInt64.self)) }
            }
        }
    }

    private let db: OpaquePointer
    private var statements: [StatementKey: Statement] = [:]
    private let busyTimeoutMilliseconds: Int32
    /// Whether a statement waits up to the busy timeout for another process's lock (`false`: it fails at once with
    /// `SQLError.busy`, for work on a thread that must not wait).
    var waitsWhenBusy = true {
        didSet {
            if waitsWhenBusy != oldValue { sqlite3_busy_timeout(db, waitsWhenBusy ? busyTimeoutMilliseconds : 0) }
        }
    }

    /// Whether a transaction is open (SQLite ends one by itself after some failures).
    var inTransaction: Bool { sqlite3_get_autocommit(db) == 0 }

    private static let constraintUnique: Int32 = 2067 // SQLITE_CONSTRAINT_UNIQUE
    private static let constraintPrimaryKey: Int32 = 1555 // SQLITE_CONSTRAINT_PRIMARYKEY
    private static let constraintForeignKey: Int32 = 787 // SQLITE_CONSTRAINT_FOREIGNKEY
    private static let preparePersistent: UInt32 = 0x01 // SQLITE_PREPARE_PERSISTENT

    /// A connection to the file at `path` (created if missing), switched to WAL mode.
    init(path: String, busyTimeoutMilliseconds: Int32, synchronous: SQLiteSynchronous = .normal) throws {
        var handle: OpaquePointer?
        // NOMUTEX: the Swift mutex around the connection already serialises every use.
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        _ = fs_sqlite_configure()
        let rc = sqlite3_open_v2(path, &handle, flags, nil)
        guard rc == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            if let handle { sqlite3_close_v2(handle) }
            throw SQLError.unavailable("cannot open SQLite database: \(message)")
        }
        db = handle
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        // The file holds encrypted server shares and credential hashes: owner-only, like the master key.
        // SQLite gives the -wal and -shm files the database file's permissions.
        if path != ":memory:" && !path.hasPrefix("file:") {
            try? FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        }
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, busyTimeoutMilliseconds)
        do {
            let mode = try switchToWAL(busyTimeoutMilliseconds: busyTimeoutMilliseconds)
            guard case .text(let granted)? = mode.first?["journal_mode"], granted.lowercased() == "wal" else {
                throw SQLError.unavailable("SQLite refused WAL mode for \(path)")
            }
            try execute("PRAGMA synchronous = \(synchronous.rawValue)", [])
            try execute("PRAGMA foreign_keys = ON", [])
            // Savepoint and statement journals (group commit's savepoints) stay in memory instead of spilling to a
            // temporary file past 64 KiB; they hold at most one batch's pages.
            try execute("PRAGMA temp_store = MEMORY", [])
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
        for statement in statements.values { sqlite3_finalize(statement.handle) }
        statements.removeAll()
    }

    private func error(_ rc: Int32) -> SQLError {
        let message = String(cString: sqlite3_errmsg(db))
        if rc & 0xff == SQLITE_BUSY { return .busy(message) }
        switch rc {
        case Self.constraintUnique, Self.constraintPrimaryKey:
            return .uniqueViolation(message)
        case Self.constraintForeignKey:
            return .foreignKeyViolation(message)
        default:
            return .failed("SQLite error \(rc): \(message)")
        }
    }

    private func prepare(_ sql: String) throws -> Statement {
        let key = StatementKey(sql)
        if let cached = statements[key] { return cached }
        var handle: OpaquePointer?
        let rc = sqlite3_prepare_v3(db, sql, -1, Self.preparePersistent, &handle, nil)
        guard rc == SQLITE_OK, let handle else { throw error(rc) }
        let statement = Statement(handle)
        statements[key] = statement
        return statement
    }

    /// Binds `parameters[index...]` to `statement`, then runs `body` while every bound buffer is still alive: text and
    /// blobs are bound without a copy (`SQLITE_STATIC`), each from inside its own buffer's scope, so `body` must step,
    /// reset and clear the bindings before it returns.
    private func withBindings<R>(_ parameters: [SQLValue], from index: Int, to statement: OpaquePointer,
                                 _ body: () throws -> R) throws -> R {
        guard index < parameters.count else { return try body() }
        let position = Int32(index + 1)
        let next = index + 1
        switch parameters[index] {
        case .null:
            try check(sqlite3_bind_null(statement, position))
        case .integer(let v):
            try check(sqlite3_bind_int64(statement, position, v))
        case .text(var text):
            return try text.withUTF8 { utf8 in
                try utf8.withMemoryRebound(to: CChar.self) { chars in
                    try check(fs_sqlite_bind_text(statement, position, chars.baseAddress, Int32(chars.count)))
                }
                return try withBindings(parameters, from: next, to: statement, body)
            }
        case .blob(let bytes):
            return try bytes.withUnsafeBytes { raw in
                try check(fs_sqlite_bind_blob(statement, position, raw.baseAddress, Int32(raw.count)))
                return try withBindings(parameters, from: next, to: statement, body)
            }
        }
        return try withBindings(parameters, from: next, to: statement, body)
    }

    private func check(_ rc: Int32) throws {
        guard rc == SQLITE_OK else { throw error(rc) }
    }

    private func readRow(_ statement: OpaquePointer, _ columns: SQLColumns) -> SQLRow {
        var values: [SQLValue] = []
        values.reserveCapacity(columns.names.count)
        for column in 0..<Int32(columns.names.count) {
            switch sqlite3_column_type(statement, column) {
            case SQLITE_INTEGER:
                values.append(.integer(sqlite3_column_int64(statement, column)))
            case SQLITE_TEXT:
                let length = Int(sqlite3_column_bytes(statement, column))
                if let text = sqlite3_column_text(statement, column) {
                    values.append(.text(String(decoding: UnsafeBufferPointer(start: text, count: length), as: UTF8.self)))
                } else {
                    values.append(.text(""))
                }
            case SQLITE_BLOB:
                let length = Int(sqlite3_column_bytes(statement, column))
                if let bytes = sqlite3_column_blob(statement, column), length > 0 {
                    values.append(.blob(Array(UnsafeRawBufferPointer(start: bytes, count: length))))
                } else {
                    values.append(.blob([]))
                }
            case SQLITE_FLOAT:
                values.append(.integer(Int64(sqlite3_column_double(statement, column))))
            default:
                values.append(.null)
            }
        }
        return SQLRow(columns: columns, values: values)
    }

    private func run(_ sql: String, _ parameters: [SQLValue], collect: Bool) throws -> [SQLRow] {
        let prepared = try prepare(sql)
        let statement = prepared.handle
        guard Int(sqlite3_bind_parameter_count(statement)) == parameters.count else {
            throw SQLError.failed("statement expects \(sqlite3_bind_parameter_count(statement)) parameters, got \(parameters.count)")
        }
        do {
            return try withBindings(parameters, from: 0, to: statement) {
                // Inside the bound buffers' scopes: SQLite lets go of them before they end.
                defer {
                    sqlite3_reset(statement)
                    sqlite3_clear_bindings(statement)
                }
                var rows: [SQLRow] = []
                var columns: SQLColumns?
                while true {
                    let rc = sqlite3_step(statement)
                    if rc == SQLITE_ROW {
                        if collect {
                            let names = columns ?? prepared.columns
                            columns = names
                            rows.append(readRow(statement, names))
                        }
                    } else if rc == SQLITE_DONE {
                        return rows
                    } else {
                        throw error(rc)
                    }
                }
            }
        } catch {
            // A bind that failed midway left the earlier ones bound: SQLite lets go of them without reading them.
            sqlite3_clear_bindings(statement)
            throw error
        }
    }

    /// Syncs the main database file to disk through SQLite's own file handle (`xSync`, `fdatasync` on Linux); what
    /// a checkpoint copied into it is then on disk.
    func syncDatabaseFile() throws {
        var file: UnsafeMutablePointer<sqlite3_file>?
        try check(withUnsafeMutablePointer(to: &file) { sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, $0) })
        guard let file, let sync = file.pointee.pMethods?.pointee.xSync else {
            throw SQLError.unavailable("the SQLite database file cannot be synced")
        }
        try check(sync(file, SQLITE_SYNC_NORMAL))
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
