import Testing
@testable import FaceSealRelyingParty

@Suite struct FaceSealRelyingPartySmokeTests {
    @Test func moduleLinks() {
        #expect(String(describing: FaceSealRelyingPartyModule.self) == "FaceSealRelyingPartyModule")
    }
}
