import CCurl
#if canImport(Glibc)
import Glibc
#endif

/// One request as a libcurl easy handle: its options, the head and body as they arrive, and the outcome.
/// Lives only on the transfer loop's thread, which keeps it alive while libcurl may call back into it.
final class CurlTransfer {
    let ticket: TransferTicket
    /// The easy handle; freed with the transfer (after the loop removed it from the multi handle) unless the loop
    /// took it back for the next transfer (`recycle()`).
    let handle: UnsafeMutableRawPointer
    private var ownsHandle = true
    private var headerList: UnsafeMutablePointer<curl_slist>?
    /// libcurl writes the detailed reason of a failure here (`CURLOPT_ERRORBUFFER`).
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE))
    /// Set to 1 by the socket callback when it refused a non-public address (`Destinations.publicOnly`).
    private let refusedAddress = UnsafeMutablePointer<CInt>.allocate(capacity: 1)
    private var head: ResponseHead
    private var body: [UInt8] = []
    /// Set when a callback ends the transfer itself (a limit): the outcome, whatever libcurl then reports.
    private var failure: HTTPClientError?

    /// A valid address for an empty body (libcurl copies zero bytes from it).
    private static var noBytes: UnsafeRawPointer { UnsafeRawPointer(StaticString("").utf8Start) }

    /// The protocols libcurl may speak, for the request and (were redirects ever followed) for a redirect.
    private static let protocols = "http,https"

    private init(ticket: TransferTicket, handle: UnsafeMutableRawPointer) {
        self.ticket = ticket
        self.handle = handle
        head = ResponseHead(limit: ticket.request.maxHeadSize)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
        refusedAddress.initialize(to: 0)
    }

    deinit {
        if ownsHandle { curl_easy_cleanup(handle) }
        curl_slist_free_all(headerList)
        errorBuffer.deallocate()
        refusedAddress.deallocate()
    }

    /// An easy handle (`spare`, a recycled one, or a new one) set up for `ticket`'s request with `timeoutMilliseconds`
    /// left of its deadline, or why libcurl would not take it.
    static func make(_ ticket: TransferTicket, timeoutMilliseconds: Int,
                     spare: UnsafeMutableRawPointer? = nil) -> Result<CurlTransfer, HTTPClientError> {
        guard let handle = spare ?? curl_easy_init() else { return .failure(.transport("libcurl could not create a transfer")) }
        let transfer = CurlTransfer(ticket: ticket, handle: handle)
        guard transfer.configure(timeoutMilliseconds: timeoutMilliseconds) else {
            let reason = String(cString: transfer.errorBuffer)
            return .failure(.transport("libcurl refused an option\(reason.isEmpty ? "" : ": \(reason)")"))
        }
        return .success(transfer)
    }

    /// Every option, or false at the first one libcurl refuses.
    private func configure(timeoutMilliseconds: Int) -> Bool {
        let request = ticket.request
        let context = Unmanaged.passUnretained(self).toOpaque()
        var ok = set(CURLOPT_ERRORBUFFER, pointer: errorBuffer)
            && set(CURLOPT_URL, string: request.url)
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
            && set(CURLOPT_TIMEOUT_MS, timeoutMilliseconds)
            && set(CURLOPT_HEADERDATA, pointer: context)
            && set(CURLOPT_WRITEDATA, pointer: context)
            && fs_curl_easy_setopt_write(handle, CURLOPT_HEADERFUNCTION) { line, size, count, context in
                CurlTransfer.callback(line, size, count, context) { $0.head.consume($1) ? nil : .responseHeadTooLarge(limit: $0.ticket.request.maxHeadSize) }
            } == CURLE_OK
            && fs_curl_easy_setopt_write(handle, CURLOPT_WRITEFUNCTION) { data, size, count, context in
                CurlTransfer.callback(data, size, count, context) { $0.receive($1) }
            } == CURLE_OK
        if request.publicAddressesOnly {
            ok = ok && fs_curl_public_addresses_only(handle, refusedAddress) == CURLE_OK
        }
        if request.method == "HEAD" {
            ok = ok && set(CURLOPT_NOBODY, 1)
        } else {
            // A larger announced Content-Length is refused before the body is read.
            ok = ok && fs_curl_easy_setopt_off(handle, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(request.maxBodySize)) == CURLE_OK
        }
        if let body = request.body {
            ok = ok && fs_curl_easy_setopt_off(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)) == CURLE_OK
                && body.withUnsafeBytes { set(CURLOPT_COPYPOSTFIELDS, pointer: $0.baseAddress ?? Self.noBytes) }
        }
        // libcurl's own choice of method is HEAD with NOBODY, POST with a body, else GET.
        let implied = request.method == "HEAD" ? "HEAD" : request.body != nil ? "POST" : "GET"
        if request.method != implied {
            ok = ok && set(CURLOPT_CUSTOMREQUEST, string: request.method)
        }
        for line in request.headerLines {
            guard let list = curl_slist_append(headerList, line) else { return false }
            headerList = list
        }
        return ok && set(CURLOPT_HTTPHEADER, pointer: headerList)
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
        guard bytes.count <= ticket.request.maxBodySize - body.count else {
            body = []
            return .responseTooLarge(limit: ticket.request.maxBodySize)
        }
        body.append(contentsOf: bytes)
        return nil
    }

    /// The handle with every option back at libcurl's defaults (`curl_easy_reset`, which keeps no request state), for
    /// the next transfer: creating and freeing a handle per request cost more than resetting it. Call once, after the
    /// handle left the multi handle and the outcome was read.
    func recycle() -> UnsafeMutableRawPointer {
        curl_easy_reset(handle)
        ownsHandle = false
        return handle
    }

    /// New connections this transfer opened (0 when it reused one).
    var connectionsOpened: Int {
        var count = 0
        return fs_curl_easy_getinfo_long(handle, CURLINFO_NUM_CONNECTS, &count) == CURLE_OK ? count : 0
    }

    /// The response, or the typed reason there is none, once libcurl reported `code` for the transfer.
    func outcome(_ code: CURLcode) -> Result<HTTPClientResponse, HTTPClientError> {
        if let failure { return .failure(failure) }
        guard code == CURLE_OK else { return .failure(error(code)) }
        var status = 0
        guard fs_curl_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status) == CURLE_OK, (100...999).contains(status) else {
            return .failure(.transport("no valid status code in the response"))
        }
        return .success(HTTPClientResponse(status: HTTPStatus(code: status), headers: head.headers, body: body))
    }

    /// libcurl's result as the client's error, with libcurl's detailed reason where it helps.
    private func error(_ code: CURLcode) -> HTTPClientError {
        let detail = String(cString: errorBuffer)
        let reason = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
        switch code {
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT:
            return .invalidURL(ticket.request.url)
        case CURLE_COULDNT_RESOLVE_HOST:
            return .hostNotFound(ticket.request.host)
        case CURLE_COULDNT_CONNECT where refusedAddress.pointee != 0:
            return .destinationNotPublic(ticket.request.address)
        case CURLE_COULDNT_CONNECT:
            var osError = 0
            _ = fs_curl_easy_getinfo_long(handle, CURLINFO_OS_ERRNO, &osError)
            return osError == Int(ECONNREFUSED) ? .connectionRefused(ticket.request.address) : .unreachable(reason)
        case CURLE_OPERATION_TIMEDOUT:
            return .timeout
        case CURLE_FILESIZE_EXCEEDED:
            return .responseTooLarge(limit: ticket.request.maxBodySize)
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
        fs_curl_easy_setopt_pointer(handle, option, string) == CURLE_OK
    }

    private func set(_ option: CURLoption, pointer: UnsafeRawPointer?) -> Bool {
        fs_curl_easy_setopt_pointer(handle, option, pointer) == CURLE_OK
    }
}
