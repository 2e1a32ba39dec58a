import FaceSealAuthority
import FaceSealCrypto
import FaceSealHTTP
import FaceSealWire
import Foundation
import Synchronization

/// One enrolled device of the authority benchmark, speaking the device API as the SDK does: an ambient and a
/// user-present P-256 key, every request signed (`FaceSeal-Device-Signature`), every answer's signature checked
/// against the authority key pinned at enrolment, the face token opened with the downloaded share and re-sealed at the
/// next generation under a fresh share at each completion.
struct BenchDevice: Sendable {
    enum Role: Sendable { case ambient, userPresent }

    let base: String
    let client: any BenchTransport
    let ambientKey = P256.Signing.PrivateKey()
    let userPresentKey = P256.Signing.PrivateKey()
    let ambientKID = "am_" + Base64URL.encode(SecureRandom.bytes(count: 9))
    let userPresentKID = "up_" + Base64URL.encode(SecureRandom.bytes(count: 9))
    /// Pinned from the enrolment answer.
    private(set) var authorityKey: Curve25519.Signing.PublicKey?

    init(base: String, client: any BenchTransport) {
        self.base = base
        self.client = client
    }

    /// Enrols for `invitation` (the user's first device: it seals the first face token) and pins the authority key.
    mutating func enrol(invitation: String) async throws {
        let details = try await client.send(HTTPClientRequest(url: url(DevicePaths.enrolment(invitation))))
        guard details.status.code == 200 else { throw BenchAuthorityError("enrolment details: HTTP \(details.status.code)") }
        let info = try EnrolmentDetails.decode(details.body)
        let header = FaceTokenHeader(tid: "tok_" + Base64URL.encode(SecureRandom.bytes(count: 9)), sub: info.subject, tenant: info.tenant,
                                     gen: 1, passwordRequired: false, livenessRequired: info.livenessRequired, threshold: 0.5,
                                     scrypt: nil, createdAt: Int64(Date().timeIntervalSince1970))
        let (token, share) = try Self.seal(header)
        let jti = DeviceRequestSignature.newJTI()
        let proof = try JWS.sign(payload: WireJSON.encode(["inv": invitation, "jti": jti]), signer: ambientKey, keyID: ambientKID)
        let body = EnrolmentRequest(
            ambientKey: DevicePublicKey(kid: ambientKID, x963: Array(ambientKey.publicKey.x963Representation)),
            userPresentKey: DevicePublicKey(kid: userPresentKID, x963: Array(userPresentKey.publicKey.x963Representation)),
            ambientProof: proof, token: token, serverShare: share, deviceName: "bench-device")
        let response = try await sendUnverified(.post, DevicePaths.enrolment(invitation), body: body.encoded(), as: .userPresent, jti: jti)
        guard response.status.code == 200 else { throw BenchAuthorityError("enrolment: HTTP \(response.status.code)") }
        let enrolled = try EnrolmentResponse.decode(response.body)
        let key = try Curve25519.Signing.PublicKey(rawRepresentation: enrolled.authorityKey.bytes)
        _ = try AuthorityResponseSignature.verify(response.headers[DeviceSigning.responseHeader], body: response.body, requestJTI: jti,
                                                  status: 200, key: key)
        authorityKey = key
    }

    /// One long poll of the outbox (up to `wait` s): the links it answered, verified with the pinned key, as rid → nonce.
    func pollLinks(wait: Int = 30) async throws -> [String: String] {
        guard let authorityKey else { throw BenchAuthorityError("device not enrolled") }
        var links: [String: String] = [:]
        for text in try await send(.get, DevicePaths.outbox + "?wait=\(wait)", expect: OutboxResponse.self).links {
            let claims = try LinkSignature.parse(Array(text.utf8)).verify(with: authorityKey, now: Self.now)
            links[claims.rid] = claims.nonce
        }
        return links
    }

    /// The request details; their nonce must be the link's.
    func details(rid: String, nonce: String) async throws {
        let details = try await send(.get, DevicePaths.request(rid), expect: RequestDetails.self)
        guard details.nonce == nonce, details.rid == rid else { throw BenchAuthorityError("request details do not match the link") }
    }

    /// Downloads the face token for `rid`.
    func download(rid: String) async throws -> FaceTokenDownload {
        try await send(.get, DevicePaths.requestToken(rid), as: .userPresent, expect: FaceTokenDownload.self)
    }

    /// Opens `download` with its share (both layers), re-seals it at the next generation under a fresh share and posts
    /// the completion of the sign-in `rid`.
    func complete(rid: String, from download: FaceTokenDownload) async throws {
        try await post(try completion(rid: rid, from: download))
    }

    /// The completion of the sign-in `rid`: `download` opened with its share (both layers) and re-sealed at the next
    /// generation under a fresh share.
    func completion(rid: String, from download: FaceTokenDownload) throws -> CompletionRequest {
        let header = try download.token.checkedHeader()
        let layers = try FaceTokenSeal.layerKeys(serverShare: download.serverShare.secret, passwordKey: nil, header: header)
        let templates = try FaceTokenSeal.openTemplates(download.token, keys: layers)
        let masters = try FaceTokenSeal.openMasters(download.token, keys: layers)
        var next = header
        next.gen += 1
        next.v = FaceTokenHeader.currentFormat
        let share = SecretBytes(randomCount: FaceTokenSeal.serverShareByteCount)
        let sealed = try FaceTokenSeal.seal(header: next, templates: templates, masters: masters, serverShare: share, passwordKey: nil)
        return CompletionRequest(rid: rid, resultSHA256: nil, baseGeneration: header.gen, token: sealed, serverShare: share,
                                 passwordUsed: false)
    }

    /// Posts `completion` (again, for a retry: the same body gets the same answer).
    func post(_ completion: CompletionRequest) async throws {
        let answer = try await send(.post, DevicePaths.completion(completion.rid), body: completion.encoded(), as: .userPresent,
                                    expect: CompletionResponse.self)
        guard answer.generation == completion.baseGeneration + 1 else {
            throw BenchAuthorityError("completion stored generation \(answer.generation)")
        }
    }

    /// A new token of one template and a master per default algorithm, and its share.
    private static func seal(_ header: FaceTokenHeader) throws -> (FaceTokenEnvelope, SecretBytes) {
        var masters = FaceTokenMasters()
        masters.fill(.mlDSA65)
        masters.fill(.mlKEM768)
        let share = SecretBytes(randomCount: FaceTokenSeal.serverShareByteCount)
        let template = (0..<128).map { _ in Float.random(in: -0.2...0.2) }
        return (try FaceTokenSeal.seal(header: header, templates: [template], masters: masters, serverShare: share, passwordKey: nil), share)
    }

    // MARK: Signed requests

    private static var now: Int64 { Int64(Date().timeIntervalSince1970) }

    private func url(_ path: String) -> URL { URL(string: base + path)! }

    private func sendUnverified(_ method: HTTPMethod, _ path: String, body: [UInt8] = [], as role: Role,
                                jti: String) async throws -> HTTPClientResponse {
        let (kid, key) = role == .ambient ? (ambientKID, ambientKey) : (userPresentKID, userPresentKey)
        let signature = try DeviceRequestSignature.make(method: method.rawValue, path: path, body: body, kid: kid, signer: key,
                                                        now: Self.now, jti: jti)
        var headers: HTTPHeaders = [DeviceSigning.requestHeader: signature.header, DeviceSigning.protocolHeader: String(ProtocolVersion.current)]
        if !body.isEmpty { headers["Content-Type"] = "application/json" }
        return try await client.send(HTTPClientRequest(method: method, url: url(path), headers: headers, body: body, timeout: .seconds(40)))
    }

    /// A signed request whose answer must be 200, signed by the pinned key for this `jti`, and decode as `Message`.
    private func send<Message: WireMessage>(_ method: HTTPMethod, _ path: String, body: [UInt8] = [], as role: Role = .ambient,
                                            expect: Message.Type) async throws -> Message {
        guard let authorityKey else { throw BenchAuthorityError("device not enrolled") }
        let jti = DeviceRequestSignature.newJTI()
        let response = try await sendUnverified(method, path, body: body, as: role, jti: jti)
        try BenchUnavailable.check(response)
        _ = try AuthorityResponseSignature.verify(response.headers[DeviceSigning.responseHeader], body: response.body, requestJTI: jti,
                                                  status: response.status.code, key: authorityKey)
        guard response.status.code == 200 else {
            let code = (try? DeviceErrorResponse.decode(response.body).error.rawValue) ?? "?"
            throw BenchAuthorityError("\(method.rawValue) \(path): HTTP \(response.status.code) \(code)")
        }
        return try Message.decode(response.body)
    }
}

/// One application of the authority benchmark: a confidential client (`client_secret_post`) that starts sign-ins
/// for its user on the backchannel endpoint and redeems them at the token endpoint, checking each ID token's
/// signature (against `/jwks`), issuer, audience and `auth_req_id`.
struct BenchApplication: Sendable {
    let base: String
    let client: any BenchTransport
    let clientID: String
    let secret: String
    let userEmail: String
    /// The user's subject (the store's; what the chaos check reads).
    let subject: String

    private func form(_ pairs: [(String, String)]) -> FormParameters {
        FormParameters((pairs + [("client_id", clientID), ("client_secret", secret)]).map { FormParameters.Item(name: $0.0, value: $0.1) })
    }

    /// Starts a sign-in; answers the `auth_req_id`.
    func start(notificationToken: String) async throws -> String {
        let response = try await client.send(.form(url: URL(string: base + CIBAPaths.backchannel)!, form: form([
            ("scope", "openid"), ("login_hint", userEmail), ("client_notification_token", notificationToken),
        ])))
        try BenchUnavailable.check(response)
        guard response.status.code == 200 else {
            let code = (try? OAuthErrorResponse.decode(response.body).error.rawValue) ?? "?"
            throw BenchAuthorityError("backchannel: HTTP \(response.status.code) \(code)")
        }
        return try BackchannelAuthenticationResponse.decode(response.body).authReqId
    }

    /// Redeems a completed request and checks its ID token; answers it.
    @discardableResult
    func redeem(_ authReqID: String, issuer: String, keys: JWKSet) async throws -> String {
        let response = try await client.send(.form(url: URL(string: base + CIBAPaths.token)!, form: form([
            ("grant_type", CIBANames.grantType), ("auth_req_id", authReqID),
        ])))
        try BenchUnavailable.check(response)
        guard response.status.code == 200 else {
            let code = (try? OAuthErrorResponse.decode(response.body).error.rawValue) ?? "?"
            throw BenchAuthorityError("token: HTTP \(response.status.code) \(code)")
        }
        let idToken = try TokenResponse.decode(response.body).idToken
        let (_, claims) = try JWT.verify(idToken, keySet: keys, validation: JWTValidation(now: Date(), issuer: issuer, audience: clientID))
        guard claims[CIBANames.authReqIdClaim]?.stringValue == authReqID else { throw BenchAuthorityError("ID token for another request") }
        return idToken
    }
}

/// The ping-mode applications' notification endpoint: records each callback's `auth_req_id` (its bearer token must be
/// the one every request was started with) and wakes whoever waits for it.
final class BenchPingBoard: Sendable {
    private enum Entry {
        case arrived
        case waiting(CheckedContinuation<Bool, Never>)
    }

    /// The `client_notification_token` of every benchmark request.
    let token = "ping-" + Base64URL.encode(SecureRandom.bytes(count: 16))
    private let entries = Mutex<[String: Entry]>([:])
    /// Callbacks refused (wrong bearer, malformed): must stay 0.
    let refused = Atomic<Int>(0)

    /// The HTTP handler: `POST` `{"auth_req_id": …}` with `Authorization: Bearer <token>`.
    func handle(_ request: HTTPRequest) -> HTTPResponse {
        guard let callback = try? PingCallback.decode(request.body), request.headers["Authorization"] == "Bearer " + token else {
            refused.add(1, ordering: .relaxed)
            return .empty(.badRequest)
        }
        let waiter = entries.withLock { entries -> CheckedContinuation<Bool, Never>? in
            if case .waiting(let continuation) = entries[callback.authReqId] {
                entries[callback.authReqId] = nil
                return continuation
            }
            entries[callback.authReqId] = .arrived
            return nil
        }
        waiter?.resume(returning: true)
        return .empty(.noContent)
    }

    /// Returns once the callback for `authReqID` arrived (at once if it already did); throws after `timeout`.
    func wait(for authReqID: String, timeout: Duration = .seconds(10)) async throws {
        let timer = Task { [self] in
            try await Task.sleep(for: timeout)
            let late = entries.withLock { entries -> CheckedContinuation<Bool, Never>? in
                guard case .waiting(let continuation) = entries[authReqID] else { return nil }
                entries[authReqID] = nil
                return continuation
            }
            late?.resume(returning: false)
        }
        defer { timer.cancel() }
        let arrived = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let arrived = entries.withLock { entries -> Bool in
                if case .arrived = entries[authReqID] {
                    entries[authReqID] = nil
                    return true
                }
                entries[authReqID] = .waiting(continuation)
                return false
            }
            if arrived { continuation.resume(returning: true) }
        }
        guard arrived else { throw BenchAuthorityError("no ping callback for \(authReqID) within \(timeout)") }
    }
}

/// A draining authority's answer: 503 with `Retry-After` (it did not act on the request; send it again after the wait).
struct BenchUnavailable: Error {
    let retryAfter: Int

    static func check(_ response: HTTPClientResponse) throws(BenchUnavailable) {
        if response.status == .serviceUnavailable, let seconds = response.headers.retryAfterSeconds { throw BenchUnavailable(retryAfter: seconds) }
    }
}

/// Why the authority benchmark could not run.
struct BenchAuthorityError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// How the authority benchmark's devices and applications reach the authority.
protocol BenchTransport: Sendable {
    /// Sends `request` and answers the response (any status).
    func send(_ request: HTTPClientRequest) async throws -> HTTPClientResponse
}

/// The product's client: chaos runs and rolling restarts drive the authority through it, since what they test is how
/// the SDK's and the application library's client retries what a dying authority answers.
extension HTTPClient: BenchTransport {}

/// The throughput runs' client (`faceseal bench authority`): the same requests, a fraction of libcurl's CPU.
extension LoopbackHTTPClient: BenchTransport {}
