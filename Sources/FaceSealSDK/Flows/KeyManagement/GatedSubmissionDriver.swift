/// Performs the actions of a ``GatedSubmissionStateMachine``: asks the `UserPresence` provider,
/// then runs the flow's submission with the proof.
final class GatedSubmissionDriver<Subject: Equatable & Sendable, Outcome: Equatable & Sendable>: Sendable {
    typealias Machine = GatedSubmissionStateMachine<Subject, Outcome>
    typealias Submission = @Sendable (Subject, UserPresenceProof) async -> Result<Outcome, FlowFailure>

    private let core: FlowCore<Machine>
    private let userPresence: any UserPresence
    private let presenceReason: String
    private let submission: Submission

    init(
        subject: Subject, userPresence: any UserPresence, presenceReason: String,
        submission: @escaping Submission, publish: @escaping @Sendable (Machine.View, Bool) -> Void
    ) {
        self.userPresence = userPresence
        self.presenceReason = presenceReason
        self.submission = submission
        core = FlowCore(Machine(subject: subject)) { publish($0.view, $0.isTerminal) }
    }

    func approve() { send { $0.approve() } }
    func cancel() { send { $0.cancel() } }
    func waitUntilIdle() async { await core.waitUntilIdle() }

    private func send(_ event: (inout Machine) -> Machine.Action) {
        core.send(event, perform: { [self] action in await perform(action) })
    }

    private func perform(_ action: Machine.Action) async {
        switch action {
        case .none:
            return
        case .confirmUserPresence:
            do {
                let proof = try await userPresence.confirm(reason: presenceReason)
                send { $0.userPresenceConfirmed(proof) }
            } catch {
                send { $0.userPresenceFailed(error) }
            }
        case .submit(let subject, let proof):
            switch await submission(subject, proof) {
            case .success(let outcome): send { $0.submissionSucceeded(outcome) }
            case .failure(let failure): send { $0.submissionFailed(failure.reason) }
            }
        }
    }
}

/// A ``FailureReason`` as an `Error`, for `Result`.
struct FlowFailure: Error, Equatable {
    let reason: FailureReason
}
