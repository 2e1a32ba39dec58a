import FaceSealCrypto
import FaceSealHTTP
import FaceSealWire
import Foundation
import Synchronization
import Testing
@testable import FaceSealSDK

/// The client against a scripted loopback authority: what it signs, and which responses it refuses.
@Suite struct HTTPAuthorityClientTests {
    /// How the scripted authority answers the next request.
    enum Mode: Sendable { case signed, unsigned, wrongKey, wrongJTI, hint, error(DeviceErrorCode), draining(Int) }

    final class ScriptedAuthority: Sendable {
        final class State: Sendable {
            let mode = Mutex(Mode.signed)
            let seen = Mutex<[HTTPRequest]>([])
        }

        let key = Curve25519.Signing.PrivateKey()
        let state = State()
        let server: HTTPServer

        init() throws {
            let key = self.key
            let state = self.state
            var router = Router()
            router.get("/device/v1/requests/:rid") { request in
                state.seen.withLock { $0.append(request) }
                let details = FaceSealWire.RequestDetails(
                    rid: request.pathParameter("rid"), kind: .ceremony, pkiKind: .sign, bindingMessage: "Sign invoice",
                    clientId: "app_billing", rpLabel: "Billing", branding: BrandingInfo(name: "Billing", primaryColor: "#0A84FF"),
                    expiresAt: 1_800_000_300, keyPolicy: .standard, attemptsMax: 3, attemptsLeft: 2, captureRetriesMax: 10,
                    captureRetriesLeft: 9, livenessRequired: true, matchThreshold: 0.5, minProtocol: 7,
                    deliveryEndpoint: "https://rp.test/delivery", clientNotificationToken: "bearer", pkiContext: [1], pkiData: [2],
                    nonce: "n")
                let jti = (try? DeviceRequestSignature.parse(request.headers[DeviceSigning.requestHeader]).claims.jti) ?? ""
                var body = details.encoded()
                var status = 200
                var signingKey = key
                var signedJTI = jti
                var hint = false
                let mode = state.mode.withLock { mode -> Mode in
                    guard case .draining(let left) = mode else { return mode }
                    defer { mode = left > 1 ? .draining(left - 1) : .signed }
                    return mode
                }
                switch mode {
                case .draining: return HTTPError.unavailable.httpResponse
                case .signed: break
                case .unsigned: return HTTPResponse(jsonBytes: body)
                case .wrongKey: signingKey = Curve25519.Signing.PrivateKey()
                case .wrongJTI: signedJTI = "other"
                case .hint: hint = true
                case .error(let code):
                    body = DeviceErrorResponse(code).encoded()
                    status = code.httpStatus
                }
                let signature = try AuthorityResponseSignature.make(body: body, requestJTI: signedJTI, status: status, hint: hint,
                                                                    key: signingKey, now: 1_800_000_000)
                return HTTPResponse(jsonBytes: body, status: HTTPStatus(code: status), headers: [DeviceSigning.responseHeader: signature])
            }
            server = HTTPServer(logger: .disabled, router: router)
            try server.start()
        }
    }

    struct Signer: DeviceRequestSigner {
        let key = P256.Signing.PrivateKey()
        var deviceKeyId: String { "dk_am_1" }
        var protection: KeyProtection { .ambient }
        func sign(_ message: [UInt8]) async throws(SignKeypairError) -> [UInt8] {
            do { return Array(try key.signature(for: message).rawRepresentation) } catch {
                throw SignKeypairError(code: .notAvailable, message: "\(error)")
            }
        }
    }

    func client(_ authority: ScriptedAuthority, pinned: Bool = true) throws -> HTTPAuthorityClient {
        let pin = try AuthorityKeyPin(file: nil)
        if pinned { try pin.confirm(invitation: "inv", issuer: "https://authority.test", key: Array(authority.key.publicKey.rawRepresentation)) }
        return HTTPAuthorityClient(baseURL: authority.server.baseURL!, pin: pin, deviceProtocol: 7, clock: FixedClock())
    }

    @Test func signedRequestAndVerifiedResponse() async throws {
        let authority = try ScriptedAuthority()
        defer { Task { await authority.server.stop() } }
        let signer = Signer()
        let reply = try await client(authority).requestDetails(requestId: "rid_1", signer: signer)
        #expect(reply.value.pkiKind == .sign && reply.value.bindingMessage == "Sign invoice" && reply.value.clientId == "app_billing")
        #expect(reply.value.keyPolicy == ["ML-DSA-65", "ML-KEM-768"] && reply.value.pkiContext == [1] && reply.value.pkiData == [2])
        #expect(reply.value.branding?.primaryColor == "#0A84FF")
        #expect(!reply.rotationHint)
        let request = try #require(authority.state.seen.withLock { $0.last })
        #expect(request.headers[DeviceSigning.protocolHeader] == "7")
        let parsed = try DeviceRequestSignature.parse(request.headers[DeviceSigning.requestHeader])
        _ = try parsed.verify(with: signer.key.publicKey, method: "GET", path: "/device/v1/requests/rid_1", body: [], now: 1_800_000_000)
    }

    @Test func theRotationHintIsRead() async throws {
        let authority = try ScriptedAuthority()
        defer { Task { await authority.server.stop() } }
        authority.state.mode.withLock { $0 = .hint }
        #expect(try await client(authority).requestDetails(requestId: "rid_1", signer: Signer()).rotationHint)
    }

    @Test(arguments: [Mode.unsigned, .wrongKey, .wrongJTI])
    func unverifiableResponsesAreRefused(_ mode: Mode) async throws {
        let authority = try ScriptedAuthority()
        defer { Task { await authority.server.stop() } }
        authority.state.mode.withLock { $0 = mode }
        do {
            _ = try await client(authority).requestDetails(requestId: "rid_1", signer: Signer())
            Issue.record("accepted an unverifiable response")
        } catch let error as AuthorityFailure {
            guard case .invalidResponse = error else { Issue.record("\(error)"); return }
        }
    }

    /// Records each wait instead of sleeping.
    final class RecordingSleeper: Sleeper {
        let waits = Mutex<[Int]>([])
        func sleep(seconds: Int) async throws { waits.withLock { $0.append(seconds) } }
    }

    /// A draining authority's 503 with Retry-After: the same signed request is sent again after the wait (on the injected
    /// sleeper), at most `UnavailableRetry.maxRetries` times; then the failure is transient.
    @Test func a503WithRetryAfterIsSentAgainAfterTheWait() async throws {
        let authority = try ScriptedAuthority()
        defer { Task { await authority.server.stop() } }
        let pin = try AuthorityKeyPin(file: nil)
        try pin.confirm(invitation: "inv", issuer: "https://authority.test", key: Array(authority.key.publicKey.rawRepresentation))
        let sleeper = RecordingSleeper()
        let client = HTTPAuthorityClient(baseURL: authority.server.baseURL!, pin: pin, deviceProtocol: 7, clock: FixedClock(), sleeper: sleeper)
        authority.state.mode.withLock { $0 = .draining(2) }
        #expect(try await client.requestDetails(requestId: "rid_1", signer: Signer()).value.bindingMessage == "Sign invoice")
        #expect(sleeper.waits.withLock { $0 } == [HTTPError.unavailableRetryAfter, HTTPError.unavailableRetryAfter])
        let signatures = authority.state.seen.withLock { $0.map { $0.headers[DeviceSigning.requestHeader] } }
        #expect(signatures.count == 3 && Set(signatures).count == 1, "the same request, sent again as it was")

        let retries = UnavailableRetry().maxRetries
        authority.state.mode.withLock { $0 = .draining(retries + 1) }
        await #expect(throws: AuthorityFailure.transient("HTTP 503")) { _ = try await client.requestDetails(requestId: "rid_1", signer: Signer()) }
        #expect(sleeper.waits.withLock { $0.count } == 2 + retries)
    }

    @Test func errorCodesMapToFailures() async throws {
        let authority = try ScriptedAuthority()
        defer { Task { await authority.server.stop() } }
        let expectations: [(DeviceErrorCode, AuthorityFailure)] = [
            (.deviceKeyRevoked, .deviceKeyRevoked(deviceKeyId: "dk_am_1")),
            (.deviceKeyTerminated, .deviceKeyTerminated(deviceKeyId: "dk_am_1")),
            (.deviceKeyReplaced, .deviceKeyReplaced(deviceKeyId: "dk_am_1")),
            (.requestExpired, .requestExpired), (.requestNotPending, .requestNotPending), (.staleToken, .staleToken),
            (.upgradeRequired, .upgradeRequired), (.unknownRequest, .linkRefused(.unknownIdentity)),
        ]
        let client = try client(authority)
        for (code, failure) in expectations {
            authority.state.mode.withLock { $0 = .error(code) }
            await #expect(throws: failure) { _ = try await client.requestDetails(requestId: "rid_1", signer: Signer()) }
        }
    }

    @Test func linksVerifyAgainstThePinAndEnrolmentLinksCarryTheirKey() async throws {
        let authority = try ScriptedAuthority()
        defer { Task { await authority.server.stop() } }
        let pinned = try client(authority)
        let exp: Int64 = 1_800_000_300
        let login = try LinkSignature.make(LinkClaims(iss: "https://authority.test", rid: "rid_1", kind: .login, exp: exp, nonce: "n"), key: authority.key)
        #expect(try await pinned.verifyLink(Array(login.utf8)).kind == .login)
        let universal = "https://authority.test/l/" + login
        #expect(try await pinned.verifyLink(Array(universal.utf8)).requestId == "rid_1")
        let forged = try LinkSignature.make(LinkClaims(iss: "https://authority.test", rid: "rid_1", kind: .login, exp: exp, nonce: "n"),
                                            key: Curve25519.Signing.PrivateKey())
        await #expect(throws: AuthorityFailure.linkRefused(.badSignature)) { _ = try await pinned.verifyLink(Array(forged.utf8)) }
        let expired = try LinkSignature.make(LinkClaims(iss: "https://authority.test", rid: "rid_1", kind: .login, exp: 1_700_000_000, nonce: "n"),
                                             key: authority.key)
        await #expect(throws: AuthorityFailure.linkRefused(.expired)) { _ = try await pinned.verifyLink(Array(expired.utf8)) }
        await #expect(throws: AuthorityFailure.linkRefused(.malformed)) { _ = try await pinned.verifyLink(Array("not a link".utf8)) }
        let otherIssuer = try LinkSignature.make(LinkClaims(iss: "https://other.test", rid: "rid_1", kind: .login, exp: exp, nonce: "n"), key: authority.key)
        await #expect(throws: AuthorityFailure.linkRefused(.unknownIdentity)) { _ = try await pinned.verifyLink(Array(otherIssuer.utf8)) }

        let fresh = try client(authority, pinned: false)
        await #expect(throws: AuthorityFailure.linkRefused(.unknownIdentity)) { _ = try await fresh.verifyLink(Array(login.utf8)) }
        let enrolment = try LinkSignature.make(LinkClaims(iss: "https://authority.test", rid: "inv_1", kind: .enrolment, exp: exp, nonce: "n",
                                                          akey: Array(authority.key.publicKey.rawRepresentation)), key: authority.key)
        #expect(try await fresh.verifyLink(Array(enrolment.utf8)).kind == .enrolment)
        // An enrolment link carrying another key than the pinned one is refused.
        let impostor = Curve25519.Signing.PrivateKey()
        let hijack = try LinkSignature.make(LinkClaims(iss: "https://authority.test", rid: "inv_2", kind: .enrolment, exp: exp, nonce: "n",
                                                       akey: Array(impostor.publicKey.rawRepresentation)), key: impostor)
        await #expect(throws: AuthorityFailure.linkRefused(.badSignature)) { _ = try await pinned.verifyLink(Array(hijack.utf8)) }
    }

    @Test func noEnrolmentLinkReplacesThePinWhateverIssuerItNames() async throws {
        let authority = try ScriptedAuthority()
        defer { Task { await authority.server.stop() } }
        let pin = try AuthorityKeyPin(file: nil)
        try pin.confirm(invitation: "inv", issuer: "https://authority.test", key: Array(authority.key.publicKey.rawRepresentation))
        let client = HTTPAuthorityClient(baseURL: authority.server.baseURL!, pin: pin, deviceProtocol: 7, clock: FixedClock())
        func enrolment(_ issuer: String, _ key: Curve25519.Signing.PrivateKey, rid: String) throws -> [UInt8] {
            Array(try LinkSignature.make(LinkClaims(iss: issuer, rid: rid, kind: .enrolment, exp: 1_800_000_300, nonce: "n",
                                                    akey: Array(key.publicKey.rawRepresentation)), key: key).utf8)
        }
        let impostor = Curve25519.Signing.PrivateKey()
        // Another key under another issuer name (the case a same-issuer check missed), and under the pinned name.
        await #expect(throws: AuthorityFailure.linkRefused(.badSignature)) {
            _ = try await client.verifyLink(try enrolment("https://elsewhere.test", impostor, rid: "inv_a"))
        }
        await #expect(throws: AuthorityFailure.linkRefused(.badSignature)) {
            _ = try await client.verifyLink(try enrolment("https://authority.test", impostor, rid: "inv_b"))
        }
        // The pinned key under another issuer name is not this device's authority either.
        await #expect(throws: AuthorityFailure.linkRefused(.unknownIdentity)) {
            _ = try await client.verifyLink(try enrolment("https://elsewhere.test", authority.key, rid: "inv_c"))
        }
        #expect(pin.provisional(invitation: "inv_a") == nil && pin.provisional(invitation: "inv_c") == nil)
        // Nor can a confirmation overwrite the pin (two enrolments in flight from two authorities).
        #expect(throws: VaultError.self) {
            try pin.confirm(invitation: "inv_a", issuer: "https://elsewhere.test", key: Array(impostor.publicKey.rawRepresentation))
        }
        #expect(pin.currentKey()?.rawRepresentation == authority.key.publicKey.rawRepresentation)

        // Only the host app's reset lets a new authority be pinned.
        try pin.reset()
        #expect(pin.issuer == nil)
        #expect(try await client.verifyLink(try enrolment("https://elsewhere.test", impostor, rid: "inv_d")).kind == .enrolment)
        #expect(pin.provisional(invitation: "inv_d")?.issuer == "https://elsewhere.test")
    }
}
