/// Why a dlib model file could not be read.
public enum FaceModelError: Error, Equatable, Sendable {
    /// The file ended before a value at `offset` was complete.
    case truncated(offset: Int)
    /// A value at `offset` does not follow dlib's serialization format.
    case malformed(offset: Int, reason: String)
    /// A record was not the one expected (for example a layer name).
    case unexpectedRecord(offset: Int, expected: String, found: String)
    /// Bytes remain after the last record.
    case trailingBytes(offset: Int)
    /// The model file could not be opened or read.
    case unreadable(path: String)
}
