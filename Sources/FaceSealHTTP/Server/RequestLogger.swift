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
            var line = ""
            appendLine(to: &line)
            return line
        }

        /// Appends `line` to `text` (a log line built in one string, its prefix first).
        public func appendLine(to text: inout String) {
            // Whole microseconds, printed as milliseconds with three decimals (no `String(format:)`: one line per request).
            let components = duration.components
            let micros = max(0, components.seconds * 1_000_000 + (components.attoseconds + 500_000_000_000) / 1_000_000_000_000)
            let fraction = micros % 1000
            text.reserveCapacity(text.utf8.count + 96 + path.utf8.count + (errorType?.utf8.count ?? 0))
            text += "rid="
            text += requestID
            text += " "
            text += method
            text += " "
            text += Self.printable(path)
            text += " "
            text += String(status)
            text += " "
            text += String(micros / 1000)
            text += fraction < 10 ? ".00" : fraction < 100 ? ".0" : "."
            text += String(fraction)
            text += "ms"
            if let errorType {
                text += " error="
                text += errorType
            }
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
        writeLine(timestampedLine(entry), to: STDERR_FILENO)
    }

    /// `<ISO-8601 time> http <line>` and a newline, in one string.
    static func timestampedLine(_ entry: Entry) -> String {
        var text = timestamp(Date())
        text += " http "
        entry.appendLine(to: &text)
        text += "\n"
        return text
    }

    /// Writes `text` to `descriptor` whole (a short write continues, EINTR retries); errors are dropped, as a log
    /// line that cannot be written has nowhere else to go. No `FileHandle`/`Data` copy: one line per request.
    public static func writeLine(_ text: String, to descriptor: Int32) {
        var text = text
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
    }

    /// `date` as ISO 8601 in UTC to the second (`2026-12-01T13:16:01Z`), what `Date.formatted(.iso8601)` prints, built
    /// from `gmtime_r` digits: the format style costs more than the rest of a log line.
    public static func timestamp(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        guard gmtime_r(&seconds, &parts) != nil, (0...9999).contains(parts.tm_year + 1900) else { return date.formatted(.iso8601) }
        return String(unsafeUninitializedCapacity: 20) { bytes in
            var count = 0
            func digits(_ value: Int32, _ width: Int, then separator: Unicode.Scalar) {
                var divisor: Int32 = 1
                for _ in 1..<width { divisor *= 10 }
                while divisor > 0 {
                    bytes[count] = UInt8(ascii: "0") + UInt8((value / divisor) % 10)
                    count += 1
                    divisor /= 10
                }
                bytes[count] = UInt8(ascii: separator)
                count += 1
            }
            digits(parts.tm_year + 1900, 4, then: "-")
            digits(parts.tm_mon + 1, 2, then: "-")
            digits(parts.tm_mday, 2, then: "T")
            digits(parts.tm_hour, 2, then: ":")
            digits(parts.tm_min, 2, then: ":")
            digits(parts.tm_sec, 2, then: "Z")
            return count
        }
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
            writeLine(timestampedLine(entry), to: handle.fileDescriptor)
        }
    }

    /// A logger that writes through this one with every path segment that follows one of `markers` replaced by
    /// `-`: for paths that carry a bearer secret, such as `/device/v1/enrolments/{invitation}`.
    public func redactingPathSegments(after markers: Set<String>) -> RequestLogger {
        let inner = self
        let longest = markers.map(\.utf8.count).max() ?? 0
        return RequestLogger { entry in
            var redacted = entry
            redacted.path = Self.redacting(entry.path, after: markers, longest: longest)
            inner.log(redacted)
        }
    }

    /// `path` with the segment after each marker replaced by `-` (a replaced segment is no marker itself). Only
    /// segments no longer than the `longest` marker are compared, so a long bearer is never copied; a path with
    /// nothing to replace is returned as it is.
    static func redacting(_ path: String, after markers: Set<String>, longest: Int) -> String {
        let bytes = path.utf8
        var out = ""
        var redacted = false
        // `path` up to `copied` is in `out` already (once something was replaced).
        var copied = bytes.startIndex
        var redactNext = false
        var start = bytes.startIndex
        var index = start
        while true {
            let atEnd = index == bytes.endIndex
            if atEnd || bytes[index] == UInt8(ascii: "/") {
                if redactNext {
                    if !redacted {
                        out.reserveCapacity(bytes.count)
                        redacted = true
                    }
                    out += Substring(bytes[copied..<start])
                    out += "-"
                    copied = index
                    redactNext = false
                } else {
                    redactNext = bytes.distance(from: start, to: index) <= longest && markers.contains(String(Substring(bytes[start..<index])))
                }
                if atEnd { break }
                start = bytes.index(after: index)
            }
            index = bytes.index(after: index)
        }
        guard redacted else { return path }
        out += Substring(bytes[copied...])
        return out
    }

    func log(_ entry: Entry) { sink(entry) }
}
