import FaceSealTestSupport
import Foundation
import Testing
@testable import FaceSealSDK

/// Every state × every input of the rotation / revocation machine.
@Suite struct GatedSubmissionStateMachineTests {
    typealias Machine = GatedSubmissionStateMachine<[String], Int>
    typealias View = Machine.View
    typealias Action = Machine.Action

    enum Stage: String, CaseIterable, Codable, Sendable {
        case confirming, awaitingUserPresence, submitting, succeeded, failed
    }

    enum Input: String, CaseIterable, Codable, Sendable {
        case approve, cancel, presenceConfirmed, presenceCancelled, presenceNotAvailable, presenceInvalidated, submissionSucceeded, submissionFailed
        var isUserInput: Bool { self == .approve || self == .cancel }
    }

    static let subject = ["key-1", "key-2"]
    static let proof = UserPresenceProof(confirmedAt: Date(timeIntervalSince1970: 1_800_000_000))

    static func machine(at stage: Stage) -> Machine {
        var m = Machine(subject: subject)
        switch stage {
        case .confirming: break
        case .awaitingUserPresence: _ = m.approve()
        case .submitting: _ = m.approve(); _ = m.userPresenceConfirmed(proof)
        case .succeeded: _ = m.approve(); _ = m.userPresenceConfirmed(proof); _ = m.submissionSucceeded(2)
        case .failed: _ = m.cancel()
        }
        return m
    }

    static func apply(_ input: Input, to m: inout Machine) -> Action {
        switch input {
        case .approve: m.approve()
        case .cancel: m.cancel()
        case .presenceConfirmed: m.userPresenceConfirmed(proof)
        case .presenceCancelled: m.userPresenceFailed(SignKeypairError(code: .userCancelled))
        case .presenceNotAvailable: m.userPresenceFailed(SignKeypairError(code: .notAvailable))
        case .presenceInvalidated: m.userPresenceFailed(SignKeypairError(code: .keyInvalidated))
        case .submissionSucceeded: m.submissionSucceeded(2)
        case .submissionFailed: m.submissionFailed(.authorityUnavailable("down"))
        }
    }

    typealias Outcome = TransitionOutcome<View, Action>

    static func expected(_ stage: Stage, _ input: Input) -> Outcome {
        switch (stage, input) {
        case (.confirming, .approve): .transition(.awaitingUserPresence, .confirmUserPresence)
        case (.confirming, .cancel), (.awaitingUserPresence, .cancel): .transition(.failed(reason: .cancelled), .none)
        case (.awaitingUserPresence, .presenceConfirmed): .transition(.submitting, .submit(subject, proof))
        case (.awaitingUserPresence, .presenceCancelled): .transition(.confirming(subject), .none)
        case (.awaitingUserPresence, .presenceNotAvailable): .transition(.failed(reason: .userPresence(.notAvailable)), .none)
        case (.awaitingUserPresence, .presenceInvalidated): .transition(.failed(reason: .userPresence(.keyInvalidated)), .none)
        case (.submitting, .submissionSucceeded): .transition(.succeeded(2), .none)
        case (.submitting, .submissionFailed): .transition(.failed(reason: .authorityUnavailable("down")), .none)
        case (_, let input) where input.isUserInput: .ignored
        // A prompt answered after a cancel is dropped; a submission never outlives its flow.
        case (.succeeded, .presenceConfirmed), (.succeeded, .presenceCancelled), (.succeeded, .presenceNotAvailable), (.succeeded, .presenceInvalidated),
            (.failed, .presenceConfirmed), (.failed, .presenceCancelled), (.failed, .presenceNotAvailable), (.failed, .presenceInvalidated):
            .ignored
        default: .traps
        }
    }

    struct PairCase: Codable, Sendable, CustomTestStringConvertible {
        let stage: Stage
        let input: Input
        var testDescription: String { "\(stage.rawValue) × \(input.rawValue)" }
    }

    static func pairs(trapping: Bool) -> [PairCase] {
        Stage.allCases.flatMap { stage in
            Input.allCases.filter { (expected(stage, $0) == .traps) == trapping }.map { PairCase(stage: stage, input: $0) }
        }
    }

    @Test("every state × every non-trapping input", arguments: pairs(trapping: false))
    func transition(_ pair: PairCase) {
        var m = Self.machine(at: pair.stage)
        let before = m.view
        let action = Self.apply(pair.input, to: &m)
        expectTransition(Self.expected(pair.stage, pair.input), before: before, after: m.view, action: action, none: .none)
    }

    @Test("a driver result the machine did not ask for traps", .tags(.impossibleTransitions), arguments: pairs(trapping: true))
    func impossibleTransitionTraps(_ pair: PairCase) async {
        await #expect(processExitsWith: .failure) { [pair] in
            var m = GatedSubmissionStateMachineTests.machine(at: pair.stage)
            _ = GatedSubmissionStateMachineTests.apply(pair.input, to: &m)
        }
    }
}
