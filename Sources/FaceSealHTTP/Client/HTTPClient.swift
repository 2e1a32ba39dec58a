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

        public init(maxResponseBodySize: Int = 4 << 20, maxConnectionsPerHost: Int = 16) {
            self.maxResponseBodySize = maxResponseBodySize
            self.maxConnectionsPerHost = maxConnectionsPerHost
        }
    }

    public let configuration: Configuration
    private let session: URLSession
    private let delegate: SessionDelegate

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
        let limit = configuration.maxResponseBodySize
        let delegate = self.delegate
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPClientResponse, any Error>) in
                    delegate.register(task, limit: limit, continuation: continuation)
                    // URLSession's own timeout is per read; this deadline bounds the whole exchange.
                    DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
                        delegate.fail(task, with: .timeout)
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
        let continuation: CheckedContinuation<HTTPClientResponse, any Error>
        let limit: Int
        var response: HTTPURLResponse?
        var body: [UInt8] = []
        /// Set when the client itself cancels the task (limit, deadline, caller cancelled).
        var failure: HTTPClientError?
    }

    private let pending = Mutex<[Int: Pending]>([:])

    func register(_ task: URLSessionTask, limit: Int, continuation: CheckedContinuation<HTTPClientResponse, any Error>) {
        pending.withLock { $0[task.taskIdentifier] = Pending(continuation: continuation, limit: limit) }
    }

    /// Cancels `task` and makes its outcome `error`, unless it already finished.
    func fail(_ task: URLSessionTask, with error: HTTPClientError) {
        let cancel = pending.withLock { pending -> Bool in
            guard pending[task.taskIdentifier] != nil, pending[task.taskIdentifier]?.failure == nil else { return false }
            pending[task.taskIdentifier]?.failure = error
            return true
        }
        if cancel { task.cancel() }
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

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let entry = pending.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        if let failure = entry.failure {
            entry.continuation.resume(throwing: failure)
        } else if let error {
            entry.continuation.resume(throwing: Self.map(error))
        } else if let response = entry.response, !(100...999).contains(response.statusCode) {
            entry.continuation.resume(throwing: HTTPClientError.transport("invalid status code"))
        } else if let response = entry.response {
            var headers = HTTPHeaders()
            for (name, value) in response.allHeaderFields {
                if let name = name as? String, let value = value as? String { headers.add(name: name, value: value) }
            }
            entry.continuation.resume(returning: HTTPClientResponse(
                status: HTTPStatus(code: response.statusCode), headers: headers, body: entry.body))
        } else {
            entry.continuation.resume(throwing: HTTPClientError.transport("no response"))
        }
    }

    private static func map(_ error: any Error) -> HTTPClientError {
        guard let urlError = error as? URLError else { return .transport(String(describing: type(of: error))) }
        switch urlError.code {
        case .timedOut:
            return .timeout
        case .cancelled:
            return .cancelled
        case .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet:
            return .unreachable(urlError.localizedDescription)
        default:
            return .transport("URLError \(urlError.code.rawValue)")
        }
    }
}
