import FaceSealHTTP
import FaceSealTestSupport
import Foundation
import Testing

/// BROWSER END-TO-END: `faceseal serve`, `faceseal rp serve` and `faceseal device` as child processes, a real headless
/// Chromium (Debian's, through chromedriver) as the user's browser, real photos as the user's face. Screenshots of
/// every step go to `.build/test-artefacts/browser/`. Under `CI=true` a missing browser or missing face assets fail.
@Suite("Browser end-to-end (Chromium, faceseal serve + rp serve + device)", .serialized)
struct BrowserEndToEndTests {
    static var ready: Bool { WebDriver.available && ProcessEndToEndTests.assetsPresent }
    static let artefacts = FacesealBinary.packageRoot.appendingPathComponent(".build/test-artefacts/browser")

    /// An authority with tenant `acme` (liveness off: still photos), application "Acme Web" served by `rp serve` with
    /// its callback registered, and user ada@example.com enrolled on a device from three photos of one person.
    final class World: Sendable {
        let binary: String
        let root: URL
        let issuer: String
        let admin: ManagementClient
        let clientID: String
        let secret: String
        let rpURL: String
        let redirectURI: String
        let deviceDirectory: String
        let photos: [String]
        let impostor: String
        let children: [ChildProcess]

        init(binary: String, root: URL, issuer: String, admin: ManagementClient, clientID: String, secret: String, rpURL: String,
             redirectURI: String, deviceDirectory: String, photos: [String], impostor: String, children: [ChildProcess]) {
            self.binary = binary
            self.root = root
            self.issuer = issuer
            self.admin = admin
            self.clientID = clientID
            self.secret = secret
            self.rpURL = rpURL
            self.redirectURI = redirectURI
            self.deviceDirectory = deviceDirectory
            self.photos = photos
            self.impostor = impostor
            self.children = children
        }

        static func start() async throws -> World {
            let binary = try FacesealBinary.path
            let photos = try ProcessEndToEndTests.photos("John_Salley")
            let impostor = try #require(try ProcessEndToEndTests.photos("John_Savage").first)
            try #require(photos.count >= 5, "run `make setup`: the johns photos are missing")
            let root = FileManager.default.temporaryDirectory.appendingPathComponent("faceseal-browser-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            var children: [ChildProcess] = []
            do {
                let serve = try await AuthorityProcess.start(dataDirectory: root.appendingPathComponent("authority").path)
                children.append(serve.process)
                let (issuer, admin) = (serve.issuer, serve.management)
                _ = try await admin.send(.post, "/tenants", [
                    "id": "acme", "name": "Acme",
                    "policy": ["attempts_max": 2, "liveness_required": false, "password_policy": ["mode": "none"]] as [String: Any],
                ])
                let application = try await admin.send(.post, "/tenants/acme/applications", [
                    "label": "Acme Web", "branding": ["name": "Acme Web", "primary_color": "#1E7D32"],
                ])
                let clientID = try #require(application["client_id"] as? String)
                let secret = try #require(application["client_secret"] as? String)
                let secretFile = root.appendingPathComponent("client-secret").path
                try Data(secret.utf8).write(to: URL(fileURLWithPath: secretFile))
                let rp = try ChildProcess.start(binary, ["rp", "serve", "--issuer", issuer, "--client-id", clientID, "--client-secret-file",
                                                         secretFile, "--port", "0", "--state-dir", root.appendingPathComponent("rp").path])
                children.append(rp)
                let webLine = try await rp.line(containing: "web page: ", within: .seconds(60))
                // "web page: <url>/ (register the redirect URI <url>/callback)"
                let rpURL = String(try #require(webLine.split(separator: " ").dropFirst(2).first).dropLast())
                let redirectURI = String(try #require(webLine.split(separator: " ").last).dropLast())
                _ = try await admin.send(.patch, "/tenants/acme/applications/\(clientID)", ["redirect_uris": [redirectURI]])
                _ = try await admin.send(.post, "/tenants/acme/users", ["email": "ada@example.com"])
                let link = try #require(try await admin.send(.post, "/tenants/acme/invitations",
                                                             ["email": "ada@example.com", "client_id": clientID])["link"] as? String)
                let deviceDirectory = root.appendingPathComponent("device").path
                let enrol = try ChildProcess.start(binary, ["device", "--state-dir", deviceDirectory, "--presence", "scripted", "enrol", "--link", link,
                                                            "--faces"] + photos.prefix(3))
                #expect(try await enrol.exit(within: .seconds(240)) == 0, "enrol: \(enrol.output)\n\(enrol.errors)")
                return World(binary: binary, root: root, issuer: issuer, admin: admin, clientID: clientID, secret: secret, rpURL: rpURL,
                             redirectURI: redirectURI, deviceDirectory: deviceDirectory, photos: photos, impostor: impostor,
                             children: children)
            } catch {
                for child in children { child.stop() }
                try? FileManager.default.removeItem(at: root)
                throw error
            }
        }

        /// `faceseal device approve --link LINK --faces PHOTO`: its exit status and output.
        func approve(_ link: String, with photo: String) async throws -> (Int32, String) {
            let approve = try ChildProcess.start(binary, ["device", "--state-dir", deviceDirectory, "--presence", "scripted", "approve", "--link", link, "--faces", photo])
            let status = try await approve.exit(within: .seconds(240))
            return (status, approve.output + approve.errors)
        }

        func stop() {
            for child in children { child.stop() }
            try? FileManager.default.removeItem(at: root)
        }
    }

    @Test("(a) the sample application's page → the authority's QR page → approved with real faces → the verified claims; (b) an impostor ends on an error page",
          .enabled(if: ready, "needs Debian chromium + chromium-driver and the face assets (make setup)"), .timeLimit(.minutes(15)))
    func signInWithFaces() async throws {
        let world = try await World.start()
        defer { world.stop() }
        let browser = try await WebDriver.start(profile: world.root.appendingPathComponent("chromium"), artefacts: Self.artefacts)
        do {
            try await signIn(world, browser)
            try await impostor(world, browser)
        } catch {
            try? await browser.screenshot("failure")
            await browser.quit()
            throw error
        }
        await browser.quit()
    }

    private func signIn(_ world: World, _ browser: WebDriver) async throws {
        try await browser.open(world.rpURL + "/")
        try await browser.screenshot("a1-application")
        try await browser.click("#sign-in")
        let link = try await browser.attribute("#signin-link", "href")
        #expect(try await browser.currentURL.hasPrefix(world.issuer + "/authorize?"))
        #expect(try await browser.text("#app-name") == "Sign in to Acme Web")
        let binding = try await browser.text("#binding-message")
        #expect(binding.hasPrefix("Browser code "))
        _ = try await browser.element("#signin svg[role=img]")
        try await browser.screenshot("a2-authority-qr")

        let (status, output) = try await world.approve(link, with: world.photos[3])
        #expect(status == 0, "approve: \(output)")
        #expect(output.contains(binding), "the phone shows the page's binding code: \(output)")
        #expect(try await browser.text("#signed-in") == "Signed in")
        #expect(try await browser.currentURL.hasPrefix(world.redirectURI + "?"))
        #expect(try await browser.text("td[data-claim=iss]") == world.issuer)
        #expect(try await browser.text("td[data-claim=aud]").contains(world.clientID))
        #expect(try await browser.text("td[data-claim=amr]").contains("face"))
        #expect(!(try await browser.text("td[data-claim=nonce]")).isEmpty)
        #expect(try await browser.text("#checks").contains("nonce is this sign-in's"))
        try await browser.screenshot("a3-signed-in")
    }

    private func impostor(_ world: World, _ browser: WebDriver) async throws {
        try await browser.open(world.rpURL + "/")
        try await browser.click("#sign-in")
        let link = try await browser.attribute("#signin-link", "href")
        try await browser.screenshot("b1-authority-qr")
        let (status, output) = try await world.approve(link, with: world.impostor)
        #expect(status == 1, "impostor: \(output)")
        #expect(output.contains("face_mismatch"), "\(output)")
        let error = try await browser.text("#error")
        #expect(error.contains("access_denied"), "\(error)")
        #expect(try await browser.currentURL.hasPrefix(world.redirectURI + "?"))
        try await browser.screenshot("b2-impostor-refused")
    }

    @Test("Authlib (PyPI) as the relying party completes the code flow with PKCE against faceseal serve",
          .enabled(if: ProcessEndToEndTests.assetsPresent, "needs the face assets (make setup)"), .timeLimit(.minutes(10)))
    func authlibCodeFlow() async throws {
        let python = ProcessEndToEndTests.cache.appendingPathComponent("python/bin/python").path
        try #require(FileManager.default.isExecutableFile(atPath: python), "run `make setup`: the Authlib environment is missing")
        let script = FacesealBinary.packageRoot.appendingPathComponent("Tests/Interop/authlib_code_flow.py").path
        let world = try await World.start()
        defer { world.stop() }
        let stateFile = world.root.appendingPathComponent("authlib-state.json").path
        let start = try ChildProcess.start(python, [script, "start", world.issuer, world.clientID, world.secret, world.redirectURI, stateFile])
        #expect(try await start.exit(within: .seconds(60)) == 0, "authlib start: \(start.output)\n\(start.errors)")
        let link = String(try await start.line(containing: "LINK ", within: .seconds(1)).dropFirst("LINK ".count))
        let (status, output) = try await world.approve(link, with: world.photos[4])
        #expect(status == 0, "approve: \(output)")
        let finish = try ChildProcess.start(python, [script, "finish", stateFile])
        #expect(try await finish.exit(within: .seconds(60)) == 0, "authlib finish: \(finish.output)\n\(finish.errors)")
        let claimsLine = try await finish.line(containing: "CLAIMS ", within: .seconds(1))
        let claims = try #require(try JSONSerialization.jsonObject(with: Data(claimsLine.dropFirst("CLAIMS ".count).utf8)) as? [String: Any])
        #expect(claims["iss"] as? String == world.issuer)
        #expect(claims["aud"] as? String == world.clientID || (claims["aud"] as? [String]) == [world.clientID])
        #expect((claims["amr"] as? [String])?.contains("face") == true)
        #expect(claims["nonce"] as? String != nil)
    }

    @Test("(c) the console: sign in, create an application, add and invite a user, see the device after enrolment, revoke it, see the audit entry",
          .enabled(if: ready, "needs Debian chromium + chromium-driver and the face assets (make setup)"), .timeLimit(.minutes(10)))
    func console() async throws {
        let binary = try FacesealBinary.path
        let photos = try ProcessEndToEndTests.photos("John_Salley")
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("faceseal-console-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let serve = try await AuthorityProcess.start(dataDirectory: root.appendingPathComponent("authority").path)
        defer {
            serve.process.stop()
            try? FileManager.default.removeItem(at: root)
        }
        let (issuer, adminKey) = (serve.issuer, serve.management.apiKey)
        // The tenant with still-photo policy; everything after this goes through the console.
        _ = try await serve.management.send(.post, "/tenants", [
            "id": "acme", "name": "Acme", "policy": ["liveness_required": false, "password_policy": ["mode": "none"]] as [String: Any],
        ])

        let browser = try await WebDriver.start(profile: root.appendingPathComponent("chromium"), artefacts: Self.artefacts)
        do {
            try await browser.open(issuer + "/console/")
            try await browser.screenshot("c1-console-sign-in")
            try await browser.type("#api-key", adminKey)
            try await browser.click("#signin-button")
            #expect(try await browser.text("#tenant-list").contains("Acme"))
            #expect(!(try await browser.currentURL).contains(adminKey), "the key never enters a URL")
            try await browser.screenshot("c2-console-tenants")

            try await browser.click("nav button[data-view=applications]")
            try await browser.type("#new-app-label", "Console App")
            try await browser.type("#new-app-redirects", "https://console-app.example/callback")
            try await browser.click("#create-application")
            let clientID = try await browser.text("#shown-client-id")
            #expect(try await browser.text("#shown-secret").count == 43)
            _ = try await browser.element("#application-list tr[data-label='Console App']")
            try await browser.screenshot("c3-console-application")

            try await browser.click("nav button[data-view=users]")
            try await browser.type("#new-user-email", "grace@example.com")
            try await browser.click("#create-user")
            _ = try await browser.element("#user-list tr[data-email='grace@example.com']")

            try await browser.click("nav button[data-view=invitations]")
            try await browser.type("#invite-email", "grace@example.com")
            try await browser.click("#create-invitation")
            let link = try await browser.attribute("#invitation-link", "href")
            #expect(link.hasPrefix(issuer + "/l/"))
            _ = try await browser.element("#invitation-qr[src^='blob:']")
            try await browser.screenshot("c4-console-invitation")

            let enrol = try ChildProcess.start(binary, ["device", "--state-dir", root.appendingPathComponent("device").path, "--presence", "scripted", "enrol",
                                                        "--link", link, "--faces"] + photos.prefix(3))
            #expect(try await enrol.exit(within: .seconds(240)) == 0, "enrol: \(enrol.output)\n\(enrol.errors)")

            try await browser.click("nav button[data-view=devices]")
            let active = try await browser.text("#device-list tr[data-status=active]")
            #expect(active.contains(clientID) && active.contains("active"), "\(active)")
            try await browser.screenshot("c5-console-device")
            try await browser.click("#device-list tr[data-status=active] button.revoke")
            _ = try await browser.element("#device-list tr[data-status=revoked]")
            try await browser.screenshot("c6-console-revoked")

            try await browser.click("nav button[data-view=audit]")
            _ = try await browser.element("#audit-list td[data-kind='device.revoked']")
            #expect(try await browser.text("#audit-list").contains("application.created"))
            try await browser.screenshot("c7-console-audit")
        } catch {
            try? await browser.screenshot("c-failure")
            await browser.quit()
            throw error
        }
        await browser.quit()
    }
}
