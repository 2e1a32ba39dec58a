/// The header fields of a response as libcurl hands them over, one raw line at a time (status line, fields,
/// the empty line that ends a head, and any trailer lines). Interim `1xx` heads are dropped when the next status
/// line starts; every line counts toward the size limit, so an endless stream of interim heads is refused too.
struct ResponseHead {
    /// The fields of the latest head, in order.
    var headers: HTTPHeaders { HTTPHeaders(fields: fields) }
    private var fields: [HTTPHeaders.Field] = []
    /// Largest head accepted, in bytes.
    let limit: Int
    private var received = 0
    /// The latest head ended; what follows is trailers (counted, not kept) or the next head.
    private var ended = false

    init(limit: Int) {
        self.limit = limit
    }

    /// Takes one line (with its CRLF). False when the head is now over the limit.
    mutating func consume(_ line: UnsafeRawBufferPointer) -> Bool {
        guard line.count <= limit - received else { return false }
        received += line.count
        var end = line.count
        while end > 0, line[end - 1] == 0x0A || line[end - 1] == 0x0D { end -= 1 }
        let content = UnsafeRawBufferPointer(rebasing: line[..<end])
        if content.starts(with: "HTTP/".utf8) {
            fields = []
            ended = false
        } else if content.isEmpty {
            ended = true
        } else if !ended {
            field(content)
        }
        return true
    }

    /// `name: value`, or an obsolete folded continuation (leading space or tab) of the previous value.
    private mutating func field(_ content: UnsafeRawBufferPointer) {
        if content[0] == 0x20 || content[0] == 0x09, let last = fields.indices.last {
            fields[last].value += " " + String(decoding: content[...].trimmingHTTPWhitespace(), as: UTF8.self)
            return
        }
        guard let colon = content.firstIndex(of: UInt8(ascii: ":")) else { return }
        let name = String(decoding: content[..<colon], as: UTF8.self)
        // Trimmed as bytes, so the value is made once (most have a space after the colon).
        let value = content[(colon + 1)...].trimmingHTTPWhitespace()
        if fields.isEmpty { fields.reserveCapacity(8) }
        fields.append(HTTPHeaders.Field(name: name, value: String(decoding: value, as: UTF8.self)))
    }
}
