import Foundation
import Testing
@testable import FaceSealFace

/// The challenge–response liveness check on synthetic landmark sequences (liveness.md): the drawn
/// challenges pass; wrong order, too late, another identity, a repeated still and other print
/// attacks fail, each with its own reason.
@Suite struct LivenessTests {
    let evaluator = LivenessEvaluator()

    static func nonce(_ seed: Int) -> [UInt8] { (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ seed &* 131 &+ seed >> 8) } }

    /// The first nonce (from seed 0 on) whose challenge satisfies `predicate`.
    func nonce(where predicate: ([LivenessAction]) -> Bool) throws -> ([UInt8], [LivenessAction]) {
        for seed in 0..<10_000 {
            let n = Self.nonce(seed)
            let steps = try evaluator.challenge(for: n).steps
            if predicate(steps) { return (n, steps) }
        }
        throw LivenessFailure.invalidNonce(length: 0)
    }

    func evaluate(_ capture: SyntheticCapture, nonce: [UInt8], evaluator: LivenessEvaluator? = nil) throws(LivenessFailure) -> LivenessEvidence {
        let identities = capture.identities
        return try (evaluator ?? self.evaluator).evaluate(frames: capture.frames, nonce: nonce) { index in
            SyntheticIdentities.vector(identity: identities[index], frame: index)
        }
    }

    @Test func drawnChallengesPerformedInOrderPass() throws {
        var seen = Set<[LivenessAction]>()
        for seed in 0..<24 {
            let n = Self.nonce(seed)
            let challenge = try evaluator.challenge(for: n)
            seen.insert(challenge.steps)
            var capture = try SyntheticCapture.obama()
            capture.performAll(challenge.steps)
            let evidence = try evaluate(capture, nonce: n)
            #expect(evidence.steps.map(\.action) == challenge.steps)
            #expect(evidence.challenge == challenge)
            #expect(evidence.identityFrames.count >= 3)
            #expect(evidence.maxIdentityDistance < 0.1)
            #expect(evidence.transcript.count > 68 * 16 * capture.frames.count)
        }
        #expect(seen.count >= 10, "nonces should draw varied challenges")
    }

    @Test func wrongOrderFails() throws {
        let (n, steps) = try nonce { $0[0] != .blink && $0[1] != .blink }
        var capture = try SyntheticCapture.obama()
        capture.performAll([steps[1], steps[0], steps[2]])
        #expect(throws: LivenessFailure.self) { try evaluate(capture, nonce: n) }
        do {
            _ = try evaluate(capture, nonce: n)
        } catch {
            guard case .wrongAction(step: 0, expected: steps[0], performed: steps[1], frame: _) = error else {
                Issue.record("expected wrongAction at step 0, got \(error)")
                return
            }
        }
    }

    @Test func stepPerformedTooLateFails() throws {
        let (n, steps) = try nonce { _ in true }
        var capture = try SyntheticCapture.obama()
        capture.rest(seconds: 0.8)
        capture.perform(steps[0])
        capture.rest(seconds: 6)            // the step window is 5 s
        capture.perform(steps[1])
        capture.rest(seconds: 0.6)
        capture.perform(steps[2])
        capture.rest(seconds: 0.6)
        #expect(throws: LivenessFailure.stepTimedOut(step: 1, action: steps[1])) { try evaluate(capture, nonce: n) }
    }

    @Test func anotherIdentityInsertedFails() throws {
        let (n, steps) = try nonce { _ in true }
        var capture = try SyntheticCapture.obama()
        capture.rest(seconds: 0.8)
        capture.perform(steps[0])
        capture.rest(seconds: 0.6)
        let strangerFrom = capture.frames.count
        capture.identity = 1                // someone else performs the second step
        capture.perform(steps[1])
        let strangerTo = capture.frames.count
        capture.identity = 0
        capture.rest(seconds: 0.6)
        capture.perform(steps[2])
        capture.rest(seconds: 0.6)
        do {
            _ = try evaluate(capture, nonce: n)
            Issue.record("a capture with a stranger's frames passed")
        } catch {
            guard case let .identityChanged(frame, distance) = error else {
                Issue.record("expected identityChanged, got \(error)")
                return
            }
            #expect((strangerFrom..<strangerTo).contains(frame))
            #expect(distance > 0.5)
        }
        // The same capture with the user throughout passes: the failure is the identity's.
        var honest = try SyntheticCapture.obama()
        honest.performAll(steps)
        _ = try evaluate(honest, nonce: n)
    }

    @Test func stillPhotoRepeatedAsFramesFails() throws {
        let (n, _) = try nonce { _ in true }
        var capture = try SyntheticCapture.obama()
        for _ in 0..<150 { capture.frame(capture.base, exact: true) }
        #expect(throws: LivenessFailure.repeatedFrames(frame: 2)) { try evaluate(capture, nonce: n) }
    }

    @Test func repeatedPixelDigestFails() throws {
        let (n, steps) = try nonce { _ in true }
        var capture = try SyntheticCapture.obama()
        capture.performAll(steps)
        var frames = capture.frames
        for i in frames.indices { frames[i].pixelDigest = UInt64(i) }
        frames[40].pixelDigest = frames[39].pixelDigest   // one injected duplicate frame
        #expect(throws: LivenessFailure.repeatedFrames(frame: 40)) {
            try evaluator.evaluate(frames: frames, nonce: n) { SyntheticIdentities.vector(identity: 0, frame: $0) }
        }
    }

    @Test func heldPrintWithCameraJitterTimesOut() throws {
        let (n, steps) = try nonce { _ in true }
        var capture = try SyntheticCapture.obama()
        capture.rest(seconds: 7)
        #expect(throws: LivenessFailure.stepTimedOut(step: 0, action: steps[0])) { try evaluate(capture, nonce: n) }
    }

    @Test func captureEndingBeforeTheStepsFails() throws {
        let (n, steps) = try nonce { _ in true }
        var capture = try SyntheticCapture.obama()
        capture.rest(seconds: 0.8)
        capture.perform(steps[0])
        capture.rest(seconds: 0.3)
        #expect(throws: LivenessFailure.stepNotCompleted(step: 1, action: steps[1])) { try evaluate(capture, nonce: n) }
    }

    @Test func captureMadeForAnotherNonceFails() throws {
        let (nonceA, stepsA) = try nonce { _ in true }
        let (nonceB, _) = try nonce { $0 != stepsA }
        var capture = try SyntheticCapture.obama()
        capture.performAll(stepsA)
        _ = try evaluate(capture, nonce: nonceA)
        #expect(throws: LivenessFailure.self) { try evaluate(capture, nonce: nonceB) }
    }

    @Test func tiltedPrintCannotFakeABlink() throws {
        // Tilting a print backwards lowers the eye ratio, but the pitch proxy drops with it.
        let (n, _) = try nonce { $0[0] == .blink }
        var capture = try SyntheticCapture.obama()
        capture.rest(seconds: 0.8)
        for f in [0.8, 0.5, 0.45, 0.5, 0.8] { capture.frame(SyntheticCapture.squashed(capture.base, factor: f)) }
        capture.rest(seconds: 1)
        #expect(throws: LivenessFailure.stepNotCompleted(step: 0, action: .blink)) { try evaluate(capture, nonce: n) }
    }

    @Test func rotatingTheFaceInPlaneIsNotATurn() throws {
        let (n, steps) = try nonce { $0[0] == .turnLeft || $0[0] == .turnRight }
        var capture = try SyntheticCapture.obama()
        capture.rest(seconds: 0.8)
        for degrees in [5.0, 10, 15, 20, 20, 20, 15, 10, 5, 0] { capture.frame(SyntheticCapture.rotated(capture.base, degrees: degrees)) }
        capture.rest(seconds: 1)
        #expect(throws: LivenessFailure.stepNotCompleted(step: 0, action: steps[0])) { try evaluate(capture, nonce: n) }
    }

    @Test func spontaneousBlinksAreTolerated() throws {
        let (n, steps) = try nonce { !$0.contains(.blink) }
        var capture = try SyntheticCapture.obama()
        capture.rest(seconds: 0.8)
        for step in steps {
            capture.perform(.blink)
            capture.rest(seconds: 0.3)
            capture.perform(step)
            capture.rest(seconds: 0.6)
        }
        #expect(try evaluate(capture, nonce: n).steps.map(\.action) == steps)
    }

    @Test func mirroredFramesSwapTheTurnDirection() throws {
        let (n, steps) = try nonce { $0.contains(.turnLeft) || $0.contains(.turnRight) }
        let swapped = steps.map { $0 == .turnLeft ? LivenessAction.turnRight : $0 == .turnRight ? .turnLeft : $0 }
        var capture = try SyntheticCapture.obama()
        capture.performAll(swapped)
        var policy = LivenessPolicy()
        policy.framesAreMirrored = true
        #expect(try evaluate(capture, nonce: n, evaluator: LivenessEvaluator(policy: policy)).steps.map(\.action) == steps)
        #expect(throws: LivenessFailure.self) { try evaluate(capture, nonce: n) }
    }

    @Test func frameLevelChecks() throws {
        let (n, steps) = try nonce { _ in true }
        var capture = try SyntheticCapture.obama()
        capture.performAll(steps)
        let oracle: (Int) -> [Float] = { SyntheticIdentities.vector(identity: 0, frame: $0) }
        var frames = capture.frames
        frames[20].faceCount = 2
        #expect(throws: LivenessFailure.faceCount(frame: 20, count: 2)) { try evaluator.evaluate(frames: frames, nonce: n, embedding: oracle) }
        frames = capture.frames
        frames[21].timestamp = frames[20].timestamp
        #expect(throws: LivenessFailure.timestampsNotIncreasing(frame: 21)) { try evaluator.evaluate(frames: frames, nonce: n, embedding: oracle) }
        frames = capture.frames
        frames[22].faceBox = FaceRect(left: 0, top: 0, right: 50, bottom: 50)
        #expect(throws: LivenessFailure.trackBroken(frame: 22)) { try evaluator.evaluate(frames: frames, nonce: n, embedding: oracle) }
        frames = capture.frames
        frames[23].landmarks = Array(frames[23].landmarks.prefix(5))
        #expect(throws: LivenessFailure.landmarksUnusable(frame: 23)) { try evaluator.evaluate(frames: frames, nonce: n, embedding: oracle) }
        frames = capture.frames
        frames[24].landmarks = frames[24].landmarks.map { Point2D(x: $0.x / 4, y: $0.y / 4) }
        frames[24].faceBox = frames[23].faceBox
        let small = Result { () throws(LivenessFailure) in try evaluator.evaluate(frames: frames, nonce: n, embedding: oracle) }
        guard case .faceTooSmall(frame: 24, interocular: _)? = small.failure else {
            Issue.record("expected faceTooSmall, got \(small)")
            return
        }
        #expect(throws: LivenessFailure.invalidNonce(length: 8)) { try evaluator.evaluate(frames: capture.frames, nonce: [UInt8](repeating: 1, count: 8), embedding: oracle) }
        #expect(throws: LivenessFailure.tooFewFrames(count: 0)) { try evaluator.evaluate(frames: [], nonce: n, embedding: oracle) }
    }

    @Test func challengeDerivation() throws {
        let a = try LivenessChallenge(nonce: Self.nonce(1))
        #expect(a == (try LivenessChallenge(nonce: Self.nonce(1))))
        #expect(a.steps.count == 3)
        for seed in 0..<200 {
            let steps = try LivenessChallenge(nonce: Self.nonce(seed)).steps
            #expect(zip(steps, steps.dropFirst()).allSatisfy { $0 != $1 })
        }
        var counts: [LivenessAction: Int] = [:]
        for seed in 0..<400 { counts[try LivenessChallenge(nonce: Self.nonce(seed)).steps[0], default: 0] += 1 }
        #expect(counts.count == 4 && counts.values.allSatisfy { $0 > 60 }, "\(counts)")
        #expect(throws: LivenessChallenge.ChallengeError.nonceLength(15)) { try LivenessChallenge(nonce: [UInt8](repeating: 0, count: 15)) }
        #expect(throws: LivenessChallenge.ChallengeError.invalidParameters) { try LivenessChallenge(nonce: Self.nonce(1), actions: [.blink]) }
    }

    @Test func featuresOfTheBaseShape() throws {
        let capture = try SyntheticCapture.obama()
        let f = try #require(FaceFeatures(landmarks: capture.base))
        #expect(f.eyeAspect > 0.15 && f.eyeAspect < 0.45)
        #expect(abs(f.yaw) < 0.17)
        #expect(f.pitch > 0.18 && f.pitch < 0.57)
        let rotated = try #require(FaceFeatures(landmarks: SyntheticCapture.rotated(capture.base, degrees: 15)))
        #expect(abs(rotated.yaw - f.yaw) < 1e-9)
        #expect(abs(rotated.roll - f.roll - 15 * .pi / 180) < 1e-9)
        let closed = try #require(FaceFeatures(landmarks: SyntheticCapture.eyes(capture.base, factor: 0.5)))
        #expect(abs(closed.eyeAspect / f.eyeAspect - 0.5) < 0.05)
    }
}

extension Result {
    init(catching body: () throws(Failure) -> Success) {
        do { self = .success(try body()) } catch { self = .failure(error) }
    }
    var failure: Failure? { if case let .failure(e) = self { return e } else { return nil } }
}
