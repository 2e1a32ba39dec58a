/// One frame of a liveness capture, as the evaluator sees it: when it was taken and where the face is.
public struct LivenessFrame: Sendable, Equatable {
    /// Seconds on a monotonic clock (any origin); must increase from frame to frame.
    public var timestamp: Double
    /// The 68 landmarks (dlib's 68-point model).
    public var landmarks: [Point2D]
    /// The detected face box.
    public var faceBox: FaceRect
    /// How many faces the detector found in the frame (must be exactly 1).
    public var faceCount: Int
    /// A digest of the frame's pixels (see `RGBImage.contentDigest`), if the frame came from pixels;
    /// two identical frames reveal a replayed still or an injected stream.
    public var pixelDigest: UInt64?

    /// A frame observation.
    public init(timestamp: Double, landmarks: [Point2D], faceBox: FaceRect, faceCount: Int = 1, pixelDigest: UInt64? = nil) {
        self.timestamp = timestamp
        self.landmarks = landmarks
        self.faceBox = faceBox
        self.faceCount = faceCount
        self.pixelDigest = pixelDigest
    }
}

/// Thresholds of the liveness check. The defaults follow the reference `liveness.md` (§2–§4): every
/// event is a change relative to the user's own baseline, judged on several consecutive frames.
public struct LivenessPolicy: Sendable, Equatable {
    /// Duration of the frontal, eyes-open baseline at the start of the capture, seconds.
    public var baselineDuration = 0.5
    /// Fewest frames in the baseline.
    public var minBaselineFrames = 5
    /// Each step must be completed within this many seconds after the previous one (or the baseline).
    public var stepWindow = 5.0
    /// Fewest consecutive frames for an event (closed eyes, turned head, open mouth).
    public var minEventFrames = 2
    /// Eyes count as closed at or below this fraction of their baseline aspect ratio (each eye).
    public var blinkClosedRatio = 0.6
    /// Eyes count as reopened at or above this fraction of their baseline (both eyes).
    public var blinkOpenRatio = 0.85
    /// Longest closed period of a blink (first to last closed frame), seconds.
    public var blinkMaxClosedDuration = 0.4
    /// Longest blink from the first closed frame to reopening, seconds.
    public var blinkMaxDuration = 0.6
    /// During a blink the pitch proxy must stay within this fraction of its baseline: a print tilted
    /// backwards lowers the eye ratio and the pitch together, a real blink only the eyes.
    public var blinkPitchTolerance = 0.08
    /// A turn moves the yaw proxy at least this far from its baseline in the requested direction.
    public var turnYawDelta = 0.12
    /// A turn ends when the yaw proxy is back within this distance of its baseline.
    public var turnReturnDelta = 0.05
    /// An open mouth raises the mouth ratio at least this far above its baseline.
    public var mouthOpenDelta = 0.25
    /// The mouth counts as closed again below this rise over its baseline.
    public var mouthReturnDelta = 0.1
    /// Smallest distance between the outer eye corners on every frame, pixels (landmark noise on
    /// smaller faces swamps the eye ratio).
    public var minInterocular = 80.0
    /// Largest |yaw| of the baseline (the user must start facing the camera).
    public var maxBaselineYaw = 0.2
    /// Smallest baseline eye aspect ratio, each eye (the eyes must start open).
    public var minBaselineEyeAspect = 0.1
    /// Smallest box overlap (IoU) between consecutive frames: one continuous face track.
    public var minTrackIoU = 0.5
    /// A run of this many consecutive frames with identical landmarks is a replayed still.
    public var maxIdenticalLandmarkRun = 3
    /// Largest embedding distance between the identity frames and the first one.
    public var identityThreshold: Float = 0.5
    /// Besides the baseline, every step's peak and completion and the last frame, embed every n-th frame.
    public var identityStride = 10
    /// Frames are horizontally mirrored (a selfie preview): swaps the direction of turns.
    public var framesAreMirrored = false
    /// Most frames in one capture.
    public var maxFrames = 1800
    /// Most seconds in one capture.
    public var maxDuration = 60.0

    /// The defaults.
    public init() {}
}

/// Why a liveness capture failed. Each case names the frame (index into the capture) where it was decided.
public enum LivenessFailure: Error, Equatable, Sendable {
    /// The nonce cannot seed a challenge.
    case invalidNonce(length: Int)
    /// Not enough frames for a baseline.
    case tooFewFrames(count: Int)
    /// More frames or seconds than the policy allows.
    case captureTooLong
    /// Timestamps do not strictly increase (or are not finite).
    case timestampsNotIncreasing(frame: Int)
    /// A frame does not have 68 usable landmarks.
    case landmarksUnusable(frame: Int)
    /// A frame has no face or several faces.
    case faceCount(frame: Int, count: Int)
    /// The face is too small for reliable landmarks.
    case faceTooSmall(frame: Int, interocular: Double)
    /// The face box jumped between frames: not one continuous track.
    case trackBroken(frame: Int)
    /// Identical frames: a replayed still or an injected stream.
    case repeatedFrames(frame: Int)
    /// The baseline is not frontal with open eyes.
    case baselineInvalid(reason: String)
    /// A different action was performed while `expected` was due.
    case wrongAction(step: Int, expected: LivenessAction, performed: LivenessAction, frame: Int)
    /// The step was not completed within its time window.
    case stepTimedOut(step: Int, action: LivenessAction)
    /// The capture ended before the step was completed.
    case stepNotCompleted(step: Int, action: LivenessAction)
    /// The face on `frame` is not the face of the first frame.
    case identityChanged(frame: Int, distance: Float)
    /// Fewer identity frames than needed, or the embedding could not be computed.
    case identityUnavailable(reason: String)
}

/// A performed step: when it began and was completed.
public struct LivenessStepRecord: Sendable, Equatable {
    /// The action.
    public var action: LivenessAction
    /// First frame of the event (eyes closed, head turned, mouth open).
    public var startFrame: Int
    /// The frame showing the event most strongly.
    public var peakFrame: Int
    /// The frame where the face returned to its baseline, completing the step.
    public var endFrame: Int
}

/// What a passed liveness check established.
public struct LivenessEvidence: Sendable, Equatable {
    /// The challenge, re-derived from the nonce.
    public var challenge: LivenessChallenge
    /// The baseline features (medians over the baseline frames).
    public var baseline: FaceFeatures
    /// The performed steps, in order.
    public var steps: [LivenessStepRecord]
    /// The frames whose embeddings were compared, and the largest distance to the first of them.
    public var identityFrames: [Int]
    /// The largest identity distance found.
    public var maxIdentityDistance: Float
    /// A canonical encoding of the nonce, the steps and every frame (timestamps, boxes, landmarks,
    /// digests). The caller hashes it and binds the hash with the nonce into the signed operation.
    public var transcript: [UInt8]
}

/// The active liveness check: a pure function of the frames, the nonce and an identity oracle.
public struct LivenessEvaluator: Sendable {
    /// The thresholds.
    public var policy: LivenessPolicy
    /// Steps per challenge.
    public var stepCount: Int
    /// The actions challenges are drawn from.
    public var actions: [LivenessAction]

    /// An evaluator with the given policy and challenge shape (3 steps from all four actions: 36
    /// possible sequences).
    public init(policy: LivenessPolicy = LivenessPolicy(), stepCount: Int = 3, actions: [LivenessAction] = LivenessAction.allCases) {
        self.policy = policy
        self.stepCount = stepCount
        self.actions = actions
    }

    /// The challenge a capture for `nonce` must perform (show it to the user before capturing).
    public func challenge(for nonce: [UInt8]) throws(LivenessFailure) -> LivenessChallenge {
        do {
            return try LivenessChallenge(nonce: nonce, stepCount: stepCount, actions: actions)
        } catch {
            throw .invalidNonce(length: nonce.count)
        }
    }

    /// Checks a capture against the challenge drawn from `nonce`.
    ///
    /// - Parameter embedding: the identity oracle: the face embedding of frame `index`. It is called
    ///   only for the identity frames (baseline, each step's peak and end, every `identityStride`-th
    ///   frame and the last), so the CNN runs a few times, not on every frame.
    public func evaluate(frames: [LivenessFrame], nonce: [UInt8], embedding: (Int) throws -> [Float]) throws(LivenessFailure) -> LivenessEvidence {
        let challenge = try challenge(for: nonce)
        let features = try validate(frames)

        // 1. Baseline: medians over the first baselineDuration seconds.
        let t0 = frames[0].timestamp
        let baselineEnd = frames.firstIndex { $0.timestamp - t0 > policy.baselineDuration } ?? frames.count
        guard baselineEnd >= policy.minBaselineFrames else { throw .tooFewFrames(count: baselineEnd) }
        let base = features[0..<baselineEnd]
        let baseline = FaceFeatures(
            eyeAspectLeft: median(base.map(\.eyeAspectLeft)), eyeAspectRight: median(base.map(\.eyeAspectRight)),
            mouthAspect: median(base.map(\.mouthAspect)), yaw: median(base.map(\.yaw)), pitch: median(base.map(\.pitch)),
            roll: median(base.map(\.roll)), interocular: median(base.map(\.interocular)))
        guard abs(baseline.yaw) <= policy.maxBaselineYaw else { throw .baselineInvalid(reason: "not facing the camera") }
        guard baseline.eyeAspectLeft >= policy.minBaselineEyeAspect, baseline.eyeAspectRight >= policy.minBaselineEyeAspect else {
            throw .baselineInvalid(reason: "eyes not open")
        }
        guard baseline.pitch > 0 else { throw .baselineInvalid(reason: "face upside down") }

        // 2. The steps, in order, each within its window.
        let detector = EventDetector(policy: policy, baseline: baseline, features: features, times: frames.map(\.timestamp))
        var cursor = baselineEnd
        var stepStart = frames[baselineEnd - 1].timestamp
        var records: [LivenessStepRecord] = []
        for (index, action) in challenge.steps.enumerated() {
            let deadline = stepStart + policy.stepWindow
            var scanFrom = cursor
            while true {
                guard let event = detector.firstEvent(from: scanFrom) else {
                    // No further event: too late if the capture went on past the deadline.
                    if frames.last!.timestamp > deadline { throw .stepTimedOut(step: index, action: action) }
                    throw .stepNotCompleted(step: index, action: action)
                }
                if frames[event.endFrame].timestamp > deadline { throw .stepTimedOut(step: index, action: action) }
                if event.action == action {
                    records.append(LivenessStepRecord(action: action, startFrame: event.startFrame, peakFrame: event.peakFrame, endFrame: event.endFrame))
                    cursor = event.endFrame + 1
                    stepStart = frames[event.endFrame].timestamp
                    break
                }
                // People blink on their own every few seconds: an unrequested blink is not an answer.
                guard event.action == .blink else {
                    throw .wrongAction(step: index, expected: action, performed: event.action, frame: event.startFrame)
                }
                scanFrom = event.endFrame + 1
            }
        }

        // 3. Identity continuity: the same face at the start, inside every step and at the end.
        var identityFrames = [0]
        for record in records { identityFrames += [record.peakFrame, record.endFrame] }
        if policy.identityStride > 0 { identityFrames += Array(stride(from: 0, to: frames.count, by: policy.identityStride)) }
        identityFrames.append(frames.count - 1)
        identityFrames = Array(Set(identityFrames)).sorted()
        guard identityFrames.count >= 3 else { throw .identityUnavailable(reason: "fewer than 3 identity frames") }
        let reference: [Float]
        do { reference = try embedding(identityFrames[0]) } catch { throw .identityUnavailable(reason: "\(error)") }
        var worst: Float = 0
        for frame in identityFrames.dropFirst() {
            let vector: [Float]
            do { vector = try embedding(frame) } catch { throw .identityUnavailable(reason: "\(error)") }
            let distance: Float
            do { distance = try FaceMatcher.distance(reference, vector) } catch { throw .identityUnavailable(reason: "\(error)") }
            guard distance <= policy.identityThreshold else { throw .identityChanged(frame: frame, distance: distance) }
            worst = max(worst, distance)
        }
        return LivenessEvidence(challenge: challenge, baseline: baseline, steps: records, identityFrames: identityFrames,
                                maxIdentityDistance: worst, transcript: Self.transcript(challenge: challenge, frames: frames))
    }

    /// Frame-level checks; returns every frame's features.
    private func validate(_ frames: [LivenessFrame]) throws(LivenessFailure) -> [FaceFeatures] {
        guard !frames.isEmpty else { throw .tooFewFrames(count: 0) }
        guard frames.count <= policy.maxFrames else { throw .captureTooLong }
        var features: [FaceFeatures] = []
        features.reserveCapacity(frames.count)
        var identicalRun = 1
        var digests = Set<UInt64>()
        for (i, frame) in frames.enumerated() {
            guard frame.timestamp.isFinite, i == 0 || frame.timestamp > frames[i - 1].timestamp else {
                throw .timestampsNotIncreasing(frame: i)
            }
            guard frame.timestamp - frames[0].timestamp <= policy.maxDuration else { throw .captureTooLong }
            guard frame.faceCount == 1 else { throw .faceCount(frame: i, count: frame.faceCount) }
            guard frame.landmarks.allSatisfy({ $0.x.isFinite && $0.y.isFinite }), let f = FaceFeatures(landmarks: frame.landmarks) else {
                throw .landmarksUnusable(frame: i)
            }
            guard f.interocular >= policy.minInterocular else { throw .faceTooSmall(frame: i, interocular: f.interocular) }
            if i > 0 {
                guard frame.faceBox.iou(frames[i - 1].faceBox) >= policy.minTrackIoU else { throw .trackBroken(frame: i) }
                identicalRun = frame.landmarks == frames[i - 1].landmarks ? identicalRun + 1 : 1
                guard identicalRun < policy.maxIdenticalLandmarkRun else { throw .repeatedFrames(frame: i) }
            }
            if let digest = frame.pixelDigest {
                // A camera's sensor noise never yields the same frame twice.
                guard digests.insert(digest).inserted else { throw .repeatedFrames(frame: i) }
            }
            features.append(f)
        }
        return features
    }

    /// The canonical transcript: "FSLV1", nonce, steps, then per frame the timestamp, box, face count,
    /// landmarks (IEEE-754 bit patterns, little-endian) and digest.
    static func transcript(challenge: LivenessChallenge, frames: [LivenessFrame]) -> [UInt8] {
        var out: [UInt8] = Array("FSLV1".utf8)
        func u64(_ v: UInt64) { for k in 0..<8 { out.append(UInt8(truncatingIfNeeded: v >> (8 * UInt64(k)))) } }
        func i64(_ v: Int) { u64(UInt64(bitPattern: Int64(v))) }
        u64(UInt64(challenge.nonce.count))
        out += challenge.nonce
        u64(UInt64(challenge.steps.count))
        for step in challenge.steps {
            u64(UInt64(step.rawValue.utf8.count))
            out += Array(step.rawValue.utf8)
        }
        u64(UInt64(frames.count))
        for frame in frames {
            u64(frame.timestamp.bitPattern)
            i64(frame.faceBox.left); i64(frame.faceBox.top); i64(frame.faceBox.right); i64(frame.faceBox.bottom)
            i64(frame.faceCount)
            u64(UInt64(frame.landmarks.count))
            for p in frame.landmarks { u64(p.x.bitPattern); u64(p.y.bitPattern) }
            if let d = frame.pixelDigest { out.append(1); u64(d) } else { out.append(0) }
        }
        return out
    }
}

extension FaceFeatures {
    init(eyeAspectLeft: Double, eyeAspectRight: Double, mouthAspect: Double, yaw: Double, pitch: Double, roll: Double, interocular: Double) {
        self.eyeAspectLeft = eyeAspectLeft
        self.eyeAspectRight = eyeAspectRight
        self.mouthAspect = mouthAspect
        self.yaw = yaw
        self.pitch = pitch
        self.roll = roll
        self.interocular = interocular
    }
}

private func median(_ values: [Double]) -> Double {
    let s = values.sorted()
    guard !s.isEmpty else { return 0 }
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}

/// A completed event in the feature stream.
struct LivenessEvent: Equatable {
    var action: LivenessAction
    var startFrame: Int
    var peakFrame: Int
    var endFrame: Int
}

/// Finds events relative to the baseline. Each kind is a small state machine (idle → active run →
/// armed after `minEventFrames` → complete on return to baseline); the earliest completion wins.
struct EventDetector {
    let policy: LivenessPolicy
    let baseline: FaceFeatures
    let features: [FaceFeatures]
    let times: [Double]

    func firstEvent(from start: Int) -> LivenessEvent? {
        [blink(from: start), turn(from: start), mouth(from: start)]
            .compactMap { $0 }
            .min { ($0.endFrame, $0.startFrame) < ($1.endFrame, $1.startFrame) }
    }

    private func eyesClosed(_ f: FaceFeatures) -> Bool {
        f.eyeAspectLeft <= policy.blinkClosedRatio * baseline.eyeAspectLeft
            && f.eyeAspectRight <= policy.blinkClosedRatio * baseline.eyeAspectRight
    }

    private func eyesOpen(_ f: FaceFeatures) -> Bool {
        f.eyeAspectLeft >= policy.blinkOpenRatio * baseline.eyeAspectLeft
            && f.eyeAspectRight >= policy.blinkOpenRatio * baseline.eyeAspectRight
    }

    /// Open → closed on both eyes for minEventFrames… (≤ blinkMaxClosedDuration, pitch steady) → open.
    private func blink(from start: Int) -> LivenessEvent? {
        var sawOpen = false
        var i = start
        while i < features.count {
            if eyesOpen(features[i]) { sawOpen = true; i += 1; continue }
            guard sawOpen, eyesClosed(features[i]) else { i += 1; continue }
            var j = i
            var peak = i
            var pitchSteady = true
            while j < features.count, eyesClosed(features[j]) {
                if features[j].eyeAspect < features[peak].eyeAspect { peak = j }
                if abs(features[j].pitch / baseline.pitch - 1) > policy.blinkPitchTolerance { pitchSteady = false }
                j += 1
            }
            let closedFrames = j - i
            let closedDuration = times[j - 1] - times[i]
            if closedFrames >= policy.minEventFrames, closedDuration <= policy.blinkMaxClosedDuration, pitchSteady {
                var k = j
                while k < features.count, times[k] - times[i] <= policy.blinkMaxDuration {
                    if eyesOpen(features[k]) { return LivenessEvent(action: .blink, startFrame: i, peakFrame: peak, endFrame: k) }
                    k += 1
                }
            }
            // Not a blink: the eyes must open again before another closure can count.
            sawOpen = false
            i = j
        }
        return nil
    }

    /// Yaw beyond ±turnYawDelta for minEventFrames, then back within turnReturnDelta.
    private func turn(from start: Int) -> LivenessEvent? {
        var runStart = -1
        var runSign = 0.0
        var peak = -1
        var armed = false
        for i in start..<features.count {
            let delta = features[i].yaw - baseline.yaw
            let sign: Double = delta >= policy.turnYawDelta ? 1 : (delta <= -policy.turnYawDelta ? -1 : 0)
            if armed {
                if abs(delta) <= policy.turnReturnDelta {
                    // Positive yaw = nose toward the image's right = the user's own left (unmirrored).
                    let ownLeft = (runSign > 0) != policy.framesAreMirrored
                    return LivenessEvent(action: ownLeft ? .turnLeft : .turnRight, startFrame: runStart, peakFrame: peak, endFrame: i)
                }
                if sign == runSign, abs(delta) > abs(features[peak].yaw - baseline.yaw) { peak = i }
                continue
            }
            if sign != 0, sign == runSign {
                if abs(delta) > abs(features[peak].yaw - baseline.yaw) { peak = i }
                if i - runStart + 1 >= policy.minEventFrames { armed = true }
            } else if sign != 0 {
                runStart = i
                runSign = sign
                peak = i
                if policy.minEventFrames <= 1 { armed = true }
            } else {
                runStart = -1
                runSign = 0
            }
        }
        return nil
    }

    /// Mouth ratio above baseline + mouthOpenDelta for minEventFrames, then below baseline + mouthReturnDelta.
    private func mouth(from start: Int) -> LivenessEvent? {
        var runStart = -1
        var peak = -1
        var armed = false
        for i in start..<features.count {
            let rise = features[i].mouthAspect - baseline.mouthAspect
            if armed {
                if rise < policy.mouthReturnDelta {
                    return LivenessEvent(action: .openMouth, startFrame: runStart, peakFrame: peak, endFrame: i)
                }
                if rise > features[peak].mouthAspect - baseline.mouthAspect { peak = i }
                continue
            }
            if rise > policy.mouthOpenDelta {
                if runStart < 0 { runStart = i; peak = i }
                if rise > features[peak].mouthAspect - baseline.mouthAspect { peak = i }
                if i - runStart + 1 >= policy.minEventFrames { armed = true }
            } else {
                runStart = -1
            }
        }
        return nil
    }
}
