import FaceSealCrypto
import FaceSealHTTP
import FaceSealTestSupport
import FaceSealWire
import Foundation
import Testing
@testable import FaceSealAuthority

@Suite("The universal link /l/<JWS> answers a small page instead of 404")
struct LinkPageTests {
    private func link(_ harness: AuthorityHarness, kind: LinkKind, expiresIn seconds: TimeInterval = 300) throws -> String {
        let exp = Int64(harness.clock.now().addingTimeInterval(seconds).timeIntervalSince1970)
        return try LinkSignature.make(LinkClaims(iss: harness.authority.issuer, rid: "request-id-in-link", kind: kind, exp: exp,
                                                 nonce: "bX9kQ2pL7sV0wR4t"), key: harness.authority.keys.deviceKey)
    }

    private func expectStrictHeaders(_ response: HTTPClientResponse, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.headers["Content-Type"] == "text/html; charset=utf-8", sourceLocation: sourceLocation)
        let csp = response.headers["Content-Security-Policy"] ?? ""
        #expect(csp.hasPrefix("default-src 'none';"), sourceLocation: sourceLocation)
        #expect(csp.contains("frame-ancestors 'none'") && !csp.contains("unsafe"), sourceLocation: sourceLocation)
        #expect(response.headers["Referrer-Policy"] == "no-referrer", sourceLocation: sourceLocation)
        #expect(response.headers["X-Content-Type-Options"] == "nosniff", sourceLocation: sourceLocation)
        #expect(!response.text.contains("<script"), sourceLocation: sourceLocation)
    }

    @Test("a valid link: 200, what it is and how to open it, the JWS not in the page", arguments: StoreBackend.underTest)
    func validLink(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            for (kind, words) in [(LinkKind.login, "a sign-in request"), (.ceremony, "face-locked key"), (.enrolment, "enrol a phone")] {
                let jws = try link(harness, kind: kind)
                let response = try await harness.get(LinkLimits.universalLinkPath + jws)
                #expect(response.status.code == 200)
                expectStrictHeaders(response)
                #expect(response.text.contains(words))
                #expect(response.text.contains("authenticator"))
                for part in jws.split(separator: ".") { #expect(!response.text.contains(part)) }
                #expect(!response.text.contains("request-id-in-link"))
            }
        }
    }

    @Test("an expired link is 410, a forged or hostile one 404, nothing of it reflected", arguments: StoreBackend.underTest)
    func refusedLinks(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            let expired = try link(harness, kind: .login, expiresIn: 10)
            harness.clock.advance(by: 60)
            let gone = try await harness.get(LinkLimits.universalLinkPath + expired)
            #expect(gone.status.code == 410)
            expectStrictHeaders(gone)
            #expect(gone.text.contains("expired"))

            let forged = try LinkSignature.make(LinkClaims(iss: harness.authority.issuer, rid: "r", kind: .login,
                                                           exp: Int64(harness.clock.now().timeIntervalSince1970) + 300, nonce: "n"),
                                                key: Curve25519.Signing.PrivateKey())
            let hostile = "%3Cscript%3Ealert(1)%3C%2Fscript%3E%22%27"
            for path in [forged, hostile, String(repeating: "A", count: 6000)] {
                let response = try await harness.get(LinkLimits.universalLinkPath + path)
                #expect(response.status.code == 404)
                expectStrictHeaders(response)
                #expect(!response.text.contains("alert"))
                #expect(!response.text.contains("AAAA"))
            }
        }
    }
}
