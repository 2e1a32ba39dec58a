import Testing
@testable import FaceSealWire

@Suite struct FaceSealWireSmokeTests {
    @Test func moduleLinks() {
        #expect(String(describing: FaceSealWireModule.self) == "FaceSealWireModule")
    }
}
