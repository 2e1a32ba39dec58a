extension Authority {
    /// Puts a new request's link where the user's devices will find it (the outbox; SPEC §4.6).
    func announce(link: String, for request: CIBARequestRecord) async throws {}
}
