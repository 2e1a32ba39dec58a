import FaceSealWire
import Foundation

extension ApplicationRecord {
    /// The application's branding as devices see it. The stored JSON object may hold `name`, `logo_url`,
    /// `primary_color`, `secondary_color`; anything else is ignored, and the name defaults to the label.
    var deviceBranding: BrandingInfo {
        let object = (try? JSONSerialization.jsonObject(with: Data(brandingJSON.utf8))) as? [String: Any] ?? [:]
        let name = (object["name"] as? String).flatMap { $0.isEmpty ? nil : $0 } ?? label
        return BrandingInfo(name: name, logoURL: object["logo_url"] as? String,
                            primaryColor: object["primary_color"] as? String, secondaryColor: object["secondary_color"] as? String)
    }
}

extension TenantPolicy {
    /// The key policy that reaches the device (names the wire does not know are left out).
    var wireKeyPolicy: KeyPolicy { KeyPolicy(algorithms: keyAlgorithms.compactMap(KeyAlgorithm.init(rawValue:))) }
}
