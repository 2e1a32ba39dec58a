import FaceSealCrypto
import Foundation
import Testing
@testable import FaceSealWire

/// The rollover statement's checks (docs/PROTOCOL.md §2): from the pinned key only, inside its window, while the pin is
/// young enough.
@Suite struct RolloverStatementTests {
    let old = Curve25519.Signing.PrivateKey()
    let new = Curve25519.Signing.PrivateKey()
    let issuer = "https://authority.test"
    let now: Int64 = 1_800_000_000

    func statement(iss: String? = nil, old oldKey: [UInt8]? = nil, new newKey: [UInt8]? = nil, iat: Int64? = nil, exp: Int64? = nil,
                   signer: Curve25519.Signing.PrivateKey? = nil) throws -> String {
        try AuthorityKeyRollover.make(AuthorityKeyRolloverClaims(
            iss: iss ?? issuer, old: oldKey ?? Array(old.publicKey.rawRepresentation), new: newKey ?? Array(new.publicKey.rawRepresentation),
            iat: iat ?? now, exp: exp ?? now + 90 * 86_400), oldKey: signer ?? old)
    }

    func verify(_ text: String, pinnedAt: Int64? = nil, at time: Int64? = nil) throws(AuthorityKeyRolloverError) -> AuthorityKeyRolloverClaims {
        try AuthorityKeyRollover.verify(text, pinned: old.publicKey, pinnedAt: pinnedAt ?? now - 86_400, issuer: issuer, now: time ?? now)
    }

    @Test func aStatementOfThePinnedKeyInsideItsWindowIsFollowed() throws {
        #expect(try verify(try statement()).new.bytes == Array(new.publicKey.rawRepresentation))
        #expect(try verify(try statement(), at: now + 90 * 86_400 - 1).iat == now)
    }

    @Test func anotherKeysStatementIsRefused() throws {
        let impostor = Curve25519.Signing.PrivateKey()
        #expect(throws: AuthorityKeyRolloverError.notFromPinnedKey) { try verify(try statement(signer: impostor)) }
        #expect(throws: AuthorityKeyRolloverError.notFromPinnedKey) {
            try verify(try statement(old: Array(impostor.publicKey.rawRepresentation), signer: impostor))
        }
        #expect(throws: AuthorityKeyRolloverError.wrongIssuer) { try verify(try statement(iss: "https://elsewhere.test")) }
        #expect(throws: AuthorityKeyRolloverError.malformed) { try verify(try statement(new: Array(old.publicKey.rawRepresentation))) }
        #expect(throws: AuthorityKeyRolloverError.malformed) { try verify(try statement(new: [1, 2, 3])) }
        #expect(throws: AuthorityKeyRolloverError.malformed) { try verify("not.a.jws") }
        let link = try JWS.sign(payload: Array("{}".utf8), signer: old, type: "faceseal-link+jwt")
        #expect(throws: AuthorityKeyRolloverError.malformed) { try verify(link) }
    }

    @Test func theWindowAndThePinsAgeBoundWhatAStolenOldKeyCanDo() throws {
        #expect(throws: AuthorityKeyRolloverError.outsideWindow) { try verify(try statement(), at: now + 90 * 86_400) }
        #expect(throws: AuthorityKeyRolloverError.outsideWindow) { try verify(try statement(iat: now + 301)) }
        #expect(throws: AuthorityKeyRolloverError.outsideWindow) { try verify(try statement(exp: now - 1)) }
        // Whatever window a forger writes, at most a year, and never beyond the pin's lifetime on the device.
        #expect(throws: AuthorityKeyRolloverError.outsideWindow) { try verify(try statement(exp: now + AuthorityKeyRollover.maximumWindow + 1)) }
        let old = now - AuthorityKeyRollover.pinLifetime
        #expect(throws: AuthorityKeyRolloverError.outsideWindow) { try verify(try statement(), pinnedAt: old) }
        #expect(try verify(try statement(), pinnedAt: old + 1).iat == now)
    }

    @Test func theChainRefusesMoreThanItsLimit() throws {
        let chain = AuthorityKeyChain(rollovers: Array(repeating: "x", count: AuthorityKeyRollover.maxChainLength + 1))
        #expect(throws: WireError.self) { _ = try AuthorityKeyChain.decode(chain.encoded()) }
        #expect(try AuthorityKeyChain.decode(AuthorityKeyChain(rollovers: ["a"]).encoded()).rollovers == ["a"])
    }
}
