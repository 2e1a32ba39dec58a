import FaceSealTestSupport
import Foundation
import FaceSealCrypto
import FaceSealHTTP
import FaceSealWire
import Synchronization
import Testing
@testable import FaceSealAuthority
@testable import FaceSealRelyingParty

/// `faceseal rp serve` and `faceseal rp request` as separate processes against a real authority (in this
/// process, wall clock, 1 s polling). The test plays the device: it delivers to the served delivery endpoint
/// over HTTP with a real ML-DSA key and completes at the authority's store.
@Suite struct CommandLineTests {
    static let secret = "rp-cli-secret-0123456789"
    static let email = "grace@example.com"

    /// A child process whose standard output arrives line by line.
    final class Child: Sendable {
        let process: SpawnedProcess
        let lines: AsyncStream<String>

        init(_ arguments: [String]) throws {
            // posix_spawn, not Foundation.Process (see SpawnedProcess).
            let process = try SpawnedProcess(binary: try FacesealBinary.path, arguments: arguments)
            let (stream, continuation) = AsyncStream.makeStream(of: String.self)
            let reader = process.output
            // A plain thread does the blocking reads, so no concurrency-pool thread waits on the pipe.
            Thread.detachNewThread {
                var buffer = Data()
                while true {
                    let chunk = reader.availableData
                    if chunk.isEmpty { break }
                    buffer.append(chunk)
                    while let newline = buffer.firstIndex(of: 0x0A) {
                        continuation.yield(String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self))
                        buffer.removeSubrange(buffer.startIndex...newline)
                    }
                }
                continuation.finish()
            }
            self.process = process
            self.lines = stream
        }

        /// Reads lines until one satisfies `match`; everything read is appended to `seen`.
        func line(where match: (String) -> Bool, seen: inout [String]) async -> String? {
            for await line in lines {
                seen.append(line)
                if match(line) { return line }
            }
            return nil
        }

        func terminate() {
            process.terminate()
            _ = process.wait()
        }
    }

    @Test func serveAndRequestPrintWhatTheyVerified() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rp-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        // The authority.
        let store = try await SQLAuthorityStore.open(.sqlite(path: directory.appendingPathComponent("authority.sqlite").path))
        _ = try await store.createTenant(TenantRecord(id: "acme", name: "Acme"))
        _ = try await store.createApplication(ApplicationRecord(
            clientID: "rp", tenantID: "acme", label: "Sample app", credential: .secretHash(ClientSecret.hash(Self.secret)),
            deliveryEndpoint: "http://127.0.0.1/faceseal/delivery", idTokenSignedResponseAlg: "ML-DSA-65"))
        _ = try await store.createUser(UserRecord(subject: "user-9", tenantID: "acme", email: Self.email))
        _ = try await store.createInvitation(InvitationRecord(id: "inv-9", tenantID: "acme", subject: "user-9", clientID: "rp",
                                                              secretHash: Array(repeating: 7, count: 32), expiresAt: Date().addingTimeInterval(3600)))
        func token(_ generation: Int64) -> FaceTokenRecord {
            FaceTokenRecord(subject: "user-9", tokenID: "token-user-9", generation: generation, headerJSON: Array(#"{"v":1}"#.utf8),
                            sealedBody: Array(repeating: UInt8(generation), count: 48), encryptedServerShare: Array(repeating: 9, count: 60))
        }
        _ = try await store.enrol(EnrolmentInsert(
            invitationID: "inv-9", enrolmentID: "enr-9", device: DeviceRecord(id: "device-9", label: "Phone"),
            ambientKey: NewDeviceKey(keyID: "k9-ambient", publicKeyJWK: #"{"kty":"EC","crv":"P-256","x":"a","y":"b"}"#),
            userPresentKey: NewDeviceKey(keyID: "k9-present", publicKeyJWK: #"{"kty":"EC","crv":"P-256","x":"c","y":"d"}"#),
            initialFaceToken: token(1)))
        let server = try LoopbackAuthority.start(store: store, configuration: AuthorityConfiguration(issuer: "", pollInterval: 1, callbackDestinations: .any))
        let issuer = server.baseURL.absoluteString

        // The sample application.
        let secretFile = directory.appendingPathComponent("secret")
        try Data((Self.secret + "\n").utf8).write(to: secretFile)
        let state = directory.appendingPathComponent("rp").path
        let serve = try Child(["rp", "serve", "--issuer", issuer, "--client-id", "rp", "--client-secret-file", secretFile.path,
                               "--port", "0", "--state-dir", state])
        defer { serve.terminate() }
        var serveOutput: [String] = []
        let deliveryLine = await serve.line(where: { $0.hasPrefix("delivery endpoint: ") }, seen: &serveOutput)
        let deliveryText = try #require(deliveryLine).dropFirst("delivery endpoint: ".count)
        let deliveryURL = try #require(URL(string: String(deliveryText)))
        _ = await serve.line(where: { $0.hasPrefix("control: ") }, seen: &serveOutput)
        let control = try JSONDecoder().decode(RPControlFileView.self, from: Data(contentsOf: URL(fileURLWithPath: state).appendingPathComponent("control.json")))
        #expect(control.deliveryEndpoint == deliveryURL.absoluteString)
        let permissions = try FileManager.default.attributesOfItem(atPath: state + "/control.json")[.posixPermissions] as? NSNumber
        #expect(permissions?.intValue == 0o600)

        let device = try TestDevice()
        let client = HTTPClient()
        var generation: Int64 = 1

        /// Runs one `rp request`, playing the device once it started (denying with `denial` when given); returns its output and
        /// exit status.
        func request(_ arguments: [String], denial: DenialReason? = nil, deliver: (String) throws -> DeliveryBody?) async throws -> ([String], Int32) {
            let child = try Child(["rp", "request"] + arguments + ["--user", Self.email, "--state-dir", state, "--timeout", "60"])
            var output: [String] = []
            let started = try #require(await child.line(where: { $0.hasPrefix("started: ") }, seen: &output))
            let authReqId = try #require(started.components(separatedBy: "auth_req_id ").last?.components(separatedBy: ",").first)
            if let denial {
                _ = try await store.denyRequest(authReqID: authReqId, reason: denial.rawValue)
                for await line in child.lines { output.append(line) }
                return (output, child.process.wait())
            }
            var receipt: [UInt8]?
            if let body = try deliver(authReqId) {
                let delivered = try device.deliver(body)
                let bearer = try await store.request(authReqID: authReqId).clientNotificationToken ?? ""
                let response = try await client.send(HTTPClientRequest(
                    method: .post, url: deliveryURL,
                    headers: HTTPHeaders([("Authorization", "Bearer \(bearer)"), (DeliveryNames.signatureHeader, delivered.signature),
                                          ("Content-Type", "application/json")]),
                    body: delivered.body))
                #expect(response.status.code == 204)
                receipt = SHA256.hash(data: delivered.body).bytes
            }
            _ = try await store.downloadFaceToken(authReqID: authReqId, keyID: "k9-present")
            _ = try await store.complete(CompletionCommit(authReqID: authReqId, keyID: "k9-present", expectedGeneration: generation,
                                                          rotatedToken: token(generation + 1), receiptSHA256: receipt))
            generation += 1
            for await line in child.lines { output.append(line) }
            return (output, child.process.wait())
        }

        let (keysOutput, keysStatus) = try await request(["public-keys", "--context", "mail", "--message", "Link your mail key"]) { id in
            DeliveryBody(authReqId: id, kind: .publicKeys, iat: Int64(Date().timeIntervalSince1970), keyId: device.keyID, publicKeys: device.publicKeys)
        }
        #expect(keysStatus == 0, "\(keysOutput)")
        #expect(keysOutput.contains { $0.hasPrefix("ok  delivery: bearer") })
        #expect(keysOutput.contains { $0.hasPrefix("ok  id_token: ML-DSA-65 signature verifies") })
        #expect(keysOutput.contains { $0.hasPrefix("ok  receipt: ") })
        #expect(keysOutput.last?.hasPrefix("verified: public keys ML-DSA-65, ML-KEM-768 (key_id \(device.keyID)) pinned") == true, "\(keysOutput)")

        let message = "invoice 7"
        let (signOutput, signStatus) = try await request(["sign", "--context", "mail", "--message", "Sign invoice 7", "--data", message]) { id in
            let signature = Array(try device.signingKey.signature(for: Array(message.utf8)))
            return DeliveryBody(authReqId: id, kind: .sign, iat: Int64(Date().timeIntervalSince1970), keyId: device.keyID, signature: signature)
        }
        #expect(signStatus == 0, "\(signOutput)")
        #expect(signOutput.contains { $0.hasPrefix("ok  result: the ML-DSA-65 signature over the 9-byte message verifies") })
        #expect(signOutput.last?.hasPrefix("verified: ML-DSA-65 signature (3309 bytes)") == true, "\(signOutput)")

        let (loginOutput, loginStatus) = try await request(["login", "--message", "Sign in to Sample app"]) { _ in nil }
        #expect(loginStatus == 0, "\(loginOutput)")
        #expect(loginOutput.last?.hasPrefix("verified: sign-in of sub ") == true, "\(loginOutput)")

        // The sample application prints why a request was denied (issue 14 item 7).
        let (deniedOutput, deniedStatus) = try await request(["login", "--message", "Sign in"], denial: .attemptsExhausted) { _ in nil }
        #expect(deniedStatus == 1)
        #expect(deniedOutput.last == "denied: attempts_exhausted (the face did not match within the attempts allowed)", "\(deniedOutput)")

        serve.terminate()
        await server.stop()
        await store.close()
    }
}

/// The fields of `control.json` this test reads.
struct RPControlFileView: Decodable {
    var deliveryEndpoint: String
    enum CodingKeys: String, CodingKey { case deliveryEndpoint = "delivery_endpoint" }
}
