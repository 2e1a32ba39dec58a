public import FaceSealHTTP
public import FaceSealWire
import Foundation

/// The authority's log: one event per line, as text or JSON, at or above a level, each with the id of the HTTP
/// request that caused it. Events name what happened and carry identifiers an operator needs (client ids, statuses,
/// error types) — never a secret, a bearer, a body or a header (docs/PROTOCOL.md, "Logs").
public struct EventLog: Sendable {
    /// How much is logged: an event is written when its level is at or above the log's.
    public enum Level: String, Sendable, CaseIterable, Comparable {
        case debug, info, warn, error

        private var rank: Int { Self.allCases.firstIndex(of: self) ?? 0 }
        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rank < rhs.rank }
    }

    /// How a line is written.
    public enum Format: String, Sendable, CaseIterable {
        /// `<time> <level> <event> rid=<id> key=value …` (the request line: `<time> info http rid=… GET /path 200 1.234ms`).
        case text
        /// One JSON object per line: `{"time":…,"level":…,"event":…,"rid":…,…}`.
        case json
    }

    /// A field's value.
    public enum Value: Sendable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral {
        case string(String)
        case int(Int)

        public init(stringLiteral value: String) { self = .string(value) }
        public init(integerLiteral value: Int) { self = .int(value) }
    }

    /// The least level written.
    public let level: Level
    /// The line format.
    public let format: Format
    private let write: @Sendable (String) -> Void
    private let clock: any WallClock

    /// A log that hands each finished line (with its newline) to `write`; `clock` stamps it.
    public init(level: Level = .info, format: Format = .text, clock: any WallClock = SystemWallClock(),
                write: @escaping @Sendable (String) -> Void) {
        self.level = level
        self.format = format
        self.clock = clock
        self.write = write
    }

    /// Writes to standard error, one `write` per line.
    public static func standardError(level: Level = .info, format: Format = .text) -> EventLog {
        EventLog(level: level, format: format) { RequestLogger.writeLine($0, to: STDERR_FILENO) }
    }

    /// Writes nothing.
    public static let disabled = EventLog(level: .error) { _ in }

    /// The id of the HTTP request being handled, bound for its handler's task (and the tasks it starts) by the
    /// route instrumentation, so every event it causes carries it.
    @TaskLocal static var requestID: String?

    /// Writes one event if `level` is enabled. `name` is a fixed dotted word (`webhook.failed`); field values are
    /// escaped so no input can forge a line.
    public func event(_ level: Level, _ name: String, _ fields: KeyValuePairs<String, Value> = [:]) {
        guard level >= self.level else { return }
        event(level, name, fields: fields.map { ($0.key, $0.value) })
    }

    /// `event(_:_:_:)` with the fields as a list (built at run time).
    public func event(_ level: Level, _ name: String, fields: [(String, Value)]) {
        guard level >= self.level else { return }
        let requestID = Self.requestID
        switch format {
        case .text:
            var line = "\(RequestLogger.timestamp(clock.now())) \(level.rawValue) \(name)"
            if let requestID { line += " rid=\(requestID)" }
            for (key, value) in fields {
                switch value {
                case .string(let text): line += " \(key)=\(RequestLogger.Entry.printable(text))"
                case .int(let number): line += " \(key)=\(number)"
                }
            }
            write(line + "\n")
        case .json:
            var line = JSONLine(time: RequestLogger.timestamp(clock.now()), level: level, event: name)
            if let requestID { line.add("rid", requestID) }
            for (key, value) in fields {
                switch value {
                case .string(let text): line.add(key, text)
                case .int(let number): line.add(key, number: String(number))
                }
            }
            write(line.finished)
        }
    }

    /// The HTTP server's request logger writing through this log: every request at `info` (a 5xx at `error`), each
    /// bearer in its path replaced by `-` (`Authority.bearerPathMarkers`).
    public var requestLogger: RequestLogger {
        let log = self
        return Authority.redactingBearers(RequestLogger { entry in log.request(entry) })
    }

    private func request(_ entry: RequestLogger.Entry) {
        let level: Level = entry.status >= 500 ? .error : .info
        guard level >= self.level else { return }
        switch format {
        case .text:
            var text = RequestLogger.timestamp(clock.now())
            text += " "
            text += level.rawValue
            text += " http "
            entry.appendLine(to: &text)
            text += "\n"
            write(text)
        case .json:
            let parts = entry.duration.components
            let micros = max(0, parts.seconds * 1_000_000 + parts.attoseconds / 1_000_000_000_000)
            let fraction = String(micros % 1000)
            var line = JSONLine(time: RequestLogger.timestamp(clock.now()), level: level, event: "http")
            line.add("rid", entry.requestID)
            line.add("method", entry.method)
            line.add("path", entry.path)
            line.add("status", number: String(entry.status))
            line.add("duration_ms", number: "\(micros / 1000)." + String(repeating: "0", count: 3 - fraction.utf8.count) + fraction)
            if let errorType = entry.errorType { line.add("error", errorType) }
            write(line.finished)
        }
    }
}

/// One JSON object on one line, built by hand (a JSON encoder per request line would cost more than the request).
struct JSONLine {
    private var text: String

    init(time: String, level: EventLog.Level, event: String) {
        text = "{\"time\":\"\(time)\",\"level\":\"\(level.rawValue)\""
        add("event", event)
    }

    mutating func add(_ key: String, _ value: String) {
        text += ",\"\(key)\":\"" + Self.escaped(value) + "\""
    }

    mutating func add(_ key: String, number: String) {
        text += ",\"\(key)\":" + number
    }

    var finished: String { text + "}\n" }

    /// RFC 8259 string escaping: quote, backslash and every control character; at most 512 bytes kept.
    static func escaped(_ value: String) -> String {
        let value = value.utf8.count <= 512 ? value : String(value.prefix(512))
        guard value.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") || $0 == 0x7F }) else {
            return value
        }
        var out = ""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }
}
