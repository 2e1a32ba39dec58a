import Testing
@testable import FaceSealSDK

@Suite struct FaceSealSDKSmokeTests {
    @Test func moduleLinks() {
        #expect(String(describing: FaceSealSDKModule.self) == "FaceSealSDKModule")
    }
}
