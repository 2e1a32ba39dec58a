import FaceSealCrypto
import FaceSealHTTP
import FaceSealTestSupport
import FaceSealWire
import Foundation
import Synchronization
import Testing
@testable import FaceSealAuthority

/// ID tokens that verify against `/jwks` with the stored receipt, and the ping callback.
@Suite struct IDTokenAndPingTests {
    static let algorithms = ["RS256", "EdDSA", "ES256", "ML-DSA-65"]

    @Test(arguments: StoreBackend.underTest, algorithms)
    func ceremonyIDTokenVerifiesAgainstJWKSAndCarriesTheReceipt(_ backend: StoreBackend, alg: String) async throws {
        try await withAuthority(backend) { harness in
            try await CIBAFixture.seed(harness, alg: alg)
            let ack = try await harness.startRequest(AuthorityHarness.signCeremony)
            harness.clock.advance(by: 12)
            let outcome = try await harness.complete(ack.authReqId, marker: 0x5A)
            let receipt = try #require(outcome.request.receiptSHA256)
            harness.clock.advance(by: 3)
            let response = try await harness.token(ack.authReqId)
            #expect(response.status.code == 200)
            let tokens = try TokenResponse.decode(response.body)

            let jwks = try JWKSet(json: try await harness.get(CIBAPaths.jwks).body)
            let (header, claims) = try JWT.verify(
                tokens.idToken, keySet: jwks, factory: .includingMLDSA65,
                validation: JWTValidation(now: harness.clock.now(), issuer: harness.baseURL.absoluteString,
                                          audience: CIBAFixture.secretClient, requireIssuedAt: true)
            )
            #expect(header.algorithm.rawValue == alg)
            #expect(claims.subject == harness.authority.pairwiseSubject(userSubject: CIBAFixture.user, clientID: CIBAFixture.secretClient))
            #expect(claims.subject != CIBAFixture.user)
            #expect(claims[CIBANames.receiptClaim]?.stringValue == Base64URL.encode(receipt))
            #expect(claims[CIBANames.receiptClaim]?.stringValue == Base64URL.encode(StoreFixtures.receipt(0x5A)))
            #expect(claims[CIBANames.pkiKindClaim]?.stringValue == "sign")
            #expect(claims[CIBANames.authReqIdClaim]?.stringValue == ack.authReqId)
            #expect(claims["amr"] == .array([.string("face"), .string("hwk")]))
            let completedAt = try #require(outcome.request.finishedAt)
            #expect(try claims.date("auth_time") == Date(timeIntervalSince1970: completedAt.timeIntervalSince1970.rounded(.down)))
            #expect(try claims.date("iat") == harness.clock.now())
            #expect(try claims.date("exp") == harness.clock.now().addingTimeInterval(600))
        }
    }

    @Test(arguments: StoreBackend.underTest)
    func signInIDTokenHasNoCeremonyClaims(_ backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await CIBAFixture.seed(harness)
            let ack = try await harness.startRequest()
            try await harness.complete(ack.authReqId)
            let tokens = try TokenResponse.decode(try await harness.token(ack.authReqId).body)
            let jwks = try JWKSet(json: try await harness.get(CIBAPaths.jwks).body)
            let (header, claims) = try JWT.verify(tokens.idToken, keySet: jwks,
                                                  validation: JWTValidation(now: harness.clock.now(), audience: CIBAFixture.secretClient))
            #expect(header.algorithm == .rs256)
            #expect(claims[CIBANames.receiptClaim] == nil)
            #expect(claims[CIBANames.pkiKindClaim] == nil)
        }
    }

    @Test(arguments: StoreBackend.underTest)
    func amrNamesThePasswordWhenTheDeviceUsedOne(_ backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await CIBAFixture.seed(harness, alg: "EdDSA")
            let ack = try await harness.startRequest()
            try await harness.complete(ack.authReqId, passwordUsed: true)
            let tokens = try TokenResponse.decode(try await harness.token(ack.authReqId).body)
            let jwks = try JWKSet(json: try await harness.get(CIBAPaths.jwks).body)
            let (_, claims) = try JWT.verify(tokens.idToken, keySet: jwks,
                                             validation: JWTValidation(now: harness.clock.now(), audience: CIBAFixture.secretClient))
            #expect(claims["amr"] == .array([.string("face"), .string("hwk"), .string("pwd")]))
        }
    }

    @Test(arguments: StoreBackend.underTest)
    func pingIsSentWhenTheRequestFinishes(_ backend: StoreBackend) async throws {
        let receiver = try PingReceiver()
        let endpoint = try #require(receiver.server.baseURL).absoluteString + "/ciba/ping"
        try await withAuthority(backend) { harness in
            try await CIBAFixture.seed(harness, deliveryMode: .ping, notificationEndpoint: endpoint)
            let ack = try await harness.startRequest([("client_notification_token", "ping-bearer-42")])
            // Nothing is sent while the request is pending.
            await harness.authority.requestFinished(authReqID: ack.authReqId)
            try await harness.complete(ack.authReqId)
            await harness.authority.requestFinished(authReqID: ack.authReqId)
            let ping = try #require(await receiver.next())
            #expect(ping.method == .post)
            #expect(ping.path == "/ciba/ping")
            #expect(ping.headers["Authorization"] == "Bearer ping-bearer-42")
            #expect(ping.headers["Content-Type"] == "application/json")
            #expect(try PingCallback.decode(ping.body) == PingCallback(authReqId: ack.authReqId))
            #expect(receiver.count == 1)
            // The application then fetches its tokens once.
            #expect(try await harness.token(ack.authReqId).status.code == 200)
        }
        await receiver.server.stop()
    }

    @Test(arguments: StoreBackend.underTest)
    func pingIsSentForADenialAndARefusingEndpointIsNotFatal(_ backend: StoreBackend) async throws {
        let receiver = try PingReceiver(status: .internalServerError)
        let endpoint = try #require(receiver.server.baseURL).absoluteString + "/ping"
        try await withAuthority(backend) { harness in
            try await CIBAFixture.seed(harness, deliveryMode: .ping, notificationEndpoint: endpoint)
            let ack = try await harness.startRequest([("client_notification_token", "t")])
            _ = try await harness.store.denyRequest(authReqID: ack.authReqId, reason: "user_cancelled")
            await harness.authority.requestFinished(authReqID: ack.authReqId)
            let ping = try #require(await receiver.next())
            #expect(try PingCallback.decode(ping.body) == PingCallback(authReqId: ack.authReqId))
            expectCIBAError(try await harness.token(ack.authReqId), .accessDenied)
            // An unknown request is ignored.
            await harness.authority.requestFinished(authReqID: "unknown")
        }
        await receiver.server.stop()
    }
}

/// A loopback HTTP server that records every request it gets and answers `status`.
final class PingReceiver: Sendable {
    let server: HTTPServer
    let requests: AsyncStream<HTTPRequest>
    private let received: Recorded

    final class Recorded: Sendable {
        let requests = Mutex<[HTTPRequest]>([])
    }

    init(status: HTTPStatus = .noContent) throws {
        let (stream, continuation) = AsyncStream.makeStream(of: HTTPRequest.self)
        let received = Recorded()
        self.requests = stream
        self.received = received
        server = HTTPServer(logger: .disabled) { request in
            received.requests.withLock { $0.append(request) }
            continuation.yield(request)
            return .empty(status)
        }
        try server.start()
    }

    /// How many requests arrived.
    var count: Int { received.requests.withLock { $0.count } }

    /// The next request received (the ping is sent in a task of its own).
    func next() async -> HTTPRequest? {
        var iterator = requests.makeAsyncIterator()
        return await iterator.next()
    }
}
