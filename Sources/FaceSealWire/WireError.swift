/// Why bytes from another process were refused. Every parser in FaceSealWire throws this, never crashes,
/// and never returns a partially accepted message.
public enum WireError: Error, Equatable, Sendable {
    /// The input is larger than the message's limit.
    case tooLarge(limit: Int)
    /// The input is not valid JSON or not the expected shape; `detail` names the field when known.
    case malformed(String)
    /// A field this message does not define.
    case unknownField(String)
    /// A field required by the message is missing.
    case missingField(String)
    /// A field is present but its value is not acceptable.
    case invalidValue(field: String, reason: String)
    /// The message's version is not one this build speaks.
    case unsupportedVersion(Int)
    /// A signature did not verify, or was made with another key or algorithm.
    case badSignature
    /// The message has expired (or is not yet valid) at the time it was checked.
    case expired
}
