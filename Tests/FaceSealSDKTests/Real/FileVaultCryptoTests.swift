import FaceSealCrypto
import FaceSealHTTP
import FaceSealWire
import Foundation
import Synchronization
import Testing
@testable import FaceSealSDK

@Suite struct FileVaultCryptoTests {
    func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("faceseal-real-\(UUID().uuidString)")
    }

    @Test func recordSealerKeyFileIsPrivateAndStable() throws {
        let root = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let keyFile = root.appendingPathComponent("vault.key")
        let sealer = try AESRecordSealer(keyFile: keyFile)
        let permissions = try #require(FileManager.default.attributesOfItem(atPath: keyFile.path)[.posixPermissions] as? Int)
        #expect(permissions == 0o600)
        let sealed = try sealer.seal(Array("records".utf8))
        #expect(sealed.count == 12 + 7 + 16)
        #expect(try AESRecordSealer(keyFile: keyFile).open(sealed) == Array("records".utf8))
        var damaged = sealed
        damaged[15] ^= 1
        #expect(throws: VaultError.self) { try sealer.open(damaged) }
        #expect(throws: VaultError.self) { try AESRecordSealer(key: SymmetricKey(size: .bits256)).open(sealed) }
        #expect(throws: VaultError.self) { try sealer.open([1, 2, 3]) }
    }

    @Test func p256KeysSignES256RawSignatures() throws {
        let factory = P256SoftwareKeyFactory()
        let pair = try factory.generate()
        #expect(pair.publicKey.count == 65 && pair.publicKey.first == 0x04)
        let signature = try factory.sign(Array("hello".utf8), privateKey: pair.privateKey)
        #expect(signature.count == 64)
        let publicKey = try P256.Signing.PublicKey(x963Representation: pair.publicKey)
        #expect(publicKey.isValidSignature(try P256.Signing.ECDSASignature(rawRepresentation: signature), for: Array("hello".utf8)))
    }

    @Test func fileVaultWithRealCryptoSignsDeviceRequestsTheAuthorityVerifies() async throws {
        let root = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let vault = try FileKeyVault(
            directory: root.appendingPathComponent("vault"), installationMarker: root.appendingPathComponent("installed"),
            factory: P256SoftwareKeyFactory(), sealer: try AESRecordSealer(keyFile: root.appendingPathComponent("vault.key")),
            userPresence: ScriptedUserPresence(clock: FixedClock()), enrolmentEpoch: { "e1" })
        let key = try vault.createKey(protection: .ambient, alias: "a")
        let signer = try vault.signer(deviceKeyId: key.deviceKeyId, presence: nil)
        let header = try await HTTPAuthorityClient.requestSignature(
            method: "GET", path: "/device/v1/requests/r1", body: [], signer: signer, now: 1_800_000_000, jti: "jti-1")
        let parsed = try DeviceRequestSignature.parse(header)
        #expect(parsed.claims.kid == key.deviceKeyId && parsed.claims.jti == "jti-1")
        let publicKey = try P256.Signing.PublicKey(x963Representation: key.publicKey)
        let claims = try parsed.verify(with: publicKey, method: "GET", path: "/device/v1/requests/r1", body: [], now: 1_800_000_010)
        #expect(claims.path == "/device/v1/requests/r1")
        #expect(throws: DeviceErrorCode.invalidSignature) {
            try parsed.verify(with: publicKey, method: "GET", path: "/device/v1/requests/r2", body: [], now: 1_800_000_010)
        }
    }
}

/// A loopback application endpoint that records what it received.
final class RecordingEndpoint: Sendable {
    struct Received: Sendable {
        var headers: HTTPHeaders
        var body: [UInt8]
    }

    final class State: Sendable {
        let received = Mutex<[Received]>([])
        let status = Mutex(200)
    }

    let state = State()
    let server: HTTPServer

    init(path: String = "/delivery") throws {
        let state = self.state
        var router = Router()
        router.post(path) { request in
            state.received.withLock { $0.append(Received(headers: request.headers, body: request.body)) }
            let code = state.status.withLock { $0 }
            if code == 302 { return HTTPResponse(status: 302, headers: ["Location": "http://127.0.0.1:9/elsewhere"]) }
            return .empty(HTTPStatus(code: code))
        }
        server = HTTPServer(logger: .disabled, router: router)
        try server.start()
    }

    var url: URL { server.baseURL!.appendingPathComponent("delivery") }
}

@Suite struct HTTPDeliveryPosterTests {
    @Test func postsTheExactBytesWithBearerAndSignature() async throws {
        let endpoint = try RecordingEndpoint()
        let poster = HTTPDeliveryPoster()
        let body = Array(#"{"auth_req_id":"r","v":7}"#.utf8)
        let delivery = DeliveryRequest(endpoint: endpoint.url, bearer: "tok-1", body: body, signature: "c2ln")
        #expect(await poster.deliver(delivery) == .accepted)
        let got = try #require(endpoint.state.received.withLock { $0.first })
        #expect(got.body == body)
        #expect(got.headers["Authorization"] == "Bearer tok-1")
        #expect(got.headers["X-FaceSeal-Signature"] == "c2ln")
        #expect(got.headers["Content-Type"] == "application/json")

        endpoint.state.status.withLock { $0 = 409 }
        #expect(await poster.deliver(delivery) == .refused(httpStatus: 409))
        endpoint.state.status.withLock { $0 = 302 }
        #expect(await poster.deliver(delivery) == .refused(httpStatus: 302))
        await endpoint.server.stop()
        guard case .unreachable = await poster.deliver(delivery) else {
            Issue.record("a stopped endpoint must be unreachable")
            return
        }
    }
}
