/// A float32 tensor of one sample, (channels, rows, cols) row-major: dlib's (k, nr, nc) layout.
struct FeatureMap: Sendable {
    var channels: Int
    var rows: Int
    var cols: Int
    var values: [Float]

    /// A map of zeros.
    init(channels: Int, rows: Int, cols: Int) {
        self.channels = channels
        self.rows = rows
        self.cols = cols
        values = [Float](repeating: 0, count: channels * rows * cols)
    }

    /// A map whose values the caller fills completely in `fill` (no zeroing pass over large buffers).
    init(channels: Int, rows: Int, cols: Int, fill: (UnsafeMutableBufferPointer<Float>) -> Void) {
        self.channels = channels
        self.rows = rows
        self.cols = cols
        let count = channels * rows * cols
        values = [Float](unsafeUninitializedCapacity: count) { buffer, initialized in
            fill(buffer)
            initialized = count
        }
    }

    var planeSize: Int { rows * cols }
}
