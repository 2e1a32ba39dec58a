import FaceSealAuthority
import FaceSealHTTP
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `faceseal serve`: runs the authority until SIGINT or SIGTERM.
enum Serve {
    static let spec = CommandSpec(
        name: "serve", summary: "Run the authority until SIGINT or SIGTERM.",
        details: """
        Every setting can also come from a configuration file (--config FILE: `key = value` lines, the keys being the
        option names, e.g. `port = 8080`; see deploy/faceseal.conf) or from an environment variable FACESEAL_<KEY>
        (e.g. FACESEAL_PORT=8080, FACESEAL_DATA_DIR=/var/lib/faceseal). A flag wins over the environment, the
        environment over the file. --print-config shows the effective configuration (a database password is
        never shown) and exits.
        """,
        options: [
            .value("config", "FILE", "read settings from FILE (also FACESEAL_CONFIG)"),
            .flag("print-config", "print the effective configuration and where each value came from, then exit"),
        ] + ServeConfiguration.settings.map { .value($0.name, $0.valueName, $0.help) })

    /// The configuration from the file (`--config` or `FACESEAL_CONFIG`), the environment and the flags.
    static func configuration(_ parsed: ParsedArguments, environment: [String: String]) throws(ServeCommandError)
        -> (ServeConfiguration, [String: ServeConfiguration.Source]) {
        var file: (path: String, entries: [ServeConfiguration.FileEntry])?
        if let path = parsed.string("config") ?? environment["FACESEAL_CONFIG"] {
            let text = try readConfigurationFile(path)
            do { file = (path, try ServeConfiguration.parseFile(text, path: path)) } catch { throw .configuration(error) }
        }
        var flags: [String: String] = [:]
        for setting in ServeConfiguration.settings { flags[setting.name] = parsed.string(setting.name) }
        do {
            return try ServeConfiguration.resolve(file: file, environment: environment, flags: flags)
        } catch {
            throw .configuration(error)
        }
    }

    /// The file's text: a regular file of at most the format's limit, UTF-8.
    private static func readConfigurationFile(_ path: String) throws(ServeCommandError) -> String {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw .cannotRead(path) }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: ServeConfiguration.maxFileBytes + 1) ?? Data() else { throw .cannotRead(path) }
        guard data.count <= ServeConfiguration.maxFileBytes else {
            throw .configuration(.fileTooLarge(path: path, limit: ServeConfiguration.maxFileBytes))
        }
        guard let text = String(data: data, encoding: .utf8) else { throw .notUTF8(path) }
        return text
    }

    static func run(_ parsed: ParsedArguments, environment: [String: String] = ProcessInfo.processInfo.environment) async -> Int32 {
        let options: ServeConfiguration
        do {
            let (configuration, sources) = try configuration(parsed, environment: environment)
            if parsed.flag("print-config") {
                print(configuration.rendered(sources: sources))
                return 0
            }
            options = configuration
        } catch {
            printError("faceseal serve: \(error)")
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

    private static func serve(_ options: ServeConfiguration) async throws {
        let server = HTTPServer.Configuration(host: options.host, port: options.port,
                                              perAddressConnectionLimit: options.maxConnectionsPerAddress,
                                              requestHeadTimeout: .seconds(options.requestHeadTimeout))
        let settings = AuthorityService.Settings(dataDirectory: options.dataDirectory, database: options.database,
                                                 masterKeyFile: options.masterKeyFile, server: server, issuer: options.issuer,
                                                 rateLimits: options.rateLimits, drainTime: .seconds(options.drainSeconds),
                                                 adminPort: options.adminPort,
                                                 log: .standardError(level: options.logLevel, format: options.logFormat),
                                                 callbackDestinations: options.callbackDestinations,
                                                 requestRetention: options.requestRetention, auditRetention: options.auditRetention)
        try await AuthorityService.run(settings) { line in
            // At once, one line each: a supervisor reads the listening URL from standard output.
            FileHandle.standardOutput.write(Data((line + "\n").utf8))
        }
    }
}

/// A configuration `faceseal serve` cannot start with (exit 64).
enum ServeCommandError: Error, CustomStringConvertible {
    case cannotRead(String)
    case notUTF8(String)
    case configuration(ServeConfigurationError)

    var description: String {
        switch self {
        case .cannotRead(let path): "Cannot read the configuration file \(path)."
        case .notUTF8(let path): "The configuration file \(path) is not UTF-8 text."
        case .configuration(let error): error.description
        }
    }
}

/// Writes `text` and a newline to a new file readable by its owner only (an existing file is replaced).
func writeSecretFile(_ text: String, to path: String) throws(ServeError) {
    unlink(path)
    let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else { throw .cannotWrite(path) }
    defer { close(descriptor) }
    let bytes = Array((text + "\n").utf8)
    guard write(descriptor, bytes, bytes.count) == bytes.count else { throw .cannotWrite(path) }
}

/// A secret file could not be written.
enum ServeError: Error, CustomStringConvertible {
    case cannotWrite(String)

    var description: String {
        switch self {
        case .cannotWrite(let path): "cannot write \(path)"
        }
    }
}
