import Testing
@testable import FaceSealHTTP

@Suite struct FaceSealHTTPSmokeTests {
    @Test func moduleLinks() {
        #expect(String(describing: FaceSealHTTPModule.self) == "FaceSealHTTPModule")
    }
}
