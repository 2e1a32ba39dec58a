public import FaceSealHTTP
import Foundation

/// The settings of `faceseal serve`, merged from three layers: a configuration file, `FACESEAL_*` environment
/// variables, and command-line flags. A flag wins over the environment, the environment over the file, the file over
/// the defaults. Every setting has one name in all three: the key `port` in the file is `FACESEAL_PORT` in the
/// environment and `--port` on the command line.
///
/// The file format: one `key = value` a line; `#` starts a comment (at the start of a line, or after a space when
/// the value is not quoted); a value may be double-quoted (`"…"`, with `\"` and `\\`). Blank lines are ignored; a key
/// may appear once. At most 64 KiB, 1,000 lines of 4 KiB each; no control characters.
public struct ServeConfiguration: Sendable, Equatable {
    /// Where the SQLite database, the generated master key and the admin key live.
    public var dataDirectory = "./faceseal-data"
    /// A `postgres://` URL to keep everything in PostgreSQL instead of SQLite (may carry a password: never printed).
    public var database: String?
    /// The numeric address to listen on.
    public var host = "127.0.0.1"
    /// The TCP port (0: an ephemeral one).
    public var port = 8080
    /// A file of 32 raw bytes readable by its owner only (default: `<data-dir>/master-key`, generated on first start).
    public var masterKeyFile: String?
    /// The public base URL (default `http://HOST:PORT`).
    public var issuer: String?
    /// Connections one IP address may hold open (0: no limit).
    public var maxConnectionsPerAddress = HTTPServer.Configuration().perAddressConnectionLimit
    /// Seconds a connection has to send a complete request head.
    public var requestHeadTimeout = Int(HTTPServer.Configuration().requestHeadTimeout.components.seconds)
    /// The rate limits.
    public var rateLimits = RateLimits()
    /// On SIGTERM or SIGINT, seconds in-flight requests may take to finish while new ones get 503 (docs/PROTOCOL.md §9.1).
    public var drainSeconds = 10
    /// A loopback port serving `/healthz`, `/readyz` and `/metrics` without credentials (none by default).
    public var adminPort: Int?
    /// How log lines are written.
    public var logFormat = EventLog.Format.text
    /// The least level logged.
    public var logLevel = EventLog.Level.info
    /// Where ping callbacks and webhook pushes may connect (public addresses only by default).
    public var callbackDestinations = HTTPClient.Destinations.publicOnly
    /// Seconds a finished request is kept after its expiry; nil (`0` in a flag, variable or file) keeps them all
    /// (docs/PROTOCOL.md §11, "Retention of finished requests").
    public var requestRetention: Int? = 86_400
    /// Seconds an audit event is kept; nil (the default, `0` in a flag, variable or file) keeps the whole log
    /// (docs/PROTOCOL.md §11, "Retention of finished requests").
    public var auditRetention: Int?

    /// The defaults.
    public init() {}

    /// One setting: its name (file key, flag and environment variable), how the help shows its value, and how a text
    /// value is checked and applied.
    public struct Setting: Sendable {
        /// The file key and flag name: `port` (`--port`).
        public let name: String
        /// The value's placeholder in help: `N`.
        public let valueName: String
        /// One line of help.
        public let help: String
        let apply: @Sendable (inout ServeConfiguration, String) throws(ServeConfigurationError.Reason) -> Void
        let show: @Sendable (ServeConfiguration) -> String?

        /// The environment variable: `FACESEAL_PORT`.
        public var environmentName: String { "FACESEAL_" + name.uppercased().replacingOccurrences(of: "-", with: "_") }
    }

    /// Every setting, in the order `--help` and `--print-config` show them.
    public static let settings: [Setting] = [
        Setting(name: "data-dir", valueName: "DIR",
                help: "where the SQLite database, the generated master key and the admin key live (default ./faceseal-data, created 0700)",
                apply: { configuration, value throws(ServeConfigurationError.Reason) in configuration.dataDirectory = try path(value) },
                show: { $0.dataDirectory }),
        Setting(name: "database", valueName: "URL", help: "postgres://… to keep everything in PostgreSQL instead of SQLite",
                apply: { configuration, value throws(ServeConfigurationError.Reason) in
                    guard value.hasPrefix("postgres://") || value.hasPrefix("postgresql://"), value.utf8.count <= 4096 else {
                        throw .expected("a postgres:// URL (SQLite is the default, under data-dir)")
                    }
                    configuration.database = value
                },
                show: { $0.database.map(redactedDatabaseURL) }),
        Setting(name: "host", valueName: "ADDRESS", help: "numeric address to listen on (default 127.0.0.1)",
                apply: { configuration, value throws(ServeConfigurationError.Reason) in
                    guard !value.isEmpty, value.utf8.count <= 64, value.allSatisfy({ $0.isHexDigit || $0 == "." || $0 == ":" }) else {
                        throw .expected("a numeric IPv4 or IPv6 address, e.g. 127.0.0.1 or ::1")
                    }
                    configuration.host = value
                },
                show: { $0.host }),
        Setting(name: "port", valueName: "N", help: "TCP port, 0 for an ephemeral one (default 8080)",
                apply: { configuration, value throws(ServeConfigurationError.Reason) in configuration.port = try number(value, 0...65_535) },
                show: { String($0.port) }),
        Setting(name: "master-key-file", valueName: "PATH",
                help: "32 raw bytes, owner-only (default <data-dir>/master-key, generated on first start); the same for every process on one PostgreSQL database",
                apply: { configuration, value throws(ServeConfigurationError.Reason) in configuration.masterKeyFile = try path(value) },
                show: { $0.masterKeyFile }),
        Setting(name: "issuer", valueName: "URL", help: "the public base URL (default http://HOST:PORT)",
                apply: { configuration, value throws(ServeConfigurationError.Reason) in
                    guard value.utf8.count <= 2048, let url = URLComponents(string: value), let scheme = url.scheme?.lowercased(),
                          scheme == "https" || scheme == "http", let host = url.host, !host.isEmpty, url.query == nil, url.fragment == nil else {
                        throw .expected("an http(s) URL with a host and no query, e.g. https://id.example.com")
                    }
                    configuration.issuer = value
                },
                show: { $0.issuer }),
        Setting(name: "max-connections-per-address", valueName: "N",
                help: "connections one IP address may hold open (default 128, 0: no limit; behind a reverse proxy raise it or use 0)",
                apply: { configuration, value throws(ServeConfigurationError.Reason) in
                    configuration.maxConnectionsPerAddress = try number(value, 0...65_536)
                },
                show: { String($0.maxConnectionsPerAddress) }),
        Setting(name: "request-head-timeout", valueName: "SECONDS", help: "time a connection has to send a complete request head (default 10)",
                apply: { configuration, value throws(ServeConfigurationError.Reason) in configuration.requestHeadTimeout = try number(value, 1...3_600) },
                show: { String($0.requestHeadTimeout) }),
        Setting(name: "client-auth-failures", valueName: "N/SECONDS[/TOTAL]",
                help: "failed client authentications per client id and source address before 429, TOTAL from all sources (default 20/60/200, 0/… off); a valid credential from an address that has not failed always passes",
                apply: { configuration, value throws(ServeConfigurationError.Reason) in
                    configuration.rateLimits.clientAuthenticationFailures = try failureLimit(value)
                },
                show: { show($0.rateLimits.clientAuthenticationFailures) }),
        Setting(name: "device-signature-failures", valueName: "N/SECONDS[/TOTAL]",
                help: "failed device signatures per key id and source address before rate_limited, TOTAL from all sources (default 20/60/200, 0/… off)",
                apply: { configuration, value throws(ServeConfigurationError.Reason) in
                    configuration.rateLimits.deviceSignatureFailures = try failureLimit(value)
                },
                show: { show($0.rateLimits.deviceSignatureFailures) }),
        Setting(name: "pending-requests-per-user", valueName: "N", help: "pending requests per user and application (default 5, 0 off)",
                apply: { configuration, value throws(ServeConfigurationError.Reason) in
                    configuration.rateLimits.pendingRequestsPerUser = try number(value, 0...1_000)
                },
                show: { String($0.rateLimits.pendingRequestsPerUser) }),
        Setting(name: "trusted-proxies", valueName: "ADDRESS[,ADDRESS…]",
                help: "reverse proxies whose X-Forwarded-For names a request's source address for the rate limits (default none: the connection's peer)",
                apply: { configuration, value throws(ServeConfigurationError.Reason) in
                    let entries = value.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
                    let addresses = entries.count <= 64 ? entries.compactMap { IPAddress($0) } : []
                    guard !entries.isEmpty, addresses.count == entries.count else {
                        throw .expected("up to 64 numeric IP addresses separated by commas, e.g. 10.0.0.1,10.0.0.2")
                    }
                    configuration.rateLimits.trustedProxies = Set(addresses)
                },
                show: { $0.rateLimits.trustedProxies.isEmpty ? nil : $0.rateLimits.trustedProxies.map(\.description).sorted().joined(separator: ",") }),
        Setting(name: "drain-seconds", valueName: "SECONDS",
                help: "on SIGTERM or SIGINT, time in-flight requests get to finish while new ones get 503 with Retry-After (default 10, 0: cancel at once)",
                apply: { configuration, value throws(ServeConfigurationError.Reason) in configuration.drainSeconds = try number(value, 0...3_600) },
                show: { String($0.drainSeconds) }),
        Setting(name: "admin-port", valueName: "N",
                help: "also serve /healthz, /readyz and /metrics without credentials on 127.0.0.1:N (on the public port /metrics needs an administrator API key)",
                apply: { configuration, value throws(ServeConfigurationError.Reason) in configuration.adminPort = try number(value, 0...65_535) },
                show: { $0.adminPort.map(String.init) }),
        Setting(name: "log-format", valueName: "text|json", help: "one event per line, each with its request id: text (default) or json",
                apply: { configuration, value throws(ServeConfigurationError.Reason) in
                    guard let format = EventLog.Format(rawValue: value) else { throw .expected("text or json") }
                    configuration.logFormat = format
                },
                show: { $0.logFormat.rawValue }),
        Setting(name: "log-level", valueName: "LEVEL", help: "the least level logged: debug, info (default), warn or error",
                apply: { configuration, value throws(ServeConfigurationError.Reason) in
                    guard let level = EventLog.Level(rawValue: value) else { throw .expected("debug, info, warn or error") }
                    configuration.logLevel = level
                },
                show: { $0.logLevel.rawValue }),
        Setting(name: "callback-destinations", valueName: "public|any",
                help: "where ping callbacks and webhook pushes may connect: public addresses only (default), or any, also loopback and private networks (development, or applications on an internal network)",
                apply: { configuration, value throws(ServeConfigurationError.Reason) in
                    guard let destinations = HTTPClient.Destinations(rawValue: value) else { throw .expected("public or any") }
                    configuration.callbackDestinations = destinations
                },
                show: { $0.callbackDestinations.rawValue }),
        retention("request-retention", \.requestRetention,
                  help: "how long a finished request (its message, result receipt and ID token) is kept after its expiry before it is deleted; its audit events stay (default 86400, 0: kept forever)"),
        retention("audit-retention", \.auditRetention,
                  help: "how long an audit event is kept before it is deleted (default 0: the whole log is kept)"),
    ]

    /// Where a value came from, for messages and `--print-config`.
    public enum Source: Sendable, Equatable, CustomStringConvertible {
        case file(path: String, line: Int)
        case environment(String)
        case flag(String)

        public var description: String {
            switch self {
            case .file(let path, let line): "\(path):\(line)"
            case .environment(let name): name
            case .flag(let name): "--\(name)"
            }
        }
    }

    /// One `key = value` of a configuration file.
    public struct FileEntry: Sendable, Equatable {
        public let key: String
        public let value: String
        public let line: Int
    }

    /// The file's limits.
    public static let maxFileBytes = 64 << 10
    public static let maxLines = 1_000
    public static let maxLineBytes = 4 << 10

    /// Parses a configuration file's text into its entries (keys not yet checked against the settings).
    public static func parseFile(_ text: String, path: String) throws(ServeConfigurationError) -> [FileEntry] {
        guard text.utf8.count <= maxFileBytes else { throw .fileTooLarge(path: path, limit: maxFileBytes) }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count <= maxLines + 1 else { throw .syntax(path: path, line: maxLines + 1, reason: "more than \(maxLines) lines") }
        var entries: [FileEntry] = []
        var seen: [String: Int] = [:]
        for (offset, raw) in lines.enumerated() {
            let number = offset + 1
            func fail(_ reason: String) -> ServeConfigurationError { .syntax(path: path, line: number, reason: reason) }
            var line = String(raw)
            if line.hasSuffix("\r") { line.removeLast() }
            guard line.utf8.count <= maxLineBytes else { throw fail("longer than \(maxLineBytes) bytes") }
            guard !line.unicodeScalars.contains(where: { $0.properties.generalCategory == .control && $0 != "\t" }) else {
                throw fail("a control character")
            }
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            guard let equals = trimmed.firstIndex(of: "=") else { throw fail("expected key = value") }
            let key = trimmed[..<equals].trimmingCharacters(in: .whitespaces)
            guard !key.isEmpty, key.allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "-") }) else {
                throw fail("a key is lower-case letters, digits and '-', e.g. data-dir")
            }
            let value = try Self.value(trimmed[trimmed.index(after: equals)...].trimmingCharacters(in: .whitespaces), fail: fail)
            if let first = seen[key] { throw fail("\(key) is already set on line \(first)") }
            seen[key] = number
            entries.append(FileEntry(key: key, value: value, line: number))
        }
        return entries
    }

    /// A value: `"quoted"` (with `\"` and `\\`), or bare up to a ` #` comment.
    private static func value(_ text: String, fail: (String) -> ServeConfigurationError) throws(ServeConfigurationError) -> String {
        guard text.hasPrefix("\"") else {
            guard let comment = text.range(of: " #") ?? text.range(of: "\t#") else { return text }
            return text[..<comment.lowerBound].trimmingCharacters(in: .whitespaces)
        }
        var result = ""
        var escaped = false
        var rest = text.dropFirst()
        while let character = rest.first {
            rest = rest.dropFirst()
            if escaped {
                guard character == "\"" || character == "\\" else { throw fail("unknown escape \\\(character) (only \\\" and \\\\)") }
                result.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == "\"" {
                let after = rest.trimmingCharacters(in: .whitespaces)
                guard after.isEmpty || after.hasPrefix("#") else { throw fail("text after the closing quote") }
                return result
            } else {
                result.append(character)
            }
        }
        throw fail("a quoted value without its closing quote")
    }

    /// The effective configuration and where each set value came from: the file's entries, then the environment's
    /// `FACESEAL_*` variables, then the flags (`name` → value), each layer overriding the one before.
    public static func resolve(file: (path: String, entries: [FileEntry])? = nil, environment: [String: String] = [:],
                               flags: [String: String] = [:]) throws(ServeConfigurationError) -> (ServeConfiguration, [String: Source]) {
        var configuration = ServeConfiguration()
        var sources: [String: Source] = [:]
        func apply(_ name: String, _ value: String, _ source: Source) throws(ServeConfigurationError) {
            guard let setting = settings.first(where: { $0.name == name }) else { throw .unknownKey(name, source: source) }
            do {
                try setting.apply(&configuration, value)
            } catch {
                throw .badValue(setting: name, value: value, reason: error, source: source)
            }
            sources[name] = source
        }
        if let file {
            for entry in file.entries { try apply(entry.key, entry.value, .file(path: file.path, line: entry.line)) }
        }
        for setting in settings {
            if let value = environment[setting.environmentName] { try apply(setting.name, value, .environment(setting.environmentName)) }
        }
        for (name, value) in flags.sorted(by: { $0.key < $1.key }) { try apply(name, value, .flag(name)) }
        return (configuration, sources)
    }

    /// The configuration as a file of this format (it loads back to the same values), with where each value came
    /// from; a database password is replaced by `REDACTED`.
    public func rendered(sources: [String: Source] = [:]) -> String {
        var lines = ["# faceseal serve: the effective configuration (flags > FACESEAL_* environment > file > defaults)"]
        for setting in Self.settings {
            guard let value = setting.show(self) else {
                lines.append("# \(setting.name) is not set")
                continue
            }
            let needsQuotes = value.isEmpty || value.contains("#") || value.contains("\"") || value != value.trimmingCharacters(in: .whitespaces)
            let text = needsQuotes ? "\"" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\"" : value
            lines.append("\(setting.name) = \(text)  # \(sources[setting.name].map(\.description) ?? "default")")
        }
        return lines.joined(separator: "\n")
    }

    /// `postgres://user:secret@host/db?password=x` with every password replaced by `REDACTED`.
    static func redactedDatabaseURL(_ url: String) -> String {
        guard var components = URLComponents(string: url) else { return "(a postgres:// URL that does not parse; not shown)" }
        if components.password != nil { components.password = "REDACTED" }
        components.queryItems = components.queryItems?.map {
            $0.name.lowercased() == "password" ? URLQueryItem(name: $0.name, value: "REDACTED") : $0
        }
        return components.string ?? "(not shown)"
    }

    private static func path(_ value: String) throws(ServeConfigurationError.Reason) -> String {
        guard !value.isEmpty, value.utf8.count <= 4096 else { throw .expected("a path that is not empty") }
        return value
    }

    /// A retention period in seconds, 0 to 10 years; 0 keeps for ever (nil).
    private static func retention(_ name: String, _ field: any WritableKeyPath<ServeConfiguration, Int?> & Sendable, help: String) -> Setting {
        Setting(name: name, valueName: "SECONDS", help: help,
                apply: { configuration, value throws(ServeConfigurationError.Reason) in
                    let seconds = try number(value, 0...(10 * 366 * 86_400))
                    configuration[keyPath: field] = seconds == 0 ? nil : seconds
                },
                show: { String($0[keyPath: field] ?? 0) })
    }

    private static func number(_ value: String, _ range: ClosedRange<Int>) throws(ServeConfigurationError.Reason) -> Int {
        guard value.utf8.count <= 12, let number = Int(value), range.contains(number) else {
            throw .expected("a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }

    /// `N/SECONDS[/TOTAL]`: at most N failures per source address and TOTAL from all sources per window of SECONDS
    /// (N = 0 switches the limit off; TOTAL defaults to 10 N).
    private static func failureLimit(_ value: String) throws(ServeConfigurationError.Reason) -> RateLimits.FailureLimit {
        let parts = value.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 2 || parts.count == 3, let limit = try? number(parts[0], 0...100_000),
              let window = try? number(parts[1], 1...86_400) else {
            throw .expected("N/SECONDS[/TOTAL] with N from 0 to 100000, SECONDS from 1 to 86400 and TOTAL from 0 to 1000000, e.g. 20/60/200")
        }
        guard parts.count == 3 else { return RateLimits.FailureLimit(limit: limit, window: window) }
        guard let total = try? number(parts[2], 0...1_000_000) else {
            throw .expected("N/SECONDS[/TOTAL] with N from 0 to 100000, SECONDS from 1 to 86400 and TOTAL from 0 to 1000000, e.g. 20/60/200")
        }
        return RateLimits.FailureLimit(limit: limit, window: window, totalLimit: total)
    }

    private static func show(_ limit: RateLimits.FailureLimit) -> String { "\(limit.limit)/\(limit.window)/\(limit.totalLimit)" }
}

/// A configuration `faceseal serve` cannot start with; each description is a sentence naming where the value came from.
public enum ServeConfigurationError: Error, Equatable, CustomStringConvertible {
    /// Why a value is refused.
    public enum Reason: Error, Equatable, Sendable {
        case expected(String)
    }

    case fileTooLarge(path: String, limit: Int)
    case syntax(path: String, line: Int, reason: String)
    case unknownKey(String, source: ServeConfiguration.Source)
    case badValue(setting: String, value: String, reason: Reason, source: ServeConfiguration.Source)

    public var description: String {
        switch self {
        case .fileTooLarge(let path, let limit): "The configuration file \(path) is larger than \(limit >> 10) KiB."
        case .syntax(let path, let line, let reason): "\(path):\(line): \(reason)."
        case .unknownKey(let key, let source): "\(source): there is no setting \(Self.quoted(key))."
        case .badValue(let setting, let value, .expected(let expected), let source):
            // A database URL may hold a password: it is never repeated.
            "\(Self.naming(setting, source)) \(setting == "database" ? "(value not shown)" : Self.quoted(value)) is not valid: expected \(expected)."
        }
    }

    /// `--port`, `FACESEAL_PORT` or `faceseal.conf:3: port`.
    private static func naming(_ setting: String, _ source: ServeConfiguration.Source) -> String {
        if case .file = source { return "\(source): \(setting)" }
        return source.description
    }

    private static func quoted(_ text: String) -> String {
        let clean = String(text.unicodeScalars.map { $0.properties.generalCategory == .control ? "?" : Character($0) })
        return "'" + (clean.count > 64 ? String(clean.prefix(64)) + "…" : clean) + "'"
    }
}
