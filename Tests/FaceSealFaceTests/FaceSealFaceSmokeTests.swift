import Testing
@testable import FaceSealFace

@Suite struct FaceSealFaceSmokeTests {
    @Test func moduleLinks() {
        #expect(String(describing: FaceSealFaceModule.self) == "FaceSealFaceModule")
    }
}
