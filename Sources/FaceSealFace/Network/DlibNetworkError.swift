/// Why a dlib DNN model file (ResNet or MMOD) could not be loaded or run.
///
/// Byte-level problems (truncation, bad integer encodings) come from `DlibReader` as `FaceModelError`;
/// these cases cover the structure above the primitives.
public enum DlibNetworkError: Error, Equatable, Sendable {
    /// The file could not be read from disk.
    case unreadableFile(path: String, reason: String)
    /// A version field holds a value this reader does not know.
    case unsupportedVersion(what: String, version: Int, offset: Int)
    /// A layer, loss or input record with a name this reader does not implement.
    case unsupportedRecord(name: String, offset: Int)
    /// A tensor's shape is negative, too large, or inconsistent with the layer that holds it.
    case badTensorShape(offset: Int, reason: String)
    /// A layer's fields are out of range (zero stride, kernel larger than the limit, …).
    case badLayerField(offset: Int, reason: String)
    /// Bytes are left over after the last record.
    case trailingBytes(count: Int)
    /// The file parsed but is not the network the caller expected (wrong input layer, loss, layer count …).
    case unexpectedNetwork(String)
    /// The layer sequence does not fit together (channel counts, missing residual tag …).
    case inconsistentNetwork(String)
    /// The input image cannot be fed to the network (wrong size, empty, pixel buffer size mismatch).
    case badInput(String)
}
