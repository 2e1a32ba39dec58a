import FaceSealCrypto
import FaceSealTestSupport
import FaceSealWire
import Foundation
import Synchronization
import Testing
@testable import FaceSealAuthority
@testable import FaceSealSDK

/// Face-token format 2 against the real authority (SPEC §5.1): the keys layer is opened only after the match, and a
/// format-1 token an older authority stored migrates at its next completion.
@Suite(.serialized, .timeLimit(.minutes(1))) struct TokenLayersTests {
    /// The real opener, recording through the seam when a token's templates and its keys layer are opened, and how
    /// many face matches had run by then.
    final class RecordingFaceTokens: FaceTokenOpener {
        let real: WireFaceTokens
        let verifier: FakeFaceVerifier
        let events = Mutex<[String]>([])

        init(real: WireFaceTokens, verifier: FakeFaceVerifier) {
            self.real = real
            self.verifier = verifier
        }

        var recorded: [String] { events.withLock { $0 } }

        func open(_ envelope: FaceSealSDK.FaceTokenEnvelope, password: String?) async throws(FaceTokenOpenError) -> any OpenedFaceToken {
            let opened = try await real.open(envelope, password: password)
            events.withLock { $0.append("templates") }
            return Opened(opened: opened, recorder: self)
        }

        func create(templates: FaceTemplates, password: String?, keyPolicy: [String], subject: String,
                    tenant: String, livenessRequired: Bool) async throws(KeyOperationError) -> NewFaceToken {
            try await real.create(templates: templates, password: password, keyPolicy: keyPolicy, subject: subject, tenant: tenant,
                                  livenessRequired: livenessRequired)
        }

        struct Opened: OpenedFaceToken {
            let opened: any OpenedFaceToken
            let recorder: RecordingFaceTokens
            var templates: FaceTemplates { opened.templates }
            var matchThreshold: Float { opened.matchThreshold }
            var generation: Int { opened.generation }

            func openKeys() async throws(KeyOperationError) -> any FaceTokenKeys {
                let matches = recorder.verifier.matchCalls
                recorder.events.withLock { $0.append("keys after \(matches) match(es)") }
                return try await opened.openKeys()
            }
        }
    }

    @Test func aFaceThatDoesNotMatchOrFailsLivenessNeverOpensTheKeysLayer() async throws {
        let e = try await Enrolled.make()
        defer { Task { await e.system.stop() } }
        let verifier = FakeFaceVerifier()
        let recorder = RecordingFaceTokens(real: WireFaceTokens(scryptLogN: 10), verifier: verifier)
        var environment = e.device.environment
        environment.faceVerifier = verifier
        environment.faceTokens = recorder
        let authn = try await Authenticator.open(environment: environment)

        // A spoof, then a stranger until the attempts are spent: the templates were opened, the keys layer never.
        let refused = try await e.request("sign", data: [7])
        let flow = authn.startPkiCeremonyFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: refused.link)
        #expect(await states.until(\.isAwaitingFaceCapture)?.attemptsLeft == 3)
        flow.submitFaceCapture(captureSession: capture("spoof"))
        #expect(await states.until { $0.isAwaitingFaceCapture && $0.lastRetryReason != nil }?.lastRetryReason == .livenessFailed)
        for left in [2, 1] {
            flow.submitFaceCapture(captureSession: capture("stranger"))
            #expect(await states.until { $0.isAwaitingFaceCapture && $0.attemptsLeft == left }?.lastRetryReason == .faceMismatch)
        }
        flow.submitFaceCapture(captureSession: capture("stranger"))
        #expect(await states.rest().last == .failed(reason: .attemptsExhausted))
        await flow.waitUntilIdle()
        #expect(verifier.matchCalls == 3)
        #expect(recorder.recorded == ["templates"])

        // The user's face: the keys layer is opened once, after the match that passed.
        let approved = try await e.request("public_keys")
        let good = authn.startPkiCeremonyFlow()
        var goodStates = Observed(good.stateStream())
        good.submitLinkPayload(payload: approved.link)
        _ = await goodStates.until(\.isAwaitingFaceCapture)
        good.submitFaceCapture(captureSession: capture("ada"))
        #expect(await goodStates.rest().last?.isSucceeded == true)
        #expect(recorder.recorded == ["templates", "templates", "keys after 4 match(es)"])
    }

    @Test(arguments: StoreBackend.underTest)
    func aFormatOneTokenInStorageMigratesToFormatTwoAtItsNextCompletion(backend: StoreBackend) async throws {
        let e = try await Enrolled.make(backend: backend)
        defer { Task { await e.system.stop() } }
        let store = try #require(e.system.authority.store as? SQLAuthorityStore)
        let wrappingKey = e.system.authority.keys.shareWrappingKey
        var header = try FaceTokenHeader.decode(try await store.faceToken(subject: e.subject).headerJSON)
        #expect(header.v == 2)

        // What an authority before format 2 held for this user: the token as format 1, with masters the test knows.
        header.v = 1
        let dsa = [UInt8](repeating: 0x11, count: 32), kem = [UInt8](repeating: 0x22, count: 32)
        let share = SecretBytes(randomCount: 32)
        let formatOne = try FormatOneToken.seal(header: header, templates: [[0.1, 0.2]], masters: ["ML-DSA-65": dsa, "ML-KEM-768": kem],
                                                share: share)
        let old = try FaceTokenCustody.record(envelope: formatOne, header: header, subject: e.subject, serverShare: share, wrappingKey: wrappingKey)
        let subject = e.subject
        try await store.transact { tx, _ in
            _ = try tx.execute("UPDATE face_tokens SET header_json = ?, sealed_body = ?, encrypted_server_share = ? WHERE subject = ?",
                               [.blob(old.headerJSON), .blob(old.sealedBody), .blob(old.encryptedServerShare), .text(subject)])
        }
        #expect(try FaceTokenHeader.decode(try await store.faceToken(subject: e.subject).headerJSON).v == 1)

        // The next ceremony opens the format-1 token, answers with its keys, and uploads the rotation as format 2.
        let keysRequest = try await e.request("public_keys")
        #expect(await e.runCeremony(keysRequest.link).last?.isSucceeded == true)
        let spec = try WireFaceTokensTests.specMLDSA(master: dsa, clientId: e.client.clientId, context: Array("invoices".utf8))
        #expect(try e.deliveredKeys(keysRequest.rid)["ML-DSA-65"]?.bytes == Array(spec.rawRepresentation))

        let download = try FaceTokenCustody.download(try await store.faceToken(subject: e.subject), wrappingKey: wrappingKey)
        let migrated = try WireFaceTokensTests.contents(download.token.encoded(), share: download.serverShare.secret)
        var expected = header
        expected.v = 2
        expected.gen = header.gen + 1
        #expect(migrated.header == expected)
        #expect(download.token.keysSealed != nil)
        #expect(migrated.templates == [[0.1, 0.2]])
        #expect(migrated.masters[.mlDSA65]?.copyBytes() == dsa && migrated.masters[.mlKEM768]?.copyBytes() == kem)

        // The migrated token answers the next ceremony with the same key.
        let data = Array("invoice 2026-115".utf8)
        let signRequest = try await e.request("sign", data: data)
        #expect(await e.runCeremony(signRequest.link).last?.isSucceeded == true)
        let signature = try #require(try e.delivered(signRequest.rid).signature).bytes
        #expect(spec.isValidSignature(signature, for: data))
        #expect(try FaceTokenHeader.decode(try await store.faceToken(subject: e.subject).headerJSON).gen == header.gen + 2)
    }
}
