import Foundation
import Testing
@testable import FaceSealCrypto

@Suite struct JWTClaimsTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    private func claims(_ members: [String: JSONValue]) -> JWTClaims { JWTClaims(members: members) }

    @Test func expirationWithLeeway() throws {
        let validation = JWTValidation(now: now, leeway: 30)
        #expect(throws: Never.self) { try claims(["exp": .integer(1_800_000_001)]).validate(validation) }
        #expect(throws: Never.self) { try claims(["exp": .integer(1_800_000_000 - 29)]).validate(validation) }
        #expect(throws: JOSEError.expired) { try claims(["exp": .integer(1_800_000_000 - 30)]).validate(validation) }
        #expect(throws: JOSEError.expired) { try claims(["exp": .integer(1_700_000_000)]).validate(validation) }
        #expect(throws: JOSEError.expired) { try claims(["exp": .integer(1_800_000_001)]).validate(JWTValidation(now: now, leeway: 0).with { $0.now = now.addingTimeInterval(1) }) }
        #expect(throws: JOSEError.missingField("exp")) { try claims([:]).validate(validation) }
        #expect(throws: Never.self) { try claims([:]).validate(JWTValidation(now: now, requireExpiration: false)) }
        #expect(throws: JOSEError.invalidField("exp")) { try claims(["exp": "tomorrow"]).validate(validation) }
        #expect(throws: Never.self) { try claims(["exp": .double(1_800_000_000.5)]).validate(JWTValidation(now: now, leeway: 0)) }
    }

    @Test func notBeforeAndIssuedAt() throws {
        let validation = JWTValidation(now: now, leeway: 30, requireExpiration: false)
        #expect(throws: Never.self) { try claims(["nbf": .integer(1_800_000_030)]).validate(validation) }
        #expect(throws: JOSEError.notYetValid) { try claims(["nbf": .integer(1_800_000_031)]).validate(validation) }
        #expect(throws: Never.self) { try claims(["iat": .integer(1_800_000_030)]).validate(validation) }
        #expect(throws: JOSEError.issuedInFuture) { try claims(["iat": .integer(1_800_000_031)]).validate(validation) }
        #expect(throws: JOSEError.invalidField("iat")) { try claims(["iat": .bool(true)]).validate(validation) }
        #expect(throws: JOSEError.missingField("iat")) { try claims([:]).validate(validation.with { $0.requireIssuedAt = true }) }
        let aged = validation.with { $0.maximumAge = 300 }
        #expect(throws: Never.self) { try claims(["iat": .integer(1_800_000_000 - 330)]).validate(aged) }
        #expect(throws: JOSEError.issuedTooLongAgo) { try claims(["iat": .integer(1_800_000_000 - 331)]).validate(aged) }
    }

    @Test func audienceAndIssuer() throws {
        let validation = JWTValidation(now: now, issuer: "https://authority.example", audience: "client-1", requireExpiration: false)
        let good: [String: JSONValue] = ["iss": "https://authority.example", "aud": "client-1"]
        #expect(throws: Never.self) { try claims(good).validate(validation) }
        #expect(throws: Never.self) { try claims(good.merging(["aud": ["x", "client-1"]]) { $1 }).validate(validation) }
        #expect(throws: JOSEError.invalidAudience) { try claims(good.merging(["aud": ["x", "y"]]) { $1 }).validate(validation) }
        #expect(throws: JOSEError.invalidAudience) { try claims(good.merging(["aud": "client-2"]) { $1 }).validate(validation) }
        #expect(throws: JOSEError.invalidAudience) { try claims(good.merging(["aud": []]) { $1 }).validate(validation) }
        #expect(throws: JOSEError.invalidField("aud")) { try claims(good.merging(["aud": ["client-1", 5]]) { $1 }).validate(validation) }
        #expect(throws: JOSEError.invalidField("aud")) { try claims(good.merging(["aud": 5]) { $1 }).validate(validation) }
        #expect(throws: JOSEError.missingField("aud")) { try claims(["iss": "https://authority.example"]).validate(validation) }
        #expect(throws: JOSEError.invalidIssuer) { try claims(good.merging(["iss": "https://evil.example"]) { $1 }).validate(validation) }
        #expect(throws: JOSEError.invalidField("iss")) { try claims(good.merging(["iss": ["https://authority.example"]]) { $1 }).validate(validation) }
        #expect(throws: JOSEError.missingField("iss")) { try claims(["aud": "client-1"]).validate(validation) }
    }

    @Test func builderWritesRegisteredClaims() throws {
        let built = JWTClaims(issuer: "i", subject: "s", audience: ["a"], issuedAt: now, expiresAt: now.addingTimeInterval(600.9),
                              notBefore: now, jwtID: "j", additionalMembers: ["amr": ["face", "hwk"]])
        #expect(String(decoding: built.jsonData, as: UTF8.self)
            == #"{"amr":["face","hwk"],"aud":"a","exp":1800000600,"iat":1800000000,"iss":"i","jti":"j","nbf":1800000000,"sub":"s"}"#)
        #expect(try built.audience() == ["a"])
        #expect(JWTClaims(audience: ["a", "b"])["aud"] == ["a", "b"])
        #expect(built.issuer == "i" && built.subject == "s" && built.jwtID == "j")
    }

    @Test func endToEndIDToken() throws {
        let key = try RSA.Signing.PrivateKey(derRepresentation: OSSLTestBytes.hex(OSSLFixtures.rsaPKCS1DER))
        let claims = JWTClaims(issuer: "https://authority.example", subject: "pairwise-1", audience: ["client-1"],
                               issuedAt: now, expiresAt: now.addingTimeInterval(300))
        let token = try JWT.sign(claims, signer: key, keyID: "rsa-1")
        let keySet = JWKSet(keys: [JWK(publicKey: key.publicKey, keyID: "rsa-1")])
        let validation = JWTValidation(now: now.addingTimeInterval(10), issuer: "https://authority.example", audience: "client-1")
        let (header, verified) = try JWT.verify(token, keySet: keySet, validation: validation)
        #expect(header.type == "JWT" && header.algorithm == .rs256 && header.keyID == "rsa-1")
        #expect(verified == claims)
        #expect(throws: JOSEError.expired) { try JWT.verify(token, verifier: key.publicKey, validation: validation.with { $0.now = now.addingTimeInterval(361) }) }
        let notAnObject = try JWS.sign(payload: Array("[1]".utf8), signer: key)
        #expect(throws: JOSEError.malformedJSON(part: "claims", reason: "not a JSON object")) {
            try JWT.verify(notAnObject, verifier: key.publicKey, validation: validation)
        }
    }
}

extension JWTValidation {
    func with(_ change: (inout JWTValidation) -> Void) -> JWTValidation {
        var copy = self
        change(&copy)
        return copy
    }
}
