import FaceSealTestSupport
import Foundation
import Testing
@testable import FaceSealAuthority

@Suite("Storage: schema migrations")
struct SchemaMigrationTests {
    @Test("a fresh database gets every migration, in order, recorded once", arguments: StoreBackend.underTest)
    func freshDatabaseIsMigrated(backend: StoreBackend) async throws {
        try await withStore(backend) { store, _ in
            let versions = try await store.appliedSchemaVersions()
            #expect(versions == SchemaMigrator.migrations.map(\.version).sorted())
            #expect(versions.last == SchemaMigrator.latestVersion)
        }
    }

    @Test("re-opening applies nothing twice and keeps the data", arguments: StoreBackend.underTest)
    func reopeningIsIdempotent(backend: StoreBackend) async throws {
        try await withScratch(backend) { scratch in
            let clock = ManualStoreClock()
            let first = try await scratch.open(clock: clock)
            _ = try await first.createTenant(StoreFixtures.tenant())
            await first.close()

            let second = try await scratch.open(clock: clock)
            #expect(try await SchemaMigrator.migrate(second.database, clock: clock).isEmpty)
            #expect(try await second.appliedSchemaVersions() == SchemaMigrator.migrations.map(\.version))
            #expect(try await second.tenant(id: "acme").name == "Acme acme")
            await second.close()
        }
    }

    @Test("migrations run in version order whatever order they are listed in", arguments: StoreBackend.underTest)
    func migrationsRunInVersionOrder(backend: StoreBackend) async throws {
        try await withScratch(backend) { scratch in
            let database = try await scratch.openRaw()
            // Version 2 depends on version 1's table: run out of order it would fail.
            let migrations = [
                SchemaMigration(version: 2, name: "index", statements: ["CREATE INDEX widgets_by_name ON widgets (name)"]),
                SchemaMigration(version: 1, name: "table", statements: ["CREATE TABLE widgets (id {INT} PRIMARY KEY, name TEXT NOT NULL)"]),
            ]
            let clock = ManualStoreClock()
            #expect(try await SchemaMigrator.migrate(database, clock: clock, migrations: migrations) == [1, 2])
            #expect(try await SchemaMigrator.migrate(database, clock: clock, migrations: migrations) == [])

            let third = migrations + [SchemaMigration(version: 3, name: "column", statements: ["ALTER TABLE widgets ADD COLUMN size {INT}"])]
            #expect(try await SchemaMigrator.migrate(database, clock: clock, migrations: third) == [3])
            await database.close()
        }
    }

    @Test("a failing migration leaves no trace and is retried on the next start", arguments: StoreBackend.underTest)
    func failingMigrationRollsBack(backend: StoreBackend) async throws {
        try await withScratch(backend) { scratch in
            let database = try await scratch.openRaw()
            let clock = ManualStoreClock()
            let broken = [
                SchemaMigration(version: 1, name: "half", statements: [
                    "CREATE TABLE gadgets (id {INT} PRIMARY KEY)",
                    "CREATE TABLE gadgets (id {INT} PRIMARY KEY)",
                ]),
            ]
            await #expect(throws: (any Error).self) { try await SchemaMigrator.migrate(database, clock: clock, migrations: broken) }
            let fixed = [SchemaMigration(version: 1, name: "whole", statements: ["CREATE TABLE gadgets (id {INT} PRIMARY KEY)"])]
            #expect(try await SchemaMigrator.migrate(database, clock: clock, migrations: fixed) == [1])
            await database.close()
        }
    }

    @Test("a database migrated by a newer build is refused", arguments: StoreBackend.underTest)
    func newerSchemaIsRefused(backend: StoreBackend) async throws {
        try await withScratch(backend) { scratch in
            let clock = ManualStoreClock()
            let store = try await scratch.open(clock: clock)
            _ = try await store.database.transaction { tx in
                try tx.execute("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)", [.int(999), .text("future"), .int(0)])
            }
            await store.close()
            await expectStoreError(.schemaTooNew(found: 999, known: SchemaMigrator.latestVersion)) {
                try await scratch.open(clock: clock)
            }
        }
    }

    @Test("several authority processes starting at once migrate the schema exactly once", arguments: StoreBackend.underTest)
    func concurrentStartersMigrateOnce(backend: StoreBackend) async throws {
        try await withScratch(backend) { scratch in
            let clock = ManualStoreClock()
            let stores = try await withThrowingTaskGroup(of: SQLAuthorityStore.self) { group in
                for _ in 0..<4 { group.addTask { try await scratch.open(clock: clock) } }
                var stores: [SQLAuthorityStore] = []
                for try await store in group { stores.append(store) }
                return stores
            }
            for store in stores {
                #expect(try await store.appliedSchemaVersions() == SchemaMigrator.migrations.map(\.version))
            }
            _ = try await stores[0].createTenant(StoreFixtures.tenant())
            #expect(try await stores[3].tenant(id: "acme").id == "acme")
            for store in stores { await store.close() }
        }
    }

    @Test("--database values: postgres URIs select PostgreSQL, anything else is an SQLite path")
    func locationParsing() {
        #expect(StoreLocation.parse("postgres://u@h:5432/db") == .postgres(url: "postgres://u@h:5432/db"))
        #expect(StoreLocation.parse("postgresql://u@h/db") == .postgres(url: "postgresql://u@h/db"))
        #expect(StoreLocation.parse("./faceseal-data/authority.sqlite") == .sqlite(path: "./faceseal-data/authority.sqlite"))
    }
}
