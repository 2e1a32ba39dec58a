public import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One line per request. It carries no body, no header and no query string, so secrets sent in
/// `Authorization`, form fields or query parameters never reach the log.
public struct RequestLogger: Sendable {
    /// What is logged about a request.
    public struct Entry: Sendable, Equatable {
        /// The request's id (also sent as `X-Request-Id`).
        public var requestID: String
        /// The request method token.
        public var method: String
        /// The path without its query.
        public var path: String
        /// The status sent (413 also when a chunked body over the limit closed the connection).
        public var status: Int
        /// From the request line to queuing the response.
        public var duration: Duration
        /// The Swift type name of a non-HTTP error a handler threw (its message may hold secrets).
        public var errorType: String?

        /// `rid=… POST /path 200 1.234ms`, with ` error=Type` when a handler threw an unknown error.
        public var line: String {
            // Whole microseconds, printed as milliseconds with three decimals (no `String(format:)`: one line per request).
            let components = duration.components
            let micros = max(0, components.seconds * 1_000_000 + (components.attoseconds + 500_000_000_000) / 1_000_000_000_000)
            let fraction = String(micros % 1000)
            var line = "rid=\(requestID) \(method) \(Self.printable(path)) \(status) \(micros / 1000)."
                + String(repeating: "0", count: 3 - fraction.utf8.count) + fraction + "ms"
            if let errorType { line += " error=\(errorType)" }
            return line
        }

        /// Control characters and spaces are escaped so a crafted path cannot forge log lines.
        public static func printable(_ text: String) -> String {
            // The common case: nothing to escape and short enough to keep whole.
            if text.utf8.count <= 512 && text.utf8.allSatisfy({ $0 > 0x20 && $0 != 0x7F }) { return text }
            var out = ""
            for scalar in text.prefix(512).unicodeScalars {
                if scalar.value < 0x21 || scalar.value == 0x7F {
                    out += String(format: "%%%02X", scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
            return out
        }
    }

    private let sink: @Sendable (Entry) -> Void

    /// A logger that hands each entry to `sink` (tests collect entries this way).
    public init(_ sink: @escaping @Sendable (Entry) -> Void) { self.sink = sink }

    /// Writes `<ISO-8601 time> http <line>` to standard error, one `write` per line.
    public static let standardError = RequestLogger { entry in
        FileHandle.standardError.write(Data("\(timestamp(Date())) http \(entry.line)\n".utf8))
    }

    /// `date` as ISO 8601 in UTC to the second (`2026-12-01T13:16:01Z`), what `Date.formatted(.iso8601)` prints, built
    /// from `gmtime_r` digits: the format style costs more than the rest of a log line.
    public static func timestamp(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        guard gmtime_r(&seconds, &parts) != nil else { return date.formatted(.iso8601) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(20)
        func digits(_ value: Int32, _ count: Int) {
            var divisor: Int32 = 1
            for _ in 1..<count { divisor *= 10 }
            while divisor > 0 {
                bytes.append(UInt8(ascii: "0") + UInt8((value / divisor) % 10))
                divisor /= 10
            }
        }
        digits(parts.tm_year + 1900, 4); bytes.append(UInt8(ascii: "-"))
        digits(parts.tm_mon + 1, 2); bytes.append(UInt8(ascii: "-"))
        digits(parts.tm_mday, 2); bytes.append(UInt8(ascii: "T"))
        digits(parts.tm_hour, 2); bytes.append(UInt8(ascii: ":"))
        digits(parts.tm_min, 2); bytes.append(UInt8(ascii: ":"))
        digits(parts.tm_sec, 2); bytes.append(UInt8(ascii: "Z"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Discards entries.
    public static let disabled = RequestLogger { _ in }

    /// Appends `<ISO-8601 time> http <line>` to the file at `path` (created owner-only when missing).
    /// - Throws: `HTTPServerError.invalidConfiguration` when the file cannot be opened.
    public static func appending(toFileAtPath path: String) throws(HTTPServerError) -> RequestLogger {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .invalidConfiguration("cannot open the log file \(path)") }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        return RequestLogger { entry in
            handle.write(Data("\(timestamp(Date())) http \(entry.line)\n".utf8))
        }
    }

    /// A logger that writes through this one with every path segment that follows one of `markers` replaced by
    /// `-`: for paths that carry a bearer secret, such as `/device/v1/enrolments/{invitation}`.
    public func redactingPathSegments(after markers: Set<String>) -> RequestLogger {
        let inner = self
        return RequestLogger { entry in
            var redacted = entry
            var segments = entry.path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            for index in segments.indices.dropLast() where markers.contains(segments[index]) {
                segments[index + 1] = "-"
            }
            redacted.path = segments.joined(separator: "/")
            inner.log(redacted)
        }
    }

    func log(_ entry: Entry) { sink(entry) }
}
