import FaceSealHTTP
import FaceSealTestSupport
import Foundation
import Synchronization
import Testing
@testable import FaceSealAuthority

/// END-TO-END OVER PROCESSES: `faceseal serve`, `faceseal rp` and `faceseal device` run as separate child processes
/// of the built binary (`.build/debug/faceseal`) and talk over loopback, with real photos from
/// the set-up cache (`make setup`). One enrolment, one ceremony (public keys) verified by the application, and one
/// impostor refused as a face mismatch. About a minute; the in-process scenarios live in ScenarioTests.
@Suite("Process end-to-end (faceseal serve + rp + device as child processes)", .serialized)
struct ProcessEndToEndTests {
    static var cache: URL {
        if let path = ProcessInfo.processInfo.environment["FACESEAL_CACHE"], !path.isEmpty { return URL(fileURLWithPath: path) }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache/faceseal")
    }

    /// The models and photos `make setup` fetches; without them the test is skipped, except under CI, where it must run.
    static var assetsPresent: Bool {
        let files = ["models/mmod_human_face_detector.dat", "models/dlib_face_recognition_resnet_model_v1.dat",
                     "models/shape_predictor_5_face_landmarks.dat", "models/shape_predictor_68_face_landmarks.dat",
                     "images/johns/John_Salley", "images/johns/John_Savage", "images/faces/dogs.jpg"]
        return files.allSatisfy { FileManager.default.fileExists(atPath: cache.appendingPathComponent($0).path) }
            || ProcessInfo.processInfo.environment["CI"] == "true"
    }

    static func photos(_ person: String) throws -> [String] {
        let directory = cache.appendingPathComponent("images/johns/\(person)")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".jpg") }.sorted()
        return names.map { directory.appendingPathComponent($0).path }
    }

    @Test("faceseal device: usage errors exit 64, before any model is loaded")
    func usageErrors() async throws {
        let binary = try FacesealBinary.path
        for arguments in [["device"], ["device", "approve", "--link", "x"], ["device", "--presence", "maybe", "keys"],
                          // No flag carries the device passphrase (it would be on the command line `ps` shows).
                          ["device", "--passphrase", "correct horse", "keys"],
                          ["device", "enrol", "--faces", "a.jpg"], ["device", "approve", "--link", "x", "--next", "--faces", "a.jpg"],
                          ["device", "keys", "--limit", "3"], ["device", "inbox", "--wait", "99"], ["device", "fly"]] {
            let child = try ChildProcess.start(binary, arguments)
            #expect(try await child.exit(within: .seconds(60)) == 64, "\(arguments)")
            #expect(child.errors.hasPrefix("faceseal device"), "\(arguments): \(child.errors)")
        }
    }

    @Test("faceseal demo ends in PASS, and its request log names no invitation id and no request id",
          .enabled(if: assetsPresent, "run `make setup`: face models and photos are missing"), .timeLimit(.minutes(10)))
    func demoLogCarriesNoBearer() async throws {
        let binary = try FacesealBinary.path
        let demo = try ChildProcess.start(binary, ["demo", "--keep"])
        #expect(try await demo.exit(within: .seconds(540)) == 0, "demo: \(demo.output)\n\(demo.errors)")
        #expect(demo.output.contains(": PASS"))
        // The second device waited for the first one's approval, then got its token once, signed with its own key.
        #expect(demo.output.contains("laptop │ approval: awaiting approval on an enrolled device"))
        #expect(demo.output.contains("token released to the laptop"))
        #expect(demo.output.contains("presence: scripted — user-present keys are used without asking anyone"), "the demo says it scripts presence")
        let marker = try #require(demo.output.split(separator: "\n").first { $0.hasPrefix("data directory: ") })
        let root = String(marker.dropFirst("data directory: ".count).prefix { $0 != " " })
        defer { try? FileManager.default.removeItem(atPath: root) }
        let log = try String(contentsOfFile: root + "/authority-http.log", encoding: .utf8)
        #expect(log.contains("POST /device/v1/enrolments/- 200"))
        #expect(log.contains("GET /device/v1/requests/-/token 200"))
        #expect(log.contains("GET /device/v1/enrolments/-/token"))
        // Every bearer the run created, read back from its database: none is in the log.
        let database = try SQLiteDatabase(path: root + "/authority.sqlite", busyTimeoutMilliseconds: 5_000, synchronous: .normal)
        let bearers = try await database.transaction { tx in
            try tx.query("SELECT id AS bearer FROM invitations", []).map { try $0.text("bearer") }
                + tx.query("SELECT auth_req_id AS bearer FROM ciba_requests", []).map { try $0.text("bearer") }
        }
        await database.close()
        #expect(bearers.count >= 6)
        for bearer in bearers {
            #expect(!log.contains(bearer), "the request log names \(bearer)")
            #expect(!demo.errors.contains(bearer))
        }
    }

    @Test("serve + rp + device: enrol, a public-keys ceremony verified by the application, an impostor refused",
          .enabled(if: assetsPresent, "run `make setup`: face models and photos are missing"), .timeLimit(.minutes(5)))
    func enrolCeremonyAndImpostor() async throws {
        let binary = try FacesealBinary.path
        let photosA = try Self.photos("John_Salley")
        let photoB = try #require(try Self.photos("John_Savage").first)
        try #require(photosA.count >= 4, "run `make setup`: the johns photos are missing from \(Self.cache.path)")
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("faceseal-process-e2e-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        var children: [ChildProcess] = []
        defer {
            for child in children { child.stop() }
            try? FileManager.default.removeItem(at: root)
        }

        // The authority.
        let serve = try await AuthorityProcess.start(dataDirectory: root.appendingPathComponent("authority").path)
        children.append(serve.process)
        let (issuer, admin) = (serve.issuer, serve.management)

        // Tenant (liveness off: still photos), application, then the application's process, whose port is its own.
        _ = try await admin.send(.post, "/tenants", [
            "id": "acme", "name": "Acme",
            "policy": ["key_algorithms": ["ML-DSA-65", "ML-KEM-768"], "attempts_max": 2, "liveness_required": false,
                       "password_policy": ["mode": "none"]] as [String: Any],
        ])
        let application = try await admin.send(.post, "/tenants/acme/applications", [
            "label": "Acme Docs", "delivery_mode": "poll", "delivery_endpoint": "http://127.0.0.1:9/faceseal/delivery",
        ])
        let clientId = try #require(application["client_id"] as? String)
        let secretFile = root.appendingPathComponent("client-secret").path
        try Data(try #require(application["client_secret"] as? String).utf8).write(to: URL(fileURLWithPath: secretFile))
        let rpDir = root.appendingPathComponent("rp").path
        let rp = try ChildProcess.start(binary, ["rp", "serve", "--issuer", issuer, "--client-id", clientId,
                                                 "--client-secret-file", secretFile, "--port", "0", "--state-dir", rpDir])
        children.append(rp)
        let deliveryLine = try await rp.line(containing: "delivery endpoint: ", within: .seconds(60))
        let delivery = String(deliveryLine.split(separator: " ").last ?? "")
        _ = try await admin.send(.patch, "/tenants/acme/applications/\(clientId)", ["delivery_endpoint": delivery])
        _ = try #require(try await admin.send(.post, "/tenants/acme/users", ["email": "ada@example.com"])["subject"] as? String)
        let link = try #require(try await admin.send(.post, "/tenants/acme/invitations",
                                                     ["email": "ada@example.com", "client_id": clientId])["link"] as? String)
        let linkFile = root.appendingPathComponent("invitation").path
        try Data(link.utf8).write(to: URL(fileURLWithPath: linkFile))

        // Enrolment from three photos of A.
        let deviceDir = root.appendingPathComponent("device").path
        let enrol = try ChildProcess.start(binary, ["device", "--state-dir", deviceDir, "--presence", "scripted", "enrol", "--link", "@" + linkFile,
                                                    "--faces"] + photosA.prefix(3))
        #expect(try await enrol.exit(within: .seconds(180)) == 0, "enrol: \(enrol.output)\n\(enrol.errors)")
        #expect(enrol.output.contains("presence: scripted — user-present keys are used without asking anyone"))
        #expect(enrol.output.contains("state: registeringKeys"))
        #expect(enrol.output.contains("state: succeeded(key: "))

        // A public-keys ceremony, approved with another photo of A; the application verifies and pins.
        let request = try ChildProcess.start(binary, ["rp", "request", "public-keys", "--user", "ada@example.com", "--context", "docs",
                                                      "--message", "Link your document keys", "--state-dir", rpDir, "--timeout", "120"])
        let approve = try ChildProcess.start(binary, ["device", "--state-dir", deviceDir, "--presence", "scripted", "approve", "--next", "--wait", "30",
                                                      "--faces", photosA[3]])
        #expect(try await approve.exit(within: .seconds(180)) == 0, "approve: \(approve.output)\n\(approve.errors)")
        #expect(approve.output.contains("state: awaitingLink(refusal: is_pki_ceremony_link)"), "login flow first, then the ceremony flow")
        #expect(approve.output.contains("state: awaitingFaceCapture(kind: publicKeys, rp: \"Acme Docs\", binding: \"Link your document keys\""))
        #expect(approve.output.contains("state: deliveringResult"))
        #expect(approve.output.contains("state: succeeded(rp: \"Acme Docs\", kind: publicKeys"))
        #expect(try await request.exit(within: .seconds(120)) == 0, "rp request: \(request.output)\n\(request.errors)")
        #expect(request.output.contains("verified"), "\(request.output)")

        // The impostor: B's photo against A's token, a signature request; mismatch on every attempt, the SDK aborts.
        let signing = try ChildProcess.start(binary, ["rp", "request", "sign", "--user", "ada@example.com", "--context", "docs",
                                                      "--message", "Sign contract 7", "--data", "contract 7", "--state-dir", rpDir,
                                                      "--timeout", "120"])
        let impostor = try ChildProcess.start(binary, ["device", "--state-dir", deviceDir, "--presence", "scripted", "approve", "--next", "--wait", "30",
                                                       "--faces", photoB])
        #expect(try await impostor.exit(within: .seconds(180)) == 1, "impostor: \(impostor.output)\n\(impostor.errors)")
        #expect(impostor.output.contains("lastRetry: face_mismatch"))
        #expect(impostor.output.contains("state: failed(reason: attemptsExhausted)"))
        #expect(!impostor.output.contains("state: deliveringResult"), "nothing may be delivered for an impostor")
        #expect(impostor.errors.contains("face mismatch"))
        #expect(try await signing.exit(within: .seconds(120)) == 1, "rp request sign: \(signing.output)\n\(signing.errors)")
        #expect((signing.output + signing.errors).contains("denied"), "\(signing.output)\n\(signing.errors)")

        // A faceless photo and a missing file: a clear error naming the file, exit 1, nothing submitted.
        let dogs = Self.cache.appendingPathComponent("images/faces/dogs.jpg").path
        let faceless = try ChildProcess.start(binary, ["device", "--state-dir", deviceDir, "--presence", "scripted", "approve", "--link", "@" + linkFile, "--faces", dogs])
        #expect(try await faceless.exit(within: .seconds(120)) == 1)
        #expect(faceless.errors.contains("dogs.jpg: no face found"), "\(faceless.errors)")
        #expect(!faceless.output.contains("state:"))
        let missing = try ChildProcess.start(binary, ["device", "--state-dir", deviceDir, "--presence", "scripted", "approve", "--next", "--faces", root.path + "/none.jpg"])
        #expect(try await missing.exit(within: .seconds(60)) == 1)
        #expect(missing.errors.contains("none.jpg: cannot read"), "\(missing.errors)")

        // Key management on the same state directory: list, branding, rotation, audit, then revocation.
        let keys = try ChildProcess.start(binary, ["device", "--state-dir", deviceDir, "keys"])
        #expect(try await keys.exit(within: .seconds(60)) == 0, "\(keys.errors)")
        let keyId = try #require(keys.output.split(separator: " ").first.map(String.init), "keys: \(keys.output)")
        #expect(keys.output.contains("Acme Docs") && keys.output.contains("ada@example.com"), "\(keys.output)")
        let branding = try ChildProcess.start(binary, ["device", "--state-dir", deviceDir, "branding"])
        #expect(try await branding.exit(within: .seconds(60)) == 0, "\(branding.output)\n\(branding.errors)")
        #expect(branding.output.contains("0 removed"), "\(branding.output)")
        // Without --presence the device asks on the terminal, and a child without one cannot answer: the user-present
        // key does not sign, nothing changes.
        let unattended = try ChildProcess.start(binary, ["device", "--state-dir", deviceDir, "rotate"])
        #expect(try await unattended.exit(within: .seconds(60)) == 1, "\(unattended.output)\n\(unattended.errors)")
        #expect(unattended.errors.contains("user presence is not available"), "\(unattended.errors)")
        #expect(!unattended.output.contains("presence: scripted"))
        let rotate = try ChildProcess.start(binary, ["device", "--state-dir", deviceDir, "--presence", "scripted", "rotate"])
        #expect(try await rotate.exit(within: .seconds(60)) == 0, "\(rotate.output)\n\(rotate.errors)")
        #expect(rotate.output.contains("state: confirming(keys: 1"))
        #expect(rotate.output.contains("state: succeeded(revokedKeys: 0)"), "\(rotate.output)")
        let inbox = try ChildProcess.start(binary, ["device", "--state-dir", deviceDir, "inbox"])
        #expect(try await inbox.exit(within: .seconds(60)) == 0, "inbox after rotation: \(inbox.output)\n\(inbox.errors)")
        let audit = try ChildProcess.start(binary, ["device", "--state-dir", deviceDir, "audit", "--limit", "100"])
        #expect(try await audit.exit(within: .seconds(60)) == 0)
        #expect(audit.output.split(separator: "\n").count >= 3, "\(audit.output)")
        let revoke = try ChildProcess.start(binary, ["device", "--state-dir", deviceDir, "--presence", "scripted", "revoke", "--key", keyId])
        #expect(try await revoke.exit(within: .seconds(60)) == 0, "\(revoke.output)\n\(revoke.errors)")
        #expect(revoke.output.contains("state: succeeded(key: \(keyId))"))
        let none = try ChildProcess.start(binary, ["device", "--state-dir", deviceDir, "keys"])
        #expect(try await none.exit(within: .seconds(60)) == 0)
        #expect(none.output.contains("no keys"), "\(none.output)")
    }
}
