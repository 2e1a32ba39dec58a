import CCurl
#if canImport(Glibc)
import Glibc
#endif

/// A libcurl easy handle and what one request on it collects: the head and body as they arrive, and the outcome.
///
/// The handle outlives its requests: the options every request shares are set once, when it is created, and
/// `start` sets every option a request may change — URL, deadline, method, body, headers, body limit — each time,
/// to the request's value or back to libcurl's default, so nothing of one request reaches the next. `finish`
/// clears what a finished request left behind (its URL, header list and body copy) before the handle waits for its
/// next request. Lives only on the transfer loop's thread, which keeps it alive while libcurl may call back into it.
final class CurlTransfer {
    /// The easy handle, freed with this object (after the loop removed it from the multi handle).
    let handle: UnsafeMutableRawPointer
    /// The request running on the handle, nil between requests.
    private(set) var ticket: TransferTicket?
    private var headerList: UnsafeMutablePointer<curl_slist>?
    /// libcurl writes the detailed reason of a failure here (`CURLOPT_ERRORBUFFER`; emptied when a transfer starts).
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE))
    /// Set to 1 by the socket callback when it refused a non-public address (`Destinations.publicOnly`).
    private let refusedAddress = UnsafeMutablePointer<CInt>.allocate(capacity: 1)
    private var head = ResponseHead(limit: 0)
    private var body: [UInt8] = []
    /// Set when a callback ends the transfer itself (a limit): the outcome, whatever libcurl then reports.
    private var failure: HTTPClientError?

    /// A valid address for an empty body (libcurl copies zero bytes from it).
    private static var noBytes: UnsafeRawPointer { UnsafeRawPointer(StaticString("").utf8Start) }

    /// The protocols libcurl may speak, for the request and (were redirects ever followed) for a redirect.
    private static let protocols = "http,https"

    private init(handle: UnsafeMutableRawPointer) {
        self.handle = handle
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
        refusedAddress.initialize(to: 0)
    }

    deinit {
        curl_easy_cleanup(handle)
        curl_slist_free_all(headerList)
        errorBuffer.deallocate()
        refusedAddress.deallocate()
    }

    /// A new easy handle with the options every request shares, or nil when libcurl would not make one.
    /// `publicAddressesOnly` is the client's `Destinations.publicOnly`.
    static func make(publicAddressesOnly: Bool) -> CurlTransfer? {
        guard let handle = curl_easy_init() else { return nil }
        let transfer = CurlTransfer(handle: handle)
        return transfer.configure(publicAddressesOnly: publicAddressesOnly) ? transfer : nil
    }

    /// The options every request shares, or false at the first one libcurl refuses.
    private func configure(publicAddressesOnly: Bool) -> Bool {
        let context = Unmanaged.passUnretained(self).toOpaque()
        let ok = set(CURLOPT_ERRORBUFFER, pointer: errorBuffer)
            && set(CURLOPT_PROTOCOLS_STR, string: Self.protocols)
            && set(CURLOPT_REDIR_PROTOCOLS_STR, string: Self.protocols)
            && set(CURLOPT_FOLLOWLOCATION, 0)
            && set(CURLOPT_NETRC, Int(CURL_NETRC_IGNORED.rawValue))
            // An empty proxy disables proxies, including those named by the environment.
            && set(CURLOPT_PROXY, string: "")
            && set(CURLOPT_SSL_VERIFYPEER, 1)
            && set(CURLOPT_SSL_VERIFYHOST, 2)
            && set(CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1)
            // The loop thread is not the main thread: no SIGALRM-based DNS timeouts, no signals at all.
            && set(CURLOPT_NOSIGNAL, 1)
            && set(CURLOPT_HEADERDATA, pointer: context)
            && set(CURLOPT_WRITEDATA, pointer: context)
            && fs_curl_easy_setopt_write(handle, CURLOPT_HEADERFUNCTION) { line, size, count, context in
                CurlTransfer.callback(line, size, count, context) { transfer, line in
                    transfer.head.consume(line) ? nil : .responseHeadTooLarge(limit: transfer.head.limit)
                }
            } == CURLE_OK
            && fs_curl_easy_setopt_write(handle, CURLOPT_WRITEFUNCTION) { data, size, count, context in
                CurlTransfer.callback(data, size, count, context) { $0.receive($1) }
            } == CURLE_OK
        return ok && (!publicAddressesOnly || fs_curl_public_addresses_only(handle, refusedAddress) == CURLE_OK)
    }

    /// Sets the handle up for `ticket`'s request with `timeoutMilliseconds` left of its deadline: every option a
    /// request may change, whatever the previous request set. Fails with why libcurl refused an option (the handle
    /// must then not be added to the multi handle, and `finish` must still be called).
    func start(_ ticket: TransferTicket, timeoutMilliseconds: Int) -> HTTPClientError? {
        let request = ticket.request
        self.ticket = ticket
        head = ResponseHead(limit: request.maxHeadSize)
        errorBuffer[0] = 0
        refusedAddress.pointee = 0
        let isHead = request.method == "HEAD"
        // Back to a GET without body first (HTTPGET also clears NOBODY and UPLOAD), then what this request needs.
        var ok = set(CURLOPT_URL, string: request.url)
            && set(CURLOPT_TIMEOUT_MS, timeoutMilliseconds)
            && set(CURLOPT_POSTFIELDS, pointer: nil)
            && fs_curl_easy_setopt_off(handle, CURLOPT_POSTFIELDSIZE_LARGE, -1) == CURLE_OK
            && set(CURLOPT_HTTPGET, 1)
            // A larger announced Content-Length is refused before the body is read (0: no limit, for HEAD, whose
            // Content-Length announces a body that never comes).
            && fs_curl_easy_setopt_off(handle, CURLOPT_MAXFILESIZE_LARGE, isHead ? 0 : curl_off_t(request.maxBodySize)) == CURLE_OK
        if isHead {
            ok = ok && set(CURLOPT_NOBODY, 1)
        }
        if let body = request.body {
            ok = ok && fs_curl_easy_setopt_off(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)) == CURLE_OK
                && body.withUnsafeBytes { set(CURLOPT_COPYPOSTFIELDS, pointer: $0.baseAddress ?? Self.noBytes) }
        }
        // libcurl's own choice of method is HEAD with NOBODY, POST with a body, else GET.
        let implied = isHead ? "HEAD" : request.body != nil ? "POST" : "GET"
        ok = ok && (request.method == implied ? set(CURLOPT_CUSTOMREQUEST, pointer: nil) : set(CURLOPT_CUSTOMREQUEST, string: request.method))
        for line in request.headerLines {
            // `withCString`: a short line passed as a plain argument would be copied to the heap first.
            guard let list = line.withCString({ curl_slist_append(headerList, $0) }) else { return refused() }
            headerList = list
        }
        return ok && set(CURLOPT_HTTPHEADER, pointer: headerList) ? nil : refused()
    }

    /// Why an option was refused.
    private func refused() -> HTTPClientError {
        let reason = String(cString: errorBuffer)
        return .transport("libcurl refused an option\(reason.isEmpty ? "" : ": \(reason)")")
    }

    /// Ends the request on the handle (after the loop removed it from the multi handle and read the outcome):
    /// the handle keeps no URL, header or body of it, and waits for the next request.
    func finish() {
        _ = set(CURLOPT_URL, pointer: nil)
        _ = set(CURLOPT_POSTFIELDS, pointer: nil)
        _ = set(CURLOPT_HTTPHEADER, pointer: nil)
        curl_slist_free_all(headerList)
        headerList = nil
        ticket = nil
        head = ResponseHead(limit: 0)
        body = []
        failure = nil
    }

    /// Runs `body` on the transfer behind `context` with the `size × count` bytes libcurl passed; a failure it
    /// returns ends the transfer (libcurl aborts when a callback takes fewer bytes than it was given).
    private static func callback(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?,
                                 _ body: (CurlTransfer, UnsafeRawBufferPointer) -> HTTPClientError?) -> Int {
        guard let context else { return 0 }
        let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
        let (length, overflow) = size.multipliedReportingOverflow(by: count)
        guard !overflow, transfer.failure == nil else { return 0 }
        if let failure = body(transfer, UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : length)) {
            transfer.failure = failure
            return 0
        }
        return length
    }

    /// Appends body bytes within the limit.
    private func receive(_ bytes: UnsafeRawBufferPointer) -> HTTPClientError? {
        let limit = ticket?.request.maxBodySize ?? 0
        guard bytes.count <= limit - body.count else {
            body = []
            return .responseTooLarge(limit: limit)
        }
        body.append(contentsOf: bytes)
        return nil
    }

    /// New connections this transfer opened (0 when it reused one).
    var connectionsOpened: Int {
        var count = 0
        return fs_curl_easy_getinfo_long(handle, CURLINFO_NUM_CONNECTS, &count) == CURLE_OK ? count : 0
    }

    /// The response to `request`, or the typed reason there is none, once libcurl reported `code` for the transfer.
    func outcome(_ code: CURLcode, of request: CurlRequest) -> Result<HTTPClientResponse, HTTPClientError> {
        if let failure { return .failure(failure) }
        guard code == CURLE_OK else { return .failure(error(code, request)) }
        var status = 0
        guard fs_curl_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status) == CURLE_OK, (100...999).contains(status) else {
            return .failure(.transport("no valid status code in the response"))
        }
        return .success(HTTPClientResponse(status: HTTPStatus(code: status), headers: head.headers, body: body))
    }

    /// libcurl's result as the client's error, with libcurl's detailed reason where it helps.
    private func error(_ code: CURLcode, _ request: CurlRequest) -> HTTPClientError {
        let detail = String(cString: errorBuffer)
        let reason = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
        switch code {
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT:
            return .invalidURL(request.url)
        case CURLE_COULDNT_RESOLVE_HOST:
            return .hostNotFound(request.host)
        case CURLE_COULDNT_CONNECT where refusedAddress.pointee != 0:
            return .destinationNotPublic(request.address)
        case CURLE_COULDNT_CONNECT:
            var osError = 0
            _ = fs_curl_easy_getinfo_long(handle, CURLINFO_OS_ERRNO, &osError)
            return osError == Int(ECONNREFUSED) ? .connectionRefused(request.address) : .unreachable(reason)
        case CURLE_OPERATION_TIMEDOUT:
            return .timeout
        case CURLE_FILESIZE_EXCEEDED:
            return .responseTooLarge(limit: request.maxBodySize)
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
             CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ENGINE_INITFAILED,
             CURLE_SSL_SHUTDOWN_FAILED, CURLE_SSL_CRL_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
             CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CLIENTCERT, CURLE_USE_SSL_FAILED:
            return .tls(reason)
        default:
            return .transport(reason)
        }
    }

    private func set(_ option: CURLoption, _ value: Int) -> Bool {
        fs_curl_easy_setopt_long(handle, option, value) == CURLE_OK
    }

    /// libcurl copies string options.
    private func set(_ option: CURLoption, string: String) -> Bool {
        string.withCString { fs_curl_easy_setopt_pointer(handle, option, $0) } == CURLE_OK
    }

    private func set(_ option: CURLoption, pointer: UnsafeRawPointer?) -> Bool {
        fs_curl_easy_setopt_pointer(handle, option, pointer) == CURLE_OK
    }
}
