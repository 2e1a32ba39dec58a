import FaceSealCrypto
import FaceSealWire

/// The per-ceremony signature and JSON rows of `faceseal bench crypto` (`--only` picks them): per sign-in the device
/// (the load generator) signs four ES256 device requests and checks six EdDSA answers, the authority checks the four
/// and signs the six, and makes one RS256 ID token. Each row runs the public API the ceremony calls, on a signing input
/// or message of the ceremony's size. FaceSeal's side alone, but for P-256 verification, which runs on FaceSeal's key
/// tables (`CFaceSealCurves`) and is measured beside OpenSSL's verification of the same signatures (the path a key
/// without a table takes).
enum BenchSignatures {
    static let inputCount = 16

    static func operations() throws -> [BenchOperation] {
        let p256 = (0..<inputCount).map { _ in P256.Signing.PrivateKey() }
        let rsa = try RSA.Signing.PrivateKey(keySize: 2048)
        let rsaPublic = rsa.publicKey
        let authority = Curve25519.Signing.PrivateKey()
        let authorityPublic = authority.publicKey
        // A JWS signing input of the device-request size (~300 bytes).
        let inputs = (0..<inputCount).map { i in (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ i) } }
        let p256Signatures = try (0..<inputCount).map { try p256[$0].sign(inputs[$0]) }
        let p256Raw = try p256Signatures.map { try P256.Signing.ECDSASignature(rawRepresentation: $0) }
        let rsaSignatures = try (0..<inputCount).map { try rsa.sign(inputs[$0]) }

        let now: Int64 = 1_800_000_000
        let paths = (0..<inputCount).map { "/device/v1/requests/req_\($0)abcdefghijklmnopqrstu/token" }
        let bodies = (0..<inputCount).map { i in Array("{\"v\":1,\"rid\":\"req_\(i)\",\"generation\":\(i)}".utf8) }
        let jtis = (0..<inputCount).map { _ in DeviceRequestSignature.newJTI() }
        let deviceHeaders = try (0..<inputCount).map { i in
            try DeviceRequestSignature.make(method: "POST", path: paths[i], body: bodies[i], kid: "up_\(i)", signer: p256[i],
                                            now: now, jti: jtis[i]).header
        }
        let responseHeaders = try (0..<inputCount).map { i in
            try AuthorityResponseSignature.make(body: bodies[i], requestJTI: jtis[i], status: 200, hint: false, key: authority, now: now)
        }

        let details = (0..<inputCount).map { i in
            RequestDetails(rid: "req_\(i)" + Base64URL.encode(SecureRandom.bytes(count: 16)), kind: .login, clientId: "app_bench\(i)",
                           rpLabel: "Bench application \(i)", branding: BrandingInfo(name: "Bench", logoURL: "https://rp.example/logo.png"),
                           expiresAt: now + 300, keyPolicy: .standard, attemptsMax: 3, attemptsLeft: 3, captureRetriesMax: 5,
                           captureRetriesLeft: 5, livenessRequired: false, matchThreshold: 0.5, minProtocol: 1,
                           nonce: Base64URL.encode(SecureRandom.bytes(count: 32)))
        }
        let encodedDetails = details.map { $0.encoded() }

        return [
            BenchOperation(name: "P-256 sign", faceSeal: { i in
                let n = i % inputCount
                return (try? p256[n].sign(inputs[n]))?.count == 64
            }, peers: []),
            BenchOperation(name: "P-256 verify", faceSeal: { i in
                let n = i % inputCount
                return p256[n].publicKey.verify(inputs[n], signature: p256Signatures[n])
            }, peers: [BenchSide(name: "openssl-3.0") { i in
                let n = i % inputCount
                return p256[n].publicKey.isValidSignatureWithOpenSSL(p256Raw[n], for: inputs[n])
            }]),
            BenchOperation(name: "RS256 sign", faceSeal: { i in
                let n = i % inputCount
                return (try? rsa.sign(inputs[n])) == rsaSignatures[n]
            }, peers: []),
            BenchOperation(name: "RS256 verify", faceSeal: { i in
                let n = i % inputCount
                return rsaPublic.verify(inputs[n], signature: rsaSignatures[n])
            }, peers: []),
            BenchOperation(name: "JWS device sign", faceSeal: { i in
                let n = i % inputCount
                let made = try? DeviceRequestSignature.make(method: "POST", path: paths[n], body: bodies[n], kid: "up_\(n)",
                                                            signer: p256[n], now: now, jti: jtis[n])
                return made?.jti == jtis[n]
            }, peers: []),
            BenchOperation(name: "JWS device check", faceSeal: { i in
                let n = i % inputCount
                let claims = try? DeviceRequestSignature.parse(deviceHeaders[n])
                    .verify(with: p256[n].publicKey, method: "POST", path: paths[n], body: bodies[n], now: now)
                return claims?.jti == jtis[n]
            }, peers: []),
            BenchOperation(name: "JWS response sign", faceSeal: { i in
                let n = i % inputCount
                return (try? AuthorityResponseSignature.make(body: bodies[n], requestJTI: jtis[n], status: 200, hint: false,
                                                             key: authority, now: now)) == responseHeaders[n]
            }, peers: []),
            BenchOperation(name: "JWS response check", faceSeal: { i in
                let n = i % inputCount
                let claims = try? AuthorityResponseSignature.verify(responseHeaders[n], body: bodies[n], requestJTI: jtis[n],
                                                                    status: 200, key: authorityPublic)
                return claims?.jti == jtis[n]
            }, peers: []),
            BenchOperation(name: "WireJSON encode", faceSeal: { i in
                let n = i % inputCount
                return details[n].encoded() == encodedDetails[n]
            }, peers: []),
            BenchOperation(name: "WireJSON decode", faceSeal: { i in
                let n = i % inputCount
                return (try? RequestDetails.decode(encodedDetails[n])) == details[n]
            }, peers: []),
        ]
    }
}
