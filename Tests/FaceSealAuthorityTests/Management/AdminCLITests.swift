import FaceSealCrypto
import FaceSealHTTP
import FaceSealWire
import FaceSealTestSupport
import Foundation
import Testing
@testable import FaceSealAuthority

/// Runs the built `faceseal` binary (next to the test bundle) against a test authority.
struct AdminCLI {
    let harness: AuthorityHarness
    let keyFile: String

    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
        var json: JSONValue { (try? JSONValue.parse(Array(stdout.utf8))) ?? .null }
    }

    /// `faceseal admin --url <authority> --api-key-file <file> <arguments>`.
    func admin(_ arguments: [String], keyFile: String? = nil, environment: [String: String] = [:], useKeyFile: Bool = true) async throws -> Result {
        let binary = try FacesealBinary.path
        var full = ["admin", "--url", harness.baseURL.absoluteString]
        if useKeyFile { full += ["--api-key-file", keyFile ?? self.keyFile] }
        full += arguments
        let command = full
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                // posix_spawn, not Foundation.Process: see SpawnedProcess.
                let process: SpawnedProcess
                do {
                    process = try SpawnedProcess(binary: binary, arguments: command, environment: environment)
                } catch {
                    continuation.resume(throwing: error)
                    return
                }
                let stdout = process.output.readDataToEndOfFile()
                let stderr = process.errors.readDataToEndOfFile()
                let status = process.wait()
                continuation.resume(returning: Result(status: status, stdout: String(decoding: stdout, as: UTF8.self),
                                                      stderr: String(decoding: stderr, as: UTF8.self)))
            }
        }
    }
}

/// A file holding `key`, mode 0600, removed by the caller.
func writeKeyFile(_ key: String) throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("faceseal-key-\(UUID().uuidString)").path
    guard FileManager.default.createFile(atPath: path, contents: Data((key + "\n").utf8), attributes: [.posixPermissions: 0o600]) else {
        throw CocoaError(.fileWriteUnknown)
    }
    return path
}

@Suite("faceseal admin: the CLI against a test authority")
struct AdminCLITests {
    @Test("tenant, app, user, invite, devices, revoke, terminate, audit through the binary; --json parses", arguments: StoreBackend.underTest)
    func endToEnd(backend: StoreBackend) async throws {
        try await withManagement(backend) { admin in
            let keyFile = try writeKeyFile(admin.key!)
            defer { try? FileManager.default.removeItem(atPath: keyFile) }
            let cli = AdminCLI(harness: admin.harness, keyFile: keyFile)

            let tenant = try await cli.admin(["tenant", "create", "--id", "acme", "--name", "Acme Corp", "--attempts-max", "4",
                                              "--liveness-required", "false", "--json"])
            #expect(tenant.status == 0, "\(tenant.stderr)")
            #expect(tenant.json["policy"]?["attempts_max"]?.integerValue == 4)
            #expect(try await admin.harness.store.tenant(id: "acme").policy.livenessRequired == false)

            let policy = try await cli.admin(["tenant", "policy", "acme", "--request-lifetime", "120", "--password-mode", "optional"])
            #expect(policy.status == 0, "\(policy.stderr)")
            #expect(policy.stdout.contains("request lifetime     120 s"))
            let list = try await cli.admin(["tenant", "list"])
            #expect(list.status == 0)
            #expect(list.stdout.hasPrefix("TENANT") && list.stdout.contains("acme"))

            let app = try await cli.admin(["app", "create", "--tenant", "acme", "--label", "Shop", "--delivery-endpoint", "https://rp.example/d",
                                           "--primary-color", "#102030", "--redirect-uris", "https://rp.example/cb http://127.0.0.1:9/cb", "--json"])
            #expect(app.status == 0, "\(app.stderr)")
            let clientID = try #require(app.json["client_id"]?.stringValue)
            #expect(try await admin.harness.store.application(clientID: clientID).redirectURIs == ["https://rp.example/cb", "http://127.0.0.1:9/cb"])
            let secret = try #require(app.json["client_secret"]?.stringValue)
            #expect(try await admin.harness.store.application(clientID: clientID).credential == .secretHash(ClientSecret.hash(secret)))
            let updated = try await cli.admin(["app", "update", clientID, "--tenant", "acme", "--delivery-mode", "ping",
                                               "--notification-endpoint", "http://127.0.0.1:9/ping"])
            #expect(updated.status == 0, "\(updated.stderr)")
            #expect(updated.stdout.contains("delivery mode          ping"))
            #expect(!updated.stdout.contains("client secret"))

            let user = try await cli.admin(["user", "create", "--tenant", "acme", "--email", "Alice@Example.com", "--json"])
            let subject = try #require(user.json["subject"]?.stringValue)
            #expect(user.json["email"]?.stringValue == "alice@example.com")
            let shown = try await cli.admin(["user", "show", "alice@example.com", "--tenant", "acme"])
            #expect(shown.status == 0 && shown.stdout.contains(subject))

            let invite = try await cli.admin(["invite", "create", "--tenant", "acme", "--email", "alice@example.com", "--client-id", clientID, "--json"])
            #expect(invite.status == 0, "\(invite.stderr)")
            let link = try #require(invite.json["link"]?.stringValue)
            let now = Int64(admin.harness.clock.now().timeIntervalSince1970)
            let claims = try LinkSignature.parse(Array(link.utf8)).verify(with: admin.harness.authority.keys.deviceKey.publicKey, now: now)
            #expect(claims.kind == .enrolment && claims.akey != nil)
            let human = try await cli.admin(["invite", "create", "--tenant", "acme", "--subject", subject, "--client-id", clientID])
            #expect(human.status == 0)
            #expect(human.stdout.contains("enrolment link:\n") && human.stdout.contains("/l/"))

            let invitationID = try #require(invite.json["id"]?.stringValue)
            _ = try await admin.harness.store.enrol(StoreFixtures.enrolmentRequest(
                invitationID: invitationID, enrolmentID: "enr-1", deviceID: "device-1", keyPrefix: "k1", token: StoreFixtures.faceToken(subject: subject)))
            let devices = try await cli.admin(["devices", "list", "--tenant", "acme", "--email", "alice@example.com", "--json"])
            #expect(devices.status == 0, "\(devices.stderr)")
            #expect(devices.json["devices"]?[0]?["keys"]?[1]?["key_id"]?.stringValue == "k1-present")
            let table = try await cli.admin(["devices", "list", "--tenant", "acme"])
            #expect(table.stdout.contains("k1-present:user_present:active"))

            let revoked = try await cli.admin(["revoke", "enr-1", "--tenant", "acme"])
            #expect(revoked.status == 0, "\(revoked.stderr)")
            #expect(try await admin.harness.store.deviceKey(keyID: "k1-present").status == .revoked)
            let terminate = try await cli.admin(["terminate", "enr-1", "--tenant", "acme"])
            #expect(terminate.status == 1)
            #expect(terminate.stderr.contains("HTTP 409 conflict"))

            let audit = try await cli.admin(["audit", "--tenant", "acme", "--limit", "2", "--json"])
            #expect(audit.json["events"]?.arrayValue?.compactMap { $0["kind"]?.stringValue } == ["device.revoked", "invitation.created"])

            // A tenant key from the environment; another tenant is 403 → exit 1.
            let key = try await cli.admin(["apikey", "create", "--tenant", "acme", "--label", "ops", "--json"])
            let tenantKey = try #require(key.json["key"]?.stringValue)
            let other = try await cli.admin(["tenant", "show", "beta"], environment: ["FACESEAL_API_KEY": tenantKey], useKeyFile: false)
            #expect(other.status == 1)
            #expect(other.stderr.contains("HTTP 403 forbidden"))
            let own = try await cli.admin(["tenant", "show", "acme", "--json"], environment: ["FACESEAL_API_KEY": tenantKey], useKeyFile: false)
            #expect(own.status == 0 && own.json["id"]?.stringValue == "acme")
        }
    }

    @Test("usage errors exit 64 and change nothing; refusals and a wrong key exit 1", arguments: StoreBackend.underTest)
    func errors(backend: StoreBackend) async throws {
        try await withManagement(backend) { admin in
            let keyFile = try writeKeyFile(admin.key!)
            let wrongKeyFile = try writeKeyFile("fsk_" + Base64URL.encode(SecureRandom.bytes(count: 32)))
            defer {
                try? FileManager.default.removeItem(atPath: keyFile)
                try? FileManager.default.removeItem(atPath: wrongKeyFile)
            }
            let cli = AdminCLI(harness: admin.harness, keyFile: keyFile)
            let usage: [[String]] = [
                [],
                ["frobnicate"],
                ["tenant"],
                ["tenant", "create", "--id", "acme"],
                ["tenant", "create", "--id", "acme", "--name", "A", "--attempts-max", "four"],
                ["tenant", "create", "--id", "acme", "--name", "A", "--colour", "red"],
                ["tenant", "create", "--id", "acme", "--name", "A", "--name", "B"],
                ["tenant", "list", "extra"],
                ["tenant", "policy", "acme"],
                ["invite", "create", "--tenant", "acme", "--client-id", "x"],
                ["--api-key", "fsk_abc", "tenant", "list"],
                ["revoke", "--tenant", "acme"],
            ]
            for arguments in usage {
                let result = try await cli.admin(arguments)
                #expect(result.status == 64, "\(arguments): \(result.stderr)")
                #expect(result.stderr.hasPrefix("faceseal admin"), "\(arguments)")
            }
            let noKey = try await cli.admin(["tenant", "list"], useKeyFile: false)
            #expect(noKey.status == 64 && noKey.stderr.contains("FACESEAL_API_KEY"))
            #expect(try await admin.harness.store.tenants().isEmpty)

            let refused = try await cli.admin(["tenant", "create", "--id", "acme", "--name", "A", "--attempts-max", "11"])
            #expect(refused.status == 1)
            #expect(refused.stderr.contains("HTTP 400 invalid_field"))
            let wrongKey = try await cli.admin(["tenant", "list"], keyFile: wrongKeyFile)
            #expect(wrongKey.status == 1 && wrongKey.stderr.contains("HTTP 401 invalid_token"))
            let missingFile = try await cli.admin(["tenant", "list"], keyFile: "/nonexistent/key")
            #expect(missingFile.status == 1 && missingFile.stderr.contains("cannot read API key file"))
            #expect(try await admin.harness.store.tenants().isEmpty)
            let help = try await cli.admin(["--help"])
            #expect(help.status == 0 && help.stdout.contains("usage: faceseal admin"))
        }
    }
}
