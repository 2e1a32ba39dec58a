import FaceSealTestSupport
import Foundation
import Testing
@testable import FaceSealAuthority

@Suite("Storage: PostgreSQL availability")
struct PostgresAvailabilityTests {
    /// Outside CI without a server the PostgreSQL cases are not generated; this test says so instead of
    /// passing silently. Under CI=true it runs and fails when the server is missing or unreachable.
    @Test(
        "the PostgreSQL test server is configured and reachable",
        .enabled(
            if: StoreBackend.postgresURL != nil || StoreBackend.isCI,
            "FACESEAL_TEST_POSTGRES_URL is unset: PostgreSQL storage cases skipped (run through scripts/with-postgres.sh)"
        )
    )
    func postgresIsReachable() async throws {
        let url = try #require(StoreBackend.postgresURL, "CI=true needs FACESEAL_TEST_POSTGRES_URL (scripts/with-postgres.sh sets it)")
        let store = try await SQLAuthorityStore.open(.postgres(url: url, poolSize: 1, schema: "t_reachability_\(UUID().uuidString.prefix(8).lowercased())"))
        #expect(try await store.appliedSchemaVersions() == SchemaMigrator.migrations.map(\.version))
        try await store.database.transaction { tx in
            _ = try tx.execute("DROP SCHEMA IF EXISTS \(try tx.queryOne("SELECT current_schema() AS s", []).map { try $0.text("s") } ?? "none") CASCADE", [])
        }
        await store.close()
    }

    @Test("an unreachable server is a typed error, not a crash")
    func unreachableServer() async {
        do {
            _ = try await SQLAuthorityStore.open(.postgres(url: "postgres://postgres@127.0.0.1:1/postgres?connect_timeout=2", poolSize: 1))
            Issue.record("connecting to port 1 must fail")
        } catch let error as AuthorityStoreError {
            guard case .unavailable = error else {
                Issue.record("expected .unavailable, got \(error)")
                return
            }
        } catch {
            Issue.record("expected AuthorityStoreError, got \(error)")
        }
    }

    @Test("a schema name outside [a-z0-9_] is refused before any SQL")
    func schemaNameIsValidated() async {
        await expectStoreError(.invalidInput(field: "schema", reason: "lower-case letters, digits and _ only, not starting with a digit, at most 63")) {
            try await SQLAuthorityStore.open(.postgres(url: "postgres://postgres@127.0.0.1:1/postgres", poolSize: 1, schema: "x\"; DROP TABLE y; --"))
        }
    }
}
