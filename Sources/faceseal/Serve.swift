import FaceSealAuthority
import FaceSealHTTP
import Foundation

/// `faceseal serve`: runs the authority until SIGINT or SIGTERM.
enum Serve {
    static let usage = """
    usage: faceseal serve [--data-dir DIR] [--database postgres://…] [--host ADDRESS] [--port N]
                          [--master-key-file PATH] [--issuer URL] [--max-connections-per-address N]
                          [--request-head-timeout SECONDS] [--client-auth-failures N/SECONDS]
                          [--device-signature-failures N/SECONDS] [--pending-requests-per-user N]
                          [--drain-seconds N]

      --data-dir DIR          where the SQLite database, the generated master key and the admin key live
                              (default ./faceseal-data, created with mode 0700)
      --database URL          postgres://… to keep everything in PostgreSQL instead of SQLite
      --host ADDRESS          numeric address to listen on (default 127.0.0.1)
      --port N                TCP port, 0 for an ephemeral one (default 8080)
      --master-key-file PATH  32 raw bytes, readable by its owner only (default: <data-dir>/master-key,
                              generated on first start); every process sharing a PostgreSQL database
                              must be given the same key
      --issuer URL            the public base URL (default http://HOST:PORT)
      --max-connections-per-address N
                              connections one IP address may hold open (default 128, 0: no limit; behind a
                              reverse proxy every connection comes from the proxy: raise it or use 0)
      --request-head-timeout SECONDS
                              time a connection has to send a complete request head (default 10)
      --client-auth-failures N/SECONDS
                              failed client authentications per client id before 429 (default 20/60, 0 off)
      --device-signature-failures N/SECONDS
                              failed device signatures per key id before rate_limited (default 20/60, 0 off)
      --pending-requests-per-user N
                              pending requests per user and application (default 5, 0 off)
      --drain-seconds N       on SIGTERM or SIGINT, how long in-flight requests may take to finish while new
                              ones get 503 with Retry-After (default 10, 0: cancel them at once)
    """

    /// The parsed command line.
    struct Options: Equatable {
        var dataDirectory = "./faceseal-data"
        var database: String?
        var host = "127.0.0.1"
        var port = 8080
        var masterKeyFile: String?
        var issuer: String?
        var maxConnectionsPerAddress = HTTPServer.Configuration().perAddressConnectionLimit
        var requestHeadTimeout = Int(HTTPServer.Configuration().requestHeadTimeout.components.seconds)
        var rateLimits = RateLimits()
        var drainSeconds = 10
    }

    /// A command line that cannot be run.
    enum ArgumentError: Error, Equatable, CustomStringConvertible {
        case unknownFlag(String)
        case missingValue(String)
        case badPort(String)
        case badValue(flag: String, reason: String)

        var description: String {
            switch self {
            case .unknownFlag(let flag): "unknown option '\(flag)'"
            case .missingValue(let flag): "option \(flag) needs a value"
            case .badPort(let value): "--port must be a number from 0 to 65535, got '\(value)'"
            case .badValue(let flag, let reason): "\(flag): \(reason)"
            }
        }
    }

    /// Parses `--flag value` and `--flag=value` forms.
    static func parse(_ arguments: [String]) throws(ArgumentError) -> Options {
        var options = Options()
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            var flag = argument
            var inlineValue: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                flag = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            func value() throws(ArgumentError) -> String {
                if let inlineValue { return inlineValue }
                guard index < arguments.count, !arguments[index].hasPrefix("--") else { throw .missingValue(flag) }
                index += 1
                return arguments[index - 1]
            }
            switch flag {
            case "--data-dir":
                let directory = try value()
                guard !directory.isEmpty else { throw .badValue(flag: flag, reason: "empty path") }
                options.dataDirectory = directory
            case "--database":
                let url = try value()
                guard url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") else {
                    throw .badValue(flag: flag, reason: "expected a postgres:// URL (SQLite is the default, under --data-dir)")
                }
                options.database = url
            case "--host":
                let host = try value()
                guard !host.isEmpty else { throw .badValue(flag: flag, reason: "empty address") }
                options.host = host
            case "--port":
                let text = try value()
                guard let port = Int(text), (0...65_535).contains(port) else { throw .badPort(text) }
                options.port = port
            case "--master-key-file":
                let path = try value()
                guard !path.isEmpty else { throw .badValue(flag: flag, reason: "empty path") }
                options.masterKeyFile = path
            case "--issuer":
                let issuer = try value()
                guard let url = URL(string: issuer), url.scheme == "https" || url.scheme == "http", url.host != nil else {
                    throw .badValue(flag: flag, reason: "expected an http(s) URL")
                }
                options.issuer = issuer
            case "--max-connections-per-address":
                options.maxConnectionsPerAddress = try count(try value(), flag: flag, in: 0...65_536)
            case "--request-head-timeout":
                options.requestHeadTimeout = try count(try value(), flag: flag, in: 1...3_600)
            case "--client-auth-failures":
                options.rateLimits.clientAuthenticationFailures = try failureLimit(try value(), flag: flag)
            case "--device-signature-failures":
                options.rateLimits.deviceSignatureFailures = try failureLimit(try value(), flag: flag)
            case "--drain-seconds":
                options.drainSeconds = try count(try value(), flag: flag, in: 0...3_600)
            case "--pending-requests-per-user":
                options.rateLimits.pendingRequestsPerUser = try count(try value(), flag: flag, in: 0...1_000)
            default:
                throw .unknownFlag(argument)
            }
        }
        return options
    }

    private static func count(_ text: String, flag: String, in range: ClosedRange<Int>) throws(ArgumentError) -> Int {
        guard text.utf8.count <= 6, let number = Int(text), range.contains(number) else {
            throw .badValue(flag: flag, reason: "expected a number from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }

    /// `N/SECONDS`: at most N failures per window of SECONDS (N = 0 switches the limit off).
    private static func failureLimit(_ text: String, flag: String) throws(ArgumentError) -> RateLimits.FailureLimit {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 2 else { throw .badValue(flag: flag, reason: "expected N/SECONDS, e.g. 20/60") }
        return RateLimits.FailureLimit(limit: try count(parts[0], flag: flag, in: 0...100_000),
                                       window: try count(parts[1], flag: flag, in: 1...86_400))
    }

    static func run(_ arguments: [String]) async -> Int32 {
        if arguments.contains("--help") || arguments.contains("-h") {
            print(usage)
            return 0
        }
        let options: Options
        do {
            options = try parse(arguments)
        } catch {
            printError("faceseal serve: \(error)\n\(usage)")
            return 64
        }
        do {
            try await serve(options)
            return 0
        } catch {
            printError("faceseal serve: \(error)")
            return 1
        }
    }

    private static func serve(_ options: Options) async throws {
        let server = HTTPServer.Configuration(host: options.host, port: options.port,
                                              perAddressConnectionLimit: options.maxConnectionsPerAddress,
                                              requestHeadTimeout: .seconds(options.requestHeadTimeout))
        let settings = AuthorityService.Settings(dataDirectory: options.dataDirectory, database: options.database,
                                                 masterKeyFile: options.masterKeyFile, server: server, issuer: options.issuer,
                                                 rateLimits: options.rateLimits, drainTime: .seconds(options.drainSeconds))
        try await AuthorityService.run(settings) { line in
            // At once, one line each: a supervisor reads the listening URL from standard output.
            FileHandle.standardOutput.write(Data((line + "\n").utf8))
        }
    }
}
