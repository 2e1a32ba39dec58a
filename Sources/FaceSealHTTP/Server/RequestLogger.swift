import Foundation
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
            let milliseconds = Double(duration.components.seconds) * 1000
                + Double(duration.components.attoseconds) / 1e15
            var line = "rid=\(requestID) \(method) \(Self.printable(path)) \(status) "
                + String(format: "%.3fms", milliseconds)
            if let errorType { line += " error=\(errorType)" }
            return line
        }

        /// Control characters and spaces are escaped so a crafted path cannot forge log lines.
        static func printable(_ text: String) -> String {
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
        let stamp = Date().formatted(.iso8601)
        FileHandle.standardError.write(Data("\(stamp) http \(entry.line)\n".utf8))
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
            let stamp = Date().formatted(.iso8601)
            handle.write(Data("\(stamp) http \(entry.line)\n".utf8))
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
