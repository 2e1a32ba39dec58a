import Foundation
import Testing
@testable import FaceSealHTTP

@Suite struct HeaderTests {
    @Test func lookupIsCaseInsensitiveAndKeepsOrder() {
        var headers: HTTPHeaders = ["Content-Type": "application/json", "X-Trace": "a"]
        headers.add(name: "x-trace", value: "b")
        #expect(headers["content-type"] == "application/json")
        #expect(headers["CONTENT-TYPE"] == "application/json")
        #expect(headers.values(for: "X-TRACE") == ["a", "b"])
        headers["X-Trace"] = "c"
        #expect(headers.values(for: "x-trace") == ["c"])
        headers["x-TRACE"] = nil
        #expect(!headers.contains("X-Trace"))
        #expect(headers.count == 1)
    }

    @Test func namesOfDifferentLengthOrLettersDiffer() {
        #expect(!HTTPHeaders.namesEqual("Accept", "Accept-Language"))
        #expect(!HTTPHeaders.namesEqual("Date", "Data"))
        #expect(HTTPHeaders.namesEqual("WWW-Authenticate", "www-authenticate"))
    }
}

@Suite struct FormTests {
    @Test func decodesPlusPercentAndEmptyValues() throws {
        let form = try FormParameters(parsing: Array("grant_type=urn%3Aopenid%3Aparams%3Agrant-type%3Aciba&msg=hello+w%C3%B6rld&empty=&flag".utf8))
        #expect(form["grant_type"] == "urn:openid:params:grant-type:ciba")
        #expect(form["msg"] == "hello wörld")
        #expect(form["empty"] == "")
        #expect(form["flag"] == "")
        #expect(form.count == 4)
    }

    @Test func skipsEmptyPairsLikeWHATWG() throws {
        let form = try FormParameters(parsing: Array("&a=1&&b=2&".utf8))
        #expect(form.items == [.init(name: "a", value: "1"), .init(name: "b", value: "2")])
    }

    @Test func refusesDuplicatesByDefault() {
        #expect(throws: FormDecodingError.duplicateParameter("scope")) {
            try FormParameters(parsing: Array("scope=openid&scope=email".utf8))
        }
        // Percent-encoding does not hide a duplicate.
        #expect(throws: FormDecodingError.duplicateParameter("scope")) {
            try FormParameters(parsing: Array("scope=openid&sc%6Fpe=email".utf8))
        }
    }

    @Test func allowsDuplicatesWhenAskedButAccessorsStillGuard() throws {
        let form = try FormParameters(parsing: Array("a=1&a=2".utf8), allowDuplicates: true)
        #expect(form.values(for: "a") == ["1", "2"])
        #expect(throws: FormDecodingError.duplicateParameter("a")) { try form.required("a") }
        #expect(throws: FormDecodingError.duplicateParameter("a")) { try form.optional("a") }
        #expect(throws: FormDecodingError.missingParameter("b")) { try form.required("b") }
        #expect(try form.optional("b") == nil)
    }

    @Test func refusesMalformedInput() {
        #expect(throws: FormDecodingError.invalidPercentEncoding) { try FormParameters(parsing: Array("a=%2".utf8)) }
        #expect(throws: FormDecodingError.invalidPercentEncoding) { try FormParameters(parsing: Array("a=%zz".utf8)) }
        #expect(throws: FormDecodingError.invalidUTF8) { try FormParameters(parsing: Array("a=%FF%FE".utf8)) }
        #expect(throws: FormDecodingError.emptyName) { try FormParameters(parsing: Array("=x".utf8)) }
    }

    @Test func enforcesLimits() {
        let limits = FormParameters.Limits(maxBytes: 16, maxParameters: 2)
        #expect(throws: FormDecodingError.tooLarge(limit: 16)) {
            try FormParameters(parsing: Array(repeating: UInt8(ascii: "a"), count: 17), limits: limits)
        }
        #expect(throws: FormDecodingError.tooManyParameters(limit: 2)) {
            try FormParameters(parsing: Array("a=1&b=2&c=3".utf8), limits: limits)
        }
    }

    @Test func encodingRoundTrips() throws {
        let original = FormParameters([.init(name: "binding message", value: "Pay 5 € & go=now"), .init(name: "x", value: "+/?")])
        let parsed = try FormParameters(parsing: Array(original.encoded.utf8))
        #expect(parsed == original)
    }

    @Test func errorsBecomeClientErrors() {
        #expect(FormDecodingError.duplicateParameter("a").httpResponse.status == .badRequest)
        #expect(FormDecodingError.unsupportedContentType("text/plain").httpResponse.status == .unsupportedMediaType)
        #expect(FormDecodingError.tooLarge(limit: 1).httpResponse.status == .contentTooLarge)
    }
}

@Suite struct JSONBodyTests {
    struct Device: Codable, Equatable {
        var id: String
        var keys: [Int]
        var label: String?
    }

    @Test func encodesWithSortedKeysAndUnescapedSlashes() throws {
        struct Unsorted: Encodable { var zeta = 1; var alpha = "a/b"; var mid = true }
        #expect(String(decoding: try JSONBody.encode(Unsorted()), as: UTF8.self) == #"{"alpha":"a/b","mid":true,"zeta":1}"#)
    }

    @Test func decodingErrorsAreTypedAndNameThePath() {
        #expect(throws: JSONDecodingError.invalidJSON) { try JSONBody.decode(Device.self, from: Array("{\"id\":".utf8)) }
        #expect(throws: JSONDecodingError.empty) { try JSONBody.decode(Device.self, from: [UInt8]()) }
        #expect(throws: JSONDecodingError.missingField("keys")) { try JSONBody.decode(Device.self, from: Array(#"{"id":"d"}"#.utf8)) }
        #expect(throws: JSONDecodingError.typeMismatch("keys.[1]")) {
            try JSONBody.decode(Device.self, from: Array(#"{"id":"d","keys":[1,"x"]}"#.utf8))
        }
        #expect(throws: JSONDecodingError.nullValue("id")) { try JSONBody.decode(Device.self, from: Array(#"{"id":null,"keys":[]}"#.utf8)) }
        #expect(throws: JSONDecodingError.tooLarge(limit: 8)) {
            try JSONBody.decode(Device.self, from: Array(#"{"id":"d","keys":[]}"#.utf8), maxBytes: 8)
        }
    }

    @Test func errorResponsesDoNotEchoValues() throws {
        let response = JSONDecodingError.typeMismatch("keys.[1]").httpResponse
        #expect(response.status == .badRequest)
        let body = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: String]
        #expect(body?["error"] == "invalid_request")
        #expect(body?["error_description"] == "field 'keys.[1]' has the wrong type")
    }
}

@Suite struct RequestTargetTests {
    @Test func splitsPathAndQueryAndDecodesSegments() throws {
        let request = try HTTPRequest(method: .get, path: "/devices/a%2Fb/keys+x?q=a+b&q=c&empty")
        #expect(request.path == "/devices/a%2Fb/keys+x")
        #expect(request.pathSegments == ["devices", "a/b", "keys+x"])
        #expect(request.rawQuery == "q=a+b&q=c&empty")
        #expect(request.query.values(for: "q") == ["a b", "c"])
        #expect(request.query["empty"] == "")
    }

    @Test func refusesMalformedTargets() {
        #expect(throws: HTTPRequestTargetError.notOriginForm) { try HTTPRequest(method: .get, path: "http://x/") }
        #expect(throws: HTTPRequestTargetError.invalidPath) { try HTTPRequest(method: .get, path: "/a/%zz") }
        #expect(throws: HTTPRequestTargetError.invalidQuery(.invalidPercentEncoding)) { try HTTPRequest(method: .get, path: "/a?x=%") }
    }

    @Test func contentTypeChecksAcceptParametersAndJSONSuffix() throws {
        var request = try HTTPRequest(method: .post, path: "/", headers: ["content-type": "Application/JSON; charset=utf-8"], body: Array("[1]".utf8))
        #expect(try request.decodeJSON([Int].self) == [1])
        request.headers["Content-Type"] = "application/jwk-set+json"
        #expect(try request.decodeJSON([Int].self) == [1])
        request.headers["Content-Type"] = "text/plain"
        #expect(throws: JSONDecodingError.unsupportedContentType("text/plain")) { try request.decodeJSON([Int].self) }
        request.headers["Content-Type"] = nil
        #expect(throws: JSONDecodingError.unsupportedContentType(nil)) { try request.decodeJSON([Int].self) }
    }
}

@Suite struct LogLineTests {
    @Test func lineHasIdMethodPathStatusDuration() {
        let entry = RequestLogger.Entry(requestID: "abc", method: "POST", path: "/token", status: 400,
                                        duration: .milliseconds(12), errorType: nil)
        #expect(entry.line == "rid=abc POST /token 400 12.000ms")
    }

    @Test func durationsAreMillisecondsToTheMicrosecond() {
        func line(_ duration: Duration) -> String {
            RequestLogger.Entry(requestID: "r", method: "GET", path: "/", status: 200, duration: duration, errorType: nil).line
        }
        #expect(line(.microseconds(1)).hasSuffix(" 0.001ms"))
        #expect(line(.microseconds(12_345)).hasSuffix(" 12.345ms"))
        #expect(line(.nanoseconds(1_999_600)).hasSuffix(" 2.000ms"))
        #expect(line(.seconds(3) + .microseconds(40)).hasSuffix(" 3000.040ms"))
    }

    @Test func timestampsAreWhatTheISO8601FormatStylePrints() {
        for seconds in [0.0, 951_782_400.5, 1_764_594_961.999, 4_102_444_799] {
            let date = Date(timeIntervalSince1970: seconds)
            #expect(RequestLogger.timestamp(date) == date.formatted(.iso8601))
        }
    }

    @Test func controlCharactersCannotForgeLines() {
        let entry = RequestLogger.Entry(requestID: "abc", method: "GET", path: "/a\nrid=evil 200", status: 404,
                                        duration: .zero, errorType: "Boom")
        #expect(!entry.line.contains("\n"))
        #expect(entry.line == "rid=abc GET /a%0Arid=evil%20200 404 0.000ms error=Boom")
    }

    @Test func requestIDsAreRandom128BitHex() {
        let ids = (0..<100).map { _ in RequestID.make() }
        #expect(Set(ids).count == 100)
        #expect(ids.allSatisfy { $0.utf8.count == 32 && $0.allSatisfy { "0123456789abcdef".contains($0) } })
    }

    @Test func linesAreWrittenWhole() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]) }
        let line = String(repeating: "x", count: 10_000) + "\n"
        RequestLogger.writeLine(line, to: ends[1])
        close(ends[1])
        let read = FileHandle(fileDescriptor: ends[0]).readDataToEndOfFile()
        #expect(String(decoding: read, as: UTF8.self) == line)
    }
}
