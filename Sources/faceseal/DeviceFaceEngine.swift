import FaceSealFace
import FaceSealSDK
import Foundation

/// The face engine as the `faceseal device` authenticator uses it: the dlib models loaded once, captures built
/// from image files (a Linux server has no camera), and the SDK's `FaceVerifier` seam over them.
struct DeviceFaceEngine: Sendable {
    /// The match threshold written into new face tokens (the engine's recommended value for its embeddings).
    static let matchThreshold = FaceMatcher.recommendedThreshold
    /// The MMOD detector, adapted to the capture session's detector protocol.
    let detector: MMODFaceDetector
    /// The 5-point landmark model (alignment).
    let landmarks5: ShapePredictor
    /// The 68-point landmark model (liveness).
    let landmarks68: ShapePredictor
    /// The ResNet embedder.
    let embedder: ResNetFaceEmbedder

    /// Loads the four dlib models from the cache `make setup` fills (`$FACESEAL_CACHE`, default ~/.cache/faceseal),
    /// reporting each on `progress`.
    static func load(progress: (String) -> Void) throws(DeviceCommandError) -> DeviceFaceEngine {
        func path(_ model: FaceAssets.Model) throws(DeviceCommandError) -> String {
            let path = FaceAssets.path(of: model)
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw .faceModels("missing \(path): run `make setup` first")
            }
            return path
        }
        do {
            progress("loading face models from \(FaceAssets.cacheDirectory().path)…")
            let started = Date()
            let detector = try FaceDetector(modelURL: URL(fileURLWithPath: try path(.mmod)))
            progress("  face detector (MMOD) loaded")
            let five = try ShapePredictor(contentsOfFile: try path(.landmarks5))
            let sixtyEight = try ShapePredictor(contentsOfFile: try path(.landmarks68))
            progress("  landmark models (5 and 68 points) loaded")
            let embedder = try FaceEmbedder(modelURL: URL(fileURLWithPath: try path(.resnet)))
            progress(String(format: "  face embedder (ResNet) loaded — %.1f s", Date().timeIntervalSince(started)))
            return DeviceFaceEngine(detector: MMODFaceDetector(detector: detector), landmarks5: five, landmarks68: sixtyEight,
                                    embedder: ResNetFaceEmbedder(embedder: embedder))
        } catch let failure as DeviceCommandError {
            throw failure
        } catch {
            throw .faceModels("cannot load the face models: \(error)")
        }
    }

    /// A capture of still images, one frame each (1/30 s apart). An unreadable image, or one without exactly one
    /// usable face, is refused with a message naming the file.
    func capture(images paths: [String]) throws(DeviceCommandError) -> ImageCapture {
        guard !paths.isEmpty else { throw .usage("--faces needs at least one image") }
        var session = FaceSealFace.FaceCaptureSession(detector: detector, landmarks5: landmarks5, landmarks68: landmarks68, embedder: embedder)
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

/// The MMOD detector as the capture session's `FaceDetecting`.
struct MMODFaceDetector: FaceDetecting {
    let detector: FaceDetector

    func detectFaces(in image: RGBImage) throws -> [DetectedFace] {
        try detector.detect(in: image).map { face in
            DetectedFace(rect: FaceRect(left: face.left, top: face.top, right: face.right, bottom: face.bottom),
                         confidence: Double(face.confidence))
        }
    }
}

/// The ResNet embedder as the capture session's `FaceEmbedding`.
struct ResNetFaceEmbedder: FaceEmbedding {
    let embedder: FaceEmbedder

    func embedding(of chip: RGBImage) throws -> [Float] { try embedder.embedding(of: chip) }
}

/// A finished capture from image files, handed to the SDK as its opaque `FaceCaptureSession`.
struct ImageCapture: FaceSealSDK.FaceCaptureSession {
    /// The engine's session with every accepted frame.
    let session: FaceSealFace.FaceCaptureSession
    /// The files, for messages.
    let paths: [String]
}

/// The SDK's face step over the engine: liveness from the 68-point landmarks, the match by mean embedding
/// distance, enrolment templates from up to five frames.
struct EngineFaceVerifier: FaceVerifier {
    /// Told the outcome of each match (distances only; never an embedding).
    var report: @Sendable (String) -> Void = { _ in }

    func makeLivenessChallenge() -> FaceSealSDK.LivenessChallenge {
        var steps: [FaceSealSDK.LivenessChallenge.Step] = [.blink]
        steps.append([.turnLeft, .turnRight].randomElement() ?? .turnLeft)
        return FaceSealSDK.LivenessChallenge(steps: steps.shuffled())
    }

    func checkLiveness(_ session: any FaceSealSDK.FaceCaptureSession, challenge: FaceSealSDK.LivenessChallenge?) async -> FaceCheckOutcome {
        guard let capture = session as? ImageCapture, !capture.session.faces.isEmpty else { return .retry(.noFaceDetected) }
        // Still images cannot answer a challenge; the engine's evaluator decides (a photo fails, as it must).
        let nonce = Array((challenge?.steps.map { $0.rawValue }.joined(separator: ",") ?? "").utf8)
        do {
            _ = try capture.session.verifyLiveness(nonce: nonce.isEmpty ? [0] : nonce)
            return .passed
        } catch {
            return .retry(.livenessFailed)
        }
    }

    func match(_ session: any FaceSealSDK.FaceCaptureSession, templates: FaceTemplates, threshold: Float) async -> FaceCheckOutcome {
        guard let capture = session as? ImageCapture, !capture.session.faces.isEmpty else { return .retry(.noFaceDetected) }
        do {
            let result = try capture.session.match(templates: templates.embeddings, matcher: FaceMatcher(threshold: threshold))
            report(String(format: "face: mean embedding distance %.3f over %d frame(s) against %d template(s), threshold %.2f → %@",
                          result.averageDistance, result.frameDistances.count, templates.embeddings.count, threshold,
                          result.isMatch ? "match" : "MISMATCH"))
            return result.isMatch ? .passed : .retry(.faceMismatch)
        } catch {
            return .retry(.noFaceDetected)
        }
    }

    func enrolmentTemplates(from session: any FaceSealSDK.FaceCaptureSession) async -> EnrolmentCaptureOutcome {
        guard let capture = session as? ImageCapture, !capture.session.faces.isEmpty else { return .retry(.noFaceDetected) }
        do {
            return .templates(FaceTemplates(embeddings: try capture.session.embeddings(maxFrames: 5)))
        } catch {
            return .retry(.noFaceDetected)
        }
    }
}
