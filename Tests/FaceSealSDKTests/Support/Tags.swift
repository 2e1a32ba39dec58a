import Testing

extension Tag {
    /// Tests that check, in a child process each, that a state machine traps on a transition its
    /// driver can never ask for. About a thousand short processes; while iterating,
    /// `swift test --skip impossibleTransitionTraps` leaves them out.
    @Tag static var impossibleTransitions: Self
}
