import Foundation
import FaceSealCrypto
import FaceSealHTTP
import FaceSealTestSupport
import FaceSealWire
import Synchronization
import Testing
@testable import FaceSealAuthority
@testable import FaceSealRelyingParty

/// The relying party against the real authority (its CIBA endpoints on an ephemeral loopback port over a
/// fresh SQLite store). The device's part is played by the test: it delivers to the relying party with a
/// real ML-DSA key and completes at the store level (the device API has its own tests).
extension RelyingPartyError {
    var refusalDescription: String? {
        if case .refused(_, let description) = self { return description }
        return nil
    }
}

@Suite struct AuthorityIntegrationTests {
    static let secret = "rp-integration-secret-0123456789"
    static let email = "ada@example.com"

    /// Advances the authority's clock instead of sleeping.
    struct StoreClockSleeper: RelyingPartySleeper {
        let clock: ManualStoreClock
        func sleep(seconds: Int) async throws { clock.advance(by: TimeInterval(seconds)) }
    }

    struct World {
        let rp: RelyingParty
        let authority: Authority
        let store: SQLAuthorityStore
        let clock: ManualStoreClock
        let device: TestDevice
        let pins: InMemoryKeyPinStore
        var generation: Int64 = 1

        /// The device's part after the face match: deliver (to the relying party), then complete (at the authority).
        mutating func approve(_ handle: PendingRequestHandle, body: DeliveryBody?) async throws -> EndpointResponse? {
            var receipt: [UInt8]?
            var response: EndpointResponse?
            if let body {
                let delivered = try device.deliver(body)
                let bearer = try await store.request(authReqID: handle.authReqId).clientNotificationToken ?? ""
                response = await rp.handleDelivery(method: "POST", headers: TestDevice.headers(bearer: bearer, signature: delivered.signature),
                                                   body: delivered.body)
                receipt = SHA256.hash(data: delivered.body).bytes
            }
            _ = try await store.downloadFaceToken(authReqID: handle.authReqId, keyID: "k-present")
            _ = try await complete(handle, expected: generation, receipt: receipt)
            generation += 1
            return response
        }

        func complete(_ handle: PendingRequestHandle, expected: Int64, receipt: [UInt8]?) async throws -> CompletionOutcome {
            try await store.complete(CompletionCommit(authReqID: handle.authReqId, keyID: "k-present", expectedGeneration: expected,
                                                      rotatedToken: Self.faceToken(generation: expected + 1), receiptSHA256: receipt))
        }

        static func faceToken(generation: Int64) -> FaceTokenRecord {
            FaceTokenRecord(subject: "user-1", tokenID: "token-user-1", generation: generation, headerJSON: Array(#"{"v":1}"#.utf8),
                            sealedBody: Array(repeating: UInt8(truncatingIfNeeded: generation), count: 48),
                            encryptedServerShare: Array(repeating: 9, count: 60))
        }

        func body(_ handle: PendingRequestHandle, publicKeys: [KeyAlgorithm: [UInt8]]? = nil, signature: [UInt8]? = nil,
                  sharedSecret: [UInt8]? = nil) -> DeliveryBody {
            DeliveryBody(authReqId: handle.authReqId, kind: handle.kind.pkiKind ?? .sign, iat: Int64(clock.now().timeIntervalSince1970),
                         keyId: device.keyID, publicKeys: publicKeys, signature: signature, sharedSecret: sharedSecret)
        }
    }

    func withWorld(algorithm: String = "EdDSA", authentication: ClientAuthentication? = nil, mode: TokenDeliveryMode = .poll,
                   _ body: (inout World) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rp-integration-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let clock = ManualStoreClock(Date(timeIntervalSince1970: 1_800_000_000))
        // In ping mode the application's endpoints are served for real, so the authority can call back.
        let rpServer = try LoopbackServer()
        let pingURL = rpServer.url("/faceseal/ping")
        let store = try await SQLAuthorityStore.open(.sqlite(path: directory.appendingPathComponent("authority.sqlite").path), clock: clock)
        _ = try await store.createTenant(TenantRecord(id: "acme", name: "Acme"))
        _ = try await store.createApplication(ApplicationRecord(
            clientID: "rp", tenantID: "acme", label: "Sample app", credential: .secretHash(ClientSecret.hash(Self.secret)),
            deliveryMode: mode == .ping ? .ping : .poll, notificationEndpoint: mode == .ping ? pingURL.absoluteString : nil,
            deliveryEndpoint: "https://rp.example/faceseal/delivery", idTokenSignedResponseAlg: algorithm))
        _ = try await store.createUser(UserRecord(subject: "user-1", tenantID: "acme", email: Self.email))
        _ = try await store.createInvitation(InvitationRecord(id: "inv-1", tenantID: "acme", subject: "user-1", clientID: "rp",
                                                              secretHash: Array(repeating: 7, count: 32), expiresAt: clock.now().addingTimeInterval(3600)))
        _ = try await store.enrol(EnrolmentInsert(
            invitationID: "inv-1", enrolmentID: "enr-1", device: DeviceRecord(id: "device-1", label: "Phone"),
            ambientKey: NewDeviceKey(keyID: "k-ambient", publicKeyJWK: #"{"kty":"EC","crv":"P-256","x":"a","y":"b"}"#),
            userPresentKey: NewDeviceKey(keyID: "k-present", publicKeyJWK: #"{"kty":"EC","crv":"P-256","x":"c","y":"d"}"#),
            initialFaceToken: World.faceToken(generation: 1)))

        let server = try LoopbackAuthority.start(store: store, clock: { clock.now() })
        let issuer = server.baseURL
        let pins = InMemoryKeyPinStore()
        let configuration = RelyingPartyConfiguration(
            issuer: issuer, clientID: "rp", authentication: authentication ?? .clientSecretBasic(secret: SecretBytes(Array(Self.secret.utf8))),
            deliveryEndpoint: URL(string: "https://rp.example/faceseal/delivery")!, notificationEndpoint: mode == .ping ? pingURL : nil,
            tokenDeliveryMode: mode, now: { clock.now() },
            sleeper: mode == .ping ? ForeverSleeper() : StoreClockSleeper(clock: clock))
        let rp = RelyingParty(configuration: configuration, keyPins: pins)
        var rpRouter = Router()
        rp.mount(on: &rpRouter)
        rpServer.serve(rpRouter)
        var world = World(rp: rp, authority: server.authority, store: store, clock: clock, device: try TestDevice(), pins: pins)
        do {
            try await body(&world)
        } catch {
            await server.stop()
            await rpServer.stop()
            await store.close()
            throw error
        }
        await server.stop()
        await rpServer.stop()
        await store.close()
    }

    func expectVerified(_ outcome: RequestOutcome, sourceLocation: SourceLocation = #_sourceLocation) -> VerifiedResult? {
        guard case .verified(let result) = outcome else {
            Issue.record("expected verified, got \(outcome.name)", sourceLocation: sourceLocation)
            return nil
        }
        return result
    }

    @Test(arguments: ["EdDSA", "ES256", "RS256", "ML-DSA-65"])
    func publicKeysSignDecapsulateAndSignInVerifyEndToEnd(_ algorithm: String) async throws {
        try await withWorld(algorithm: algorithm) { world in
            let rp = world.rp
            // public_keys: the delivered keys are pinned; the ID token's receipt matches the accepted body.
            let keysHandle = try await rp.start(.publicKeys, user: Self.email, context: "mail", bindingMessage: "Link your mail key")
            let keysDelivery = try await world.approve(keysHandle, body: world.body(keysHandle, publicKeys: world.device.publicKeys))
            #expect(keysDelivery?.status == 204)
            let keys = expectVerified(try await rp.awaitOutcome(keysHandle))
            #expect(keys?.idToken.algorithm.rawValue == algorithm)
            #expect(keys?.checks.contains { $0.hasPrefix("receipt:") } == true)
            #expect(world.pins.count == 1)

            // sign
            let message = Array("invoice 114".utf8)
            let signHandle = try await rp.start(.sign(data: message), user: Self.email, context: "mail", bindingMessage: "Sign invoice 114")
            let signature = Array(try world.device.signingKey.signature(for: message))
            #expect(try await world.approve(signHandle, body: world.body(signHandle, signature: signature))?.status == 204)
            let signed = expectVerified(try await rp.awaitOutcome(signHandle))
            if case .signature(let verified)? = signed?.value {
                #expect(world.device.signingKey.publicKey.isValidSignature(verified, for: message))
            } else {
                Issue.record("expected a signature")
            }

            // decapsulate: the ciphertext went to the authority as pki_data; the device decapsulates it.
            let decapHandle = try await rp.start(.decapsulate, user: Self.email, context: "mail", bindingMessage: "Open the vault")
            let ciphertext = try #require(try await world.store.request(authReqID: decapHandle.authReqId).pkiData)
            let secret = try world.device.kemKey.decapsulate(ciphertext)
            #expect(try await world.approve(decapHandle, body: world.body(decapHandle, sharedSecret: secret.secret.copyBytes()))?.status == 204)
            let opened = expectVerified(try await rp.awaitOutcome(decapHandle))
            if case .sharedSecret(let key)? = opened?.value {
                #expect(key == secret)
            } else {
                Issue.record("expected a shared secret")
            }

            // sign-in
            let loginHandle = try await rp.start(.signIn, user: Self.email, context: "", bindingMessage: "Sign in to Sample app")
            _ = try await world.approve(loginHandle, body: nil)
            let login = expectVerified(try await rp.awaitOutcome(loginHandle))
            #expect(login?.idToken.subject.isEmpty == false)
            #expect(login?.idToken.subject == keys?.idToken.subject)
        }
    }

    /// docs/PROTOCOL.md §8.1: a recovery without a password gives the user a new token and so new keys; the application
    /// library refuses them against its pin (`pinnedKeyConflict`) and never re-pins by itself.
    @Test func keysChangedByARecoveryAreReportedAsChangedNotRepinned() async throws {
        try await withWorld { world in
            let rp = world.rp
            let first = try await rp.start(.publicKeys, user: Self.email, context: "mail", bindingMessage: "Link your mail key")
            #expect(try await world.approve(first, body: world.body(first, publicKeys: world.device.publicKeys))?.status == 204)
            _ = expectVerified(try await rp.awaitOutcome(first))
            let pinned = try await world.pins.pinnedKeys(for: PinKey(user: Self.email, context: "mail"))

            // The phone is lost: its enrolment ends, and a recovery invitation enrols a new device with a new token.
            _ = try await world.store.endEnrolment(id: "enr-1", status: .revoked)
            _ = try await world.store.createInvitation(InvitationRecord(
                id: "inv-r", tenantID: "acme", subject: "user-1", clientID: "rp", secretHash: [7],
                expiresAt: world.clock.now().addingTimeInterval(3600), kind: .recovery))
            var token = World.faceToken(generation: 1)
            token.tokenID = "token-recovered"
            _ = try await world.store.enrol(EnrolmentInsert(
                invitationID: "inv-r", enrolmentID: "enr-2", device: DeviceRecord(id: "device-2", label: "New phone"),
                ambientKey: NewDeviceKey(keyID: "k2-ambient", publicKeyJWK: #"{"kty":"EC","crv":"P-256","x":"e","y":"f"}"#),
                userPresentKey: NewDeviceKey(keyID: "k2-present", publicKeyJWK: #"{"kty":"EC","crv":"P-256","x":"g","y":"h"}"#),
                initialFaceToken: token, replacesFaceToken: true))
            #expect(try await world.store.faceToken(subject: "user-1").tokenID == "token-recovered")
            let recovered = try TestDevice()

            // The new keys, delivered for the same user and context: refused as conflicting with the pin.
            let again = try await rp.start(.publicKeys, user: Self.email, context: "mail", bindingMessage: "Link your mail key")
            let body = DeliveryBody(authReqId: again.authReqId, kind: .publicKeys, iat: Int64(world.clock.now().timeIntervalSince1970),
                                    keyId: recovered.keyID, publicKeys: recovered.publicKeys)
            let delivered = try recovered.deliver(body)
            let bearer = try await world.store.request(authReqID: again.authReqId).clientNotificationToken ?? ""
            let refused = await rp.handleDelivery(method: "POST", headers: TestDevice.headers(bearer: bearer, signature: delivered.signature),
                                                  body: delivered.body)
            #expect(refused.status == DeliveryRefusal.pinnedKeyConflict.status)
            #expect(try await world.pins.pinnedKeys(for: PinKey(user: Self.email, context: "mail")) == pinned)

            // A signature by the new key does not verify against the pinned one either.
            let message = Array("invoice 115".utf8)
            let sign = try await rp.start(.sign(data: message), user: Self.email, context: "mail", bindingMessage: "Sign invoice 115")
            let signBody = DeliveryBody(authReqId: sign.authReqId, kind: .sign, iat: Int64(world.clock.now().timeIntervalSince1970),
                                        keyId: recovered.keyID, signature: Array(try recovered.signingKey.signature(for: message)))
            let signed = try recovered.deliver(signBody)
            let signBearer = try await world.store.request(authReqID: sign.authReqId).clientNotificationToken ?? ""
            let badSignature = await rp.handleDelivery(method: "POST", headers: TestDevice.headers(bearer: signBearer, signature: signed.signature),
                                                       body: signed.body)
            #expect(badSignature.status == 403)

            // Only the application's own decision moves the pin.
            try await world.pins.removePin(for: PinKey(user: Self.email, context: "mail"), ifEqualTo: pinned)
            let repin = try await rp.start(.publicKeys, user: Self.email, context: "mail", bindingMessage: "Link your mail key")
            let repinBody = DeliveryBody(authReqId: repin.authReqId, kind: .publicKeys, iat: Int64(world.clock.now().timeIntervalSince1970),
                                         keyId: recovered.keyID, publicKeys: recovered.publicKeys)
            let repinned = try recovered.deliver(repinBody)
            let repinBearer = try await world.store.request(authReqID: repin.authReqId).clientNotificationToken ?? ""
            #expect(await rp.handleDelivery(method: "POST", headers: TestDevice.headers(bearer: repinBearer, signature: repinned.signature),
                                            body: repinned.body).status == 204)
        }
    }

    @Test func clientSecretPostIsAcceptedByTheAuthority() async throws {
        try await withWorld(authentication: .clientSecretPost(secret: SecretBytes(Array(Self.secret.utf8)))) { world in
            let handle = try await world.rp.start(.signIn, user: Self.email, context: "", bindingMessage: "Sign in")
            _ = try await world.approve(handle, body: nil)
            _ = expectVerified(try await world.rp.awaitOutcome(handle))
        }
    }

    /// A wrong secret, sent either way, is refused as `invalid_client` (for `client_secret_basic` the 401 also
    /// carries a `WWW-Authenticate: Basic` challenge, which the client hands back instead of answering).
    @Test(arguments: [true, false])
    func aWrongSecretIsInvalidClient(basic: Bool) async throws {
        let wrong = SecretBytes(Array("wrong".utf8))
        try await withWorld(authentication: basic ? .clientSecretBasic(secret: wrong) : .clientSecretPost(secret: wrong)) { world in
            do {
                _ = try await world.rp.start(.signIn, user: Self.email, context: "", bindingMessage: "Sign in")
                Issue.record("a wrong secret was accepted")
            } catch let error as RelyingPartyError {
                #expect(error == .refused(.invalidClient, error.refusalDescription), "\(error)")
            }
        }
    }

    @Test func aDeliveryTheAuthorityDidNotReceiptIsRejected() async throws {
        try await withWorld { world in
            let handle = try await world.rp.start(.publicKeys, user: Self.email, context: "mail", bindingMessage: "Link")
            let delivered = try world.device.deliver(world.body(handle, publicKeys: world.device.publicKeys))
            let bearer = try await world.store.request(authReqID: handle.authReqId).clientNotificationToken ?? ""
            #expect(await world.rp.handleDelivery(method: "POST", headers: TestDevice.headers(bearer: bearer, signature: delivered.signature),
                                                  body: delivered.body).status == 204)
            // The completion reports another body's hash: the receipt check fails and the pin is taken back.
            _ = try await world.store.downloadFaceToken(authReqID: handle.authReqId, keyID: "k-present")
            _ = try await world.complete(handle, expected: 1, receipt: SHA256.hash(data: Array("another body".utf8)).bytes)
            await #expect(throws: RelyingPartyError.self) { _ = try await world.rp.awaitOutcome(handle) }
            #expect(world.pins.count == 0)
        }
    }

    @Test func staleTokenStartsANewRequestThatVerifies() async throws {
        try await withWorld { world in
            let rp = world.rp
            let keysHandle = try await rp.start(.publicKeys, user: Self.email, context: "mail", bindingMessage: "Link")
            _ = try await world.approve(keysHandle, body: world.body(keysHandle, publicKeys: world.device.publicKeys))
            _ = expectVerified(try await rp.awaitOutcome(keysHandle))

            // A sign-in rotates the token first; the ceremony's completion then loses: stale_token.
            let message = Array("pay".utf8)
            let worldBox = Mutex<World?>(world)
            let attempts = Mutex(0)
            let outcome = try await rp.perform(.sign(data: message), user: Self.email, context: "mail", bindingMessage: "Pay") { handle in
                let attempt = attempts.withLock { $0 += 1; return $0 }
                guard var current = worldBox.withLock({ $0 }) else { return }
                let signature = Array((try? current.device.signingKey.signature(for: message)) ?? Data())
                if attempt == 1 {
                    let login = try? await rp.start(.signIn, user: Self.email, context: "", bindingMessage: "Sign in")
                    let generation = current.generation
                    _ = try? await current.store.downloadFaceToken(authReqID: handle.authReqId, keyID: "k-present")
                    if let login { _ = try? await current.approve(login, body: nil) }
                    let delivered = try? current.device.deliver(current.body(handle, signature: signature))
                    let bearer = (try? await current.store.request(authReqID: handle.authReqId).clientNotificationToken) ?? ""
                    if let delivered {
                        _ = await rp.handleDelivery(method: "POST", headers: TestDevice.headers(bearer: bearer, signature: delivered.signature), body: delivered.body)
                        _ = try? await current.complete(handle, expected: generation, receipt: SHA256.hash(data: delivered.body).bytes)
                    }
                } else {
                    _ = try? await current.approve(handle, body: current.body(handle, signature: signature))
                }
                worldBox.withLock { $0 = current }
            }
            #expect(attempts.withLock { $0 } == 2)
            _ = expectVerified(outcome)
        }
    }

    @Test func pingFromTheAuthorityLeadsToOneTokenRequestAndAVerifiedResult() async throws {
        try await withWorld(mode: .ping) { world in
            let rp = world.rp
            let handle = try await rp.start(.publicKeys, user: Self.email, context: "mail", bindingMessage: "Link")
            let waiter = Task { try await rp.awaitOutcome(handle) }
            _ = try await world.approve(handle, body: world.body(handle, publicKeys: world.device.publicKeys))
            // What the device API does after a completion: the authority POSTs the ping to the application.
            await world.authority.requestFinished(authReqID: handle.authReqId)
            _ = expectVerified(try await waiter.value)
            #expect(world.pins.count == 1)
        }
    }

    @Test func pollingUntilTheAuthorityExpiresTheRequest() async throws {
        try await withWorld { world in
            let handle = try await world.rp.start(.signIn, user: Self.email, context: "", bindingMessage: "Sign in")
            #expect(try await world.rp.awaitOutcome(handle).name == "expired")
        }
    }
}
