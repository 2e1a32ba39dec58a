package import FaceSealAuthority
package import FaceSealWire
import Foundation
import Testing

/// The databases the authority's tests run on; each case runs once per backend. SQLite always; PostgreSQL when a
/// server is configured (`scripts/with-postgres.sh`) — and always under CI, where a missing or unreachable server must
/// fail the PostgreSQL cases instead of hiding them.
package enum StoreBackend: String, CustomTestStringConvertible, Sendable {
    case sqlite
    case postgres

    /// The name a test's arguments show.
    package var testDescription: String { rawValue }

    /// The PostgreSQL server's URL (`FACESEAL_TEST_POSTGRES_URL`), when one is configured.
    package static var postgresURL: String? {
        ProcessInfo.processInfo.environment["FACESEAL_TEST_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// True under CI (`CI=true`).
    package static var isCI: Bool { ProcessInfo.processInfo.environment["CI"]?.lowercased() == "true" }

    /// The backends a test runs on here.
    package static var underTest: [StoreBackend] { postgresURL != nil || isCI ? [.sqlite, .postgres] : [.sqlite] }

    /// A fresh, empty database (an SQLite file in a new directory, or a new PostgreSQL schema).
    package func makeScratch() async throws -> ScratchDatabase {
        switch self {
        case .sqlite:
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("faceseal-store-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            return ScratchDatabase(backend: self, location: .sqlite(path: directory.appendingPathComponent("authority.sqlite").path),
                                   cleanupPath: directory.path)
        case .postgres:
            guard let url = Self.postgresURL else { throw StoreTestSetupError.postgresNotConfigured }
            let schema = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
            return ScratchDatabase(backend: self, location: .postgres(url: url, poolSize: 8, schema: schema), cleanupPath: nil)
        }
    }
}

/// Why a PostgreSQL case could not run.
package enum StoreTestSetupError: Error, CustomStringConvertible {
    /// `CI=true` and no server configured.
    case postgresNotConfigured

    /// The explanation.
    package var description: String {
        "FACESEAL_TEST_POSTGRES_URL is unset but CI=true: the PostgreSQL storage suite must run in CI (use scripts/with-postgres.sh)"
    }
}

/// A throwaway database location; `destroy()` removes it.
package struct ScratchDatabase: Sendable {
    /// Its backend.
    package let backend: StoreBackend
    /// Where it is.
    package let location: StoreLocation
    /// The directory to remove (SQLite).
    package let cleanupPath: String?

    /// The store on it, migrated.
    package func open(clock: any WallClock) async throws -> SQLAuthorityStore {
        try await SQLAuthorityStore.open(location, clock: clock)
    }

    /// Removes the directory or drops the schema.
    package func destroy() async {
        if let cleanupPath { try? FileManager.default.removeItem(atPath: cleanupPath) }
        await location.dropScratchSchema()
    }
}

/// Runs `body` with a fresh, empty scratch database on `backend` and removes it afterwards, also on failure.
package func withScratch(_ backend: StoreBackend, _ body: (ScratchDatabase) async throws -> Void) async throws {
    let scratch = try await backend.makeScratch()
    do {
        try await body(scratch)
    } catch {
        await scratch.destroy()
        throw error
    }
    await scratch.destroy()
}

/// Runs `body` against a freshly migrated store on `backend` with a manual clock, then closes it and removes the database.
package func withStore(_ backend: StoreBackend, _ body: (SQLAuthorityStore, ManualClock) async throws -> Void) async throws {
    let clock = ManualClock()
    try await withScratch(backend) { scratch in
        let store = try await scratch.open(clock: clock)
        do {
            try await body(store, clock)
        } catch {
            await store.close()
            throw error
        }
        await store.close()
    }
}
