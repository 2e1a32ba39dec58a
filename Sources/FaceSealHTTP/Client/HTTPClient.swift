import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// A thin HTTP client on URLSession for talking to the authority and to delivery endpoints.
///
/// The session is ephemeral: no disk cache, no cookies, no stored credentials. Redirects are not
/// followed (a 3xx comes back as the response) so a bearer token never travels to another origin.
/// Response bodies are capped while they stream in.
public final class HTTPClient: Sendable {
    /// Client-wide settings.
    public struct Configuration: Sendable {
        /// Largest response body accepted, in bytes.
        public var maxResponseBodySize: Int
        /// Parallel connections to one host.
        public var maxConnectionsPerHost: Int

        /// Defaults: 4 MiB responses, 16 connections per host.
        public init(maxResponseBodySize: Int = 4 << 20, maxConnectionsPerHost: Int = 16) {
            self.maxResponseBodySize = maxResponseBodySize
            self.maxConnectionsPerHost = maxConnectionsPerHost
        }
    }

    /// The settings the client was created with.
    public let configuration: Configuration
    private let session: URLSession
    private let delegate: SessionDelegate

    /// A client with its own ephemeral URLSession; share one per process where possible.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.urlCache = nil
        sessionConfiguration.requestCachePolicy = .reloadIgnoringLocalCacheData
        sessionConfiguration.httpCookieStorage = nil
        sessionConfiguration.httpShouldSetCookies = false
        sessionConfiguration.urlCredentialStorage = nil
        sessionConfiguration.httpMaximumConnectionsPerHost = configuration.maxConnectionsPerHost
        delegate = SessionDelegate()
        session = URLSession(configuration: sessionConfiguration, delegate: delegate, delegateQueue: nil)
    }

    deinit {
        // The session retains its delegate until invalidated.
        session.invalidateAndCancel()
    }

    /// Sends `request` and returns the response, whatever its status.
    public func send(_ request: HTTPClientRequest) async throws(HTTPClientError) -> HTTPClientResponse {
        guard let scheme = request.url.scheme?.lowercased(), scheme == "http" || scheme == "https", request.url.host != nil else {
            throw .invalidURL(request.url.absoluteString)
        }
        let seconds = max(0.001, Double(request.timeout.components.seconds) + Double(request.timeout.components.attoseconds) / 1e18)
        var urlRequest = URLRequest(url: request.url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: seconds)
        urlRequest.httpMethod = request.method.rawValue
        for field in request.headers { urlRequest.addValue(field.value, forHTTPHeaderField: field.name) }
        if !request.body.isEmpty { urlRequest.httpBody = Data(request.body) }

        let task = session.dataTask(with: urlRequest)
        let delegate = self.delegate
        delegate.prepare(task, limit: request.maxResponseBodySize ?? configuration.maxResponseBodySize)
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPClientResponse, any Error>) in
                    // Not started if the caller was cancelled before the continuation existed.
                    guard delegate.attach(task, continuation: continuation) else { return }
                    // URLSession's own timeout is per read; this deadline bounds the whole exchange.
                    // Captures only an id: a finished request leaves nothing alive until the deadline.
                    let id = task.taskIdentifier
                    DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [weak delegate] in
                        delegate?.fail(taskIdentifier: id, with: .timeout)
                    }
                    task.resume()
                }
            } onCancel: {
                delegate.fail(task, with: .cancelled)
            }
        } catch let error as HTTPClientError {
            throw error
        } catch {
            throw .transport(String(describing: type(of: error)))
        }
    }
}

/// Collects each task's response and body, enforces the size limit, and resumes the caller.
private final class SessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private struct Pending {
        let task: URLSessionTask
        let limit: Int
        /// Nil until `attach`: cancellation can arrive before the caller is suspended.
        var continuation: CheckedContinuation<HTTPClientResponse, any Error>?
        var response: HTTPURLResponse?
        var body: [UInt8] = []
        /// Set when the client itself ends the task (limit, deadline, caller cancelled).
        var failure: HTTPClientError?
        /// A 401 that carried an authentication challenge: URLSession withholds its body, so it is
        /// answered from the challenge's response (status and headers, empty body).
        var challenged: HTTPURLResponse?
    }

    private let pending = Mutex<[Int: Pending]>([:])

    /// Creates the task's entry before anything can try to fail it.
    func prepare(_ task: URLSessionTask, limit: Int) {
        pending.withLock { $0[task.taskIdentifier] = Pending(task: task, limit: limit) }
    }

    /// Hands over the caller's continuation. Returns false (and resumes it with the failure) when
    /// the task already failed, in which case it must not be started.
    func attach(_ task: URLSessionTask, continuation: CheckedContinuation<HTTPClientResponse, any Error>) -> Bool {
        let failure = pending.withLock { pending -> HTTPClientError? in
            guard var entry = pending[task.taskIdentifier] else { return .cancelled }
            if let failure = entry.failure {
                pending[task.taskIdentifier] = nil
                return failure
            }
            entry.continuation = continuation
            pending[task.taskIdentifier] = entry
            return nil
        }
        guard let failure else { return true }
        continuation.resume(throwing: failure)
        return false
    }

    /// Makes the task's outcome `error` and cancels it, unless it already finished or failed.
    func fail(_ task: URLSessionTask, with error: HTTPClientError) {
        fail(taskIdentifier: task.taskIdentifier, with: error)
    }

    func fail(taskIdentifier: Int, with error: HTTPClientError) {
        let started = pending.withLock { pending -> URLSessionTask? in
            guard var entry = pending[taskIdentifier], entry.failure == nil else { return nil }
            entry.failure = error
            pending[taskIdentifier] = entry
            return entry.continuation != nil ? entry.task : nil
        }
        started?.cancel()
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let proceed = pending.withLock { pending -> Bool in
            guard var entry = pending[dataTask.taskIdentifier] else { return false }
            let http = response as? HTTPURLResponse
            entry.response = http
            if http == nil {
                entry.failure = .transport("not an HTTP response")
            } else if response.expectedContentLength > Int64(entry.limit) {
                entry.failure = .responseTooLarge(limit: entry.limit)
            }
            pending[dataTask.taskIdentifier] = entry
            return entry.failure == nil
        }
        completionHandler(proceed ? .allow : .cancel)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let overLimit = pending.withLock { pending -> Bool in
            guard var entry = pending[dataTask.taskIdentifier], entry.failure == nil else { return false }
            guard entry.body.count + data.count <= entry.limit else {
                entry.failure = .responseTooLarge(limit: entry.limit)
                entry.body = []
                pending[dataTask.taskIdentifier] = entry
                return true
            }
            entry.body.append(contentsOf: data)
            pending[dataTask.taskIdentifier] = entry
            return false
        }
        if overLimit { dataTask.cancel() }
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    /// A `WWW-Authenticate` challenge is never answered with credentials (the client sends its own
    /// `Authorization`); FoundationNetworking would otherwise stall on it. The 401 goes back to the caller.
    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        pending.withLock { pending in
            guard var entry = pending[task.taskIdentifier] else { return }
            entry.challenged = challenge.failureResponse as? HTTPURLResponse
            pending[task.taskIdentifier] = entry
        }
        completionHandler(.cancelAuthenticationChallenge, nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard var entry = pending.withLock({ $0.removeValue(forKey: task.taskIdentifier) }),
              let continuation = entry.continuation else { return }
        if entry.failure == nil, let challenged = entry.challenged, entry.response == nil || error != nil {
            entry.response = challenged
            entry.body = []
            return Self.finish(continuation, entry: entry, error: nil)
        }
        Self.finish(continuation, entry: entry, error: error)
    }

    private static func finish(_ continuation: CheckedContinuation<HTTPClientResponse, any Error>, entry: Pending,
                               error: (any Error)?) {
        let task = entry.task
        if let failure = entry.failure {
            continuation.resume(throwing: failure)
        } else if let error {
            continuation.resume(throwing: map(error, url: task.originalRequest?.url?.absoluteString ?? ""))
        } else if let response = entry.response, !(100...999).contains(response.statusCode) {
            continuation.resume(throwing: HTTPClientError.transport("invalid status code"))
        } else if let response = entry.response {
            var headers = HTTPHeaders()
            for (name, value) in response.allHeaderFields {
                if let name = name as? String, let value = value as? String { headers.add(name: name, value: value) }
            }
            continuation.resume(returning: HTTPClientResponse(
                status: HTTPStatus(code: response.statusCode), headers: headers, body: entry.body))
        } else {
            continuation.resume(throwing: HTTPClientError.transport("no response"))
        }
    }

    private static func map(_ error: any Error, url: String) -> HTTPClientError {
        guard let urlError = error as? URLError else { return .transport(String(describing: type(of: error))) }
        switch urlError.code {
        case .timedOut:
            return .timeout
        case .cancelled:
            return .cancelled
        case .badURL, .unsupportedURL:
            // Also what swift-corelibs-foundation answers for IPv6-literal hosts (`http://[::1]/`).
            return .invalidURL(url)
        case .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet:
            return .unreachable(urlError.localizedDescription)
        default:
            return .transport("URLError \(urlError.code.rawValue)")
        }
    }
}
