import FaceSealAuthority
import FaceSealHTTP
import Testing

/// `ServeConfiguration`: the file format, the precedence flags > environment > file > defaults, and typed errors that
/// name the file and line (or the variable, or the flag).
@Suite struct ServeConfigurationTests {
    static let file = """
    # the authority
    data-dir = /var/lib/faceseal
    port = 9000   # a comment after a value
    issuer = "https://id.example.com"
    host = 0.0.0.0

    client-auth-failures = 10/30
    """

    @Test func theFileIsReadKeyEqualsValue() throws {
        let entries = try ServeConfiguration.parseFile(Self.file, path: "f.conf")
        #expect(entries.map(\.key) == ["data-dir", "port", "issuer", "host", "client-auth-failures"])
        #expect(entries.map(\.line) == [2, 3, 4, 5, 7])
        let (configuration, sources) = try ServeConfiguration.resolve(file: ("f.conf", entries))
        #expect(configuration.dataDirectory == "/var/lib/faceseal")
        #expect(configuration.port == 9000)
        #expect(configuration.issuer == "https://id.example.com")
        #expect(configuration.host == "0.0.0.0")
        #expect(configuration.rateLimits.clientAuthenticationFailures == RateLimits.FailureLimit(limit: 10, window: 30))
        #expect(configuration.rateLimits.deviceSignatureFailures == RateLimits().deviceSignatureFailures)
        #expect(sources["port"] == .file(path: "f.conf", line: 3))
        #expect(sources["pending-requests-per-user"] == nil)
    }

    @Test func flagsWinOverTheEnvironmentWhichWinsOverTheFile() throws {
        let entries = try ServeConfiguration.parseFile(Self.file, path: "f.conf")
        let environment = ["FACESEAL_PORT": "9001", "FACESEAL_DATA_DIR": "/srv/faceseal", "FACESEAL_API_KEY": "not a serve setting"]
        let (configuration, sources) = try ServeConfiguration.resolve(file: ("f.conf", entries), environment: environment,
                                                                      flags: ["port": "9002"])
        #expect(configuration.port == 9002)
        #expect(sources["port"] == .flag("port"))
        #expect(configuration.dataDirectory == "/srv/faceseal")
        #expect(sources["data-dir"] == .environment("FACESEAL_DATA_DIR"))
        #expect(configuration.issuer == "https://id.example.com")
        let defaults = try ServeConfiguration.resolve().0
        #expect(defaults == ServeConfiguration())
        #expect(defaults.port == 8080 && defaults.host == "127.0.0.1" && defaults.dataDirectory == "./faceseal-data")
    }

    @Test func everySettingHasAFlagAndAnEnvironmentVariable() throws {
        let names = ServeConfiguration.settings.map(\.name)
        #expect(Set(names).count == names.count)
        #expect(names.contains("port") && names.contains("database") && names.contains("master-key-file"))
        for setting in ServeConfiguration.settings {
            #expect(setting.environmentName == "FACESEAL_" + setting.name.uppercased().replacingOccurrences(of: "-", with: "_"))
        }
        let (configuration, _) = try ServeConfiguration.resolve(environment: [
            "FACESEAL_MAX_CONNECTIONS_PER_ADDRESS": "0", "FACESEAL_REQUEST_HEAD_TIMEOUT": "30",
            "FACESEAL_DEVICE_SIGNATURE_FAILURES": "0/60", "FACESEAL_PENDING_REQUESTS_PER_USER": "0",
            "FACESEAL_MASTER_KEY_FILE": "/etc/faceseal/master-key", "FACESEAL_DATABASE": "postgres://faceseal@db/faceseal",
        ])
        #expect(configuration.maxConnectionsPerAddress == 0)
        #expect(configuration.requestHeadTimeout == 30)
        #expect(configuration.rateLimits.deviceSignatureFailures.limit == 0)
        #expect(configuration.rateLimits.pendingRequestsPerUser == 0)
        #expect(configuration.masterKeyFile == "/etc/faceseal/master-key")
        #expect(configuration.database == "postgres://faceseal@db/faceseal")
    }

    @Test func failureBudgetsAndTrustedProxies() throws {
        let (configuration, _) = try ServeConfiguration.resolve(flags: [
            "client-auth-failures": "5/30/12", "device-signature-failures": "4/60", "trusted-proxies": "10.0.0.1, ::1",
        ])
        #expect(configuration.rateLimits.clientAuthenticationFailures == RateLimits.FailureLimit(limit: 5, window: 30, totalLimit: 12))
        #expect(configuration.rateLimits.deviceSignatureFailures.totalLimit == 40)
        #expect(configuration.rateLimits.trustedProxies == [IPAddress("10.0.0.1")!, IPAddress("::1")!])
        #expect(try ServeConfiguration.resolve().0.rateLimits.trustedProxies.isEmpty)
        for bad in ["10.0.0.1,", "proxy.example", "10.0.0.1, 10.0.0.300"] {
            #expect(throws: ServeConfigurationError.self) { try ServeConfiguration.resolve(flags: ["trusted-proxies": bad]) }
        }
        #expect(throws: ServeConfigurationError.self) { try ServeConfiguration.resolve(flags: ["client-auth-failures": "5/30/x"]) }
    }

    @Test func callbackDestinationsArePublicUnlessSaid() throws {
        #expect(try ServeConfiguration.resolve().0.callbackDestinations == .publicOnly)
        #expect(try ServeConfiguration.resolve(flags: ["callback-destinations": "any"]).0.callbackDestinations == .any)
        #expect(try ServeConfiguration.resolve(flags: ["callback-destinations": "public"]).0.callbackDestinations == .publicOnly)
        #expect(throws: ServeConfigurationError.self) { try ServeConfiguration.resolve(flags: ["callback-destinations": "private"]) }
    }

    @Test func requestRetentionIsADayUnlessSaid() throws {
        #expect(try ServeConfiguration.resolve().0.requestRetention == 86_400)
        #expect(try ServeConfiguration.resolve(flags: ["request-retention": "0"]).0.requestRetention == nil)
        #expect(try ServeConfiguration.resolve(environment: ["FACESEAL_REQUEST_RETENTION": "3600"]).0.requestRetention == 3_600)
        for bad in ["-1", "1e3", "9999999999999", "", "1 day"] {
            #expect(throws: ServeConfigurationError.self) { try ServeConfiguration.resolve(flags: ["request-retention": bad]) }
        }
    }

    @Test func auditIsKeptWholeUnlessSaid() throws {
        #expect(try ServeConfiguration.resolve().0.auditRetention == nil)
        #expect(try ServeConfiguration.resolve(flags: ["audit-retention": "0"]).0.auditRetention == nil)
        #expect(try ServeConfiguration.resolve(flags: ["audit-retention": "31622400"]).0.auditRetention == 31_622_400)
        #expect(try ServeConfiguration.resolve(environment: ["FACESEAL_AUDIT_RETENTION": "86400"]).0.auditRetention == 86_400)
        for bad in ["-1", "1e3", "316224001", "", "1 year"] {
            #expect(throws: ServeConfigurationError.self) { try ServeConfiguration.resolve(flags: ["audit-retention": bad]) }
        }
    }

    @Test(arguments: [
        ("port = 9000\nport = 9001\n", "f.conf:2: port is already set on line 1."),
        ("port 9000\n", "f.conf:1: expected key = value."),
        ("Port = 1\n", "f.conf:1: a key is lower-case letters, digits and '-', e.g. data-dir."),
        ("issuer = \"https://x\n", "f.conf:1: a quoted value without its closing quote."),
        ("issuer = \"https://x\" trailing\n", "f.conf:1: text after the closing quote."),
        ("host = \u{7}\n", "f.conf:1: a control character."),
        ("\n\n# fine\nportt = 1\n", "f.conf:4: there is no setting 'portt'."),
        ("\nport = 65536\n", "f.conf:2: port '65536' is not valid: expected a whole number from 0 to 65535."),
        ("client-auth-failures = 5\n", "f.conf:1: client-auth-failures '5' is not valid: expected N/SECONDS"),
        ("issuer = ftp://x\n", "f.conf:1: issuer 'ftp://x' is not valid"),
        ("host = localhost\n", "f.conf:1: host 'localhost' is not valid: expected a numeric IPv4 or IPv6 address"),
        ("database = mysql://root:hunter2@db\n", "f.conf:1: database (value not shown) is not valid"),
    ])
    func aBadFileIsRefusedWithItsLine(text: String, message: String) throws {
        let error = #expect(throws: ServeConfigurationError.self) {
            try ServeConfiguration.resolve(file: ("f.conf", try ServeConfiguration.parseFile(text, path: "f.conf")))
        }
        #expect(error?.description.hasPrefix(message) == true, "\(error?.description ?? "")")
        #expect(error?.description.contains("hunter2") == false)
    }

    @Test func badEnvironmentAndFlagValuesNameTheirSource() {
        let fromEnvironment = #expect(throws: ServeConfigurationError.self) {
            try ServeConfiguration.resolve(environment: ["FACESEAL_PORT": "x"])
        }
        #expect(fromEnvironment?.description == "FACESEAL_PORT 'x' is not valid: expected a whole number from 0 to 65535.")
        let fromFlag = #expect(throws: ServeConfigurationError.self) { try ServeConfiguration.resolve(flags: ["request-head-timeout": "0"]) }
        #expect(fromFlag?.description == "--request-head-timeout '0' is not valid: expected a whole number from 1 to 3600.")
    }

    @Test func theFileHasLimits() {
        let large = String(repeating: "# padding\n", count: 7_000)
        #expect(throws: ServeConfigurationError.fileTooLarge(path: "f", limit: ServeConfiguration.maxFileBytes)) {
            try ServeConfiguration.parseFile(large, path: "f")
        }
        #expect(throws: ServeConfigurationError.self) { try ServeConfiguration.parseFile(String(repeating: "\n", count: 1_002), path: "f") }
        #expect(throws: ServeConfigurationError.self) { try ServeConfiguration.parseFile("issuer = " + String(repeating: "a", count: 5_000), path: "f") }
    }

    @Test func theRenderedConfigurationLoadsBackAndHidesTheDatabasePassword() throws {
        let (configuration, sources) = try ServeConfiguration.resolve(
            environment: ["FACESEAL_DATABASE": "postgres://faceseal:hunter2@db:5432/faceseal?password=hunter3&sslmode=require"],
            flags: ["data-dir": "/srv/my #data", "port": "0"])
        let text = configuration.rendered(sources: sources)
        #expect(!text.contains("hunter2") && !text.contains("hunter3"), "\(text)")
        #expect(text.contains("database = postgres://faceseal:REDACTED@db:5432/faceseal?password=REDACTED&sslmode=require  # FACESEAL_DATABASE"))
        #expect(text.contains("port = 0  # --port"))
        #expect(text.contains("host = 127.0.0.1  # default"))
        #expect(text.contains("# issuer is not set"))
        let reloaded = try ServeConfiguration.resolve(file: ("printed", try ServeConfiguration.parseFile(text, path: "printed"))).0
        #expect(reloaded.dataDirectory == "/srv/my #data")
        #expect(reloaded.port == 0)
        var expected = configuration
        expected.database = "postgres://faceseal:REDACTED@db:5432/faceseal?password=REDACTED&sslmode=require"
        #expect(reloaded == expected)
    }
}
