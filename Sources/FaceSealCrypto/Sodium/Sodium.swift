import CSodium

/// libsodium's one-time set-up.
enum Sodium {
    /// `sodium_init` runs once per process (a lazy global); it sets up libsodium's internals and its random source.
    /// It fails only when the process cannot read randomness at all, where no key could be made either.
    private static let initialised: Bool = sodium_init() >= 0

    static func initialise() {
        guard initialised else { fatalError("libsodium could not be initialised (no source of randomness)") }
    }
}
