import FaceSealCrypto
public import FaceSealWire
import Foundation

/// The real ``FaceTokenOpener``: face tokens as `FaceTokenSeal` (FaceSealWire) defines them (SPEC §5.1–5.3).
///
/// An SDK ``FaceTokenEnvelope``'s `token` is the exact JSON of the wire envelope (`FaceSealWire.FaceTokenEnvelope`),
/// as downloaded; a ``NewFaceToken``'s and a ``PreparedCompletion``'s token bytes are the same encoding.
public struct WireFaceTokens: FaceTokenOpener {
    /// The match threshold written into new tokens (default: `MatchPolicy.defaultThreshold`, the face engine's).
    public let matchThreshold: Double
    /// scrypt cost of new password-protected tokens (log2 N).
    public let scryptLogN: Int
    /// The clock for `created_at` of new tokens.
    private let clock: any WallClock
    /// Whether new tokens demand liveness (a tenant may switch it off, e.g. for a camera-less demo).
    public let livenessRequired: Bool

    /// Creates the opener.
    public init(matchThreshold: Double = MatchPolicy.defaultThreshold, scryptLogN: Int = 15, clock: any WallClock = SystemWallClock(),
                livenessRequired: Bool = true) {
        self.livenessRequired = livenessRequired
        self.matchThreshold = matchThreshold
        self.scryptLogN = scryptLogN
        self.clock = clock
    }

    /// Opens a downloaded token's templates layer with the server share and, when its header says so, the password
    /// (scrypt); the keys layer stays sealed until ``OpenedFaceToken/openKeys()``. A format-1 token opens as it always
    /// did (its one body), and its rotation seals format 2.
    public func open(_ envelope: FaceTokenEnvelope, password: String?) async throws(FaceTokenOpenError) -> any OpenedFaceToken {
        let wire: FaceSealWire.FaceTokenEnvelope
        let header: FaceTokenHeader
        do {
            wire = try FaceSealWire.FaceTokenEnvelope.decode(envelope.token)
            header = try wire.checkedHeader()
        } catch {
            throw .unusable("the token does not parse: \(error)")
        }
        var passwordKey: SymmetricKey?
        if header.passwordRequired {
            guard let password else { throw .passwordRequired }
            guard let parameters = header.scrypt else { throw .unusable("a password token without scrypt parameters") }
            do {
                passwordKey = try FaceTokenSeal.passwordKey(password: password, parameters: parameters)
            } catch {
                throw .unusable("scrypt parameters out of bounds")
            }
        }
        do {
            let layers = try FaceTokenSeal.layerKeys(serverShare: envelope.serverShare, passwordKey: passwordKey, header: header)
            let templates = try FaceTokenSeal.openTemplates(wire, keys: layers)
            return OpenedWireFaceToken(header: header, envelope: wire, layers: layers, templates: FaceTemplates(embeddings: templates),
                                       passwordKey: passwordKey)
        } catch .wrongPassword {
            // Without a password the only key input is the share: a failure is damage, not a typo.
            throw header.passwordRequired ? .wrongPassword : .unusable("the token does not open with the server share")
        } catch .passwordRequired {
            throw .passwordRequired
        } catch {
            throw .unusable("\(error)")
        }
    }

    /// Creates a user's first token (generation 1, format 2) with fresh masters for every algorithm of `keyPolicy`, its
    /// header naming `subject` and `tenant` (from the enrolment details).
    public func create(templates: FaceTemplates, password: String?, keyPolicy: [String], subject: String,
                       tenant: String) async throws(KeyOperationError) -> NewFaceToken {
        let algorithms = try Self.algorithms(keyPolicy)
        var scrypt: ScryptParameters?
        var passwordKey: SymmetricKey?
        if let password {
            let parameters = ScryptParameters(logN: scryptLogN, salt: SecureRandom.bytes(count: 16))
            do {
                passwordKey = try FaceTokenSeal.passwordKey(password: password, parameters: parameters)
            } catch {
                throw .internalFailure("scrypt failed")
            }
            scrypt = parameters
        }
        let header = FaceTokenHeader(
            tid: "tok_" + Base64URL.encode(SecureRandom.bytes(count: 12)), sub: subject, tenant: tenant, gen: 1,
            passwordRequired: password != nil, livenessRequired: livenessRequired, threshold: matchThreshold, scrypt: scrypt,
            createdAt: Int64(clock.now().timeIntervalSince1970))
        var masters = FaceTokenMasters()
        for algorithm in algorithms { masters.fill(algorithm) }
        let share = SecretBytes(randomCount: FaceTokenSeal.serverShareByteCount)
        do {
            let sealed = try FaceTokenSeal.seal(header: header, templates: templates.embeddings, masters: masters, serverShare: share,
                                                passwordKey: passwordKey)
            return NewFaceToken(token: sealed.encoded(), serverShare: share,
                                passwordVerifier: try Self.passwordVerifier(passwordKey, tokenID: header.tid))
        } catch {
            throw .internalFailure("sealing failed: \(error)")
        }
    }

    /// The public key of a password-protected token's verifier (docs/PROTOCOL.md §8.1), nil without a password.
    static func passwordVerifier(_ passwordKey: SymmetricKey?, tokenID: String) throws -> [UInt8]? {
        try passwordKey.map { Array(try PasswordVerifier.key(passwordKey: $0, tokenID: tokenID).publicKey.rawRepresentation) }
    }

    /// Parses a policy's algorithm names; a name this SDK does not know is refused rather than skipped.
    static func algorithms(_ names: [String]) throws(KeyOperationError) -> [KeyAlgorithm] {
        var result: [KeyAlgorithm] = []
        for name in names {
            guard let algorithm = KeyAlgorithm(rawValue: name) else { throw .unsupportedAlgorithm(name) }
            if !result.contains(algorithm) { result.append(algorithm) }
        }
        return result
    }
}

/// An opened token: the templates, the layer keys and the still-sealed keys layer. No master is in memory.
final class OpenedWireFaceToken: OpenedFaceToken {
    let header: FaceTokenHeader
    let templates: FaceTemplates
    private let envelope: FaceSealWire.FaceTokenEnvelope
    private let layers: FaceTokenSeal.LayerKeys
    private let passwordKey: SymmetricKey?

    init(header: FaceTokenHeader, envelope: FaceSealWire.FaceTokenEnvelope, layers: FaceTokenSeal.LayerKeys, templates: FaceTemplates,
         passwordKey: SymmetricKey?) {
        self.header = header
        self.envelope = envelope
        self.layers = layers
        self.templates = templates
        self.passwordKey = passwordKey
    }

    var matchThreshold: Float { Float(header.threshold) }
    var generation: Int { header.gen }

    func openKeys() async throws(KeyOperationError) -> any FaceTokenKeys {
        do {
            return UnlockedWireFaceToken(header: header, templates: templates, masters: try FaceTokenSeal.openMasters(envelope, keys: layers),
                                         passwordKey: passwordKey)
        } catch {
            throw .internalFailure("the keys layer does not open: \(error)")
        }
    }
}

/// A token whose keys layer is open: the masters in `SecretBytes` (zeroed when released), for one completion.
final class UnlockedWireFaceToken: FaceTokenKeys {
    private let header: FaceTokenHeader
    private let templates: FaceTemplates
    /// Names this SDK does not know are carried over untouched (fill-only).
    private let masters: FaceTokenMasters
    private let passwordKey: SymmetricKey?

    init(header: FaceTokenHeader, templates: FaceTemplates, masters: FaceTokenMasters, passwordKey: SymmetricKey?) {
        self.header = header
        self.templates = templates
        self.masters = masters
        self.passwordKey = passwordKey
    }

    /// The largest `pki_data` signed.
    static let maximumSignedData = 64 * 1024

    func prepareCompletion(for request: RequestDetails, issuedAt: Date) async throws(KeyOperationError) -> PreparedCompletion {
        let policy = try WireFaceTokens.algorithms(request.keyPolicy)
        // Fill-only: a master the token holds is never replaced, so a key an application pinned never moves.
        var filled = masters
        for algorithm in policy { filled.fill(algorithm) }
        var deliveryBody: [UInt8]?
        var deliverySignature: String?
        var deliverySHA256: [UInt8]?
        if let kind = request.pkiKind {
            let body = try Self.deliveryBody(kind: kind, request: request, policy: policy, masters: filled, issuedAt: issuedAt)
            deliveryBody = body.bytes
            deliverySignature = body.signature
            deliverySHA256 = SHA256.hash(data: body.bytes).bytes
        }
        let share = SecretBytes(randomCount: FaceTokenSeal.serverShareByteCount)
        // The authority owns the policy: the rotated header carries the tenant's policy where it became stricter. A
        // format-1 token migrates here: its rotation is sealed in the current format. The generation was range-checked
        // when the header was decoded (at most 2^31 − 1), so `+ 1` cannot overflow.
        var next = header.tightened(livenessRequired: request.livenessRequired, threshold: request.matchThreshold)
        next.gen += 1
        next.v = FaceTokenHeader.currentFormat
        do {
            let sealed = try FaceTokenSeal.seal(header: next, templates: templates.embeddings, masters: filled, serverShare: share,
                                                passwordKey: passwordKey)
            return PreparedCompletion(deliveryBody: deliveryBody, deliverySignature: deliverySignature, deliverySHA256: deliverySHA256,
                                      rotatedToken: sealed.encoded(), rotatedServerShare: share, passwordUsed: passwordKey != nil,
                                      passwordVerifier: try WireFaceTokens.passwordVerifier(passwordKey, tokenID: next.tid))
        } catch {
            throw .internalFailure("re-sealing failed: \(error)")
        }
    }

    /// Does the key operation and signs the delivery body (ML-DSA-65, context `faceseal-delivery-v1`).
    private static func deliveryBody(kind: PkiCeremonyKind, request: RequestDetails, policy: [KeyAlgorithm],
                                     masters: FaceTokenMasters, issuedAt: Date) throws(KeyOperationError) -> (bytes: [UInt8], signature: String) {
        func seed(_ algorithm: KeyAlgorithm) throws(KeyOperationError) -> SymmetricKey {
            guard let master = masters[algorithm] else { throw .internalFailure("no master for \(algorithm.rawValue)") }
            return try FaceLockedKeys.seed(master: master, algorithm: algorithm, clientId: request.clientId, context: request.pkiContext)
        }
        // The delivery is always signed with the user's ML-DSA key; a policy without one cannot answer a ceremony.
        guard let signing = policy.first(where: \.signs) else { throw .notPermitted }
        guard signing == .mlDSA65 else { throw .unsupportedAlgorithm(signing.rawValue) }
        let signer = try FaceLockedKeys.mlDSA65(seed: try seed(.mlDSA65))
        let signerPublic = Array(signer.publicKey.rawRepresentation)
        let keyId = FaceLockedKeys.keyId(mlDSAPublicKey: signerPublic)
        let wireKind = kind
        let iat = Int64(issuedAt.timeIntervalSince1970)
        let body: DeliveryBody
        switch kind {
        case .publicKeys:
            var keys: [KeyAlgorithm: [UInt8]] = [:]
            for algorithm in policy {
                keys[algorithm] = algorithm == .mlDSA65 ? signerPublic : try FaceLockedKeys.publicKey(algorithm, seed: try seed(algorithm))
            }
            body = DeliveryBody(authReqId: request.requestId, kind: wireKind, iat: iat, keyId: keyId, publicKeys: keys)
        case .sign:
            guard request.pkiData.count <= maximumSignedData else { throw .invalidData("pki_data is over 64 KiB") }
            let signature: Data
            do {
                signature = try signer.signature(for: request.pkiData, context: DeliveryNames.signContext)
            } catch {
                throw .internalFailure("signing failed")
            }
            body = DeliveryBody(authReqId: request.requestId, kind: wireKind, iat: iat, keyId: keyId, signature: Array(signature))
        case .decapsulate:
            guard let kem = policy.first(where: { !$0.signs }) else { throw .notPermitted }
            let secret = try FaceLockedKeys.decapsulate(kem, seed: try seed(kem), ciphertext: request.pkiData)
            var shared = secret.copyBytes()
            defer { secureZero(&shared) }
            body = DeliveryBody(authReqId: request.requestId, kind: wireKind, iat: iat, keyId: keyId, sharedSecret: shared)
        }
        let bytes = body.encoded()
        guard bytes.count <= DeliveryBody.maxBytes else { throw .invalidData("the delivery body is over its limit") }
        do {
            let signature = try signer.signature(for: bytes, context: DeliveryNames.signatureContext)
            return (bytes, Base64URL.encode(Array(signature)))
        } catch {
            throw .internalFailure("signing the delivery failed")
        }
    }
}
