@testable import FaceSealSDK

/// A capture session stand-in: the fake face verifier decides by its label.
struct FakeCaptureSession: FaceCaptureSession, Equatable {
    let label: String
}
