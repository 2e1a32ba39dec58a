/// Why a face capture did not verify and the flow returned to `awaitingFaceCapture`.
///
/// Only ``faceMismatch`` spends one of the request's `attemptsMax` attempts; every other reason is a
/// capture-quality or liveness problem, which spends one of the request's own capture-retry budget (SPEC §5.4).
/// The authority counts both from the SDK's signed reports.
public enum FaceCaptureRetryReason: String, Sendable, Hashable, Codable, CaseIterable {
    /// The liveness challenge was not met (for example a still photo).
    case livenessFailed = "liveness_failed"
    /// A live face was seen but it does not match the enrolled face.
    case faceMismatch = "face_mismatch"
    /// No face was found in the capture.
    case noFaceDetected = "no_face_detected"
    /// More than one face was in the frame.
    case multipleFacesDetected = "multiple_faces_detected"
    /// The face was too far from the camera.
    case faceTooSmall = "face_too_small"
    /// The head was turned or tilted too far.
    case extremeHeadPose = "extreme_head_pose"
    /// The face left the frame during the capture session.
    case lostFace = "lost_face"
    /// The capture session ran out of time.
    case captureTimeout = "capture_timeout"

    /// Whether this reason spends one attempt of the budget.
    public var spendsAttempt: Bool { self == .faceMismatch }
}

/// The randomised liveness challenge the user must perform during the capture; show it on screen.
public struct LivenessChallenge: Sendable, Hashable, Codable {
    /// One action of the challenge.
    public enum Step: String, Sendable, Hashable, Codable, CaseIterable {
        /// Blink once.
        case blink
        /// Turn the head to the left.
        case turnLeft = "turn_left"
        /// Turn the head to the right.
        case turnRight = "turn_right"
        /// Tilt the head up.
        case lookUp = "look_up"
        /// Tilt the head down.
        case lookDown = "look_down"
    }

    /// The actions, in the order the user performs them.
    public let steps: [Step]

    /// Creates a challenge.
    public init(steps: [Step]) {
        self.steps = steps
    }
}

/// A face capture session recorded by the host app's camera code, passed to
/// `submitFaceCapture(captureSession:)`.
///
/// The SDK treats it as opaque and hands it to its ``FaceVerifier``; the face engine's capture
/// session type conforms to this protocol.
public protocol FaceCaptureSession: Sendable {}

/// A submitted capture, numbered by the flow so the state machine can refer to it in its actions
/// without holding any face data logic itself.
struct CapturedFace: Sendable, CustomStringConvertible {
    /// Sequence number within the flow; equality is by this number.
    let sequence: Int
    /// The session itself.
    let session: any FaceCaptureSession

    var description: String { "CapturedFace(#\(sequence))" }
}

extension CapturedFace: Equatable {
    static func == (lhs: CapturedFace, rhs: CapturedFace) -> Bool { lhs.sequence == rhs.sequence }
}
