import FaceSealFace
import FaceSealWire
import Foundation
import Testing
@testable import FaceSealSDK

/// Enrolment and a ceremony with the real face engine (detector, landmarks, ResNet embeddings, matcher) on the
/// face images that `scripts/setup-face-assets.sh` puts in the cache. Liveness is off for this tenant: still
/// images cannot blink (the engine's liveness has its own tests). Skipped when the assets are missing, except
/// under CI, where missing assets must fail.
@Suite(.serialized, .timeLimit(.minutes(10))) struct RealFaceEngineTests {
    static var assetsPresent: Bool {
        [FaceAssets.path(of: .resnet), FaceAssets.path(of: .mmod), FaceAssets.path(of: .landmarks5), FaceAssets.imagePath("fr/obama.jpg")]
            .allSatisfy { FileManager.default.fileExists(atPath: $0) } || ProcessInfo.processInfo.environment["CI"] == "true"
    }

    /// The models without the 68-point one (liveness is off), and captures of cached test images over them.
    struct Models: Sendable {
        let models: FaceModels

        init() throws { models = try FaceModels.load(landmarks68: false) }

        func capture(_ images: [String]) throws -> FaceSealFace.FaceCaptureSession {
            var session = models.captureSession()
            for (index, image) in images.enumerated() {
                _ = try session.addImageFile(atPath: FaceAssets.imagePath(image), timestamp: Double(index) / 30)
            }
            return session
        }
    }

    /// A live system whose tenant has liveness off (still images), with an application and a user.
    static func system() async throws -> (LiveSystem, LiveSystem.Client, String) {
        var policy = LiveSystem.Policy()
        policy.livenessRequired = false
        let system = try await LiveSystem.start(policy: policy)
        let email = "barack@example.com"
        _ = try await system.createUser(email: email)
        return (system, try await system.createApplication(label: "Acme Billing"), email)
    }

    @Test(.enabled(if: assetsPresent))
    func realEngineEnrolsAndApprovesACeremonyAndRefusesAStranger() async throws {
        let models = try Models()
        let (system, client, email) = try await Self.system()
        defer { Task { await system.stop() } }
        let device = try system.device(faceVerifier: FaceEngineVerifier(), livenessRequired: false)
        let authn = try await device.open()
        let key = try await device.enrol(authn, link: try await system.invitation(email: email, client: client),
                                         session: try models.capture(["fr/obama.jpg"]))
        #expect(authn.keys == [key])

        let rid = try await system.backchannel(client, email: email, pkiKind: "public_keys")
        let flow = authn.startPkiCeremonyFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: try await device.link(authn, rid: rid))
        #expect(await states.until(\.isAwaitingFaceCapture)?.attemptsLeft == 3)
        flow.submitFaceCapture(captureSession: try models.capture(["fr/biden.jpg"]))
        let mismatch = await states.until { $0.isAwaitingFaceCapture && $0.lastRetryReason != nil }
        #expect(mismatch?.lastRetryReason == .faceMismatch && mismatch?.attemptsLeft == 2)
        flow.submitFaceCapture(captureSession: try models.capture(["fr/obama2.jpg"]))
        #expect(await states.until(\.isTerminal)?.isSucceeded == true, "\(states.seen)")
        let body = try DeliveryBody.decode(try #require(system.application.accepted(rid)))
        #expect(body.publicKeys?.keys.sorted() == ["ML-DSA-65", "ML-KEM-768"])
        #expect(try await system.token(client, rid: rid).status == 200)
    }

    /// docs/PROTOCOL.md §8.1 with the real engine: a second device waits, the first approves with a face scan, and the
    /// second then matches the released token and derives the same keys for the application.
    @Test(.enabled(if: assetsPresent))
    func aSecondDeviceIsApprovedByTheFirstWithAFaceScanAndDerivesTheSameKeys() async throws {
        let models = try Models()
        let (system, client, email) = try await Self.system()
        defer { Task { await system.stop() } }
        let phone = try system.device(name: "phone", faceVerifier: FaceEngineVerifier(), livenessRequired: false)
        let phoneAuthn = try await phone.open()
        _ = try await phone.enrol(phoneAuthn, link: try await system.invitation(email: email, client: client),
                                  session: try models.capture(["fr/obama.jpg"]))

        func publicKeys(_ device: Device, _ authn: Authenticator) async throws -> [String: Base64URLBytes]? {
            let rid = try await system.backchannel(client, email: email, pkiKind: "public_keys")
            let flow = authn.startPkiCeremonyFlow()
            var states = Observed(flow.stateStream())
            flow.submitLinkPayload(payload: try await device.link(authn, rid: rid))
            _ = await states.until(\.isAwaitingFaceCapture)
            flow.submitFaceCapture(captureSession: try models.capture(["fr/obama2.jpg"]))
            #expect(await states.until(\.isTerminal)?.isSucceeded == true, "\(states.seen)")
            return try DeliveryBody.decode(try #require(system.application.accepted(rid))).publicKeys
        }
        let phoneKeys = try await publicKeys(phone, phoneAuthn)

        let laptop = try system.device(name: "laptop", faceVerifier: FaceEngineVerifier(), livenessRequired: false)
        let laptopAuthn = try await laptop.open()
        let registration = laptopAuthn.startRegistrationFlow()
        var states = Observed(registration.stateStream())
        registration.submitLinkPayload(payload: try await system.invitation(email: email, client: client))
        guard case .awaitingApproval(.enrolledDevice, let code, _) = await states.until({
            if case .awaitingApproval = $0 { return true }
            return $0.isTerminal
        }) else { Issue.record("no approval awaited: \(states.seen)"); return }
        // Nothing reached the laptop yet: it waits until the phone's owner approves with their face.
        #expect(laptopAuthn.keys.isEmpty)
        try await phone.approveEnrolment(phoneAuthn, code: code, session: try models.capture(["fr/obama2.jpg"]))
        _ = await states.until(\.isAwaitingFaceCapture)
        registration.submitFaceCapture(captureSession: try models.capture(["fr/obama.jpg"]))
        guard case .succeeded = await states.until(\.isTerminal) else { Issue.record("\(states.seen)"); return }
        #expect(laptopAuthn.keys.count == 1)

        let laptopKeys = try await publicKeys(laptop, laptopAuthn)
        #expect(laptopKeys != nil && laptopKeys == phoneKeys)
    }
}
