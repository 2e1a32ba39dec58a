import Foundation
public import FaceSealCrypto
import FaceSealWire

/// The application side of FaceSeal: starts sign-ins and face-PKI ceremonies on the authority's CIBA
/// endpoint, checks deliveries (SPEC §4.4), retrieves and verifies ID tokens and their receipts, and
/// pins each user's keys per context. Framework-agnostic: the delivery and ping handlers take a method,
/// headers and body bytes and return an `EndpointResponse` (see `mount(on:)` for FaceSealHTTP).
///
/// ```swift
/// let rp = RelyingParty(configuration: configuration, keyPins: try FileKeyPinStore(url: pinsURL))
/// let outcome = try await rp.perform(.publicKeys, user: "ada@example.com", context: "mail", bindingMessage: "Link your mail key")
/// ```
public final class RelyingParty: Sendable {
    /// The configuration.
    public let configuration: RelyingPartyConfiguration
    /// Pending requests (what each delivery must prove).
    public let pendingRequests: any PendingRequestStore
    /// Pinned keys per (user, context).
    public let keyPins: any KeyPinStore
    /// The delivery checks.
    public let deliveryVerifier: DeliveryVerifier

    let authority: AuthorityClient
    let pings = PingSignals()

    /// The ID-token algorithms accepted (SPEC §4.3).
    public static let idTokenAlgorithms: Set<JWSAlgorithm> = [.rs256, .edDSA, .es256, .mlDSA65]

    /// A relying party over the given stores (in memory by default).
    public init(configuration: RelyingPartyConfiguration,
                pendingRequests: any PendingRequestStore = InMemoryPendingRequestStore(),
                keyPins: any KeyPinStore = InMemoryKeyPinStore()) {
        self.configuration = configuration
        self.pendingRequests = pendingRequests
        self.keyPins = keyPins
        self.deliveryVerifier = DeliveryVerifier(pendingRequests: pendingRequests, keyPins: keyPins, clock: configuration.clock,
                                                 observer: configuration.deliveryObserver)
        self.authority = AuthorityClient(configuration: configuration)
    }

    /// The authority's discovery document (fetched once, then cached).
    public func providerMetadata() async throws(RelyingPartyError) -> ProviderMetadata {
        try await authority.metadata()
    }

    // MARK: Starting requests

    /// Starts a sign-in or a ceremony for `user` (`login_hint`) and key `context`, with a fresh 256-bit
    /// client notification token; remembers what the delivery must prove. `decapsulate` encapsulates a fresh
    /// shared secret to the ML-KEM-768 key pinned for (user, context); `sign` and `decapsulate` need a pin
    /// (from an earlier `publicKeys`).
    public func start(_ kind: RequestKind, user: String, context: String, bindingMessage: String) async throws(RelyingPartyError) -> PendingRequestHandle {
        guard !user.isEmpty, user.count <= BackchannelAuthenticationRequest.maxParameterCharacters else {
            throw .invalidRequest("the user must be 1–\(BackchannelAuthenticationRequest.maxParameterCharacters) characters")
        }
        guard BackchannelAuthenticationRequest.isValidBindingMessage(bindingMessage) else {
            throw .invalidRequest("the binding message must be 1–\(BackchannelAuthenticationRequest.maxBindingMessageCharacters) printable characters")
        }
        if kind.pkiKind != nil {
            guard !context.isEmpty, context.utf8.count <= BackchannelAuthenticationRequest.maxContextBytes else {
                throw .invalidRequest("the key context must be 1–\(BackchannelAuthenticationRequest.maxContextBytes) bytes")
            }
        }
        let pinKey = PinKey(user: user, context: context)
        let expected: ExpectedResult
        var data: [UInt8]? = nil
        switch kind {
        case .signIn:
            expected = .signIn
        case .publicKeys:
            expected = .publicKeys
        case .sign(let message):
            guard message.count <= BackchannelAuthenticationRequest.maxDataBytes else {
                throw .invalidRequest("the data to sign exceeds \(BackchannelAuthenticationRequest.maxDataBytes) bytes")
            }
            guard try await pinned(pinKey)?.signingKey != nil else {
                throw .invalidRequest("no ML-DSA-65 key is pinned for (\(user), \(context)); request public keys first")
            }
            expected = .signature(data: message)
            data = message
        case .decapsulate:
            guard let kemKey = try await pinned(pinKey)?.kemKey,
                  let publicKey = try? MLKEM768.PublicKey(rawRepresentation: kemKey) else {
                throw .invalidRequest("no ML-KEM-768 key is pinned for (\(user), \(context)); request public keys first")
            }
            let encapsulation: MLKEMEncapsulationResult
            do {
                encapsulation = try publicKey.encapsulate()
            } catch {
                throw .invalidRequest("encapsulation failed: \(error)")
            }
            expected = .sharedSecret(encapsulation.sharedSecret.secret)
            data = Array(encapsulation.encapsulated)
        }
        let bearer = Base64URL.encode(SecureRandom.bytes(count: 32))
        let request = BackchannelAuthenticationRequest(
            loginHint: user, bindingMessage: bindingMessage, clientNotificationToken: bearer,
            requestedExpiry: configuration.requestedExpiry, pkiKind: kind.pkiKind,
            pkiContext: kind.pkiKind == nil ? [] : Array(context.utf8), pkiData: data)
        let answer = try await authority.backchannel(request)
        let interval = max(answer.interval ?? 5, 1)
        let expiresAt = configuration.clock.now().addingTimeInterval(TimeInterval(answer.expiresIn))
        let pending = PendingRequest(authReqId: answer.authReqId, user: user, context: kind.pkiKind == nil ? "" : context,
                                     bindingMessage: bindingMessage, bearer: SecretBytes(Array(bearer.utf8)),
                                     expected: expected, expiresAt: expiresAt, interval: interval)
        do {
            try await pendingRequests.insert(pending)
        } catch {
            throw .storage("cannot remember the request: \(error)")
        }
        return PendingRequestHandle(authReqId: answer.authReqId, kind: kind, user: user, context: pending.context,
                                    expiresAt: expiresAt, interval: interval)
    }

    /// The keys pinned for `key`.
    public func pinned(_ key: PinKey) async throws(RelyingPartyError) -> PinnedKeys? {
        do {
            return try await keyPins.pinnedKeys(for: key)
        } catch {
            throw .storage("cannot read pins: \(error)")
        }
    }

    // MARK: Endpoints

    /// The delivery endpoint: SPEC §4.4's checks in order; 204 accepts, a 4xx refuses (and changes nothing).
    public func handleDelivery(method: String, headers: [String: String], body: [UInt8]) async -> EndpointResponse {
        await deliveryVerifier.handle(method: method, headers: headers, body: body)
    }

    /// The ping callback endpoint: checks the bearer against the request's client notification token
    /// (constant time), answers 204 and wakes the task waiting in `awaitOutcome`, which then makes one token request.
    public func handlePing(method: String, headers: [String: String], body: [UInt8]) async -> EndpointResponse {
        guard method.uppercased() == "POST" else { return DeliveryVerifier.response(for: .methodNotAllowed) }
        guard let ping = try? PingCallback.decode(body) else {
            return DeliveryVerifier.response(for: .malformed("expected {\"auth_req_id\": …}"))
        }
        guard let found = try? await pendingRequests.request(ping.authReqId) else {
            return DeliveryVerifier.response(for: .unknownRequest)
        }
        guard let presented = DeliveryVerifier.bearer(in: headers),
              found.request.bearer.withUnsafeBytes({ constantTimeEquals(Array(presented.utf8), Array($0)) }) else {
            return DeliveryVerifier.response(for: .wrongBearer)
        }
        pings.signal(ping.authReqId)
        return EndpointResponse(status: 204)
    }

    // MARK: Results

    /// Waits for the request's outcome in the configured mode (poll at `interval`, +5 s on `slow_down`; or
    /// wait for the ping, then one token request), verifies the ID token and receipt, and forgets the request.
    /// A pin this request created is taken back unless the outcome is `.verified`.
    public func awaitOutcome(_ handle: PendingRequestHandle) async throws(RelyingPartyError) -> RequestOutcome {
        let outcome: RequestOutcome
        do {
            switch configuration.tokenDeliveryMode {
            case .poll: outcome = try await poll(handle)
            case .ping: outcome = try await waitForPing(handle)
            }
        } catch {
            await finish(handle, verified: false)
            throw error
        }
        if case .verified = outcome {
            await finish(handle, verified: true)
        } else {
            await finish(handle, verified: false)
        }
        return outcome
    }

    /// Starts a request and waits for its outcome; after `stale_token` starts a new one, at most
    /// `configuration.maxStaleRetries` times (then returns `.stale`).
    public func perform(_ kind: RequestKind, user: String, context: String, bindingMessage: String,
                        onStart: @Sendable (PendingRequestHandle) async -> Void = { _ in }) async throws(RelyingPartyError) -> RequestOutcome {
        var attempt = 0
        while true {
            let handle = try await start(kind, user: user, context: context, bindingMessage: bindingMessage)
            await onStart(handle)
            let outcome = try await awaitOutcome(handle)
            guard case .stale = outcome, attempt < configuration.maxStaleRetries else { return outcome }
            attempt += 1
        }
    }

    /// Consecutive transport failures tolerated while polling (the next poll may reach the authority again).
    static let maxConsecutiveTransportFailures = 5

    private func poll(_ handle: PendingRequestHandle) async throws(RelyingPartyError) -> RequestOutcome {
        var interval = max(handle.interval, 1)
        var failures = 0
        while configuration.clock.now() < handle.expiresAt {
            do {
                try await configuration.sleeper.sleep(seconds: interval)
            } catch {
                throw .transport("cancelled while polling")
            }
            let answer: AuthorityClient.TokenAnswer
            do {
                answer = try await authority.token(authReqId: handle.authReqId)
                failures = 0
            } catch .transport(let reason) {
                failures += 1
                guard failures < Self.maxConsecutiveTransportFailures else { throw .transport(reason) }
                continue
            }
            switch answer {
            case .tokens(let tokens):
                return .verified(try await verify(tokens, for: handle))
            case .error(let error):
                switch error.error {
                case .authorizationPending: continue
                case .slowDown: interval += 5
                default: return try Self.terminal(error)
                }
            }
        }
        return .expired
    }

    private func waitForPing(_ handle: PendingRequestHandle) async throws(RelyingPartyError) -> RequestOutcome {
        let seconds = max(1, Int(handle.expiresAt.timeIntervalSince(configuration.clock.now()).rounded(.up)))
        let sleeper = configuration.sleeper
        let pings = self.pings
        let pinged: Bool = await withTaskGroup(of: Bool.self) { group in
            group.addTask { (try? await pings.wait(handle.authReqId)) != nil }
            group.addTask {
                // Both arms finishing false (a cancelled sleep) is a timeout as well.
                _ = try? await sleeper.sleep(seconds: seconds)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            pings.cancel(handle.authReqId)
            return first
        }
        guard pinged else { return .expired }
        switch try await authority.token(authReqId: handle.authReqId) {
        case .tokens(let tokens):
            return .verified(try await verify(tokens, for: handle))
        case .error(let error):
            if error.error == .authorizationPending || error.error == .slowDown {
                throw .unexpectedResponse("the authority pinged but answers \(error.error.rawValue)")
            }
            return try Self.terminal(error)
        }
    }

    private static func terminal(_ error: OAuthErrorResponse) throws(RelyingPartyError) -> RequestOutcome {
        switch error.error {
        case .accessDenied: return .denied(error.errorDescription)
        case .expiredToken: return .expired
        case .staleToken: return .stale
        default: throw .refused(error.error, error.errorDescription)
        }
    }

    /// Forgets the request; takes back a pin it created unless it verified.
    private func finish(_ handle: PendingRequestHandle, verified: Bool) async {
        pings.cancel(handle.authReqId)
        if !verified, let found = try? await pendingRequests.request(handle.authReqId), let delivery = found.delivery,
           delivery.createdPin, case .publicKeys(let keys) = delivery.result {
            try? await keyPins.removePin(for: found.request.pinKey, ifEqualTo: keys)
        }
        try? await pendingRequests.remove(handle.authReqId)
    }
}
