import FaceSealFace
import FaceSealSDK
import Foundation

/// The face engine as the `faceseal device` authenticator uses it: the dlib models loaded once, captures built
/// from image files (a Linux server has no camera), and the SDK's `FaceVerifier` seam over them.
struct DeviceFaceEngine: Sendable {
    /// The four dlib models.
    let models: FaceModels

    /// Loads the four dlib models from the cache `make setup` fills (`$FACESEAL_CACHE`, default ~/.cache/faceseal),
    /// reporting each on `progress`.
    static func load(progress: (String) -> Void) throws(DeviceCommandError) -> DeviceFaceEngine {
        do {
            return DeviceFaceEngine(models: try FaceModels.load(progress: progress))
        } catch {
            throw .faceModels(error.description)
        }
    }

    /// A capture of still images, one frame each (1/30 s apart): selfies by default, `FaceCapturePolicy.enrolment`
    /// for enrolment photos (every face size). An unreadable image, or one without exactly one usable face, is refused
    /// with a message naming the file.
    func capture(images paths: [String], policy: FaceCapturePolicy = FaceCapturePolicy()) throws(DeviceCommandError) -> ImageCapture {
        guard !paths.isEmpty else { throw .usage("--faces needs at least one image") }
        var session = models.captureSession(policy: policy)
        for (index, path) in paths.enumerated() {
            do {
                try session.addImageFile(atPath: path, timestamp: Double(index) / 30)
            } catch {
                throw .image(path: path, reason: Self.explain(error))
            }
        }
        return ImageCapture(session: session, paths: paths)
    }

    /// A one-line reason for a refused frame.
    static func explain(_ error: FaceCaptureError) -> String {
        switch error {
        case .unreadableImage(_, let reason): "unreadable image (\(reason))"
        case .noFace: "no face found"
        case .multipleFaces(_, let count): "\(count) faces found; exactly one is needed"
        case .faceTooSmall(_, let size, let minimum): "the face is too small (\(size) px, at least \(minimum))"
        case .extremePose: "the head is turned or tilted too far"
        case .timestampNotIncreasing, .tooManyFrames, .noSuchFrame: "frame sequence error (\(error))"
        case .landmarks68Unavailable: "the 68-point landmark model is missing"
        case .detectorFailed(let reason): "face detection failed (\(reason))"
        case .embeddingFailed(let reason): "face embedding failed (\(reason))"
        }
    }
}

/// A finished capture from image files: the engine's session (which the SDK accepts as its capture) and the files.
struct ImageCapture: Sendable {
    /// The engine's session with every accepted frame; this is what is submitted to a flow.
    let session: FaceSealFace.FaceCaptureSession
    /// The files, for messages.
    let paths: [String]
}

/// The SDK's `FaceEngineVerifier`, also reporting each match's distances (never an embedding) so the CLI can show them.
struct ReportingFaceVerifier: FaceVerifier {
    let base = FaceEngineVerifier()
    let report: @Sendable (String) -> Void

    func makeLivenessChallenge() -> FaceSealSDK.LivenessChallenge { base.makeLivenessChallenge() }

    func checkLiveness(_ session: any FaceSealSDK.FaceCaptureSession, challenge: FaceSealSDK.LivenessChallenge?) async -> FaceCheckOutcome {
        await base.checkLiveness(session, challenge: challenge)
    }

    func match(_ session: any FaceSealSDK.FaceCaptureSession, templates: FaceTemplates, threshold: Float) async -> FaceCheckOutcome {
        let outcome = await base.match(session, templates: templates, threshold: threshold)
        if let capture = session as? FaceSealFace.FaceCaptureSession,
           let result = try? capture.match(templates: templates.embeddings, matcher: FaceMatcher(threshold: threshold)) {
            let verdict = outcome == .passed ? "match" : "MISMATCH"
            report("face: mean embedding distance \(String(format: "%.3f", result.averageDistance)) over \(result.frameDistances.count) frame(s) "
                   + "against \(templates.embeddings.count) template(s), threshold \(String(format: "%.2f", threshold)) → \(verdict)")
        }
        return outcome
    }

    func enrolmentTemplates(from session: any FaceSealSDK.FaceCaptureSession) async -> EnrolmentCaptureOutcome {
        await base.enrolmentTemplates(from: session)
    }
}
