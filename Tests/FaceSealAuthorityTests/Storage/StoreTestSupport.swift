import FaceSealTestSupport
import Testing
@testable import FaceSealAuthority

extension ScratchDatabase {
    /// The raw database, without migrations (for migration tests).
    func openRaw() async throws -> any SQLDatabase {
        switch location {
        case .sqlite(let path, let timeout, let synchronous):
            return try SQLiteDatabase(path: path, busyTimeoutMilliseconds: timeout, synchronous: synchronous)
        case .postgres(let url, let poolSize, let schema):
            return try await PostgresDatabase(url: url, schema: schema, poolSize: poolSize)
        }
    }
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
