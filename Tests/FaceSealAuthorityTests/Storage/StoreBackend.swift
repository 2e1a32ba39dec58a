import Foundation
import Testing
@testable import FaceSealAuthority

/// The databases the shared storage suite runs on. Each test case runs once per backend.
enum StoreBackend: String, CustomTestStringConvertible, Sendable {
    case sqlite
    case postgres

    var testDescription: String { rawValue }

    static var environment: [String: String] { ProcessInfo.processInfo.environment }
    static var postgresURL: String? { environment["FACESEAL_TEST_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 } }
    static var isCI: Bool { environment["CI"]?.lowercased() == "true" }

    /// SQLite always; PostgreSQL when a server is configured — and always under CI, where a missing or
    /// unreachable server must fail the PostgreSQL cases instead of hiding them.
    static var underTest: [StoreBackend] {
        postgresURL != nil || isCI ? [.sqlite, .postgres] : [.sqlite]
    }

    /// A store on a fresh, empty database (an SQLite file in a new directory, or a new PostgreSQL schema).
    func makeScratch() async throws -> ScratchDatabase {
        switch self {
        case .sqlite:
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("faceseal-store-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            return ScratchDatabase(backend: self, location: .sqlite(path: directory.appendingPathComponent("authority.sqlite").path), cleanupPath: directory.path, schema: nil)
        case .postgres:
            guard let url = Self.postgresURL else {
                throw StoreTestSetupError.postgresNotConfigured
            }
            let schema = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
            return ScratchDatabase(backend: self, location: .postgres(url: url, poolSize: 8, schema: schema), cleanupPath: nil, schema: schema)
        }
    }
}

enum StoreTestSetupError: Error, CustomStringConvertible {
    case postgresNotConfigured

    var description: String {
        "FACESEAL_TEST_POSTGRES_URL is unset but CI=true: the PostgreSQL storage suite must run in CI (use scripts/with-postgres.sh)"
    }
}

/// A throwaway database location; `destroy()` removes it.
struct ScratchDatabase: Sendable {
    let backend: StoreBackend
    let location: StoreLocation
    let cleanupPath: String?
    let schema: String?

    func open(clock: any StoreClock) async throws -> SQLAuthorityStore {
        try await SQLAuthorityStore.open(location, clock: clock)
    }

    /// The raw database, without migrations (for migration tests).
    func openRaw() async throws -> any SQLDatabase {
        switch location {
        case .sqlite(let path, let timeout, let synchronous):
            return try SQLiteDatabase(path: path, busyTimeoutMilliseconds: timeout, synchronous: synchronous)
        case .postgres(let url, let poolSize, let schema):
            return try await PostgresDatabase(url: url, schema: schema, poolSize: poolSize)
        }
    }

    func destroy() async {
        if let cleanupPath {
            try? FileManager.default.removeItem(atPath: cleanupPath)
        }
        if let schema, case .postgres(let url, _, _) = location,
            let database = try? await PostgresDatabase(url: url, schema: nil, poolSize: 1)
        {
            try? await database.executeStandalone("DROP SCHEMA IF EXISTS \"\(schema)\" CASCADE")
            await database.close()
        }
    }
}

/// Runs `body` against a freshly migrated store on `backend` with a manual clock, then removes the database.
func withStore(
    _ backend: StoreBackend,
    _ body: (SQLAuthorityStore, ManualStoreClock) async throws -> Void
) async throws {
    let clock = ManualStoreClock()
    let scratch = try await backend.makeScratch()
    do {
        let store = try await scratch.open(clock: clock)
        do {
            try await body(store, clock)
        } catch {
            await store.close()
            throw error
        }
        await store.close()
    } catch {
        await scratch.destroy()
        throw error
    }
    await scratch.destroy()
}

/// Runs `body` with a fresh, empty scratch database on `backend` and removes it afterwards, also on failure.
func withScratch(_ backend: StoreBackend, _ body: (ScratchDatabase) async throws -> Void) async throws {
    let scratch = try await backend.makeScratch()
    do {
        try await body(scratch)
    } catch {
        await scratch.destroy()
        throw error
    }
    await scratch.destroy()
}

/// Expects `body` to throw exactly `expected`.
func expectStoreError<T>(
    _ expected: AuthorityStoreError,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> T
) async {
    do {
        _ = try await body()
        Issue.record("expected \(expected), but the call succeeded", sourceLocation: sourceLocation)
    } catch let error as AuthorityStoreError {
        #expect(error == expected, sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected \(expected), got \(error)", sourceLocation: sourceLocation)
    }
}
