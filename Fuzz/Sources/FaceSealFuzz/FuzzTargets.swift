@testable import FaceSealCrypto
import FaceSealFace
import Foundation
@testable import FaceSealAuthority
@testable import FaceSealHTTP
@testable import FaceSealHTTPTypes
@testable import FaceSealWire

/// One parser of outside bytes and what is done with the result. Refusals are the expected outcome; only a
/// trap (or a broken round trip, turned into one) is a finding.
struct FuzzTarget: Sendable {
    let name: String
    let run: @Sendable ([UInt8]) -> Void
}

/// Every target, by name (`FACESEAL_FUZZ_TARGET`, the `Fuzz/Corpus/<name>` seed directories, `make fuzz`).
enum FuzzTargets {
    static let all: [FuzzTarget] = [
        FuzzTarget(name: "wire", run: wire),
        FuzzTarget(name: "json", run: json),
        FuzzTarget(name: "jws", run: jws),
        FuzzTarget(name: "jwt", run: jwt),
        FuzzTarget(name: "jwk", run: jwk),
        FuzzTarget(name: "jwks", run: jwks),
        FuzzTarget(name: "link", run: link),
        FuzzTarget(name: "device-signature", run: deviceSignature),
        FuzzTarget(name: "face-token", run: faceToken),
        FuzzTarget(name: "form", run: form),
        FuzzTarget(name: "http-head", run: httpHead),
        FuzzTarget(name: "management", run: management),
        FuzzTarget(name: "jpeg", run: image),
        FuzzTarget(name: "png", run: image),
        FuzzTarget(name: "curves", run: curves),
    ]

    // MARK: Fixed keys (made once; the fuzzer forges, it never holds a key)

    static let ed25519 = Curve25519.Signing.PrivateKey()
    static let p256 = P256.Signing.PrivateKey()
    static let rsa = try! RSA.Signing.PrivateKey(keySize: 2048)
    static let mlDSA = MLDSA65.PrivateKey()
    static let verifiers: [any JWSVerifier] = [ed25519.publicKey, p256.publicKey, rsa.publicKey, mlDSA.publicKey]
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    // MARK: Targets

    /// Every wire message: the first byte picks the type, the rest is the message.
    static let messages: [@Sendable ([UInt8]) throws -> Void] = [
        { _ = try DeviceErrorResponse.decode($0) }, { _ = try RequestDetails.decode($0) }, { _ = try DeliveryBody.decode($0) },
        { _ = try OAuthErrorResponse.decode($0) }, { _ = try BackchannelAuthenticationResponse.decode($0) },
        { _ = try TokenResponse.decode($0) }, { _ = try PingCallback.decode($0) }, { _ = try LinkClaims.decode($0) },
        { _ = try CompletionRequest.decode($0) }, { _ = try CompletionResponse.decode($0) }, { _ = try AbortRequest.decode($0) },
        { _ = try EnrolmentDetails.decode($0) }, { _ = try EnrolmentRequest.decode($0) }, { _ = try EnrolmentResponse.decode($0) },
        { _ = try DeviceRequestClaims.decode($0) }, { _ = try AuthorityResponseClaims.decode($0) },
        { _ = try KeyRotationRequest.decode($0) }, { _ = try KeyRotationResponse.decode($0) }, { _ = try KeyRevocationRequest.decode($0) },
        { _ = try BrandingSyncResponse.decode($0) }, { _ = try OutboxResponse.decode($0) }, { _ = try FaceTokenHeader.decode($0) },
        { _ = try FaceTokenEnvelope.decode($0) }, { _ = try FaceTokenDownload.decode($0) },
        { _ = try AttemptReport.decode($0) }, { _ = try AttemptsRemaining.decode($0) },
        { _ = try PasswordProof.decode($0) }, { _ = try PasswordProofResult.decode($0) }, { _ = try DeviceNoticeClaims.decode($0) },
    ]

    static func wire(_ bytes: [UInt8]) {
        guard let selector = bytes.first else { return }
        _ = try? messages[Int(selector) % messages.count](Array(bytes.dropFirst()))
    }

    /// JSONValue: parse; what parses must serialise and parse back to the same value.
    static func json(_ bytes: [UInt8]) {
        guard let value = try? JSONValue.parse(bytes) else { return }
        guard let again = try? JSONValue.parse(value.serialized), again == value else {
            fatalError("JSONValue round trip broke for \(value.serializedString)")
        }
    }

    static func jws(_ bytes: [UInt8]) {
        guard let text = String(validating: bytes, as: UTF8.self), let parsed = try? JWS.parse(text) else { return }
        for verifier in verifiers { _ = try? JWS.verify(parsed, verifier: verifier) }
    }

    static func jwt(_ bytes: [UInt8]) {
        guard let claims = try? JWTClaims(payload: bytes) else { return }
        _ = try? claims.validate(JWTValidation(now: now, issuer: "https://a", audience: "c", requireIssuedAt: true, maximumAge: 600))
        _ = try? claims.audience()
        for name in ["exp", "nbf", "iat", "auth_time"] { _ = try? claims.date(name) }
    }

    static func jwk(_ bytes: [UInt8]) {
        guard let key = try? JWK(json: bytes) else { return }
        _ = key.thumbprintBase64URL
        _ = try? key.verifier(factory: .includingMLDSA65)
        guard let again = try? JWK(json: key.jsonData), again == key else { fatalError("JWK round trip broke") }
    }

    static func jwks(_ bytes: [UInt8]) {
        guard let set = try? JWKSet(json: bytes, maximumSize: Authority.maxClientJWKSBytes, maximumKeyCount: Authority.maxClientKeys) else {
            return
        }
        for algorithm in JWSAlgorithm.allCases {
            for keyID in [nil, "k", set.keys.first?.keyID] {
                _ = try? set.key(for: JWSHeader(algorithm: algorithm, keyID: keyID))
            }
        }
    }

    static func link(_ bytes: [UInt8]) {
        if let link = try? LinkSignature.parse(bytes) { _ = try? link.verify(with: ed25519.publicKey, now: 1_800_000_000) }
        if let notice = try? NoticeSignature.parse(bytes) { _ = try? notice.verify(with: ed25519.publicKey, now: 1_800_000_000) }
    }

    static func deviceSignature(_ bytes: [UInt8]) {
        guard let header = String(validating: bytes, as: UTF8.self),
              let request = try? DeviceRequestSignature.parse(header) else { return }
        _ = try? request.verify(with: p256.publicKey, method: request.claims.method, path: request.claims.path, body: [],
                                now: 1_800_000_000)
    }

    /// A token envelope, checked and opened with a fixed share (the AEAD fails; the parsing before it is the target), or
    /// (first byte 0…2 mod 4) the plaintext of a layer as a sealer holding the key could have written it: the templates
    /// layer, the keys layer, a format-1 body.
    static func faceToken(_ bytes: [UInt8]) {
        guard let selector = bytes.first else { return }
        let plaintext = SecretBytes(bytes.dropFirst())
        switch selector % 4 {
        case 0: _ = try? FaceTokenTemplates.decode(plaintext)
        case 1: _ = try? FaceTokenMasters.decodeLayer(plaintext)
        case 2:
            _ = try? FaceTokenV1Body.templates(plaintext)
            _ = try? FaceTokenV1Body.masters(plaintext)
        default:
            guard let envelope = try? FaceTokenEnvelope.decode(bytes), let header = try? FaceTokenCustody.uploadedHeader(of: envelope),
                  let keys = try? FaceTokenSeal.layerKeys(serverShare: SecretBytes([UInt8](repeating: 7, count: FaceTokenSeal.serverShareByteCount)),
                                                          passwordKey: SymmetricKey(data: [UInt8](repeating: 8, count: 32)), header: header)
            else { return }
            _ = try? FaceTokenSeal.openTemplates(envelope, keys: keys)
            _ = try? FaceTokenSeal.openMasters(envelope, keys: keys)
        }
    }

    // MARK: Curves: FaceSeal's key tables against the libraries

    /// Tables made for a key at its first verification (the shared ones wait for a key's fourth).
    static let ed25519Tables = Ed25519Tables(limit: 64, threshold: 1)
    static let p256Tables = P256Tables(limit: 8, threshold: 1)
    /// A fixed message and a valid signature of it under each fixed key, for the inputs to flip bits of.
    static let curveMessage = Array("faceseal curves".utf8)
    static let ed25519Signature = [UInt8](try! ed25519.signature(for: curveMessage))
    static let p256Signature = [UInt8](try! p256.signature(for: curveMessage).rawRepresentation)

    /// FaceSeal's verification on key tables (`CFaceSealCurves`) against libsodium's Ed25519 and OpenSSL's P-256 on
    /// the same input; a different answer traps. First byte: bit 0 the curve (0 Ed25519, 1 P-256); bit 1 set: the next
    /// 64 bytes are XORed into the fixed key's valid signature of the fixed message (none: it verifies), else they are
    /// the signature and the rest the message; bit 2 set (Ed25519): the 32 bytes after the signature are the public key
    /// (any point, small-order and non-canonical ones included) instead of the fixed key.
    static func curves(_ bytes: [UInt8]) {
        guard let selector = bytes.first else { return }
        let input = Array(bytes.dropFirst())
        let p256Curve = selector & 1 == 1, flipsValid = selector & 2 != 0, ownKey = selector & 4 != 0 && !p256Curve
        var signature = [UInt8](repeating: 0, count: 64), message = curveMessage, rest = input.dropFirst(64)
        for index in 0..<min(64, input.count) { signature[index] = input[index] }
        if flipsValid {
            let valid = p256Curve ? p256Signature : ed25519Signature
            for index in 0..<64 { signature[index] ^= valid[index] }
        }
        var key = p256Curve ? p256.publicKey.x963Representation : ed25519.publicKey.rawRepresentation
        if ownKey {
            guard rest.count >= 32 else { return }
            key = Data(rest.prefix(32))
            rest = rest.dropFirst(32)
        }
        if !flipsValid { message = Array(rest) }
        let ours: Bool?, reference: Bool
        if p256Curve {
            ours = p256Tables.verify(Data(signature), message: message, key: key)
            reference = (try? P256.Signing.ECDSASignature(rawRepresentation: signature))
                .map { p256.publicKey.isValidSignatureWithOpenSSL($0, for: message) } ?? false
        } else {
            guard let publicKey = try? Curve25519.Signing.PublicKey(rawRepresentation: key) else { return }
            (ours, reference) = signature.withUnsafeBytes { signature in
                message.withUnsafeBytes { message in
                    (ed25519Tables.verify(signature, message: message, key: key),
                     publicKey.isValidSignatureWithLibsodium(signature, message: message))
                }
            }
        }
        // nil: the tables left the key to the library (not a point they take); nothing to compare.
        guard let ours, ours != reference else { return }
        fatalError("curves: tables say \(ours), the library \(reference): key \(Data(key).base64EncodedString()) signature \(Data(signature).base64EncodedString()) message \(Data(message).base64EncodedString())")
    }

    /// Form bodies, and the CIBA backchannel request read from one.
    static func form(_ bytes: [UInt8]) {
        guard let form = try? FormParameters(parsing: bytes, limits: Authority.backchannelFormLimits) else { return }
        var parameters: [String: String] = [:]
        for item in form { parameters[item.name] = item.value }
        _ = try? BackchannelAuthenticationRequest(form: parameters)
        _ = form.encoded
    }

    /// The authority's routes, for the request-head target.
    static let router: Router = {
        var router = Router()
        let patterns = ["/.well-known/openid-configuration", "/jwks", "/backchannel", "/token", "/device/v1/enrolments/:inv",
                        "/device/v1/enrolments/:inv/token", "/device/v1/requests/:rid", "/device/v1/requests/:rid/token",
                        "/device/v1/requests/:rid/completion", "/device/v1/keys/rotation", "/device/v1/outbox",
                        "/manage/v1/tenants/:tenant/applications/:client", "/manage/v1/tenants/:tenant/users/:subject/devices"]
        for pattern in patterns {
            router.get(pattern) { _ in .text("") }
            router.post(pattern) { _ in .text("") }
        }
        return router
    }()

    /// A request head as text: `METHOD TARGET` on the first line, then `Name: value` lines; the parts FaceSeal
    /// parses itself (target, query, headers, routing, the signed path) run on it.
    static func httpHead(_ bytes: [UInt8]) {
        // Split on bytes, not Characters: the harness's own splitting is not under test, and grapheme breaking
        // would cost more than the parsing that is.
        func text(_ part: ArraySlice<UInt8>) -> String { String(decoding: part, as: UTF8.self) }
        let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        guard let first = lines.first, let space = first.firstIndex(of: UInt8(ascii: " ")) else { return }
        var headers = HTTPHeaders()
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { continue }
            headers.add(name: text(line[..<colon]), value: text(line[(colon + 1)...]))
        }
        guard let request = try? HTTPRequest(method: HTTPMethod(rawValue: text(first[..<space])), path: text(first[(space + 1)...]),
                                             headers: headers) else { return }
        _ = router.match(method: request.method, segments: request.pathSegments)
        _ = Authority.signedPath(of: request)
        _ = try? Authority.announcedProtocol(request)
        _ = request.query.values(for: "wait")
        _ = try? request.queryInteger("limit", in: 1...1000)
        _ = headers["Content-Type"].map(MediaType.isJSON)
    }

    /// Management bodies, read as the handlers read them (`HTTPRequest.managementBody`, then the authority's checks):
    /// the first byte picks the body (tenant with policy, application with branding, user, invitation, webhook).
    static func management(_ bytes: [UInt8]) {
        guard let selector = bytes.first,
              let request = try? HTTPRequest(method: .post, path: "/manage/v1/x", headers: ["Content-Type": "application/json"],
                                             body: Array(bytes.dropFirst())) else { return }
        switch selector % 5 {
        case 0:
            guard let body = try? request.managementBody(TenantCreation.self) else { return }
            _ = try? ManagementValidation.tenantID(body.id)
            _ = try? body.policy.map { try Authority.policy($0, base: TenantPolicy()) }
        case 1:
            guard let body = try? request.managementBody(ApplicationFields.self) else { return }
            var application = ApplicationRecord(clientID: "app_fuzz", tenantID: "t", label: "fuzz", credential: .secretHash([1]))
            _ = try? Authority.apply(body, to: &application, creating: true, destinations: selector & 8 == 0 ? .publicOnly : .any)
        case 2:
            guard let body = try? request.managementBody(UserCreation.self) else { return }
            _ = try? ManagementValidation.email(body.email)
        case 3:
            guard let body = try? request.managementBody(InvitationCreation.self) else { return }
            _ = try? body.email.map { try ManagementValidation.email($0) }
        default:
            guard let body = try? request.managementBody(WebhookRegistration.self) else { return }
            _ = try? ManagementValidation.callbackEndpoint(body.url, field: "url", destinations: .publicOnly)
            _ = try? ManagementValidation.callbackEndpoint(body.url, field: "url", destinations: .any)
        }
    }

    /// JPEG and PNG decoding, within the limits a capture frame gets.
    static let decoder = ImageDecoder(maxDimension: 4096, maxPixels: 4_000_000, maxEncodedBytes: 1 << 20)

    static func image(_ bytes: [UInt8]) {
        guard let image = try? decoder.decode(bytes) else { return }
        guard image.pixels.count == image.width * image.height * 3 else { fatalError("pixel buffer does not fit its dimensions") }
    }
}
