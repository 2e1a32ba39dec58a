/// A face-locked key algorithm of a tenant's key policy (SPEC §5.2).
public enum KeyAlgorithm: String, Codable, Sendable, CaseIterable, Comparable {
    case mlDSA44 = "ML-DSA-44"
    case mlDSA65 = "ML-DSA-65"
    case mlDSA87 = "ML-DSA-87"
    case mlKEM512 = "ML-KEM-512"
    case mlKEM768 = "ML-KEM-768"
    case mlKEM1024 = "ML-KEM-1024"

    /// Whether the algorithm signs (ML-DSA) rather than decapsulates (ML-KEM).
    public var signs: Bool { rawValue.hasPrefix("ML-DSA") }

    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}

/// The tenant's key policy: which masters every face token must hold. It reaches the device with every request.
public struct KeyPolicy: Codable, Sendable, Equatable {
    /// The algorithms, without duplicates.
    public var algorithms: [KeyAlgorithm]

    /// The default: ML-DSA-65 and ML-KEM-768.
    public static let standard = KeyPolicy(algorithms: [.mlDSA65, .mlKEM768])

    /// Builds a policy.
    public init(algorithms: [KeyAlgorithm]) { self.algorithms = algorithms }

    /// The signing algorithm used for the delivery signature and `sign` (the first ML-DSA of the policy).
    public var signingAlgorithm: KeyAlgorithm? { algorithms.first(where: \.signs) }
    /// The KEM algorithm used for `decapsulate` (the first ML-KEM of the policy).
    public var kemAlgorithm: KeyAlgorithm? { algorithms.first { !$0.signs } }
}

/// Branding of an application as the device shows it.
public struct BrandingInfo: Codable, Sendable, Equatable {
    /// The application's display name.
    public var name: String
    /// A logo: an `https:` or `data:image/…` URL.
    public var logoURL: String?
    /// Primary colour, `#RRGGBB`.
    public var primaryColor: String?
    /// Secondary colour, `#RRGGBB`.
    public var secondaryColor: String?

    enum CodingKeys: String, CodingKey {
        case name
        case logoURL = "logo_url"
        case primaryColor = "primary_color"
        case secondaryColor = "secondary_color"
    }

    /// Builds branding.
    public init(name: String, logoURL: String? = nil, primaryColor: String? = nil, secondaryColor: String? = nil) {
        self.name = name
        self.logoURL = logoURL
        self.primaryColor = primaryColor
        self.secondaryColor = secondaryColor
    }
}
