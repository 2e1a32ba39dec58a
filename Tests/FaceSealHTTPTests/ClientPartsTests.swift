import Foundation
import Testing
@testable import FaceSealHTTP
@testable import FaceSealHTTPClient

/// The client's pure parts: request checks and the response-head parser, without a network.
@Suite struct ClientPartsTests {
    func consume(_ head: inout ResponseHead, _ line: String) -> Bool {
        Array(line.utf8).withUnsafeBytes { head.consume($0) }
    }

    @Test func headParserKeepsTheLastHeadAndIgnoresTrailers() {
        var head = ResponseHead(limit: 1000)
        for line in ["HTTP/1.1 103 Early Hints\r\n", "Link: </a>\r\n", "\r\n", "HTTP/1.1 200 OK\r\n", "A:  1 \r\n", "no colon\r\n",
                     "B:\r\n", "\tfolded\r\n", "\r\n", "Trailer-Field: t\r\n", "\r\n"] {
            #expect(consume(&head, line))
        }
        #expect(head.headers == HTTPHeaders([("A", "1"), ("B", " folded")]))
    }

    @Test func headParserCountsEveryByteAgainstTheLimit() {
        var head = ResponseHead(limit: 20)
        #expect(consume(&head, "HTTP/1.1 200 OK\r\n"))
        #expect(consume(&head, "A: 1\r\n") == false)
        var exact = ResponseHead(limit: 23)
        #expect(consume(&exact, "HTTP/1.1 200 OK\r\n") && consume(&exact, "A: 1\r\n"))
    }

    @Test func hostAdmissionHoldsEachHostToItsLimitAndHandsFreedSlotsToTheOldestWaiting() {
        var admission = HostAdmission<Int>(limit: 2)
        let started = [1, 2, 3, 4].map { admission.offer($0, to: "a:80") }
        #expect(started == [true, true, false, false])
        let otherHost = admission.offer(5, to: "b:80")
        #expect(otherHost)
        #expect(admission.waiting == [3, 4])
        let next = admission.release("a:80")
        #expect(next == 3)
        #expect(admission.runningCount("a:80") == 2)
        let left = admission.removeWaiting { $0 == 4 }
        #expect(left == [4])
        let afterwards = [admission.release("a:80"), admission.release("a:80")]
        #expect(afterwards == [nil, nil])
        #expect(admission.runningCount("a:80") == 0 && admission.runningCount("b:80") == 1)
        let again = admission.offer(6, to: "a:80")
        #expect(again)
    }

    /// The loop sleeps until the earlier of libcurl's timer (-1: none) and a waiting ticket's deadline (`Int32.max`:
    /// none); with neither it sleeps until woken (-1).
    @Test func theLoopSleepsUntilTheEarlierOfLibcurlsTimerAndAWaitingDeadline() {
        #expect(CurlTransferLoop.earlier(-1, Int32.max) == -1)
        #expect(CurlTransferLoop.earlier(0, Int32.max) == 0)
        #expect(CurlTransferLoop.earlier(250, Int32.max) == 250)
        #expect(CurlTransferLoop.earlier(-1, 40) == 40)
        #expect(CurlTransferLoop.earlier(250, 40) == 40)
        #expect(CurlTransferLoop.earlier(30, 40) == 30)
        #expect(CurlTransferLoop.earlier(Int.max, Int32.max) == Int32.max)
        #expect(CurlTransferLoop.earlier(Int(Int32.max) + 5, 7) == 7)
    }

    @Test func timeoutsBecomeWholeMillisecondsWithinLibcurlsRange() {
        #expect(CurlRequest.milliseconds(.seconds(30)) == 30_000)
        #expect(CurlRequest.milliseconds(.microseconds(1500)) == 2)
        #expect(CurlRequest.milliseconds(.zero) == 1)
        #expect(CurlRequest.milliseconds(.seconds(-5)) == 1)
        #expect(CurlRequest.milliseconds(.seconds(Int64.max)) == Int(Int32.max))
    }

    @Test func framingHeadersAreDroppedAndDefaultsSwitchedOff() throws {
        let url = try #require(URL(string: "http://[::1]:8080/p?q=1"))
        let request = try CurlRequest(HTTPClientRequest(method: .post, url: url, headers: ["transfer-encoding": "chunked", "X-A": " v "]),
                                      configuration: .init(maxResponseBodySize: -1))
        #expect(request.headerLines == ["X-A: v", "Expect:", "Content-Type:"])
        #expect(request.body == [])
        #expect(request.address == "[::1]:8080")
        #expect(request.maxBodySize == 0)
        let get = try CurlRequest(HTTPClientRequest(url: url), configuration: .init())
        #expect(get.body == nil)
        #expect(get.headerLines == ["Expect:"])
    }
}
