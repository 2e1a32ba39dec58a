import FaceSealCrypto
import FaceSealHTTP
import FaceSealRelyingParty
import FaceSealWire
import Foundation
import Synchronization

/// `faceseal rp serve`: the sample application's process — delivery and ping endpoints, a control API, and a web page
/// with "Sign in with FaceSeal" (`RPWeb`).
enum RPServe {
    static func run(_ options: ParsedArguments) async throws(ArgumentError) -> Int32 {
        let configuration = try configuration(options)
        do {
            return try await serve(configuration)
        } catch let error as ArgumentError {
            throw error
        } catch {
            printError("faceseal rp serve: \(error)")
            return 1
        }
    }

    /// What the command line asks for, checked before anything starts.
    private struct Settings {
        var issuer: URL
        var clientID: String
        var secretPath: String
        var authentication: String
        var mode: TokenDeliveryMode
        var port: Int
        var host: String
        var publicURL: String?
        var stateDirectory: String
    }

    private static func configuration(_ options: ParsedArguments) throws(ArgumentError) -> Settings {
        guard let issuer = try options.httpURL("issuer").flatMap(URL.init(string:)) else { throw .missingOption("issuer") }
        let authentication = options.string("auth") ?? "post"
        guard ["post", "basic"].contains(authentication) else { throw .badValue(option: "auth", value: authentication, expected: "post or basic") }
        return Settings(issuer: issuer, clientID: try options.required("client-id"), secretPath: try options.required("client-secret-file"),
                        authentication: authentication, mode: try options.choice("mode", TokenDeliveryMode.self) ?? .poll,
                        port: try options.integer("port", in: 0...65_535) ?? 8788, host: options.string("host") ?? "127.0.0.1",
                        publicURL: try options.httpURL("public-url"), stateDirectory: options.string("state-dir") ?? "faceseal-rp")
    }

    private static func serve(_ settings: Settings) async throws -> Int32 {
        let issuer = settings.issuer
        let clientID = settings.clientID
        let secretPath = settings.secretPath
        guard let secretData = FileManager.default.contents(atPath: secretPath), secretData.count <= 4096 else {
            throw ArgumentError.invalid("Cannot read the client secret from \(secretPath) (at most 4 KiB).")
        }
        var secret = Array(secretData)
        while let last = secret.last, last == 0x0A || last == 0x0D { secret.removeLast() }
        guard !secret.isEmpty else { throw ArgumentError.invalid("The client secret file \(secretPath) is empty.") }
        let secretBytes = SecretBytes(secret)
        secureZero(&secret)
        let authentication: ClientAuthentication = settings.authentication == "basic"
            ? .clientSecretBasic(secret: secretBytes) : .clientSecretPost(secret: secretBytes)
        let mode = settings.mode
        let port = settings.port
        let host = settings.host
        let stateDirectory = settings.stateDirectory
        try FileManager.default.createDirectory(atPath: stateDirectory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let pins = try FileKeyPinStore(url: URL(fileURLWithPath: stateDirectory).appendingPathComponent("pins.json"))

        // The endpoints' paths are fixed; the host part is only what gets printed and registered.
        let placeholder = URL(string: "http://\(host.contains(":") ? "[\(host)]" : host):\(port)")!
        var configuration = RelyingPartyConfiguration(
            issuer: issuer, clientID: clientID, authentication: authentication,
            deliveryEndpoint: placeholder.appendingPathComponent("faceseal/delivery"),
            notificationEndpoint: mode == .ping ? placeholder.appendingPathComponent("faceseal/ping") : nil,
            tokenDeliveryMode: mode)
        configuration.deliveryObserver = { id, outcome in
            switch outcome {
            case .success: rpPrint("delivery accepted for \(id ?? "?")")
            case .failure(let refusal): rpPrint("delivery refused (\(refusal.status)) for \(id ?? "?"): \(refusal.description)")
            }
        }
        let rp = RelyingParty(configuration: configuration, keyPins: pins)
        let jobs = RPJobs()
        let controlToken = Base64URL.encode(SecureRandom.bytes(count: 32))

        var router = Router()
        rp.mount(on: &router)
        router.post("/control/requests") { request in
            try authorize(request, token: controlToken)
            let start: RPControlStart = try request.decodeJSON(RPControlStart.self)
            let kind = try requestKind(start)
            let id = jobs.create()
            Task {
                do {
                    let outcome = try await rp.perform(kind, user: start.user, context: start.context, bindingMessage: start.message) { handle in
                        jobs.started(id, handle: handle, now: Date())
                        rpPrint("started \(kind) for \(start.user): auth_req_id \(handle.authReqId)")
                    }
                    jobs.finish(id, report(outcome, kind: kind))
                } catch {
                    jobs.finish(id, RPControlStatus(state: "failed", checks: [], summary: "\(error)"))
                }
            }
            return try .json(["id": id], status: .accepted)
        }
        router.get("/control/requests/:id") { request in
            try authorize(request, token: controlToken)
            guard let status = jobs.status(request.pathParameter("id")) else { throw HTTPError.notFound }
            return try .json(status)
        }

        // The web page needs the public URL for its redirect URI, which is known once the port is bound.
        let web = RouterSlot()
        router.get("/") { request in try await web.router().respond(to: request) }
        router.get("/signin") { request in try await web.router().respond(to: request) }
        router.get(RPWeb.callbackPath) { request in try await web.router().respond(to: request) }

        let server = HTTPServer(configuration: .init(host: host, port: port, maxBodySize: DeliveryVerifier.maxEnvelopeBytes), router: router)
        try server.start()
        guard let bound = server.port else { throw RPServeError.notBound }
        let local = "http://\(host.contains(":") ? "[\(host)]" : host):\(bound)"
        let publicURL = settings.publicURL ?? local
        let page = RPWeb(rp: rp, publicURL: publicURL)
        var webRouter = Router()
        page.mount(on: &webRouter)
        web.set(webRouter)
        let control = RPControlFile(controlURL: local, controlToken: controlToken, deliveryEndpoint: publicURL + "/faceseal/delivery",
                                    notificationEndpoint: mode == .ping ? publicURL + "/faceseal/ping" : nil)
        try writePrivate(JSONEncoder().encode(control), to: RPControlFile.url(stateDirectory: stateDirectory))
        rpPrint("faceseal rp: client \(clientID) of \(issuer.absoluteString), \(mode.rawValue) mode")
        rpPrint("delivery endpoint: \(control.deliveryEndpoint)")
        if let ping = control.notificationEndpoint { rpPrint("ping endpoint: \(ping)") }
        rpPrint("web page: \(publicURL)/ (register the redirect URI \(page.redirectURI))")
        rpPrint("control: \(RPControlFile.url(stateDirectory: stateDirectory).path)")
        while true {
            try? await Task.sleep(for: .seconds(3600))
        }
    }

    private static func authorize(_ request: HTTPRequest, token: String) throws {
        let presented = request.headers["Authorization"] ?? ""
        guard constantTimeEquals(Array(presented.utf8), Array("Bearer \(token)".utf8)) else {
            throw HTTPError(.unauthorized, code: "unauthorized", description: "the control API needs the token of control.json")
        }
    }

    private static func requestKind(_ start: RPControlStart) throws -> RequestKind {
        switch start.kind {
        case "public-keys": return .publicKeys
        case "login": return .signIn
        case "decapsulate": return .decapsulate
        case "sign":
            guard let data = start.data, let bytes = try? Base64URL.decode(data) else {
                throw HTTPError.badRequest("sign needs data")
            }
            return .sign(data: bytes)
        default: throw HTTPError.badRequest("unknown kind \(start.kind)")
        }
    }

    /// The control API's report of an outcome: the checks and the final line.
    private static func report(_ outcome: RequestOutcome, kind: RequestKind) -> RPControlStatus {
        switch outcome {
        case .verified(let result):
            let token = result.idToken
            let who = "sub \(token.subject), amr \(token.amr.joined(separator: "+")), \(token.algorithm.rawValue) ID token"
            let summary: String
            switch result.value {
            case .signIn:
                summary = "sign-in of \(who)"
            case .publicKeys(let keys):
                let names = keys.keys.keys.sorted().map(\.rawValue).joined(separator: ", ")
                summary = "public keys \(names) (key_id \(keys.signingKeyID ?? "?")) pinned; \(who)"
            case .signature(let signature):
                let count: Int
                if case .sign(let data) = kind { count = data.count } else { count = 0 }
                summary = "ML-DSA-65 signature (\(signature.count) bytes) over the \(count)-byte message: \(Base64URL.encode(signature.prefix(24)))…; \(who)"
            case .sharedSecret(let secret):
                let fingerprint = secret.withUnsafeBytes { Base64URL.encode(SHA256.hash(data: Array($0)).bytes) }
                summary = "shared secret (\(secret.bitCount / 8) bytes, SHA-256 \(fingerprint)) equals the encapsulated one; \(who)"
            }
            return RPControlStatus(state: "verified", authReqId: result.authReqId, checks: result.checks, summary: summary)
        case .denied(let reason):
            let known = reason.flatMap(DenialReason.init(rawValue:))
            return RPControlStatus(state: "denied", checks: [],
                                   summary: known.map { "\($0.rawValue) (\($0.explanation))" } ?? reason ?? "the user or the authority refused")
        case .expired:
            return RPControlStatus(state: "expired", checks: [], summary: "the request expired before an answer")
        case .stale:
            return RPControlStatus(state: "stale", checks: [], summary: "stale_token after every retry")
        }
    }

    /// Writes `data` to `url` with mode 0600 (the control token is a credential).
    static func writePrivate(_ data: Data, to url: URL) throws {
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).tmp")
        try? FileManager.default.removeItem(at: temporary)
        guard FileManager.default.createFile(atPath: temporary.path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
            throw RPServeError.cannotWrite(temporary.path)
        }
        let handle = try FileHandle(forWritingTo: temporary)
        try handle.write(contentsOf: data)
        try handle.close()
        guard rename(temporary.path, url.path) == 0 else { throw RPServeError.cannotWrite(url.path) }
    }
}

/// Why `faceseal rp serve` stopped.
enum RPServeError: Error, CustomStringConvertible {
    case notBound
    case cannotWrite(String)

    var description: String {
        switch self {
        case .notBound: "The server did not bind its port."
        case .cannotWrite(let path): "Cannot write \(path)."
        }
    }
}

/// The control API's requests: each runs in its own task; `rp request` polls its status.
final class RPJobs: Sendable {
    private let jobs = Mutex<[String: RPControlStatus]>([:])

    func create() -> String {
        let id = Base64URL.encode(SecureRandom.bytes(count: 12))
        jobs.withLock { $0[id] = RPControlStatus(state: "pending", checks: []) }
        return id
    }

    func started(_ id: String, handle: PendingRequestHandle, now: Date) {
        jobs.withLock {
            $0[id]?.authReqId = handle.authReqId
            $0[id]?.expiresIn = max(0, Int(handle.expiresAt.timeIntervalSince(now)))
        }
    }

    func finish(_ id: String, _ status: RPControlStatus) {
        jobs.withLock { $0[id] = status }
        rpPrint("\(status.state): \(status.summary ?? "")")
    }

    func status(_ id: String) -> RPControlStatus? { jobs.withLock { $0[id] } }
}
