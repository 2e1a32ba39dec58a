/// The device protocol versions of SPEC §4.1.
public enum ProtocolVersion {
    /// The version this build of the SDK and authority speaks.
    public static let current = 7
    /// The lowest device protocol a face-PKI ceremony accepts.
    public static let ceremonyMinimum = 7
    /// The lowest device protocol the authority serves at all.
    public static let minimum = 6
}
