import FaceSealAuthority
import FaceSealCrypto
import FaceSealFace
import FaceSealHTTP
import FaceSealRelyingParty
import FaceSealSDK
import FaceSealWire
import Foundation

/// `faceseal demo`: the whole system on loopback — the authority (SQLite in a temporary directory), the sample
/// application (`FaceSealRelyingParty`) and the authenticator (the SDK, as `faceseal device` runs it) — with real
/// face images of two people from the set-up cache. Exit 0 only when four requests verified and the impostor was refused.
enum DemoCommand {
    static let spec = CommandSpec(
        name: "demo", summary: "Run the whole system on loopback with real face images.", synopsis: "[--keep]",
        details: """
        Uses the embedded SQLite default and the photos `make setup` puts in the cache ($FACESEAL_CACHE, default
        ~/.cache/faceseal): enrols person A from three photos, then public keys, a signature, a decapsulation and a
        sign-in, each approved with another photo of A, and one signature attempted with person B's photo, which
        must fail as a face mismatch; then a second device (a laptop) joins, the first approves it with a face scan,
        and the laptop delivers the same public keys.
        """,
        options: [.flag("keep", "keep the temporary data directory (printed at the start)")])

    static func run(_ parsed: ParsedArguments) async -> Int32 {
        let keep = parsed.flag("keep")
        let demo = DemoRun()
        let passed = await demo.run(keep: keep)
        return passed ? 0 : 1
    }
}

/// One row of the summary table.
struct DemoRow: Sendable {
    let request: String
    let photo: String
    let expected: String
    let result: String
    let passed: Bool
}

/// Thrown when a step of the demo cannot go on.
struct DemoError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The demo's steps, printed as they happen.
final class DemoRun: Sendable {
    private let started = Date()

    static let tenant = "demo"
    static let email = "ada@example.com"
    static let context = "documents"
    static let personA = "John_Salley"
    static let personB = "John_Savage"

    func line(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    func step(_ text: String) {
        line(String(format: "\n[%6.1f s] ", Date().timeIntervalSince(started)) + text)
    }

    func run(keep: Bool) async -> Bool {
        line("FaceSeal demo — authority, application and authenticator on loopback, real face images")
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("faceseal-demo-\(UUID().uuidString.prefix(8))")
        defer {
            if !keep { try? FileManager.default.removeItem(at: root) }
        }
        do {
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            line("data directory: \(root.path)\(keep ? " (kept)" : " (removed at the end; --keep keeps it)")")
            return try await runSteps(root: root)
        } catch {
            line("\nfaceseal demo: FAILED — \(error)")
            return false
        }
    }

    private func runSteps(root: URL) async throws -> Bool {
        // 1. Face models and photos.
        step("face engine: models and photos from the set-up cache")
        let engine: DeviceFaceEngine
        do {
            engine = try DeviceFaceEngine.load(progress: { self.line("  " + $0) })
        } catch {
            throw DemoError("\(error)")
        }
        let photosA = try usablePhotos(of: Self.personA, engine: engine, needed: 7)
        let photoB = try usablePhotos(of: Self.personB, engine: engine, needed: 1)[0]
        let enrolPhotos = Array(photosA.prefix(3))
        let approvalPhotos = Array(photosA.dropFirst(3).prefix(4))
        line("  person A (\(Self.personA)): enrol with \(enrolPhotos.map(name).joined(separator: ", "))")
        line("  person A: approve with \(approvalPhotos.map(name).joined(separator: ", ")) (one each, never an enrolment photo)")
        line("  person B (\(Self.personB)), the impostor: \(name(photoB))")

        // 2. The authority.
        step("authority: starting on loopback (embedded SQLite)")
        let store = try await SQLAuthorityStore.open(.sqlite(path: root.appendingPathComponent("authority.sqlite").path))
        let authoritySlot = RouterSlot()
        // The request log, as `faceseal serve` writes it (bearers in paths redacted), in a file of the data directory.
        let logPath = root.appendingPathComponent("authority-http.log").path
        let authorityLog = Authority.redactingBearers(try RequestLogger.appending(toFileAtPath: logPath))
        let authorityServer = HTTPServer(logger: authorityLog) { request in try await authoritySlot.router().respond(to: request) }
        try authorityServer.start()
        guard let authorityURL = authorityServer.baseURL else { throw DemoError("the authority has no address") }
        let issuer = Self.trimmed(authorityURL.absoluteString)
        let authority = Authority(configuration: AuthorityConfiguration(issuer: issuer, pollInterval: 1, callbackDestinations: .any), store: store,
                                  keys: try AuthorityKeys(derivingFrom: SymmetricKey(size: .bits256)))
        try await authority.prepareSigningKeys()
        guard let adminKey = try await authority.bootstrapAdminKey() else { throw DemoError("no admin key was created") }
        authoritySlot.set(authority.makeRouter())
        line("  listening on \(issuer), database \(root.appendingPathComponent("authority.sqlite").path), request log \(logPath)")

        // 3. The application's endpoints (the relying party is configured once its client id exists).
        step("application: delivery endpoint")
        let applicationSlot = RouterSlot()
        let applicationServer = HTTPServer(logger: .disabled) { request in try await applicationSlot.router().respond(to: request) }
        try applicationServer.start()
        guard let applicationURL = applicationServer.baseURL else { throw DemoError("the application has no address") }
        let deliveryURL = URL(string: Self.trimmed(applicationURL.absoluteString) + "/faceseal/delivery")!
        line("  delivery endpoint \(deliveryURL.absoluteString)")

        // The servers stop (in reverse order) whatever happens next; errors on the way out change nothing.
        let outcome: Result<Bool, any Error>
        do {
            outcome = .success(try await runWithServers(root: root, engine: engine, issuer: issuer, adminKey: adminKey,
                                                        applicationSlot: applicationSlot, deliveryURL: deliveryURL,
                                                        photos: (enrolPhotos, approvalPhotos, photoB)))
        } catch {
            outcome = .failure(error)
        }
        await applicationServer.stop()
        await authorityServer.stop()
        await store.close()
        return try outcome.get()
    }

    private func runWithServers(root: URL, engine: DeviceFaceEngine, issuer: String, adminKey: String, applicationSlot: RouterSlot,
                                deliveryURL: URL, photos: (enrol: [String], approve: [String], impostor: String)) async throws -> Bool {
        let (enrolPhotos, approvalPhotos, photoB) = photos
        // 4. Management API.
        step("management API: tenant, application, user, invitation")
        let admin = DemoManagement(baseURL: issuer, apiKey: adminKey)
        try await admin.post("/tenants", [
            "id": Self.tenant, "name": "Demo Tenant",
            "policy": ["key_algorithms": ["ML-DSA-65", "ML-KEM-768"], "attempts_max": 3, "liveness_required": false,
                       "password_policy": ["mode": "none"], "one_device_per_user": false] as [String: Any],
        ])
        line("  tenant \"\(Self.tenant)\": keys ML-DSA-65 + ML-KEM-768, 3 face attempts per request")
        line("  LIVENESS IS OFF for this tenant: a server has no camera, and still photos cannot blink or turn their head.")
        line("  The face MATCH still runs on every approval (dlib ResNet embeddings, threshold \(MatchPolicy.defaultThreshold)).")
        let application = try await admin.post("/tenants/\(Self.tenant)/applications", [
            "label": "Acme Documents", "delivery_mode": "poll", "delivery_endpoint": deliveryURL.absoluteString,
            "id_token_signed_response_alg": "ML-DSA-65", "branding": ["name": "Acme Documents", "primary_color": "#0A84FF"],
        ])
        guard let clientId = application["client_id"] as? String, let clientSecret = application["client_secret"] as? String else {
            throw DemoError("the application answer lacks client_id or client_secret")
        }
        line("  application \"Acme Documents\": client \(clientId), poll mode, ID tokens signed with ML-DSA-65")
        let user = try await admin.post("/tenants/\(Self.tenant)/users", ["email": Self.email])
        guard let subject = user["subject"] as? String else { throw DemoError("the user answer lacks subject") }
        line("  user \(Self.email) (subject \(subject))")
        let invitation = try await admin.post("/tenants/\(Self.tenant)/invitations", ["email": Self.email, "client_id": clientId])
        guard let link = invitation["link"] as? String else { throw DemoError("the invitation answer lacks link") }
        line("  invitation link: \(link.prefix(48))… (\(link.utf8.count) bytes)")

        let relyingParty = RelyingParty(configuration: RelyingPartyConfiguration(
            issuer: URL(string: issuer)!, clientID: clientId, authentication: .clientSecretBasic(secret: SecretBytes(Array(clientSecret.utf8))),
            deliveryEndpoint: deliveryURL, requestedExpiry: 120))
        var router = Router()
        relyingParty.mount(on: &router)
        applicationSlot.set(router)

        // 5. Enrolment.
        step("device: enrolment from \(enrolPhotos.count) photos of person A")
        let deviceSay: @Sendable (String) -> Void = { text in FileHandle.standardOutput.write(Data(("  device │ " + text + "\n").utf8)) }
        let session = try await DeviceSession.open(
            directory: root.appendingPathComponent("device").path, authority: issuer, presence: .scripted, deviceName: "demo-device",
            faceEngine: engine, say: deviceSay)
        let enrolCapture = try engine.capture(images: enrolPhotos, policy: .enrolment)
        let key = try await session.enrol(link: Array(link.utf8), capture: enrolCapture, password: nil)
        line("  enrolled: key \(key.id) for \(key.email) at \(key.appLabel)")

        // 6. The four requests and the impostor.
        var rows: [DemoRow] = []
        let message = Array("Contract 2026-117: I agree to the terms.".utf8)
        let plan: [(title: String, kind: RequestKind, binding: String, photo: String, impostor: Bool)] = [
            ("public keys", .publicKeys, "Link your document keys", approvalPhotos[0], false),
            ("signature", .sign(data: message), "Sign contract 2026-117", approvalPhotos[1], false),
            ("decapsulation", .decapsulate, "Open the sealed archive", approvalPhotos[2], false),
            ("sign-in", .signIn, "Sign in to Acme Documents", approvalPhotos[3], false),
            ("signature (impostor)", .sign(data: message), "Sign contract 2026-118", photoB, true),
        ]
        for (index, item) in plan.enumerated() {
            step("request \(index + 1)/\(plan.count): \(item.title), approved with \(name(item.photo))\(item.impostor ? " — person B, must be refused" : "")")
            rows.append(await request(item.title, kind: item.kind, binding: item.binding, photo: item.photo, impostor: item.impostor,
                                      relyingParty: relyingParty, session: session, engine: engine))
        }

        // 7. A second device: its token is released only after the first device's face-scan approval (docs/PROTOCOL.md §8.1).
        step("second device: a laptop joins with a new invitation; the phone approves it with a face scan (\(name(approvalPhotos[0])))")
        let second = try await admin.post("/tenants/\(Self.tenant)/invitations", ["email": Self.email, "client_id": clientId])
        guard let secondLink = second["link"] as? String else { throw DemoError("the invitation answer lacks link") }
        let laptopSay: @Sendable (String) -> Void = { text in FileHandle.standardOutput.write(Data(("  laptop │ " + text + "\n").utf8)) }
        let laptop = try await DeviceSession.open(
            directory: root.appendingPathComponent("laptop").path, authority: issuer, presence: .scripted, deviceName: "demo-laptop",
            faceEngine: engine, say: laptopSay)
        let laptopCapture = try engine.capture(images: enrolPhotos)
        let joining = Task { () throws(DeviceCommandError) -> Key in
            try await laptop.enrol(link: Array(secondLink.utf8), capture: laptopCapture, password: nil)
        }
        rows.append(await approveSecondDevice(session: session, photo: approvalPhotos[0], engine: engine))
        let laptopKey = try await joining.value
        line("  enrolled on the laptop: key \(laptopKey.id) for \(laptopKey.email) at \(laptopKey.appLabel)")
        step("request \(plan.count + 1): public keys, approved on the laptop with \(name(approvalPhotos[1])) — the keys already pinned")
        rows.append(await request("public keys (laptop)", kind: .publicKeys, binding: "Link your document keys", photo: approvalPhotos[1],
                                  impostor: false, relyingParty: relyingParty, session: laptop, engine: engine))

        // 8. Summary.
        step("summary")
        printTable(rows)
        let verified = rows.filter { $0.passed && $0.expected == "verified" }.count
        let refused = rows.filter { $0.passed && $0.expected == "refused" }.count
        let passed = verified == 5 && refused == 1 && rows.allSatisfy(\.passed)
        line("\n\(verified) verified result(s), \(refused) refused impostor(s): \(passed ? "PASS" : "FAIL")")
        return passed
    }

    /// The phone answers the laptop's approval request from its outbox: a sign-in-kind request naming the new device.
    private func approveSecondDevice(session: DeviceSession, photo: String, engine: DeviceFaceEngine) async -> DemoRow {
        do {
            var approval: [UInt8]?
            for _ in 0..<5 where approval == nil {
                approval = try await session.pendingLinks(wait: 10).map { Array($0.utf8) }.first {
                    (try? LinkSignature.parse($0))?.claims.kind == .login
                }
            }
            guard let link = approval else { throw DemoError("no approval request reached the phone's outbox") }
            session.say("inbox: an approval request for a new device arrived through the outbox")
            switch try await session.approve(link: link, capture: try engine.capture(images: [photo]), password: nil) {
            case .signedIn(let rp):
                return DemoRow(request: "second device approval", photo: name(photo), expected: "approved",
                               result: "approved on the phone (\(rp)); token released to the laptop", passed: true)
            case .ceremony:
                throw DemoError("the approval request was a ceremony")
            }
        } catch {
            session.say("approval failed: \(error)")
            return DemoRow(request: "second device approval", photo: name(photo), expected: "approved", result: "failed: \(error)", passed: false)
        }
    }

    /// One request from the application, approved on the device, and what the application verified.
    private func request(_ title: String, kind: RequestKind, binding: String, photo: String, impostor: Bool,
                         relyingParty: RelyingParty, session: DeviceSession, engine: DeviceFaceEngine) async -> DemoRow {
        let expected = impostor ? "refused" : "verified"
        let appSay: (String) -> Void = { self.line("  application │ " + $0) }
        let handle: PendingRequestHandle
        do {
            handle = try await relyingParty.start(kind, user: Self.email, context: Self.context, bindingMessage: binding)
        } catch {
            appSay("could not start the request: \(error)")
            return DemoRow(request: title, photo: name(photo), expected: expected, result: "not started: \(error)", passed: false)
        }
        appSay("POST /backchannel → auth_req_id \(handle.authReqId.prefix(12))…, polling every \(handle.interval) s")
        let outcomeTask = Task { () throws(RelyingPartyError) -> RequestOutcome in try await relyingParty.awaitOutcome(handle) }

        var deviceResult: String
        var deviceFailure: String?
        do {
            let link = try await linkFor(handle.authReqId, session: session)
            session.say("inbox: link for request \(handle.authReqId.prefix(12))… arrived through the outbox")
            let capture = try engine.capture(images: [photo])
            switch try await session.approve(link: link, capture: capture, password: nil) {
            case .signedIn(let rp): deviceResult = "signed in at \(rp)"
            case .ceremony(let rp, let kind): deviceResult = "\(kind) delivered to \(rp)"
            }
        } catch {
            deviceFailure = "\(error)"
            deviceResult = "refused: \(error)"
            session.say(deviceResult)
        }

        let outcome: RequestOutcome
        do {
            outcome = try await outcomeTask.value
        } catch {
            appSay("failed: \(error)")
            return DemoRow(request: title, photo: name(photo), expected: expected, result: "application error: \(error)", passed: false)
        }
        switch outcome {
        case .verified(let result):
            for check in result.checks { appSay("✓ " + check) }
            let summary = describe(result)
            appSay("verified: " + summary)
            return DemoRow(request: title, photo: name(photo), expected: expected, result: "verified: " + summary, passed: !impostor)
        case .denied(let reason):
            appSay("denied: \(reason ?? "access_denied")")
            let mismatch = deviceFailure?.contains("face mismatch") ?? false
            return DemoRow(request: title, photo: name(photo), expected: expected,
                           result: mismatch ? "refused: face mismatch ×3 → access_denied" : "denied: \(reason ?? "access_denied")",
                           passed: impostor && mismatch)
        case .expired, .stale:
            appSay(outcome.name)
            return DemoRow(request: title, photo: name(photo), expected: expected, result: outcome.name, passed: false)
        }
    }

    /// What the application verified, in one line.
    private func describe(_ result: VerifiedResult) -> String {
        let receipt = result.idToken.claims["pki_result_sha256"]?.stringValue.map { ", receipt \($0.prefix(10))…" } ?? ""
        let token = "ID token \(result.idToken.algorithm.rawValue) amr=\(result.idToken.amr.joined(separator: "+"))"
        switch result.value {
        case .signIn:
            return "sign-in, sub \(result.idToken.subject.prefix(12))…, \(token)"
        case .publicKeys(let keys):
            let sizes = keys.keys.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue) (\($0.value.count) B)" }
            return "keys pinned: \(sizes.joined(separator: ", ")), \(token)\(receipt)"
        case .signature(let signature):
            return "ML-DSA-65 signature (\(signature.count) B) valid under the pinned key, \(token)\(receipt)"
        case .sharedSecret(let secret):
            return "shared secret (\(secret.bitCount / 8) B) equals the one encapsulated, \(token)\(receipt)"
        }
    }

    /// The link of request `rid` from the device's outbox (long-polled).
    private func linkFor(_ rid: String, session: DeviceSession) async throws -> [UInt8] {
        for _ in 0..<5 {
            for text in try await session.pendingLinks(wait: 10) {
                let bytes = Array(text.utf8)
                if let parsed = try? LinkSignature.parse(bytes), parsed.claims.rid == rid { return bytes }
            }
        }
        throw DemoError("no link for request \(rid) reached the outbox")
    }

    /// The first `needed` photos of `person` in which the engine finds exactly one usable face, in name order.
    private func usablePhotos(of person: String, engine: DeviceFaceEngine, needed: Int) throws -> [String] {
        let directory = FaceAssets.imagePath("johns/\(person)")
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else {
            throw DemoError("no photos at \(directory) (run `make setup`)")
        }
        var usable: [String] = []
        for file in names.sorted() where file.hasSuffix(".jpg") || file.hasSuffix(".png") {
            let path = directory + "/" + file
            do {
                _ = try engine.capture(images: [path])
                usable.append(path)
            } catch {
                line("  skipping \(person)/\(file): \(error)")
            }
            if usable.count == needed { return usable }
        }
        throw DemoError("only \(usable.count) usable photo(s) of \(person), \(needed) needed")
    }

    private func name(_ path: String) -> String {
        let url = URL(fileURLWithPath: path)
        return url.deletingLastPathComponent().lastPathComponent + "/" + url.lastPathComponent
    }

    private func printTable(_ rows: [DemoRow]) {
        let headers = ["#", "request", "approved with", "expected", "result"]
        var table = [headers]
        for (index, row) in rows.enumerated() {
            table.append(["\(index + 1)", row.request, row.photo, row.expected, (row.passed ? "✓ " : "✗ ") + row.result])
        }
        var widths = Array(repeating: 0, count: headers.count)
        for cells in table { for (column, cell) in cells.enumerated() { widths[column] = max(widths[column], cell.count) } }
        for (number, cells) in table.enumerated() {
            line("  " + cells.enumerated().map { column, cell in
                column == cells.count - 1 ? cell : cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }.joined(separator: "  "))
            if number == 0 { line("  " + widths.map { String(repeating: "─", count: $0) }.joined(separator: "  ")) }
        }
    }

    static func trimmed(_ url: String) -> String {
        var text = url
        while text.hasSuffix("/") { text.removeLast() }
        return text
    }
}

/// The management API with the bootstrap admin key (JSON in, JSON out).
struct DemoManagement {
    let baseURL: String
    let apiKey: String
    let client = HTTPClient()

    @discardableResult
    func post(_ path: String, _ body: [String: Any]) async throws -> [String: Any] {
        guard let url = URL(string: baseURL + "/manage/v1" + path) else { throw DemoError("bad URL for \(path)") }
        var headers = HTTPHeaders()
        headers["Authorization"] = "Bearer \(apiKey)"
        headers["Content-Type"] = "application/json"
        let bytes = Array(try JSONSerialization.data(withJSONObject: body))
        let response = try await client.send(HTTPClientRequest(method: .post, url: url, headers: headers, body: bytes))
        guard (200..<300).contains(response.status.code) else {
            throw DemoError("POST \(path) → \(response.status.code) \(String(decoding: response.body.prefix(300), as: UTF8.self))")
        }
        if response.body.isEmpty { return [:] }
        guard let object = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any] else {
            throw DemoError("POST \(path): the answer is not a JSON object")
        }
        return object
    }
}
