extension StoreLocation {
    /// Drops a PostgreSQL location's schema with everything in it; nothing for SQLite. Only the package's tests call it,
    /// on their throwaway databases, so it is `package`, not part of the library's API.
    package func dropScratchSchema() async {
        guard case .postgres(let url, _, let schema?) = self,
              let database = try? await PostgresDatabase(url: url, schema: nil, poolSize: 1) else { return }
        try? await database.executeStandalone("DROP SCHEMA IF EXISTS \"\(schema)\" CASCADE")
        await database.close()
    }
}
