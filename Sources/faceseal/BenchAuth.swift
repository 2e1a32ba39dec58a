import FaceSealAuthority
import FaceSealCrypto
import FaceSealHTTP
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `faceseal bench auth [--requests N]`: the CPU an unauthenticated request costs the authority (SPEC §11: < 5 ms
/// whatever a client registered). A client registers 16 RSA-4096 keys for `private_key_jwt`; forged assertions naming
/// each of them (and one without `kid`) go to `/token` over loopback. The peer, in the same run: requests with a wrong
/// `client_secret_post`, the cheapest refusal. CPU is the process's user + system time (authority and client
/// together, so an upper bound), per request; the rate limit is off so every request reaches the key lookup. A third
/// line: the same forgeries under the default limits from a source that has spent its budget (refused unverified).
enum BenchAuth {
    static func run(requests: Int) async -> Int32 {
        do {
            try await measure(requests: requests)
            return 0
        } catch {
            printError("faceseal bench auth: \(error)")
            return 1
        }
    }

    private static func measure(requests: Int) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("faceseal-bench-auth-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try await SQLAuthorityStore.open(.sqlite(path: directory.appendingPathComponent("authority.sqlite").path))
        let slot = RouterSlot()
        let server = HTTPServer(logger: .disabled) { request in try await slot.router().respond(to: request) }
        try server.start()
        guard let base = server.baseURL?.absoluteString else { throw HTTPServerError.invalidConfiguration("no address") }
        var configuration = AuthorityConfiguration(issuer: base, callbackDestinations: .any)
        configuration.rateLimits.clientAuthenticationFailures.limit = 0
        let authority = Authority(configuration: configuration, store: store,
                                  keys: try AuthorityKeys(derivingFrom: SymmetricKey(size: .bits256)))
        slot.set(authority.makeRouter())

        print("faceseal bench auth: unauthenticated POST /token, CPU of the process (authority + client) per request")
        let registered = try RSA.Signing.PrivateKey(keySize: 4096)
        let keys = (0..<16).map { JWK(publicKey: registered.publicKey, keyID: "k\($0)") }
        _ = try await store.createTenant(TenantRecord(id: "bench", name: "Bench"))
        _ = try await store.createApplication(ApplicationRecord(
            clientID: "jwt-client", tenantID: "bench", label: "JWT", credential: .jwks(String(decoding: JWKSet(keys: keys).jsonData, as: UTF8.self))))
        _ = try await store.createApplication(ApplicationRecord(
            clientID: "secret-client", tenantID: "bench", label: "Secret", credential: .secretHash(ClientSecret.hash(ClientSecret.generate()))))

        let forger = try RSA.Signing.PrivateKey(keySize: 4096)
        let now = Date()
        let forged = try (0...16).map { index in
            let claims = JWTClaims(issuer: "jwt-client", subject: "jwt-client", audience: [base], issuedAt: now,
                                   expiresAt: now.addingTimeInterval(300), jwtID: UUID().uuidString)
            return try JWT.sign(claims, signer: forger, keyID: index < 16 ? "k\(index)" : nil)
        }
        let url = URL(string: base + "/token")!
        let grant: [FormParameters.Item] = [.init(name: "grant_type", value: "urn:openid:params:grant-type:ciba"),
                                            .init(name: "auth_req_id", value: "unknown")]
        let assertionForms = forged.map { jwt in
            FormParameters(grant + [.init(name: "client_assertion_type", value: "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"),
                                    .init(name: "client_assertion", value: jwt)])
        }
        let secretForm = FormParameters(grant + [.init(name: "client_id", value: "secret-client"), .init(name: "client_secret", value: "wrong")])
        let client = HTTPClient()
        func cost(_ forms: [FormParameters], status: Int = 401) async throws -> Double {
            for form in forms { _ = try await client.send(.form(url: url, form: form)) }  // warm-up
            let start = cpuSeconds()
            for index in 0..<requests {
                let response = try await client.send(.form(url: url, form: forms[index % forms.count]))
                guard response.status.code == status else {
                    throw HTTPServerError.invalidConfiguration("expected \(status), got \(response.status.code)")
                }
            }
            return (cpuSeconds() - start) / Double(requests) * 1000
        }
        let jwtCost = try await cost(assertionForms)
        let secretCost = try await cost([secretForm])
        // The default limits: after the warm-up the source has spent its budget, so no forgery is verified.
        slot.set(Authority(configuration: AuthorityConfiguration(issuer: base, callbackDestinations: .any), store: store, keys: authority.keys).makeRouter())
        let refusedCost = try await cost(Array(repeating: assertionForms[0], count: RateLimits().clientAuthenticationFailures.limit), status: 429)
        print(String(format: "private_key_jwt, 16 x RSA-4096 registered, forged assertions  cpu=%.3fms/request  (%d requests)", jwtCost, requests))
        print(String(format: "private_key_jwt, forged, source past its budget (429)       cpu=%.3fms/request  (%d requests)", refusedCost, requests))
        print(String(format: "client_secret_post, wrong secret (peer)                     cpu=%.3fms/request  (%d requests)", secretCost, requests))
        print(String(format: "ratio=%.2f (private_key_jwt / peer), %.2f (past the budget / peer); budget: < 5 ms CPU per unauthenticated request",
                     jwtCost / secretCost, refusedCost / secretCost))
        await server.stop()
        await store.close()
    }

    /// User + system CPU time of this process, seconds.
    private static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}
