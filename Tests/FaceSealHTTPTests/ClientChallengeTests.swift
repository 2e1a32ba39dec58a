import Foundation
import Testing
@testable import FaceSealHTTP
@testable import FaceSealHTTPClient

@Suite struct ClientChallengeTests {
    /// A 401 with `WWW-Authenticate` (as an OAuth token endpoint answers a bad client_secret_basic) comes back to
    /// the caller at once with its status, headers and body: the client never answers a challenge itself.
    @Test(arguments: ["Basic realm=\"faceseal\"", "Bearer", "Basic"])
    func challengeIsReturnedNotAnswered(_ challenge: String) async throws {
        var router = Router()
        router.post("/token") { _ in
            HTTPResponse(status: .unauthorized, headers: ["WWW-Authenticate": challenge, "Content-Type": "application/json"],
                         body: Array(#"{"error":"invalid_client"}"#.utf8))
        }
        try await withServer(router) { _, url in
            let request = HTTPClientRequest(method: .post, url: url.path("/token"),
                                            headers: ["Authorization": "Basic Y2xpZW50Ondyb25n"], body: [1],
                                            timeout: .seconds(10))
            let response = try await HTTPClient().send(request)
            #expect(response.status.code == 401)
            #expect(response.headers["www-authenticate"] == challenge)
            #expect(response.body == Array(#"{"error":"invalid_client"}"#.utf8))
        }
    }
}
