extension Authority {
    /// On a store with no management API key, creates the first (administrator) key and returns it once in
    /// clear; nil when keys exist.
    public func bootstrapAdminKey() async throws -> String? { nil }
}
