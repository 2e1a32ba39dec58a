import FaceSealCrypto
import FaceSealHTTP
import FaceSealWire
import Foundation
@testable import FaceSealAuthority

/// A test authenticator for authority tests: an ambient and a user-present P-256 key, enrolled through the
/// device API over HTTP, signing every request (`FaceSeal-Device-Signature`) and verifying every response
/// (`FaceSeal-Authority-Signature`) against the authority's key.
///
/// ```swift
/// let (device, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
/// let details = try await device.send(.get, DevicePaths.request(rid)).decode(RequestDetails.self)
/// ```
struct TestDevice: Sendable {
    /// Which of the two keys signs.
    enum Role: Sendable { case ambient, userPresent }

    let harness: AuthorityHarness
    let ambientKey: P256.Signing.PrivateKey
    let ambientKID: String
    let userPresentKey: P256.Signing.PrivateKey
    let userPresentKID: String
    /// What the device announces in `FaceSeal-Protocol` (lower it to play an older SDK).
    var protocolVersion = ProtocolVersion.current
    /// The password a first enrolment seals the new face token with (none by default).
    var tokenPassword: String?
    /// Whether a first enrolment with a password uploads the token's password verifier (an older SDK does not).
    var uploadsVerifier = true
    /// The token id a first enrolment's new token gets.
    var tokenID = "tok_test"

    /// A device with two fresh keys (not yet enrolled).
    init(harness: AuthorityHarness) {
        self.harness = harness
        ambientKey = P256.Signing.PrivateKey()
        userPresentKey = P256.Signing.PrivateKey()
        ambientKID = "am_" + Base64URL.encode(SecureRandom.bytes(count: 9))
        userPresentKID = "up_" + Base64URL.encode(SecureRandom.bytes(count: 9))
    }

    /// The authority key the device pinned (in real life from the enrolment link; here from the authority).
    var authorityKey: Curve25519.Signing.PublicKey { harness.authority.keys.deviceKey.publicKey }

    /// The authority's clock in Unix seconds.
    var now: Int64 { Int64(harness.clock.now().timeIntervalSince1970) }

    // MARK: Enrolment

    /// Creates an invitation for `subject` and `clientID` in the store (the management API's job) and returns its id.
    static func invite(in harness: AuthorityHarness, subject: String, clientID: String) async throws -> String {
        let user = try await harness.store.user(subject: subject)
        let invitation = InvitationRecord(
            id: "inv_" + Base64URL.encode(SecureRandom.bytes(count: 12)), tenantID: user.tenantID, subject: subject, clientID: clientID,
            secretHash: Array(repeating: 1, count: 32), expiresAt: harness.clock.now().addingTimeInterval(3600))
        return try await harness.store.createInvitation(invitation).id
    }

    /// A new device enrolled for `subject` and `clientID`; the user's first device creates the face token.
    static func enrolled(in harness: AuthorityHarness, subject: String, clientID: String,
                         tokenPassword: String? = nil) async throws -> (TestDevice, EnrolmentResponse) {
        var device = TestDevice(harness: harness)
        device.tokenPassword = tokenPassword
        let invitation = try await invite(in: harness, subject: subject, clientID: clientID)
        let response = try await device.enrol(invitation: invitation)
        guard response.status == 200 else { throw TestDeviceError.refused(response.status, response.error) }
        let enrolled = try response.decode(EnrolmentResponse.self)
        if enrolled.approval != nil {
            // A further device: under an approval of `none` (the fixture's) the bound key downloads the token once.
            let download = try await device.enrolmentToken(invitation: invitation)
            guard download.status == 200 else { throw TestDeviceError.refused(download.status, download.error) }
        }
        return (device, enrolled)
    }

    /// The further device's token download for `invitation`, signed with this device's user-present key.
    func enrolmentToken(invitation: String, wait: Int = 0, as role: Role = .userPresent) async throws -> DeviceResponse {
        try await send(.get, DevicePaths.enrolmentToken(invitation) + "?wait=\(wait)", as: role)
    }

    /// The enrolment body for `invitation` and the request's `jti` (first device: with a new token when `token` is nil
    /// and the user has none).
    func enrolmentRequest(invitation: String, jti: String) async throws -> EnrolmentRequest {
        let details = try await harness.client.send(HTTPClientRequest(url: harness.url(DevicePaths.enrolment(invitation))))
        guard details.status.code == 200 else { throw TestDeviceError.refused(details.status.code, nil) }
        let info = try EnrolmentDetails.decode(details.body)
        var token: FaceTokenEnvelope?
        var share: SecretBytes?
        var verifier: [UInt8]?
        if !info.tokenExists {
            (token, share) = try Self.sealToken(subject: info.subject, tenant: info.tenant, generation: 1, tid: tokenID, password: tokenPassword)
            if let tokenPassword, uploadsVerifier { verifier = try Self.verifier(tokenPassword, tokenID: tokenID) }
        }
        let proof = try JWS.sign(payload: WireJSON.encode(["inv": invitation, "jti": jti]), signer: ambientKey, keyID: ambientKID)
        return EnrolmentRequest(
            ambientKey: DevicePublicKey(kid: ambientKID, x963: Array(ambientKey.publicKey.x963Representation)),
            userPresentKey: DevicePublicKey(kid: userPresentKID, x963: Array(userPresentKey.publicKey.x963Representation)),
            ambientProof: proof, token: token, serverShare: share, deviceName: "test-device", passwordVerifier: verifier)
    }

    /// Posts the enrolment for `invitation`, signed with the new user-present key.
    func enrol(invitation: String) async throws -> DeviceResponse {
        let jti = DeviceRequestSignature.newJTI()
        let body = try await enrolmentRequest(invitation: invitation, jti: jti)
        return try await send(.post, DevicePaths.enrolment(invitation), body: body.encoded(), as: .userPresent, jti: jti)
    }

    // MARK: Face tokens

    /// The scrypt parameters of password-protected test tokens (the lowest cost a device accepts).
    static let testScrypt = ScryptParameters(logN: 10, salt: Array(repeating: 3, count: 16))

    /// A sealed token (one template, a master per default algorithm, `password` if given) and its fresh server share.
    static func sealToken(subject: String, tenant: String, generation: Int, tid: String = "tok_test",
                          password: String? = nil) throws -> (FaceTokenEnvelope, SecretBytes) {
        let header = FaceTokenHeader(tid: tid, sub: subject, tenant: tenant, gen: generation, passwordRequired: password != nil,
                                     livenessRequired: true, threshold: 0.5, scrypt: password.map { _ in testScrypt },
                                     createdAt: 1_800_000_000)
        return try seal(header, password: password)
    }

    /// `header` sealed over the test templates and masters with a fresh server share.
    static func seal(_ header: FaceTokenHeader, password: String?) throws -> (FaceTokenEnvelope, SecretBytes) {
        var masters = FaceTokenMasters()
        masters.fill(.mlDSA65)
        masters.fill(.mlKEM768)
        let share = SecretBytes(randomCount: 32)
        return (try FaceTokenSeal.seal(header: header, templates: [Array(repeating: 0.25, count: 128)], masters: masters, serverShare: share,
                                       passwordKey: try passwordKey(password)), share)
    }

    /// The password verifier's public key of a test token (docs/PROTOCOL.md §8.1).
    static func verifier(_ password: String, tokenID: String = "tok_test") throws -> [UInt8] {
        Array(try verifierKey(password, tokenID: tokenID).publicKey.rawRepresentation)
    }

    /// The password verifier key of a test token.
    static func verifierKey(_ password: String, tokenID: String = "tok_test") throws -> Curve25519.Signing.PrivateKey {
        try PasswordVerifier.key(passwordKey: FaceTokenSeal.passwordKey(password: password, parameters: testScrypt), tokenID: tokenID)
    }

    /// Posts a password proof for `invitation` made with `password`'s verifier key, signed with this device's user-present key.
    func provePassword(invitation: String, password: String) async throws -> DeviceResponse {
        let jti = DeviceRequestSignature.newJTI()
        let proof = try JWS.sign(payload: PasswordVerifier.proofClaims(invitation: invitation, jti: jti), signer: Self.verifierKey(password))
        return try await send(.post, DevicePaths.enrolmentPassword(invitation), body: PasswordProof(proof: proof).encoded(),
                              as: .userPresent, jti: jti)
    }

    static func passwordKey(_ password: String?) throws -> SymmetricKey? {
        try password.map { try FaceTokenSeal.passwordKey(password: $0, parameters: testScrypt) }
    }

    /// Opens both layers of a downloaded token with its share (proving the share fits); answers the header.
    static func open(_ download: FaceTokenDownload, password: String? = nil) throws -> FaceTokenHeader {
        let header = try download.token.checkedHeader()
        let layers = try FaceTokenSeal.layerKeys(serverShare: download.serverShare.secret, passwordKey: try passwordKey(password), header: header)
        _ = try FaceTokenSeal.openTemplates(download.token, keys: layers)
        _ = try FaceTokenSeal.openMasters(download.token, keys: layers)
        return header
    }

    /// Opens a downloaded token (proving the share fits) and re-seals its header at the next generation (format 2) with
    /// a fresh share; `adjust` may change the new header further.
    static func rotate(_ download: FaceTokenDownload, password: String? = nil,
                       adjust: (inout FaceTokenHeader) -> Void = { _ in }) throws -> (envelope: FaceTokenEnvelope, share: SecretBytes, base: Int) {
        let header = try open(download, password: password)
        var next = header
        next.gen += 1
        next.v = FaceTokenHeader.currentFormat
        adjust(&next)
        let (envelope, share) = try seal(next, password: password)
        return (envelope, share, header.gen)
    }

    /// A completion for `rid` from a downloaded token (`receipt`: the SHA-256 of a delivery body; nil for a sign-in).
    /// `passwordUsed` defaults to whether the token has a password.
    static func completion(rid: String, from download: FaceTokenDownload, receipt: [UInt8]?, passwordUsed: Bool? = nil,
                           password: String? = nil, adjust: (inout FaceTokenHeader) -> Void = { _ in }) throws -> CompletionRequest {
        let (envelope, share, base) = try rotate(download, password: password, adjust: adjust)
        return CompletionRequest(rid: rid, resultSHA256: receipt.map(Base64URL.encode), baseGeneration: base,
                                 token: envelope, serverShare: share, passwordUsed: passwordUsed ?? (password != nil))
    }

    // MARK: Signed requests

    /// Signs and sends a request without checking the answer's signature.
    func sendUnverified(_ method: HTTPMethod, _ path: String, body: [UInt8] = [], as role: Role = .ambient,
                        jti: String = DeviceRequestSignature.newJTI(), iat: Int64? = nil,
                        contentType: String? = "application/json", forwardedFor: String? = nil) async throws -> HTTPClientResponse {
        let (kid, key) = role == .ambient ? (ambientKID, ambientKey) : (userPresentKID, userPresentKey)
        let signature = try DeviceRequestSignature.make(method: method.rawValue, path: path, body: body, kid: kid, signer: key,
                                                        now: iat ?? now, jti: jti)
        var headers: HTTPHeaders = [DeviceSigning.requestHeader: signature.header, DeviceSigning.protocolHeader: String(protocolVersion)]
        if !body.isEmpty, let contentType { headers["Content-Type"] = contentType }
        if let forwardedFor { headers["X-Forwarded-For"] = forwardedFor }
        return try await harness.client.send(HTTPClientRequest(method: method, url: harness.url(path), headers: headers, body: body))
    }

    /// Signs and sends a request; the answer must carry a valid authority signature for this `jti`, status and body.
    func send(_ method: HTTPMethod, _ path: String, body: [UInt8] = [], as role: Role = .ambient,
              jti: String = DeviceRequestSignature.newJTI(), iat: Int64? = nil,
              contentType: String? = "application/json") async throws -> DeviceResponse {
        let response = try await sendUnverified(method, path, body: body, as: role, jti: jti, iat: iat, contentType: contentType)
        let claims = try AuthorityResponseSignature.verify(response.headers[DeviceSigning.responseHeader], body: response.body,
                                                           requestJTI: jti, status: response.status.code, key: authorityKey)
        return DeviceResponse(status: response.status.code, body: response.body, claims: claims)
    }

    /// Sends a wire message as a signed POST.
    func post(_ path: String, _ message: some WireMessage, as role: Role = .userPresent) async throws -> DeviceResponse {
        try await send(.post, path, body: message.encoded(), as: role)
    }
}

/// A verified authority answer.
struct DeviceResponse: Sendable {
    let status: Int
    let body: [UInt8]
    let claims: AuthorityResponseClaims

    /// Whether the answer carries the rotation hint.
    var hint: Bool { claims.hint == true }
    /// The error code of an error answer.
    var error: DeviceErrorCode? { try? DeviceErrorResponse.decode(body).error }

    /// The body as `Message`.
    func decode<Message: WireMessage>(_ type: Message.Type) throws -> Message { try Message.decode(body) }
}

/// A test device's setup step was refused.
enum TestDeviceError: Error {
    case refused(Int, DeviceErrorCode?)
}
