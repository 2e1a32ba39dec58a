import FaceSealCrypto
import FaceSealWire

extension ApplicationRecord {
    /// The application's branding as devices see it. The stored JSON object may hold `name`, `logo_url`,
    /// `primary_color`, `secondary_color`; anything else is ignored, and the name defaults to the label.
    var deviceBranding: BrandingInfo {
        let object = (try? JSONValue.parse(Array(brandingJSON.utf8)))?.objectValue ?? [:]
        let name = object["name"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 } ?? label
        return BrandingInfo(name: name, logoURL: object["logo_url"]?.stringValue,
                            primaryColor: object["primary_color"]?.stringValue, secondaryColor: object["secondary_color"]?.stringValue)
    }
}

extension TenantPolicy {
    /// The key policy that reaches the device (names the wire does not know are left out).
    var wireKeyPolicy: KeyPolicy { KeyPolicy(algorithms: keyAlgorithms.compactMap(KeyAlgorithm.init(rawValue:))) }
}
