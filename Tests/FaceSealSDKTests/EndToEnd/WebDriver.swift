import FaceSealHTTP
import FaceSealTestSupport
import Foundation
import Testing

/// A headless Debian Chromium driven over the W3C WebDriver protocol by Debian's `chromedriver` (a child process on
/// a loopback port it picks). Element look-ups use WebDriver's implicit wait, so the test never sleeps: the browser
/// itself waits for the element to appear (a page's script navigating on, a redirect landing).
struct WebDriver {
    static let chromium = "/usr/bin/chromium"
    static let chromedriver = "/usr/bin/chromedriver"

    /// Whether the browser tests can run here; under `CI=true` they must (a missing browser is a failure).
    static var available: Bool {
        [chromium, chromedriver].allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
            || ProcessInfo.processInfo.environment["CI"] == "true"
    }

    let driver: ChildProcess
    let base: String
    let session: String
    let client = HTTPClient(configuration: HTTPClient.Configuration(maxResponseBodySize: 32 << 20))
    /// Where screenshots go.
    let artefacts: URL

    /// Starts chromedriver and one headless Chromium session (its own profile in `profile`).
    static func start(profile: URL, artefacts: URL, implicitWait: Duration = .seconds(90)) async throws -> WebDriver {
        try #require(FileManager.default.isExecutableFile(atPath: chromium), "install Debian's chromium (make setup)")
        try #require(FileManager.default.isExecutableFile(atPath: chromedriver), "install Debian's chromium-driver (make setup)")
        let driver = try ChildProcess.start(chromedriver, ["--port=0"])
        do {
            return try await session(of: driver, profile: profile, artefacts: artefacts, implicitWait: implicitWait)
        } catch {
            driver.stop(SIGKILL)
            throw error
        }
    }

    private static func session(of driver: ChildProcess, profile: URL, artefacts: URL, implicitWait: Duration) async throws -> WebDriver {
        let started = try await driver.line(containing: "started successfully on port ", within: .seconds(30))
        let port = try #require(started.split(separator: " ").last.map { $0.trimmingCharacters(in: CharacterSet(charactersIn: ".")) })
        let base = "http://127.0.0.1:\(port)"
        let capabilities: [String: Any] = ["capabilities": ["alwaysMatch": [
            "browserName": "chrome",
            "goog:chromeOptions": [
                "binary": chromium,
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=900,1000",
                         "--no-first-run", "--disable-extensions", "--user-data-dir=\(profile.path)"],
            ] as [String: Any],
        ] as [String: Any]]]
        var driverSession = WebDriver(driver: driver, base: base, session: "", artefacts: artefacts)
        let created = try await driverSession.command(.post, "/session", capabilities)
        let session = try #require((created as? [String: Any])?["sessionId"] as? String, "no session: \(String(describing: created))")
        driverSession = WebDriver(driver: driver, base: base, session: session, artefacts: artefacts)
        let milliseconds = Int(implicitWait.components.seconds) * 1000
        _ = try await driverSession.command(.post, "/session/\(session)/timeouts", ["implicit": milliseconds, "pageLoad": 60_000])
        return driverSession
    }

    /// One WebDriver command; its `value`.
    @discardableResult
    func command(_ method: HTTPMethod, _ path: String, _ body: [String: Any]? = nil) async throws -> Any? {
        let url = try #require(URL(string: base + path))
        var headers: HTTPHeaders = [:]
        var bytes: [UInt8] = []
        if let body {
            headers["Content-Type"] = "application/json"
            bytes = Array(try JSONSerialization.data(withJSONObject: body))
        }
        let response = try await client.send(HTTPClientRequest(method: method, url: url, headers: headers, body: bytes, timeout: .seconds(180)))
        let json = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
        try #require(response.status.code == 200, "WebDriver \(method) \(path): \(String(decoding: response.body.prefix(2000), as: UTF8.self))")
        return json?["value"]
    }

    func open(_ url: String) async throws { try await command(.post, "/session/\(session)/url", ["url": url]) }

    var currentURL: String { get async throws { try #require(try await command(.get, "/session/\(session)/url") as? String) } }

    /// The element matching `selector`, waiting for it up to the implicit wait.
    func element(_ selector: String) async throws -> String {
        let found = try await command(.post, "/session/\(session)/element", ["using": "css selector", "value": selector])
        let object = try #require(found as? [String: Any])
        return try #require(object["element-6066-11e4-a52e-4f735466cecf"] as? String)
    }

    func text(_ selector: String) async throws -> String {
        let id = try await element(selector)
        return try #require(try await command(.get, "/session/\(session)/element/\(id)/text") as? String)
    }

    func attribute(_ selector: String, _ name: String) async throws -> String {
        let id = try await element(selector)
        return try #require(try await command(.get, "/session/\(session)/element/\(id)/attribute/\(name)") as? String)
    }

    func click(_ selector: String) async throws {
        let id = try await element(selector)
        try await command(.post, "/session/\(session)/element/\(id)/click", [:])
    }

    func type(_ selector: String, _ text: String) async throws {
        let id = try await element(selector)
        try await command(.post, "/session/\(session)/element/\(id)/clear", [:])
        try await command(.post, "/session/\(session)/element/\(id)/value", ["text": text])
    }

    /// A PNG of the viewport, written to `<artefacts>/<name>.png`.
    func screenshot(_ name: String) async throws {
        let encoded = try #require(try await command(.get, "/session/\(session)/screenshot") as? String)
        let png = try #require(Data(base64Encoded: encoded))
        try FileManager.default.createDirectory(at: artefacts, withIntermediateDirectories: true)
        try png.write(to: artefacts.appendingPathComponent(name + ".png"))
    }

    /// Ends the session (and so Chromium) and the driver. chromedriver ignores SIGTERM: its own `/shutdown` ends it,
    /// SIGKILL if that fails, so no driver outlives the test (it would keep the test process's descriptors open).
    func quit() async {
        _ = try? await command(.delete, "/session/\(session)")
        if let url = URL(string: base + "/shutdown") { _ = try? await client.send(HTTPClientRequest(url: url, timeout: .seconds(10))) }
        if (try? await driver.exit(within: .seconds(30))) != 0 { driver.stop(SIGKILL) }
    }
}
