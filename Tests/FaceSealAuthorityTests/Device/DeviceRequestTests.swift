import FaceSealCrypto
import FaceSealHTTP
import FaceSealTestSupport
import FaceSealWire
import Foundation
import Testing
@testable import FaceSealAuthority

@Suite("Device API: request details, token download, completion compare-and-swap, abort, bad bodies")
struct DeviceRequestTests {
    @Test("request details carry the tenant policy, branding, the link nonce, and delivery data only for ceremonies",
          arguments: StoreBackend.underTest)
    func requestDetails(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness, policy: TenantPolicy(keyAlgorithms: ["ML-DSA-65"], attemptsMax: 4, livenessRequired: false, furtherDeviceApproval: .none))
            let (device, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            let ceremony = try await createPendingRequest(harness, "req-ceremony")
            try await createPendingRequest(harness, "req-login", kind: .login)

            let details = try await device.send(.get, DevicePaths.request("req-ceremony")).decode(RequestDetails.self)
            #expect(details.rid == "req-ceremony")
            #expect(details.kind == .ceremony)
            #expect(details.pkiKind == .sign)
            #expect(details.bindingMessage == "Pay 12 EUR")
            #expect(details.clientId == "app-1")
            #expect(details.rpLabel == "App app-1")
            #expect(details.branding?.name == "App app-1")
            #expect(details.keyPolicy == KeyPolicy(algorithms: [.mlDSA65]))
            #expect(details.attemptsMax == 4)
            #expect(details.livenessRequired == false)
            #expect(details.minProtocol == 7)
            #expect(details.deliveryEndpoint == "https://rp.example/deliver")
            #expect(details.clientNotificationToken == "bearer-req-ceremony")
            #expect(details.pkiContext?.bytes == Array("ctx".utf8))
            #expect(details.pkiData?.bytes == [1, 2, 3])
            #expect(details.expiresAt == Int64(ceremony.expiresAt.timeIntervalSince1970))
            #expect(details.nonce == harness.authority.linkNonce(for: "req-ceremony"))

            let login = try await device.send(.get, DevicePaths.request("req-login")).decode(RequestDetails.self)
            #expect(login.kind == .login)
            #expect(login.pkiKind == nil)
            #expect(login.deliveryEndpoint == nil)
            #expect(login.clientNotificationToken == nil)
            #expect(login.nonce == harness.authority.linkNonce(for: "req-login"))
        }
    }

    @Test("the face token is released only to the user's own key for a pending request", arguments: StoreBackend.underTest)
    func tokenDownloadOnlyForOwnPendingRequest(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            let (device, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            let (stranger, _) = try await TestDevice.enrolled(in: harness, subject: "user-2", clientID: "app-1")
            try await createPendingRequest(harness, "req-1")

            expectDeviceError(try await stranger.send(.get, DevicePaths.requestToken("req-1"), as: .userPresent), .unknownRequest)
            expectDeviceError(try await device.send(.get, DevicePaths.requestToken("req-none"), as: .userPresent), .unknownRequest)
            #expect(try await harness.store.tokenDownloads(authReqID: "req-1").isEmpty)

            let download = try await downloadToken(device, "req-1")
            // The share opens the token: it was kept encrypted and decrypted back exactly.
            _ = try TestDevice.open(download)
            #expect(try await harness.store.tokenDownloads(authReqID: "req-1").map(\.generation) == [1])
            let stored = try await harness.store.faceToken(subject: "user-1")
            #expect(stored.encryptedServerShare != download.serverShare.secret.copyBytes())
            #expect(!stored.encryptedServerShare.contains(subsequence: download.serverShare.secret.copyBytes()))

            _ = try await device.post(DevicePaths.abort("req-1"), AbortRequest(rid: "req-1", reason: .userCancelled))
            expectDeviceError(try await device.send(.get, DevicePaths.requestToken("req-1"), as: .userPresent), .requestNotPending)
            try await createPendingRequest(harness, "req-2")
            harness.clock.advance(by: 301)
            expectDeviceError(try await device.send(.get, DevicePaths.requestToken("req-2"), as: .userPresent), .requestExpired)
        }
    }

    @Test("a key of another user learns nothing about a request", arguments: StoreBackend.underTest)
    func anotherUsersKeyRefused(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            let (owner, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            let (stranger, _) = try await TestDevice.enrolled(in: harness, subject: "user-2", clientID: "app-1")
            try await createPendingRequest(harness, "req-1")
            expectDeviceError(try await stranger.send(.get, DevicePaths.request("req-1")), .unknownRequest)
            let download = try await downloadToken(owner, "req-1")
            let completion = try TestDevice.completion(rid: "req-1", from: download, receipt: receipt("body"))
            expectDeviceError(try await stranger.post(DevicePaths.completion("req-1"), completion), .unknownRequest)
            expectDeviceError(try await stranger.post(DevicePaths.abort("req-1"), AbortRequest(rid: "req-1", reason: .refused)), .unknownRequest)
            let request = try await harness.store.request(authReqID: "req-1")
            #expect(request.state == .pending)
            #expect(try await harness.store.faceToken(subject: "user-1").generation == 1)
        }
    }

    @Test("8 concurrent completions from one token generation: exactly one succeeds, 7 are stale_token",
          arguments: StoreBackend.underTest)
    func concurrentCompletions(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            let (device, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            var completions: [CompletionRequest] = []
            for index in 0..<8 {
                let rid = "req-\(index)"
                try await createPendingRequest(harness, rid)
                let download = try await downloadToken(device, rid)
                completions.append(try TestDevice.completion(rid: rid, from: download, receipt: receipt("delivery \(index)")))
            }
            let outcomes = try await withThrowingTaskGroup(of: (String, DeviceResponse).self) { group in
                for completion in completions {
                    group.addTask { (completion.rid, try await device.post(DevicePaths.completion(completion.rid), completion)) }
                }
                var outcomes: [String: DeviceResponse] = [:]
                for try await (rid, response) in group { outcomes[rid] = response }
                return outcomes
            }
            let winners = outcomes.filter { $0.value.status == 200 }
            #expect(winners.count == 1)
            let losers = outcomes.filter { $0.value.status != 200 }
            #expect(losers.count == 7)
            for (rid, response) in losers {
                expectDeviceError(response, .staleToken)
                #expect(try await harness.store.request(authReqID: rid).state == .stale)
            }
            if let (rid, response) = winners.first {
                #expect(try response.decode(CompletionResponse.self).generation == 2)
                #expect(try await harness.store.request(authReqID: rid).state == .completed)
            }
            #expect(try await harness.store.faceToken(subject: "user-1").generation == 2)
        }
    }

    @Test("a retried completion gets the same answer and no second rotation", arguments: StoreBackend.underTest)
    func completionRetryIsIdempotent(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            let (device, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            try await createPendingRequest(harness, "req-1")
            let download = try await downloadToken(device, "req-1")
            let delivered = receipt("the delivery body")
            let completion = try TestDevice.completion(rid: "req-1", from: download, receipt: delivered)
            let first = try await device.post(DevicePaths.completion("req-1"), completion)
            #expect(first.status == 200)
            let answer = try first.decode(CompletionResponse.self)
            #expect(answer == CompletionResponse(rid: "req-1", generation: 2, resultSHA256: Base64URL.encode(delivered)))
            let tokenAfterFirst = try await harness.store.faceToken(subject: "user-1")

            let retry = try await device.post(DevicePaths.completion("req-1"), completion)
            #expect(retry.status == 200)
            #expect(retry.body == first.body)
            #expect(try await harness.store.faceToken(subject: "user-1") == tokenAfterFirst)
            let stored = try await harness.store.request(authReqID: "req-1")
            #expect(stored.state == .completed)
            #expect(stored.receiptSHA256 == delivered)
            #expect(!stored.passwordUsed)

            // The rotated token opens with the share the device chose.
            try await createPendingRequest(harness, "req-2")
            let next = try await downloadToken(device, "req-2")
            #expect(next.serverShare == completion.serverShare)
            #expect(try TestDevice.open(next).gen == 2)
        }
    }

    @Test("uploads are face-token format 2 with fitting layers; a stored format-1 token downloads as it was and is the base of a format-2 rotation",
          arguments: StoreBackend.underTest)
    func tokenFormats(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            let (device, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            let stored = try await harness.store.faceToken(subject: "user-1")
            #expect(try FaceTokenHeader.decode(stored.headerJSON).v == 2)

            // A format-1 token, as an authority before format 2 stored it.
            let formatOne = FaceTokenHeader(v: 1, tid: "tok_test", sub: "user-1", tenant: "acme", gen: 1, passwordRequired: false,
                                            livenessRequired: true, threshold: 0.5, scrypt: nil, createdAt: 1_800_000_000)
            let oldEnvelope = FaceTokenEnvelope(header: formatOne.encoded(), nonce: Array(repeating: 3, count: 12), sealed: Array(repeating: 4, count: 40))
            let share = SecretBytes(randomCount: 32)
            let old = try FaceTokenCustody.record(envelope: oldEnvelope, header: formatOne, subject: "user-1", serverShare: share,
                                                  wrappingKey: harness.authority.keys.shareWrappingKey)
            #expect(old.sealedBody == oldEnvelope.nonce.bytes + oldEnvelope.sealed.bytes)
            try await harness.store.transact { tx, _ in
                _ = try tx.execute("UPDATE face_tokens SET header_json = ?, sealed_body = ?, encrypted_server_share = ? WHERE subject = ?",
                                   [.blob(old.headerJSON), .blob(old.sealedBody), .blob(old.encryptedServerShare), .text("user-1")])
            }
            try await createPendingRequest(harness, "req-1")
            let download = try await downloadToken(device, "req-1")
            #expect(download.token == oldEnvelope && download.serverShare.secret == share)

            // A rotation in format 1, or with layers that do not fit its format, is refused and changes nothing.
            let (rotated, rotatedShare) = try TestDevice.sealToken(subject: "user-1", tenant: "acme", generation: 2)
            func completion(_ token: FaceTokenEnvelope) -> CompletionRequest {
                CompletionRequest(rid: "req-1", resultSHA256: Base64URL.encode(receipt("body")), baseGeneration: 1, token: token,
                                  serverShare: rotatedShare, passwordUsed: false)
            }
            var formatOneUpload = rotated
            formatOneUpload.header = Base64URLBytes(FaceTokenHeader(v: 1, tid: "tok_test", sub: "user-1", tenant: "acme", gen: 2, passwordRequired: false,
                                                                    livenessRequired: true, threshold: 0.5, scrypt: nil, createdAt: 1_800_000_000).encoded())
            formatOneUpload.keysNonce = nil
            formatOneUpload.keysSealed = nil
            var withoutKeysLayer = rotated
            withoutKeysLayer.keysSealed = nil
            var shortNonce = rotated
            shortNonce.keysNonce = Base64URLBytes([1, 2, 3])
            for bad in [formatOneUpload, withoutKeysLayer, shortNonce] {
                expectDeviceError(try await device.post(DevicePaths.completion("req-1"), completion(bad)), .invalidRequest)
            }
            let unchanged = try await harness.store.faceToken(subject: "user-1")
            #expect(unchanged.headerJSON == old.headerJSON && unchanged.sealedBody == old.sealedBody && unchanged.generation == 1)

            // Format 2 over the stored format 1: stored in the two-layer layout, and downloaded back exactly.
            #expect(try await device.post(DevicePaths.completion("req-1"), completion(rotated)).status == 200)
            let migrated = try await harness.store.faceToken(subject: "user-1")
            let sealed = rotated.sealed.bytes
            #expect(migrated.sealedBody == rotated.nonce.bytes + [0, 0, UInt8(sealed.count >> 8), UInt8(sealed.count & 0xFF)] + sealed
                    + (rotated.keysNonce?.bytes ?? []) + (rotated.keysSealed?.bytes ?? []))
            try await createPendingRequest(harness, "req-2")
            let next = try await downloadToken(device, "req-2")
            #expect(next.token == rotated)
            #expect(try TestDevice.open(next).v == 2)
        }
    }

    @Test("a sign-in completes without a receipt; a ceremony without one is refused", arguments: StoreBackend.underTest)
    func receiptRules(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            let (device, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            try await createPendingRequest(harness, "req-login", kind: .login)
            try await createPendingRequest(harness, "req-ceremony")
            let ceremonyDownload = try await downloadToken(device, "req-ceremony")
            let withoutReceipt = try TestDevice.completion(rid: "req-ceremony", from: ceremonyDownload, receipt: nil)
            expectDeviceError(try await device.post(DevicePaths.completion("req-ceremony"), withoutReceipt), .invalidRequest)

            let loginDownload = try await downloadToken(device, "req-login")
            let withReceipt = try TestDevice.completion(rid: "req-login", from: loginDownload, receipt: receipt("x"))
            expectDeviceError(try await device.post(DevicePaths.completion("req-login"), withReceipt), .invalidRequest)
            let login = try TestDevice.completion(rid: "req-login", from: loginDownload, receipt: nil)
            let answer = try await device.post(DevicePaths.completion("req-login"), login)
            #expect(answer.status == 200)
            #expect(try answer.decode(CompletionResponse.self).resultSHA256 == nil)
            #expect(try await harness.store.request(authReqID: "req-login").state == .completed)
            #expect(try await harness.store.request(authReqID: "req-ceremony").state == .pending)
        }
    }

    @Test("an abort denies the request at once", arguments: StoreBackend.underTest)
    func abortDenies(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            let (device, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            try await createPendingRequest(harness, "req-1")
            let response = try await device.post(DevicePaths.abort("req-1"), AbortRequest(rid: "req-1", reason: .attemptsExhausted))
            #expect(response.status == 204)
            #expect(response.body.isEmpty)
            let request = try await harness.store.request(authReqID: "req-1")
            #expect(request.state == .denied)
            #expect(request.denyReason == "attempts_exhausted")
            // A completion after the abort cannot succeed.
            expectDeviceError(try await device.send(.get, DevicePaths.request("req-1")), .requestNotPending)
        }
    }

    @Test("malformed JSON, unknown fields, oversized bodies, bad base64url and wrong content types are invalid_request; nothing changes",
          arguments: StoreBackend.underTest)
    func badBodies(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            let (device, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            try await createPendingRequest(harness, "req-1")
            let download = try await downloadToken(device, "req-1")
            let good = String(decoding: try TestDevice.completion(rid: "req-1", from: download, receipt: receipt("d")).encoded(), as: UTF8.self)
            let before = try await harness.store.request(authReqID: "req-1")
            let tokenBefore = try await harness.store.faceToken(subject: "user-1")

            let bodies: [(String, [UInt8], String?)] = [
                ("malformed JSON", Array(good.dropLast(3).utf8), "application/json"),
                ("unknown field", Array(good.replacingOccurrences(of: "{\"base_generation\"", with: "{\"extra\":1,\"base_generation\"").utf8), "application/json"),
                ("bad base64url", Array(good.replacingOccurrences(of: "\"server_share\":\"", with: "\"server_share\":\"+/=").utf8), "application/json"),
                ("oversized", Array(repeating: UInt8(ascii: " "), count: 600 * 1024) + Array(good.utf8), "application/json"),
                ("wrong content type", Array(good.utf8), "text/plain"),
                ("no content type", Array(good.utf8), nil),
            ]
            for (name, body, contentType) in bodies {
                let response = try await device.send(.post, DevicePaths.completion("req-1"), body: body, as: .userPresent, contentType: contentType)
                #expect(response.status == 400, "\(name)")
                #expect(response.error == .invalidRequest, "\(name)")
            }
            let abortWithUnknownReason = Array(#"{"reason":"bored","rid":"req-1","v":7}"#.utf8)
            expectDeviceError(try await device.send(.post, DevicePaths.abort("req-1"), body: abortWithUnknownReason, as: .userPresent), .invalidRequest)
            let oversizedAbort = Array(#"{"reason":"refused","rid":"req-1","v":7}"#.utf8) + Array(repeating: UInt8(ascii: " "), count: 2048)
            expectDeviceError(try await device.send(.post, DevicePaths.abort("req-1"), body: oversizedAbort, as: .userPresent), .invalidRequest)

            #expect(try await harness.store.request(authReqID: "req-1") == before)
            #expect(try await harness.store.faceToken(subject: "user-1") == tokenBefore)
        }
    }
}

@Suite("Device API: every POST endpoint refuses bad bodies and changes nothing")
struct DeviceBadBodyTests {
    @Test(arguments: StoreBackend.underTest)
    func everyPostEndpoint(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            let (device, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            try await createPendingRequest(harness, "req-1")
            let invitation = try await TestDevice.invite(in: harness, subject: "user-1", clientID: "app-2")
            let paths = [DevicePaths.completion("req-1"), DevicePaths.abort("req-1"), DevicePaths.rotation, DevicePaths.revocation,
                         DevicePaths.enrolment(invitation)]
            let bodies: [[UInt8]] = [Array("{".utf8), Array(#"{"v":7,"zzz":1}"#.utf8), Array(#"[1,2]"#.utf8),
                                     Array(repeating: UInt8(ascii: "x"), count: 700 * 1024)]
            let keysBefore = try await harness.store.deviceKeys(enrolmentID: try await harness.store.deviceKey(keyID: device.ambientKID).enrolmentID)
            let requestBefore = try await harness.store.request(authReqID: "req-1")
            for path in paths {
                for body in bodies {
                    let response = try await device.send(.post, path, body: body, as: .userPresent)
                    #expect(response.status == 400, "\(path)")
                    #expect(response.error == .invalidRequest, "\(path)")
                }
            }
            #expect(try await harness.store.deviceKeys(enrolmentID: keysBefore[0].enrolmentID) == keysBefore)
            #expect(try await harness.store.request(authReqID: "req-1") == requestBefore)
            #expect(try await harness.store.invitation(id: invitation).consumedAt == nil)
            #expect(try await harness.store.enrolments(subject: "user-1").count == 1)
        }
    }
}

extension Array where Element: Equatable {
    /// Whether `subsequence` occurs contiguously.
    func contains(subsequence: [Element]) -> Bool {
        guard !subsequence.isEmpty, subsequence.count <= count else { return subsequence.isEmpty }
        return (0...(count - subsequence.count)).contains { Array(self[$0..<($0 + subsequence.count)]) == subsequence }
    }
}
