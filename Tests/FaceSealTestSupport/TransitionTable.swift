public import Testing

/// What a state-machine table says one (state, input) pair does (the SDK's flow machines and the authority's
/// request lifecycle are tested with it).
public enum TransitionOutcome<View: Equatable, Action: Equatable>: Equatable {
    /// The machine moves to `View` and asks for `Action`.
    case transition(View, Action)
    /// The input is ignored: same state, no action.
    case ignored
    /// An impossible driver result: the machine traps (checked in a child process).
    case traps
}

/// Checks one non-trapping pair of a table: the state and action after the input, against `outcome`.
public func expectTransition<View: Equatable, Action: Equatable>(
    _ outcome: TransitionOutcome<View, Action>, before: View, after: View, action: Action, none: Action,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    switch outcome {
    case .transition(let view, let expectedAction):
        #expect(after == view, sourceLocation: sourceLocation)
        #expect(action == expectedAction, sourceLocation: sourceLocation)
    case .ignored:
        #expect(after == before, sourceLocation: sourceLocation)
        #expect(action == none, sourceLocation: sourceLocation)
    case .traps:
        Issue.record("trap pair in the non-trapping list", sourceLocation: sourceLocation)
    }
}
