import Testing
@testable import FaceSealAuthority

@Suite struct FaceSealAuthoritySmokeTests {
    @Test func moduleLinks() {
        #expect(String(describing: FaceSealAuthorityModule.self) == "FaceSealAuthorityModule")
    }
}
