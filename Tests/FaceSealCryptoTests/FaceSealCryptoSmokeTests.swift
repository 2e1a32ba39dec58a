import Testing
@testable import FaceSealCrypto

@Suite struct FaceSealCryptoSmokeTests {
    @Test func moduleLinks() {
        #expect(String(describing: FaceSealCryptoModule.self) == "FaceSealCryptoModule")
    }
}
