import FaceSealCrypto
public import FaceSealHTTPClient
public import FaceSealWire
public import Foundation
import Synchronization

/// The real ``AuthorityClient``: the authority's device API (docs/PROTOCOL.md §2) over FaceSealHTTP.
///
/// Every request is signed with the given device key (`FaceSeal-Device-Signature`, ES256 raw r‖s via
/// `DeviceRequestSignature`) and announces `FaceSeal-Protocol: <deviceProtocol>`. Every response to a signed
/// request must carry the authority's signature (`AuthorityResponseSignature`) by the pinned key, for this
/// request's `jti`, status and body: anything else is refused as `invalidResponse` (an unsigned 5xx from a
/// proxy is `transient`: it changes nothing). The rotation hint is read from the verified claims. A `503` with a short
/// `Retry-After` (an authority draining for a restart, which did not act on the request) is sent again, as it was,
/// after that wait (`UnavailableRetry`): the same signature, so the authority's replay cache keeps it at most once.
public final class HTTPAuthorityClient: AuthorityClient {
    private let baseURL: URL
    private let pin: AuthorityKeyPin
    private let http: HTTPClient
    private let clock: any WallClock
    private let deviceProtocol: Int
    private let deviceName: String
    private let timeout: Duration
    private let sleeper: any Sleeper
    private let unavailableRetry: UnavailableRetry
    /// Set by every verified answer that carries the rotation hint, success or error (``takeRotationHint()``).
    private let hintSeen = Mutex(false)

    /// Creates a client for the authority at `baseURL`.
    public init(baseURL: URL, pin: AuthorityKeyPin, deviceProtocol: Int = AuthenticatorEnvironment.currentDeviceProtocol,
                deviceName: String = ProcessInfo.processInfo.hostName, clock: any WallClock = SystemWallClock(),
                http: HTTPClient = HTTPClient(), timeout: Duration = .seconds(30), sleeper: any Sleeper = TaskSleeper(),
                unavailableRetry: UnavailableRetry = UnavailableRetry()) {
        self.sleeper = sleeper
        self.unavailableRetry = unavailableRetry
        self.baseURL = baseURL
        self.pin = pin
        self.http = http
        self.clock = clock
        self.deviceProtocol = deviceProtocol
        self.deviceName = String(deviceName.prefix(64))
        self.timeout = timeout
    }

    // MARK: Links

    /// Verifies a link: an enrolment link with the key it carries (held provisionally until the enrolment
    /// response confirms it; once a key is pinned, an enrolment link of another key is refused as `badSignature` and one
    /// of another issuer as `unknownIdentity`: a link never replaces the pin), every other link with the pin.
    public func verifyLink(_ payload: [UInt8]) async throws(AuthorityFailure) -> VerifiedLink {
        let link: UnverifiedLink
        do {
            link = try LinkSignature.parse(payload)
        } catch {
            throw .linkRefused(.malformed)
        }
        let claims = link.claims
        let key: Curve25519.Signing.PublicKey
        if claims.kind == .enrolment {
            guard let akey = claims.akey?.bytes, let carried = try? Curve25519.Signing.PublicKey(rawRepresentation: akey) else {
                throw .linkRefused(.malformed)
            }
            if !pin.admitsEnrolment(issuer: claims.iss, key: Array(carried.rawRepresentation)),
               !(await followKeyRollover() && pin.admitsEnrolment(issuer: claims.iss, key: Array(carried.rawRepresentation))) {
                // Another key is an impostor's; the pinned key under another issuer name is not an authority this device holds.
                let sameKey = pin.currentKey()?.rawRepresentation == carried.rawRepresentation
                throw .linkRefused(sameKey ? .unknownIdentity : .badSignature)
            }
            key = carried
        } else {
            guard let pinned = pin.key(issuer: claims.iss) else { throw .linkRefused(.unknownIdentity) }
            key = pinned
        }
        let verified: LinkClaims
        do {
            verified = try link.verify(with: key, now: now())
        } catch .expired {
            throw .linkRefused(.expired)
        } catch {
            // Signed by a key the authority rolled over to since this device pinned its key.
            guard claims.kind != .enrolment, await followKeyRollover(), let rolled = pin.key(issuer: claims.iss),
                  let again = try? link.verify(with: rolled, now: now()) else { throw .linkRefused(.badSignature) }
            verified = again
        }
        if verified.kind == .enrolment {
            pin.holdProvisional(invitation: verified.rid, issuer: verified.iss, key: Array(key.rawRepresentation))
        }
        return VerifiedLink(kind: verified.kind, requestId: verified.rid, issuer: verified.iss, expiresAtUnix: verified.exp)
    }

    /// An outbox notice (docs/PROTOCOL.md §8.1), once it verifies with the key pinned for its issuer (following a
    /// rollover, as for links) and has not expired; nil for anything else, which the device then ignores.
    public func verifyNotice(_ entry: [UInt8]) async -> DeviceNotice? {
        guard let notice = try? NoticeSignature.parse(entry), let pinned = pin.key(issuer: notice.claims.iss) else { return nil }
        if let claims = try? notice.verify(with: pinned, now: now()) { return DeviceNotice(claims, payload: entry) }
        guard await followKeyRollover(), let rolled = pin.key(issuer: notice.claims.iss),
              let claims = try? notice.verify(with: rolled, now: now()) else { return nil }
        return DeviceNotice(claims, payload: entry)
    }

    // MARK: Requests

    /// `GET /device/v1/requests/{rid}` with the ambient key. An id unknown to this device's user is refused
    /// like a link of an unknown identity.
    public func requestDetails(requestId: String, signer: any DeviceRequestSigner) async throws(AuthorityFailure) -> AuthorityReply<RequestDetails> {
        let reply: AuthorityReply<FaceSealWire.RequestDetails>
        do {
            reply = try await signed(.get, DevicePaths.request(try Self.segment(requestId)), signer: signer)
        } catch .refused(let code, _) where code == DeviceErrorCode.unknownRequest.rawValue {
            throw .linkRefused(.unknownIdentity)
        }
        let wire = reply.value
        let kind: PkiCeremonyKind?
        switch wire.kind {
        case .login: kind = nil
        case .ceremony:
            guard let pkiKind = wire.pkiKind else { throw .invalidResponse("a ceremony without pki_kind") }
            kind = pkiKind
        case .enrolment: throw .invalidResponse("request details of an enrolment")
        }
        guard wire.rid == requestId else { throw .invalidResponse("details of another request") }
        var endpoint: URL?
        if let text = wire.deliveryEndpoint {
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http" else {
                throw .invalidResponse("a delivery endpoint that is not an http(s) URL")
            }
            endpoint = url
        }
        let details = RequestDetails(
            requestId: wire.rid, identityId: "", clientId: wire.clientId, rpLabel: wire.rpLabel, branding: wire.branding.map(Self.branding),
            bindingMessage: wire.bindingMessage, pkiKind: kind, expiresAtUnix: wire.expiresAt, attemptsMax: wire.attemptsMax,
            attemptsLeft: wire.attemptsLeft, captureRetriesMax: wire.captureRetriesMax, captureRetriesLeft: wire.captureRetriesLeft,
            livenessRequired: wire.livenessRequired, matchThreshold: wire.matchThreshold, minimumDeviceProtocol: wire.minProtocol, keyPolicy: wire.keyPolicy.algorithms.map(\.rawValue),
            pkiContext: wire.pkiContext?.bytes ?? [], pkiData: wire.pkiData?.bytes ?? [], deliveryEndpoint: endpoint,
            clientNotificationToken: wire.clientNotificationToken)
        return AuthorityReply(details, rotationHint: reply.rotationHint)
    }

    /// `GET /device/v1/requests/{rid}/token` with the user-present key.
    public func downloadFaceToken(requestId: String, signer: any DeviceRequestSigner) async throws(AuthorityFailure) -> AuthorityReply<FaceTokenEnvelope> {
        let reply: AuthorityReply<FaceTokenDownload> = try await signed(.get, DevicePaths.requestToken(try Self.segment(requestId)), signer: signer)
        return AuthorityReply(try Self.envelope(reply.value), rotationHint: reply.rotationHint)
    }

    /// `POST …/attempts` with the user-present key that downloaded: one failed face check.
    public func reportAttempt(requestId: String, kind: AttemptKind, signer: any DeviceRequestSigner) async throws(AuthorityFailure) -> AuthorityReply<AttemptBudget> {
        let body = AttemptReport(rid: requestId, kind: kind).encoded()
        let reply: AuthorityReply<AttemptsRemaining> = try await signed(.post, DevicePaths.attempts(try Self.segment(requestId)), body: body,
                                                                        signer: signer)
        let answer = reply.value
        guard answer.rid == requestId else { throw .invalidResponse("the attempts answer is for another request") }
        return AuthorityReply(answer.budget, rotationHint: reply.rotationHint)
    }

    /// `POST …/completion` with the user-present key: the receipt hash and the rotated token.
    public func complete(_ completion: CompletionSubmission, signer: any DeviceRequestSigner) async throws(AuthorityFailure) -> AuthorityReply<Date> {
        let token: FaceSealWire.FaceTokenEnvelope
        do {
            token = try FaceSealWire.FaceTokenEnvelope.decode(completion.rotatedToken)
        } catch {
            throw .invalidResponse("the rotated token does not encode")
        }
        let body = CompletionRequest(rid: completion.requestId, resultSHA256: completion.resultSHA256.map { Base64URL.encode($0) },
                                     baseGeneration: completion.downloadedGeneration, token: token,
                                     serverShare: completion.serverShare, passwordUsed: completion.passwordUsed,
                                     passwordVerifier: completion.passwordVerifier)
        let reply: AuthorityReply<CompletionResponse> = try await signed(
            .post, DevicePaths.completion(try Self.segment(completion.requestId)), body: body.encoded(), signer: signer)
        guard reply.value.rid == completion.requestId,
              reply.value.resultSHA256 == completion.resultSHA256.map({ Base64URL.encode($0) }) else {
            throw .invalidResponse("the completion answer is for another request or receipt")
        }
        return AuthorityReply(clock.now(), rotationHint: reply.rotationHint)
    }

    /// `POST …/abort` with the user-present key.
    public func abort(requestId: String, reason: AbortReason, signer: any DeviceRequestSigner) async throws(AuthorityFailure) -> AuthorityReply<Void> {
        let body = AbortRequest(rid: requestId, reason: reason).encoded()
        let reply = try await signedEmpty(.post, DevicePaths.abort(try Self.segment(requestId)), body: body, signer: signer)
        return reply
    }

    // MARK: Enrolment

    /// `GET /device/v1/enrolments/{inv}` (unsigned: the invitation id is the secret).
    public func enrolmentDetails(requestId: String) async throws(AuthorityFailure) -> EnrolmentDetails {
        let wire: FaceSealWire.EnrolmentDetails = try await unsigned(DevicePaths.enrolment(try Self.segment(requestId)))
        guard wire.invitation == requestId else { throw .invalidResponse("details of another invitation") }
        return EnrolmentDetails(
            requestId: wire.invitation, identityId: "", email: wire.email, subject: wire.subject, tenant: wire.tenant,
            clientId: wire.clientId, appLabel: wire.appLabel,
            branding: wire.branding.map(Self.branding), hasFaceToken: wire.tokenExists, passwordPolicyRequiresPassword: wire.passwordRequired,
            livenessRequired: wire.livenessRequired, attemptsMax: Self.enrolmentAttempts, expiresAtUnix: wire.expiresAt,
            keyPolicy: wire.keyPolicy.algorithms.map(\.rawValue), minimumDeviceProtocol: ProtocolVersion.minimum)
    }

    /// Face-mismatch budget of a further device's enrolment match (the invitation does not state one).
    static let enrolmentAttempts = 3

    /// `GET /device/v1/enrolments/{inv}/token?wait=N` with the pending enrolment's user-present key: the token, once,
    /// after the approval (`approval_pending` until then).
    public func enrolmentFaceToken(requestId: String, signer: any DeviceRequestSigner, wait: Int) async throws(AuthorityFailure) -> FaceTokenEnvelope {
        let seconds = min(max(wait, 0), 30)
        let reply: AuthorityReply<FaceTokenDownload> = try await signed(
            .get, DevicePaths.enrolmentToken(try Self.segment(requestId)), query: "wait=\(seconds)", signer: signer,
            timeoutExtension: .seconds(seconds))
        return try Self.envelope(reply.value)
    }

    /// `POST /device/v1/enrolments/{inv}/password` with the pending enrolment's user-present key: a proof, by the
    /// token's password verifier key, over `{"inv", "jti"}` (docs/PROTOCOL.md §8.1). Only the proof leaves the device.
    public func provePassword(requestId: String, password: String, tokenHeader: [UInt8],
                              signer: any DeviceRequestSigner) async throws(AuthorityFailure) -> PasswordProofOutcome {
        guard let header = try? FaceTokenHeader.decode(tokenHeader), header.passwordRequired, let scrypt = header.scrypt else {
            throw .invalidResponse("the approval's token header has no password parameters")
        }
        let jti = DeviceRequestSignature.newJTI()
        let proof: String
        do {
            let passwordKey = try FaceTokenSeal.passwordKey(password: password, parameters: scrypt)
            let verifier = try PasswordVerifier.key(passwordKey: passwordKey, tokenID: header.tid)
            proof = try JWS.sign(payload: PasswordVerifier.proofClaims(invitation: requestId, jti: jti), signer: verifier)
        } catch {
            throw .invalidResponse("the password proof could not be built: \(error)")
        }
        let reply: AuthorityReply<PasswordProofResult> = try await signed(
            .post, DevicePaths.enrolmentPassword(try Self.segment(requestId)), body: PasswordProof(proof: proof).encoded(),
            signer: signer, jti: jti)
        return PasswordProofOutcome(accepted: reply.value.accepted, attemptsLeft: reply.value.attemptsLeft)
    }

    /// `POST /device/v1/enrolments/{inv}`: signed by the new user-present key, with the ambient key's proof of
    /// possession over `{"inv", "jti"}`. The response must be signed by the key the enrolment link carried and
    /// name it as `authority_key`; then it is pinned.
    public func registerEnrolment(_ submission: EnrolmentSubmission, ambient: any DeviceRequestSigner,
                                  userPresent: any DeviceRequestSigner) async throws(AuthorityFailure) -> AuthorityReply<EnrolmentReceipt> {
        guard let provisional = pin.provisional(invitation: submission.requestId) else {
            throw .linkRefused(.unknownIdentity)
        }
        let jti = DeviceRequestSignature.newJTI()
        let proofClaims = WireJSON.encode(["inv": submission.requestId, "jti": jti])
        let proof = try await Self.compactES256(payload: proofClaims, signer: ambient)
        var token: FaceSealWire.FaceTokenEnvelope?
        if let new = submission.newFaceToken {
            do {
                token = try FaceSealWire.FaceTokenEnvelope.decode(new.token)
            } catch {
                throw .invalidResponse("the new token does not encode")
            }
        }
        let body = EnrolmentRequest(
            v: deviceProtocol,
            ambientKey: DevicePublicKey(kid: submission.ambient.deviceKeyId, x963: submission.ambient.publicKey),
            userPresentKey: DevicePublicKey(kid: submission.userPresent.deviceKeyId, x963: submission.userPresent.publicKey),
            ambientProof: proof, token: token, serverShare: submission.newFaceToken?.serverShare, deviceName: deviceName,
            passwordVerifier: submission.newFaceToken?.passwordVerifier)
        let reply: AuthorityReply<EnrolmentResponse> = try await signed(
            .post, DevicePaths.enrolment(try Self.segment(submission.requestId)), body: body.encoded(), signer: userPresent,
            jti: jti, responseKey: provisional.key)
        let response = reply.value
        guard constantTimeEquals(response.authorityKey.bytes, Array(provisional.key.rawRepresentation)) else {
            throw .invalidResponse("the enrolment response names another authority key than the link")
        }
        do {
            try pin.confirm(invitation: submission.requestId, issuer: response.issuer, key: response.authorityKey.bytes, now: now())
        } catch {
            throw .invalidResponse("the authority key could not be pinned: \(error)")
        }
        // Whole seconds: the key record stores Unix seconds, so a reopened vault lists the same `Key`.
        let enrolledAt = Date(timeIntervalSince1970: clock.now().timeIntervalSince1970.rounded(.down))
        var approval: PendingEnrolmentApproval?
        if let pending = response.approval {
            // The code is the new key's: one of another key means the answer is not for this enrolment.
            guard submission.newFaceToken == nil, pending.code == EnrolmentApproval.code(userPresentKey: submission.userPresent.publicKey) else {
                throw .invalidResponse("the enrolment's approval does not fit this device's keys")
            }
            approval = PendingEnrolmentApproval(method: pending.method, code: pending.code, expiresAtUnix: pending.expiresAt,
                                                tokenHeader: pending.tokenHeader?.bytes)
        } else if submission.newFaceToken == nil {
            throw .invalidResponse("a further device's enrolment without an approval")
        }
        let receipt = EnrolmentReceipt(keyId: submission.userPresent.deviceKeyId, enrolledAt: enrolledAt,
                                       identityId: response.identityId, issuer: response.issuer, approval: approval)
        return AuthorityReply(receipt, rotationHint: reply.rotationHint)
    }

    /// The enrolment is all-or-nothing on the authority, so a registration whose answer was lost is undone by
    /// revoking it with its own user-present key; a key the authority never stored is refused, which is fine.
    public func withdrawEnrolment(requestId: String, userPresent: any DeviceRequestSigner) async throws(AuthorityFailure) {
        do {
            _ = try await revokeKey(keyId: userPresent.deviceKeyId, signer: userPresent)
        } catch .deviceKeyRevoked, .deviceKeyTerminated, .deviceKeyReplaced {
            return
        } catch .refused(let code, _) where code == DeviceErrorCode.invalidSignature.rawValue {
            return
        } catch .approvalPending {
            // A pending enrolment that is never released ends with its approval window.
            return
        }
    }

    // MARK: Keys

    /// One `POST /device/v1/keys/rotation` per key, signed with its current user-present key; the new keys
    /// prove possession over `{"jti", "old"}`. A key the authority already killed comes back as `.revoked`.
    public func rotateKeys(_ rotations: [KeyRotationSubmission]) async throws(AuthorityFailure) -> AuthorityReply<[KeyRotationOutcome]> {
        var outcomes: [KeyRotationOutcome] = []
        var hint = false
        for rotation in rotations {
            let jti = DeviceRequestSignature.newJTI()
            let old = rotation.currentUserPresent.deviceKeyId
            let claims = WireJSON.encode(["jti": jti, "old": old])
            let proof = try await Self.compactES256(payload: claims, signer: rotation.newUserPresentSigner)
            let ambientProof = try await Self.compactES256(payload: claims, signer: rotation.newAmbientSigner)
            let entry = KeyRotationEntry(
                oldKid: old, ambientKey: DevicePublicKey(kid: rotation.newAmbient.deviceKeyId, x963: rotation.newAmbient.publicKey),
                userPresentKey: DevicePublicKey(kid: rotation.newUserPresent.deviceKeyId, x963: rotation.newUserPresent.publicKey),
                proof: proof, ambientProof: ambientProof)
            do throws(AuthorityFailure) {
                let reply: AuthorityReply<KeyRotationResponse> = try await signed(
                    .post, DevicePaths.rotation, body: KeyRotationRequest(entry: entry).encoded(), signer: rotation.currentUserPresent, jti: jti)
                guard reply.value.kid == rotation.newUserPresent.deviceKeyId else {
                    throw AuthorityFailure.invalidResponse("the rotation answer names another key")
                }
                hint = hint || reply.rotationHint
                outcomes.append(.rotated(keyId: rotation.keyId))
            } catch .deviceKeyRevoked {
                outcomes.append(.revoked(keyId: rotation.keyId, terminated: false, replaced: false))
            } catch .deviceKeyTerminated {
                outcomes.append(.revoked(keyId: rotation.keyId, terminated: true, replaced: false))
            } catch .deviceKeyReplaced {
                outcomes.append(.revoked(keyId: rotation.keyId, terminated: false, replaced: true))
            }
        }
        return AuthorityReply(outcomes, rotationHint: hint)
    }

    /// Whether a device key is registered, learned by using it: a signed branding read of the key itself (a read
    /// with no side effect — unlike the outbox, which hands links out) succeeds for a registered key; an unknown key
    /// fails the signature check.
    public func deviceKeyStatus(keyId: String, signer: any DeviceRequestSigner) async throws(AuthorityFailure) -> AuthorityReply<DeviceKeyStatus> {
        do {
            let reply: AuthorityReply<BrandingSyncResponse> = try await signed(.get, DevicePaths.branding, query: "kids=\(signer.deviceKeyId)",
                                                                               signer: signer)
            return AuthorityReply(reply.rotationHint ? .previous : .active, rotationHint: reply.rotationHint)
        } catch .deviceKeyRevoked {
            return AuthorityReply(.revoked(terminated: false, replaced: false))
        } catch .deviceKeyTerminated {
            return AuthorityReply(.revoked(terminated: true, replaced: false))
        } catch .deviceKeyReplaced {
            return AuthorityReply(.revoked(terminated: false, replaced: true))
        } catch .refused(let code, _) where code == DeviceErrorCode.invalidSignature.rawValue {
            return AuthorityReply(.unknown)
        }
    }

    /// `POST /device/v1/keys/revocation` with the enrolment's user-present key.
    public func revokeKey(keyId: String, signer: any DeviceRequestSigner) async throws(AuthorityFailure) -> AuthorityReply<Void> {
        let body = KeyRevocationRequest(kid: signer.deviceKeyId).encoded()
        return try await signedEmpty(.post, DevicePaths.revocation, body: body, signer: signer)
    }

    /// `GET /device/v1/branding?kids=…` signed by the first key's ambient key; live entries and dead keys are
    /// mapped back from user-present key ids to the SDK's key ids. The authority answers only for keys of the signing
    /// key's user, so `Authenticator.syncBranding()` asks about each key with its own signer.
    public func syncBranding(_ keys: [SignedKey]) async throws(AuthorityFailure) -> AuthorityReply<BrandingSyncResult> {
        guard let first = keys.first else { return AuthorityReply(BrandingSyncResult(branding: [:], revoked: [:])) }
        var byKid: [String: String] = [:]
        for signed in keys { byKid[signed.userPresentKeyId ?? signed.key.id] = signed.key.id }
        let kids = byKid.keys.sorted().joined(separator: ",")
        let reply: AuthorityReply<BrandingSyncResponse> = try await signed(.get, DevicePaths.branding, query: "kids=\(kids)", signer: first.signer)
        var branding: [String: Branding] = [:]
        for entry in reply.value.entries {
            if let keyId = byKid[entry.kid] { branding[keyId] = Self.branding(entry.branding) }
        }
        var revoked: [String: DeviceKeyStatus] = [:]
        for dead in reply.value.dead {
            if let keyId = byKid[dead.kid] { revoked[keyId] = .revoked(terminated: dead.terminated, replaced: dead.replaced) }
        }
        return AuthorityReply(BrandingSyncResult(branding: branding, revoked: revoked), rotationHint: reply.rotationHint)
    }

    /// `GET /device/v1/outbox?wait=<seconds>` with an ambient key: links waiting for this device (the default
    /// way links reach a device on loopback, SPEC §4.6). Long-polls up to `wait` seconds (0…30).
    public func pendingLinks(signer: any DeviceRequestSigner, wait: Int = 0) async throws(AuthorityFailure) -> AuthorityReply<[String]> {
        let seconds = min(max(wait, 0), 30)
        let reply: AuthorityReply<OutboxResponse> = try await signed(.get, DevicePaths.outbox, query: "wait=\(seconds)", signer: signer)
        return AuthorityReply(reply.value.links, rotationHint: reply.rotationHint)
    }

    /// True once after any verified answer (success or error) carried the rotation hint.
    public func takeRotationHint() -> Bool {
        hintSeen.withLock { seen in
            defer { seen = false }
            return seen
        }
    }

    // MARK: Transport

    private func now() -> Int64 { Int64(clock.now().timeIntervalSince1970) }

    private func url(_ path: String, query: String?) throws(AuthorityFailure) -> URL {
        var text = baseURL.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        text += path
        if let query { text += "?" + query }
        guard let url = URL(string: text) else { throw .invalidResponse("bad URL \(text)") }
        return url
    }

    /// A request id or invitation as one path segment: only the characters ids are made of.
    static func segment(_ id: String) throws(AuthorityFailure) -> String {
        guard !id.isEmpty, id.utf8.count <= 256, id.utf8.allSatisfy({ byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x2D || byte == 0x5F
        }) else { throw .linkRefused(.malformed) }
        return id
    }

    private func signed<T: WireMessage>(_ method: HTTPMethod, _ path: String, query: String? = nil, body: [UInt8] = [],
                                        signer: any DeviceRequestSigner, jti: String = DeviceRequestSignature.newJTI(),
                                        responseKey: Curve25519.Signing.PublicKey? = nil,
                                        timeoutExtension: Duration = .zero) async throws(AuthorityFailure) -> AuthorityReply<T> {
        let (response, hint) = try await exchange(method, path, query: query, body: body, signer: signer, jti: jti, responseKey: responseKey,
                                                  timeoutExtension: timeoutExtension)
        do {
            return AuthorityReply(try T.decode(response.body), rotationHint: hint)
        } catch {
            throw .invalidResponse("\(T.self): \(error)")
        }
    }

    private func signedEmpty(_ method: HTTPMethod, _ path: String, body: [UInt8], signer: any DeviceRequestSigner) async throws(AuthorityFailure) -> AuthorityReply<Void> {
        let (_, hint) = try await exchange(method, path, query: nil, body: body, signer: signer, jti: DeviceRequestSignature.newJTI(), responseKey: nil)
        return AuthorityReply((), rotationHint: hint)
    }

    /// Signs, sends, verifies the response signature and maps an error body. Answers a verified 2xx.
    private func exchange(_ method: HTTPMethod, _ path: String, query: String?, body: [UInt8], signer: any DeviceRequestSigner,
                          jti: String, responseKey: Curve25519.Signing.PublicKey?,
                          timeoutExtension: Duration = .zero) async throws(AuthorityFailure) -> (HTTPClientResponse, Bool) {
        // The signed path is the request target: path and query (a query is part of what the device asks).
        let target = query.map { path + "?" + $0 } ?? path
        let header = try await Self.requestSignature(method: method.rawValue, path: target, body: body, signer: signer, now: now(), jti: jti)
        var headers = HTTPHeaders()
        headers[DeviceSigning.requestHeader] = header
        headers[DeviceSigning.protocolHeader] = String(deviceProtocol)
        if !body.isEmpty { headers["Content-Type"] = "application/json" }
        let address = try url(path, query: query)
        let response = try await send(HTTPClientRequest(method: method, url: address, headers: headers, body: body,
                                                        timeout: timeout + timeoutExtension, maxResponseBodySize: 1 << 20))
        let status = response.status.code
        guard let key = responseKey ?? pin.currentKey() else { throw .invalidResponse("no authority key pinned") }
        let signature = response.headers[DeviceSigning.responseHeader]
        let claims: AuthorityResponseClaims
        do {
            claims = try AuthorityResponseSignature.verify(signature, body: response.body, requestJTI: jti, status: status, key: key)
        } catch {
            // An unsigned server error (a proxy, a crash) tells the device nothing it would act on.
            if status >= 500 && signature == nil { throw .transient("HTTP \(status)") }
            // The authority may have rolled its key over: follow its statements from the pinned key, then check again.
            guard responseKey == nil, signature != nil, await followKeyRollover(), let rolled = pin.currentKey(),
                  let again = try? AuthorityResponseSignature.verify(signature, body: response.body, requestJTI: jti, status: status, key: rolled)
            else { throw .invalidResponse("the response is not signed by the pinned authority key (HTTP \(status))") }
            claims = again
        }
        let hint = claims.hint == true
        if hint { hintSeen.withLock { $0 = true } }
        if (200..<300).contains(status) { return (response, hint) }
        let error: DeviceErrorResponse
        do {
            error = try DeviceErrorResponse.decode(response.body)
        } catch {
            throw status >= 500 ? .transient("HTTP \(status)") : .invalidResponse("HTTP \(status) without an error body")
        }
        throw Self.failure(error, signer: signer)
    }

    static func failure(_ error: DeviceErrorResponse, signer: any DeviceRequestSigner) -> AuthorityFailure {
        let message = error.errorDescription ?? error.error.rawValue
        switch error.error {
        case .deviceKeyRevoked: return .deviceKeyRevoked(deviceKeyId: signer.deviceKeyId)
        case .deviceKeyTerminated: return .deviceKeyTerminated(deviceKeyId: signer.deviceKeyId)
        case .deviceKeyReplaced: return .deviceKeyReplaced(deviceKeyId: signer.deviceKeyId)
        case .requestExpired: return .requestExpired
        case .requestNotPending: return .requestNotPending
        case .staleToken: return .staleToken
        case .upgradeRequired: return .upgradeRequired
        case .serverError, .rateLimited: return .transient(message)
        case .approvalPending: return .approvalPending
        case .invalidSignature, .clockSkew, .replayedRequest, .userPresenceRequired, .unknownRequest, .invalidRequest, .invalidInvitation,
             .invitationUsed:
            return .refused(code: error.error.rawValue, message: message)
        }
    }

    /// Fetches the authority's rollover statements (`GET /device/v1/authority-keys`, unsigned: each statement is signed by
    /// the key it hands over from) and lets the pin follow them. Answers whether the pin moved; any failure leaves it.
    private func followKeyRollover() async -> Bool {
        guard pin.currentKey() != nil, let chain: AuthorityKeyChain = try? await unsigned(DevicePaths.authorityKeys) else { return false }
        return (try? pin.rollOver(chain.rollovers, now: now())) ?? false
    }

    /// An unsigned GET (enrolment reads): no response signature exists yet, the invitation id is the secret.
    private func unsigned<T: WireMessage>(_ path: String) async throws(AuthorityFailure) -> T {
        var headers = HTTPHeaders()
        headers[DeviceSigning.protocolHeader] = String(deviceProtocol)
        let target = try url(path, query: nil)
        let response = try await send(HTTPClientRequest(method: .get, url: target, headers: headers, timeout: timeout,
                                                        maxResponseBodySize: 1 << 20))
        let status = response.status.code
        guard (200..<300).contains(status) else {
            if let error = try? DeviceErrorResponse.decode(response.body) {
                switch error.error {
                case .invalidInvitation: throw .linkRefused(.expired)
                case .invitationUsed: throw .linkRefused(.alreadyAnswered)
                case .upgradeRequired: throw .upgradeRequired
                case .serverError: throw .transient(error.errorDescription ?? "server error")
                default: throw .refused(code: error.error.rawValue, message: error.errorDescription ?? "")
                }
            }
            throw status >= 500 ? .transient("HTTP \(status)") : .invalidResponse("HTTP \(status)")
        }
        do {
            return try T.decode(response.body)
        } catch {
            throw .invalidResponse("\(T.self): \(error)")
        }
    }

    /// Sends `request` (again after a draining authority's `Retry-After`); a transport failure is `transient`.
    private func send(_ request: HTTPClientRequest) async throws(AuthorityFailure) -> HTTPClientResponse {
        let sleeper = self.sleeper
        do {
            return try await unavailableRetry.send(request, with: http) { try await sleeper.sleep(seconds: $0) }
        } catch let error as HTTPClientError {
            throw .transient(error.description)
        } catch {
            throw .transient("cancelled while waiting to retry")
        }
    }

    // MARK: Signing with an asynchronous device key

    /// `DeviceRequestSignature.make` with a vault signer: the JWS is built once with a placeholder to fix its
    /// signing input, which the (possibly prompting) device key then signs.
    static func requestSignature(method: String, path: String, body: [UInt8], signer: any DeviceRequestSigner, now: Int64,
                                 jti: String) async throws(AuthorityFailure) -> String {
        let recorder = SigningInputRecorder()
        let draft: String
        do {
            draft = try DeviceRequestSignature.make(method: method, path: path, body: body, kid: signer.deviceKeyId, signer: recorder,
                                                    now: now, jti: jti).header
        } catch {
            throw .invalidResponse("the request signature could not be built: \(error)")
        }
        return try await resign(draft, signer: signer)
    }

    /// A compact ES256 JWS over `payload` by a device key (proofs of possession).
    static func compactES256(payload: [UInt8], signer: any DeviceRequestSigner) async throws(AuthorityFailure) -> String {
        let draft: String
        do {
            draft = try JWS.sign(payload: payload, signer: SigningInputRecorder(), keyID: signer.deviceKeyId)
        } catch {
            throw .invalidResponse("a proof could not be built: \(error)")
        }
        return try await resign(draft, signer: signer)
    }

    private static func resign(_ draft: String, signer: any DeviceRequestSigner) async throws(AuthorityFailure) -> String {
        guard let dot = draft.lastIndex(of: ".") else { throw .invalidResponse("a JWS without segments") }
        let signingInput = String(draft[..<dot])
        let signature: [UInt8]
        do {
            signature = try await signer.sign(Array(signingInput.utf8))
        } catch {
            throw .signing(error)
        }
        guard signature.count == 64 else { throw .signing(SignKeypairError(code: .notAvailable, message: "not an ES256 raw signature")) }
        return signingInput + "." + Base64URL.encode(signature)
    }

    // MARK: Mapping

    static func branding(_ info: BrandingInfo) -> Branding {
        Branding(displayName: info.name, logoURL: info.logoURL.flatMap(URL.init(string:)), primaryColor: info.primaryColor,
                 accentColor: info.secondaryColor)
    }

    static func envelope(_ download: FaceTokenDownload) throws(AuthorityFailure) -> FaceTokenEnvelope {
        let header: FaceTokenHeader
        do {
            header = try download.token.parsedHeader()
        } catch {
            throw .invalidResponse("the token header does not parse")
        }
        guard download.serverShare.secret.count == FaceTokenSeal.serverShareByteCount else { throw .invalidResponse("server share length") }
        return FaceTokenEnvelope(token: download.token.encoded(), serverShare: download.serverShare.secret,
                                 passwordRequired: header.passwordRequired, livenessRequired: header.livenessRequired, generation: header.gen)
    }
}

/// A placeholder ES256 signer: its output is replaced by the device key's signature over the same input.
private struct SigningInputRecorder: JWSSigner {
    var algorithm: JWSAlgorithm { .es256 }
    func sign(_ signingInput: [UInt8]) throws -> [UInt8] { [UInt8](repeating: 0, count: 64) }
}
