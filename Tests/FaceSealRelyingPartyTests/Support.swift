import Foundation
import FaceSealCrypto
import FaceSealHTTP
import FaceSealWire
import Synchronization
@testable import FaceSealRelyingParty

/// A clock tests move by hand; the sleeper advances it instead of sleeping and records each wait.
final class TestClock: WallClock, Sleeper {
    private let state = Mutex<(now: Date, sleeps: [Int])>((Date(timeIntervalSince1970: 1_764_430_000), []))

    func now() -> Date { state.withLock { $0.now } }
    var sleeps: [Int] { state.withLock { $0.sleeps } }

    func advance(_ seconds: TimeInterval) { state.withLock { $0.now = $0.now.addingTimeInterval(seconds) } }

    func sleep(seconds: Int) async throws {
        try Task.checkCancellation()
        state.withLock {
            $0.sleeps.append(seconds)
            $0.now = $0.now.addingTimeInterval(TimeInterval(seconds))
        }
    }
}

/// A sleeper that never returns until cancelled (ping tests: the timeout arm must not win).
struct ForeverSleeper: Sleeper {
    func sleep(seconds: Int) async throws {
        while true {
            try await Task.sleep(for: .seconds(3600))
        }
    }
}

/// The user's device in tests: a real ML-DSA-65 and ML-KEM-768 key pair that makes deliveries.
struct TestDevice: Sendable {
    let signingKey = MLDSA65.PrivateKey()
    let kemKey: MLKEM768.PrivateKey

    init() throws {
        kemKey = try MLKEM768.PrivateKey()
    }

    var publicKeys: [KeyAlgorithm: [UInt8]] {
        [.mlDSA65: Array(signingKey.publicKey.rawRepresentation), .mlKEM768: Array(kemKey.publicKey.rawRepresentation)]
    }

    var keyID: String { PinnedKeys.keyID(of: Array(signingKey.publicKey.rawRepresentation)) }

    /// Body bytes and the `X-FaceSeal-Signature` value.
    func deliver(_ body: DeliveryBody, signer: MLDSA65.PrivateKey? = nil) throws -> (body: [UInt8], signature: String) {
        try sign(body.encoded(), signer: signer)
    }

    func sign(_ bytes: [UInt8], signer: MLDSA65.PrivateKey? = nil) throws -> (body: [UInt8], signature: String) {
        let key = signer ?? signingKey
        let signature = try key.signature(for: bytes, context: DeliveryNames.signatureContext)
        return (bytes, Base64URL.encode(signature))
    }

    static func headers(bearer: String?, signature: String?) -> [String: String] {
        var headers = ["Content-Type": "application/json"]
        if let bearer { headers["Authorization"] = "Bearer \(bearer)" }
        if let signature { headers[DeliveryNames.signatureHeader] = signature }
        return headers
    }
}

/// A scripted authority on an ephemeral loopback port: discovery, JWKS, backchannel (records each form)
/// and a token endpoint that answers from a script.
final class FakeAuthority: Sendable {
    typealias TokenScript = @Sendable (_ authReqId: String, _ form: FormParameters) -> HTTPResponse

    private struct State {
        var issuer = ""
        var backchannelForms: [FormParameters] = []
        var backchannelAuthorization: [String?] = []
        var tokenForms: [FormParameters] = []
        var script: [TokenScript] = []
        var jwks = JWKSet(keys: [])
        var counter = 0
        var backchannelError: OAuthErrorResponse?
        var interval: Int? = 5
    }

    private final class Box: Sendable {
        let state = Mutex(State())
    }

    private let box = Box()
    let server: HTTPServer

    init() throws {
        let box = self.box
        var router = Router()
        router.get("/.well-known/openid-configuration") { _ in
            let issuer = box.state.withLock { $0.issuer }
            let document: [String: JSONValue] = [
                "issuer": .string(issuer), "token_endpoint": .string(issuer + "/token"),
                "backchannel_authentication_endpoint": .string(issuer + "/backchannel"), "jwks_uri": .string(issuer + "/jwks"),
                "grant_types_supported": [.string(CIBANames.grantType)],
                "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "private_key_jwt"],
                "backchannel_token_delivery_modes_supported": ["poll", "ping"],
                "response_types_supported": ["id_token"], "subject_types_supported": ["pairwise"],
                "id_token_signing_alg_values_supported": ["RS256", "EdDSA", "ES256", "ML-DSA-65"],
            ]
            return HTTPResponse(jsonBytes: JSONValue.object(document).serialized)
        }
        router.get("/jwks") { _ in HTTPResponse(jsonBytes: [UInt8](box.state.withLock { $0.jwks }.jsonData)) }
        router.post("/backchannel") { request in
            let form = try request.formParameters()
            let (id, error, interval): (String, OAuthErrorResponse?, Int?) = box.state.withLock {
                $0.backchannelForms.append(form)
                $0.backchannelAuthorization.append(request.headers["Authorization"])
                $0.counter += 1
                return ("req-\($0.counter)-" + Base64URL.encode(SecureRandom.bytes(count: 16)), $0.backchannelError, $0.interval)
            }
            if let error { return HTTPResponse(jsonBytes: error.encoded(), status: HTTPStatus(code: error.error.httpStatus)) }
            return HTTPResponse(jsonBytes: BackchannelAuthenticationResponse(authReqId: id, expiresIn: 300, interval: interval).encoded())
        }
        router.post("/token") { request in
            let form = try request.formParameters()
            let next: TokenScript? = box.state.withLock {
                $0.tokenForms.append(form)
                return $0.script.isEmpty ? nil : $0.script.removeFirst()
            }
            guard let next else {
                return HTTPResponse(jsonBytes: OAuthErrorResponse(.authorizationPending).encoded(), status: 400)
            }
            return next(form["auth_req_id"] ?? "", form)
        }
        server = HTTPServer(logger: .disabled, router: router)
        try server.start()
        let issuer = server.baseURL!.absoluteString
        box.state.withLock { $0.issuer = issuer }
    }

    var issuer: String { box.state.withLock { $0.issuer } }
    var backchannelForms: [FormParameters] { box.state.withLock { $0.backchannelForms } }
    var backchannelAuthorization: [String?] { box.state.withLock { $0.backchannelAuthorization } }
    var tokenForms: [FormParameters] { box.state.withLock { $0.tokenForms } }

    func setJWKS(_ keys: JWKSet) { box.state.withLock { $0.jwks = keys } }
    func setBackchannelError(_ error: OAuthErrorResponse?) { box.state.withLock { $0.backchannelError = error } }
    func setInterval(_ interval: Int?) { box.state.withLock { $0.interval = interval } }
    func script(_ answers: TokenScript...) { box.state.withLock { $0.script.append(contentsOf: answers) } }

    /// The bearer the relying party sent with its latest backchannel request.
    var lastBearer: String { backchannelForms.last?["client_notification_token"] ?? "" }

    func stop() async { await server.stop() }

    static func error(_ code: CIBAErrorCode, _ description: String? = nil) -> TokenScript {
        { _, _ in HTTPResponse(jsonBytes: OAuthErrorResponse(code, description).encoded(), status: HTTPStatus(code: code.httpStatus)) }
    }

    static func tokens(_ idToken: @escaping @Sendable (String) -> String) -> TokenScript {
        { id, _ in HTTPResponse(jsonBytes: TokenResponse(accessToken: "at", expiresIn: 3600, idToken: idToken(id)).encoded()) }
    }
}

/// Keys the fake authority signs ID tokens with.
struct IDTokenKeys: Sendable {
    let ed25519 = Curve25519.Signing.PrivateKey()
    let p256 = P256.Signing.PrivateKey()
    let mlDSA = MLDSA65.PrivateKey()

    var jwks: JWKSet {
        get throws {
            JWKSet(keys: [JWK(publicKey: ed25519.publicKey, keyID: "ed"), JWK(publicKey: p256.publicKey, keyID: "p256"),
                          try JWK(mlDSA65PublicKey: mlDSA.publicKey.rawRepresentation, keyID: "mldsa")])
        }
    }
}

/// The claims the authority would issue.
struct IDTokenFactory: Sendable {
    var issuer: String
    var audience: String
    var now: Date

    func claims(authReqId: String, kind: PKIKind?, receipt: [UInt8]?) -> JWTClaims {
        var extra: [String: JSONValue] = [CIBANames.authReqIdClaim: .string(authReqId), "amr": ["face", "hwk"],
                                          "auth_time": .integer(Int64(now.timeIntervalSince1970))]
        if let kind { extra[CIBANames.pkiKindClaim] = .string(kind.rawValue) }
        if let receipt { extra[CIBANames.receiptClaim] = .string(Base64URL.encode(receipt)) }
        return JWTClaims(issuer: issuer, subject: "pairwise-sub-1", audience: [audience], issuedAt: now,
                         expiresAt: now.addingTimeInterval(300), additionalMembers: extra)
    }

    func sign(_ claims: JWTClaims, with signer: any JWSSigner, keyID: String) -> String {
        (try? JWT.sign(claims, signer: signer, keyID: keyID)) ?? "invalid"
    }
}

/// Everything a test needs: a fake authority, a relying party pointed at it, a device, a clock.
struct Harness: Sendable {
    let authority: FakeAuthority
    let rp: RelyingParty
    let device: TestDevice
    let clock: TestClock
    let keys: IDTokenKeys
    let pins: InMemoryKeyPinStore
    let pending: InMemoryPendingRequestStore

    static let clientID = "app-123"

    init(mode: TokenDeliveryMode = .poll, authentication: ClientAuthentication = .clientSecretBasic(secret: SecretBytes(Array("s3cret:/+".utf8))),
         sleeper: (any Sleeper)? = nil, keyPins: InMemoryKeyPinStore = InMemoryKeyPinStore()) throws {
        authority = try FakeAuthority()
        clock = TestClock()
        device = try TestDevice()
        keys = IDTokenKeys()
        pins = keyPins
        pending = InMemoryPendingRequestStore()
        authority.setJWKS(try keys.jwks)
        let clock = self.clock
        let configuration = RelyingPartyConfiguration(
            issuer: URL(string: authority.issuer)!, clientID: Self.clientID, authentication: authentication,
            deliveryEndpoint: URL(string: "https://app.example/faceseal/delivery")!,
            notificationEndpoint: URL(string: "https://app.example/faceseal/ping")!, tokenDeliveryMode: mode,
            clock: clock, sleeper: sleeper ?? clock)
        rp = RelyingParty(configuration: configuration, pendingRequests: pending, keyPins: pins)
    }

    var tokenFactory: IDTokenFactory { IDTokenFactory(issuer: authority.issuer, audience: Self.clientID, now: clock.now()) }

    /// Pins the device's keys for (user, context) as if a public_keys ceremony had run.
    func pinDeviceKeys(user: String = "ada@example.com", context: String = "mail") async throws {
        _ = try await pins.pin(PinnedKeys(keys: device.publicKeys), for: PinKey(user: user, context: context))
    }

    /// A valid delivery body for `handle`.
    func body(for handle: PendingRequestHandle, kind: PKIKind? = nil, publicKeys: [KeyAlgorithm: [UInt8]]? = nil,
              signature: [UInt8]? = nil, sharedSecret: [UInt8]? = nil, keyID: String? = nil) -> DeliveryBody {
        DeliveryBody(authReqId: handle.authReqId, kind: kind ?? handle.kind.pkiKind ?? .sign, iat: Int64(clock.now().timeIntervalSince1970),
                     keyId: keyID ?? device.keyID, publicKeys: publicKeys, signature: signature, sharedSecret: sharedSecret)
    }

    /// The ciphertext the relying party sent for a decapsulation.
    var lastCiphertext: [UInt8] { (try? Base64URL.decode(authority.backchannelForms.last?["pki_data"] ?? "")) ?? [] }

    func deliver(_ delivered: (body: [UInt8], signature: String), bearer: String? = nil) async -> EndpointResponse {
        await rp.handleDelivery(method: "POST", headers: TestDevice.headers(bearer: bearer ?? authority.lastBearer, signature: delivered.signature),
                                body: delivered.body)
    }
}
