import CSQLite
import FaceSealTestSupport
import FaceSealWire
import Foundation
import Testing
@testable import FaceSealAuthority

@Suite("Storage: transactions and connections")
struct TransactionTests {
    struct Deliberate: Error {}

    @Test("a transaction that throws after writing leaves nothing behind", arguments: StoreBackend.underTest)
    func rollbackOnThrow(backend: StoreBackend) async throws {
        try await withStore(backend) { store, _ in
            await #expect(throws: Deliberate.self) {
                try await store.database.transaction { tx -> Int in
                    try tx.execute(
                        "INSERT INTO devices (id, label, created_at) VALUES (?, ?, ?)",
                        [.text("half-written"), .text("x"), .int(0)]
                    )
                    throw Deliberate()
                }
            }
            await expectStoreError(.notFound(.device, id: "half-written")) { try await store.device(id: "half-written") }
        }
    }

    @Test("deferred statements run in order before the commit, and one that fails fails the transaction whole",
          arguments: StoreBackend.underTest)
    func deferredStatements(backend: StoreBackend) async throws {
        try await withStore(backend) { store, _ in
            let insert = "INSERT INTO devices (id, label, created_at) VALUES (?, ?, ?)"
            // Deferred, then read back by the next statement of the same transaction: it ran first.
            let seen = try await store.database.transaction { tx -> Int in
                try tx.executeDeferred(insert, [.text("deferred-1"), .text("x"), .int(0)])
                try tx.executeDeferred(insert, [.text("deferred-2"), .text("x"), .int(0)])
                return try tx.query("SELECT id FROM devices WHERE id LIKE 'deferred-%'", []).count
            }
            #expect(seen == 2)
            // The last statements of a transaction deferred: sent with its commit, and stored.
            try await store.database.transaction { tx in
                try tx.execute(insert, [.text("deferred-3"), .text("x"), .int(0)])
                try tx.executeDeferred(insert, [.text("deferred-4"), .text("x"), .int(0)])
            }
            _ = try await store.device(id: "deferred-4")
            // A deferred statement that fails (the id exists) fails the next call; nothing of the transaction stays,
            // and the statement after it never ran.
            await #expect(throws: SQLError.self) {
                try await store.database.transaction { tx -> Int in
                    try tx.execute(insert, [.text("deferred-5"), .text("x"), .int(0)])
                    try tx.executeDeferred(insert, [.text("deferred-1"), .text("x"), .int(0)])
                    return try tx.execute(insert, [.text("deferred-6"), .text("x"), .int(0)])
                }
            }
            // The same failure found at the commit.
            await #expect(throws: SQLError.self) {
                try await store.database.transaction { tx in
                    try tx.execute(insert, [.text("deferred-7"), .text("x"), .int(0)])
                    try tx.executeDeferred(insert, [.text("deferred-2"), .text("x"), .int(0)])
                }
            }
            // A check of the rows a deferred statement changed that throws fails the transaction the same way.
            await #expect(throws: Deliberate.self) {
                try await store.database.transaction { tx -> [SQLRow] in
                    try tx.execute(insert, [.text("deferred-8"), .text("x"), .int(0)])
                    try tx.executeDeferred("UPDATE devices SET label = ? WHERE id = ?", [.text("y"), .text("deferred-1")]) { changed in
                        if changed == 1 { throw Deliberate() }
                    }
                    return try tx.query("SELECT id FROM devices", [])
                }
            }
            for id in ["deferred-5", "deferred-6", "deferred-7", "deferred-8"] {
                await expectStoreError(.notFound(.device, id: id)) { try await store.device(id: id) }
            }
            // A transaction that ran nothing commits nothing, and every connection still works after the failures.
            try await store.database.transaction { _ in }
            let count = try await store.database.transaction(readOnly: true) { tx in
                try tx.query("SELECT id FROM devices WHERE id LIKE 'deferred-%'", []).count
            }
            #expect(count == 4)
        }
    }

    @Test("values round-trip exactly: empty and binary blobs, Unicode text, NULL, 64-bit integers", arguments: StoreBackend.underTest)
    func valuesRoundTrip(backend: StoreBackend) async throws {
        try await withStore(backend) { store, _ in
            let blob: [UInt8] = [0, 255, 0, 1, 92, 120, 39]
            let rows = try await store.database.transaction { tx -> [SQLRow] in
                try tx.execute(
                    "CREATE TABLE probe (id {INT}, t TEXT, b {BLOB}, e {BLOB}, n TEXT)"
                        .replacingOccurrences(of: "{INT}", with: store.database.dialect == .sqlite ? "INTEGER" : "BIGINT")
                        .replacingOccurrences(of: "{BLOB}", with: store.database.dialect == .sqlite ? "BLOB" : "BYTEA"),
                    []
                )
                try tx.execute(
                    "INSERT INTO probe (id, t, b, e, n) VALUES (?, ?, ?, ?, ?)",
                    [.integer(Int64.min + 1), .text("Zoë ✓ 'quoted' ? $1"), .blob(blob), .blob([]), .null]
                )
                return try tx.query("SELECT * FROM probe WHERE id = ?", [.integer(Int64.min + 1)])
            }
            let row = try #require(rows.first)
            #expect(try row.int("id") == Int64.min + 1)
            #expect(try row.text("t") == "Zoë ✓ 'quoted' ? $1")
            #expect(try row.blob("b") == blob)
            #expect(try row.blob("e") == [])
            #expect(try row.optionalText("n") == nil)
        }
    }

    @Test("a one-statement read runs its statement and refuses a second", arguments: StoreBackend.underTest)
    func oneStatementRead(backend: StoreBackend) async throws {
        try await withStore(backend) { store, _ in
            let rows = try await store.database.readStatement { tx in
                try tx.query("SELECT version FROM schema_migrations WHERE version = ?", [.int(1)])
            }
            #expect(try rows.map { try $0.int("version") } == [1])
            await #expect(throws: SQLError.self) {
                try await store.database.readStatement { tx in
                    _ = try tx.query("SELECT version FROM schema_migrations WHERE version = ?", [.int(1)])
                    return try tx.query("SELECT version FROM schema_migrations WHERE version = ?", [.int(2)])
                }
            }
        }
    }

    @Test("values bound without a copy read back whole: short and long text, blobs, many parameters", arguments: StoreBackend.underTest)
    func boundValuesReadBack(backend: StoreBackend) async throws {
        try await withStore(backend) { store, _ in
            // Short texts live inline in the String (their bytes are copied to the stack to be bound), long ones on the heap.
            let texts = (0..<12).map { String(repeating: "é\($0)x", count: $0 * 7) }
            let blobs = (0..<12).map { index in (0..<(index * 300)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) } }
            let sqlite = store.database.dialect == .sqlite
            let columns = (0..<12).map { "t\($0) TEXT, b\($0) \(sqlite ? "BLOB" : "BYTEA")" }.joined(separator: ", ")
            let names = (0..<12).map { "t\($0), b\($0)" }.joined(separator: ", ")
            let rows = try await store.database.transaction { tx -> [SQLRow] in
                try tx.execute("CREATE TABLE bound (\(columns))", [])
                let values: [SQLValue] = (0..<12).flatMap { [SQLValue.text(texts[$0]), .blob(blobs[$0])] }
                try tx.execute("INSERT INTO bound (\(names)) VALUES (\(Array(repeating: "?", count: 24).joined(separator: ", ")))", values)
                return try tx.query("SELECT * FROM bound WHERE t11 = ? AND b11 = ?", [.text(texts[11]), .blob(blobs[11])])
            }
            let row = try #require(rows.first)
            for index in 0..<12 {
                #expect(try row.text("t\(index)") == texts[index])
                #expect(try row.blob("b\(index)") == blobs[index])
            }
        }
    }

    @Test(
        "a pool of one connection serves many concurrent callers in turn",
        .enabled(if: StoreBackend.underTest.contains(.postgres), "FACESEAL_TEST_POSTGRES_URL is unset: PostgreSQL pool test skipped")
    )
    func poolOfOneQueuesCallers() async throws {
        try await withScratch(.postgres) { scratch in
            guard case .postgres(let url, _, let schema) = scratch.location else { return }
            let store = try await SQLAuthorityStore.open(.postgres(url: url, poolSize: 1, schema: schema), clock: ManualClock())
            let accepted = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<24 {
                    group.addTask { try await store.registerJTI("jti-\(index % 12)", expiresAt: Date(timeIntervalSince1970: 1_900_000_000)) }
                }
                var accepted = 0
                for try await fresh in group where fresh { accepted += 1 }
                return accepted
            }
            #expect(accepted == 12)
            await store.close()
            await expectStoreError(.unavailable("the PostgreSQL store is closed")) { try await store.tenants() }
        }
    }

    @Test("a closed SQLite store refuses further work with a typed error")
    func closedSQLiteStore() async throws {
        try await withScratch(.sqlite) { scratch in
            let store = try await scratch.open(clock: ManualClock())
            await store.close()
            await expectStoreError(.unavailable("the SQLite store is closed")) { try await store.tenants() }
        }
    }

    @Test("SQLite writes queued behind a busy writer commit together, and the one that throws is rolled back alone")
    func groupCommitIsolatesFailures() async throws {
        // Another connection holds the write lock, as another process would: the first write waits for it on the
        // writer's queue, and the ones after it queue behind.
        try await withSQLiteBehindAnotherWriter { store, database, other in
            let ids = (0..<5).map { "batched-\($0)" }
            let outcomes = Task {
                await withTaskGroup(of: (String, Bool).self) { group in
                    for id in ids {
                        group.addTask {
                            do {
                                try await database.transaction { tx in
                                    try tx.execute("INSERT INTO devices (id, label, created_at) VALUES (?, ?, ?)", [.text(id), .text("x"), .int(0)])
                                    if id == "batched-2" { throw Deliberate() }
                                }
                                return (id, true)
                            } catch {
                                return (id, false)
                            }
                        }
                    }
                    var outcomes: [String: Bool] = [:]
                    for await (id, stored) in group { outcomes[id] = stored }
                    return outcomes
                }
            }
            // None can commit while the lock is held: once all five are asked for, all five wait.
            while database.writeQueue.inFlight < ids.count { await Task.yield() }
            try other.execute("COMMIT", [])
            #expect(await outcomes.value == ["batched-0": true, "batched-1": true, "batched-2": false, "batched-3": true, "batched-4": true])
            #expect(database.writeQueue.batched >= ids.count - 1)
            for id in ids where id != "batched-2" { #expect(try await store.device(id: id).id == id) }
            await expectStoreError(.notFound(.device, id: "batched-2")) { try await store.device(id: "batched-2") }
            await store.close()
        }
    }

    @Test("SQLite writes and reads asked for together, some waiting a turn to gather a batch: each answered once, stored, seen")
    func overlappingWritesCommitTogether() async throws {
        try await withScratch(.sqlite) { scratch in
            let store = try await scratch.open(clock: ManualClock())
            let database = try #require(store.database as? SQLiteDatabase)
            let ids = (0..<64).map { "together-\($0)" }
            let seen = try await withThrowingTaskGroup(of: Int.self) { group in
                for id in ids {
                    group.addTask {
                        _ = try await database.transaction { tx in
                            try tx.execute("INSERT INTO devices (id, label, created_at) VALUES (?, ?, ?)", [.text(id), .text("x"), .int(0)])
                        }
                        // A read after the write sees it.
                        return try await database.transaction(readOnly: true) { tx in
                            try tx.query("SELECT id FROM devices WHERE id = ?", [.text(id)]).count
                        }
                    }
                }
                return try await group.reduce(0, +)
            }
            #expect(seen == ids.count)
            #expect(database.writeQueue.inFlight == 0)
            await store.close()
        }
    }

    @Test("an SQLite read queued while a write runs on the connection is answered after that write committed, and sees it")
    func queuedReadSeesTheWriteRunning() async throws {
        // Another process's write lock sends the write to the connection's queue, whose thread runs its body once the
        // lock is released; the body then holds the connection until the gate opens, so the read must queue behind it.
        try await withSQLiteBehindAnotherWriter { store, database, other in
            let entered = DispatchSemaphore(value: 0)
            let gate = DispatchSemaphore(value: 0)
            // Opened on every way out, so a failure below never leaves the queue's thread blocked.
            defer { gate.signal() }
            let write = Task {
                try await database.transaction { tx in
                    entered.signal()
                    gate.wait()
                    try tx.execute("INSERT INTO devices (id, label, created_at) VALUES ('queued', 'x', 0)", [])
                }
            }
            // Handed to the queue: the body will run on the queue's thread, which the gate may block.
            while database.busyHandOffs < 1 { await Task.yield() }
            try other.execute("COMMIT", [])
            while entered.wait(timeout: .now()) != .success { await Task.yield() }
            let read = Task {
                try await database.transaction(readOnly: true) { tx in
                    try tx.query("SELECT id FROM devices WHERE id = 'queued'", []).count
                }
            }
            while database.connectionQueue.reads < 1 { await Task.yield() }
            gate.signal()
            _ = try await write.value
            #expect(try await read.value == 1)
            #expect(database.connectionQueue.reads == 0)
            await store.close()
        }
    }

    @Test("SQLite reads queued beside waiting writes run before them: answered without waiting for their commit, not seeing them")
    func queuedReadsRunBeforeWaitingWrites() async throws {
        // Another process's write lock holds the first write on the connection's queue; a second write and a read queue.
        try await withSQLiteBehindAnotherWriter { store, database, other in
            let first = Task {
                try await database.transaction { tx in
                    try tx.execute("INSERT INTO devices (id, label, created_at) VALUES ('first', 'x', 0)", [])
                }
            }
            while database.busyHandOffs < 1 { await Task.yield() }
            let second = Task {
                try await database.transaction { tx in
                    try tx.execute("INSERT INTO devices (id, label, created_at) VALUES ('second', 'x', 0)", [])
                }
            }
            while database.writeQueue.inFlight < 2 || database.connectionQueue.writes < 1 { await Task.yield() }
            let read = Task {
                try await database.transaction(readOnly: true) { tx in
                    try tx.query("SELECT id FROM devices WHERE id = 'second'", []).count
                }
            }
            while database.connectionQueue.reads < 1 { await Task.yield() }
            try other.execute("COMMIT", [])
            // The read ran before the batch that holds the second write, so it cannot see it; both writes commit.
            #expect(try await read.value == 0)
            _ = try await first.value
            _ = try await second.value
            #expect(try await store.device(id: "first").id == "first")
            #expect(try await store.device(id: "second").id == "second")
            #expect(database.connectionQueue.reads == 0 && database.connectionQueue.writes == 0)
            await store.close()
        }
    }

    @Test("SQLite checkpoints run beside the writes, the writing connection's only after one beside it caught up, and still let the WAL start over: 12,800 commits leave it under half their frames")
    func walStartsOverAfterCheckpoints() async throws {
        try await withScratch(.sqlite) { scratch in
            let store = try await scratch.open(clock: ManualClock())
            guard case .sqlite(let path, _, _) = scratch.location else { return }
            let database = try #require(store.database as? SQLiteDatabase)
            // One commit after the other: the checkpoints beside them run on their own queue while the next ones commit.
            // Writes go on while a checkpoint beside them syncs, so the WAL's high-water mark depends on the disk: with
            // syncs stalling (other tests' files syncing beside it), a restarting WAL reached ~4,400 frames, eleven
            // intervals, in 2–4 of 40 runs of 16 intervals. 32 intervals keep it far below half of the 12,800 frames of
            // a WAL that never restarts.
            let commits = 32 * SQLiteDatabase.checkpointInterval
            for index in 0..<commits {
                _ = try await store.database.transaction { tx in
                    try tx.execute("INSERT INTO devices (id, label, created_at) VALUES (?, ?, ?)", [.text("wal-\(index)"), .text("x"), .int(0)])
                }
            }
            let checkpoints = database.checkpoints
            #expect(checkpoints.beside >= 1 && checkpoints.onWriter >= 1, "\(checkpoints)")
            // The writing connection checkpoints only after a checkpoint beside it caught up and synced the file.
            #expect(checkpoints.caughtUp >= checkpoints.onWriter, "\(checkpoints)")
            // A WAL that never started over would hold a frame (4 KiB and a header) for every commit at least.
            let size = try #require(try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? NSNumber).intValue
            #expect(size < commits / 2 * 4_120, "WAL of \(size) bytes")
            #expect(try await store.database.transaction(readOnly: true) { try $0.query("SELECT id FROM devices", []).count } == commits)
            // Truncating leaves nothing in the WAL, after any checkpoint beside the writes.
            try await database.truncateJournal()
            #expect(try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? NSNumber == 0)
            await store.close()
        }
    }

    @Test("the SQLite file is readable by its owner only and runs in WAL mode")
    func sqliteFileModeAndJournal() async throws {
        try await withScratch(.sqlite) { scratch in
            let store = try await scratch.open(clock: ManualClock())
            guard case .sqlite(let path, _, _) = scratch.location else { return }
            let permissions = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber
            #expect(permissions?.intValue == 0o600)
            let mode = try await store.database.transaction { tx in
                try tx.queryOne("PRAGMA journal_mode", []).map { try $0.text("journal_mode") }
            }
            #expect(mode == "wal")
            await store.close()
        }
    }

    @Test(
        "a PostgreSQL session killed mid-transaction stores nothing, and the pool reconnects",
        .enabled(if: StoreBackend.underTest.contains(.postgres), "FACESEAL_TEST_POSTGRES_URL is unset: PostgreSQL crash test skipped")
    )
    func postgresSessionKilledMidTransaction() async throws {
        try await withScratch(.postgres) { scratch in
            guard case .postgres(let url, _, let schema) = scratch.location else { return }
            let store = try await SQLAuthorityStore.open(.postgres(url: url, poolSize: 1, schema: schema), clock: ManualClock())
            await #expect(throws: (any Error).self) {
                try await store.database.transaction { tx -> Int in
                    try tx.execute("INSERT INTO devices (id, label, created_at) VALUES (?, ?, ?)", [.text("doomed"), .text("x"), .int(0)])
                    // The server ends this very session before COMMIT, as a crash of the authority would.
                    _ = try tx.query("SELECT pg_terminate_backend(pg_backend_pid()) AS killed", [])
                    return 0
                }
            }
            // The same (only) pooled connection is reset on release and serves the next call.
            await expectStoreError(.notFound(.device, id: "doomed")) { try await store.device(id: "doomed") }
            _ = try await store.createTenant(StoreFixtures.tenant())
            #expect(try await store.tenants().map(\.id) == ["acme"])
            await store.close()
        }
    }

    @Test("SQLite keeps no allocation statistics (they take a process-wide mutex around every allocation)")
    func sqliteAllocationStatisticsOff() async throws {
        try await withScratch(.sqlite) { scratch in
            // Opening runs the migrations on two connections, which stay open holding their caches: with the
            // statistics on, SQLite would count that memory.
            let store = try await scratch.open(clock: ManualClock())
            withExtendedLifetime(store) { #expect(sqlite3_memory_used() == 0) }
        }
    }

    /// Runs `body` on a fresh SQLite store while another connection to its file holds the write lock (`BEGIN
    /// IMMEDIATE`, as another process would); `body` commits that connection when it wants the store's work to go on.
    private func withSQLiteBehindAnotherWriter(
        _ body: (SQLAuthorityStore, SQLiteDatabase, SQLiteConnection) async throws -> Void
    ) async throws {
        try await withScratch(.sqlite) { scratch in
            let store = try await scratch.open(clock: ManualClock())
            guard case .sqlite(let path, _, _) = scratch.location, let database = store.database as? SQLiteDatabase else {
                Issue.record("not an SQLite store")
                return
            }
            let other = try SQLiteConnection(path: path, busyTimeoutMilliseconds: 5_000)
            try other.execute("BEGIN IMMEDIATE", [])
            try await body(store, database, other)
        }
    }
}
