public import Foundation

/// A browser sign-in: one `GET /authorize` of the authorization code flow (OIDC Core §3.1, PKCE), waiting for a
/// phone to approve it. Its id is also the `rid` of its sign-in link and, once a device claims it, the `auth_req_id` of
/// the sign-in request created for that device's user: the approval itself is an ordinary sign-in.
public struct BrowserSignInRecord: Sendable, Hashable {
    /// The session id (≥ 128 bits of entropy): the link's `rid`, the request's `auth_req_id`, the path of its page.
    public var id: String
    /// Tenant of the application.
    public var tenantID: String
    /// The application (`client_id`).
    public var clientID: String
    /// The `redirect_uri` of the authorization request, one the application registered (exact string).
    public var redirectURI: String
    /// `state`, echoed to the redirect URI.
    public var state: String?
    /// `nonce`, put into the ID token.
    public var nonce: String?
    /// The PKCE `code_challenge` (S256: base64url of SHA-256 of the verifier, 43 characters).
    public var codeChallenge: String
    /// The `scope` requested.
    public var scope: String
    /// The binding message shown on the page and on the phone.
    public var bindingMessage: String
    /// SHA-256 of the browser cookie set with the page: only that browser may follow the sign-in to its redirect.
    public var browserHash: [UInt8]
    /// When the page was created.
    public var createdAt: Date
    /// After this instant the sign-in can no longer be approved.
    public var expiresAt: Date
    /// SHA-256 of the authorization code, once one was issued (one per sign-in).
    public var codeHash: [UInt8]?
    /// When the code stops being redeemable.
    public var codeExpiresAt: Date?
    /// When the code was redeemed (or burned by a failed redemption).
    public var codeUsedAt: Date?

    /// Creates a browser sign-in; `createdAt` is set by the store on insert.
    public init(id: String, tenantID: String, clientID: String, redirectURI: String, state: String?, nonce: String?,
                codeChallenge: String, scope: String, bindingMessage: String, browserHash: [UInt8], expiresAt: Date,
                createdAt: Date = Date(timeIntervalSince1970: 0), codeHash: [UInt8]? = nil, codeExpiresAt: Date? = nil,
                codeUsedAt: Date? = nil) {
        self.id = id
        self.tenantID = tenantID
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.state = state
        self.nonce = nonce
        self.codeChallenge = codeChallenge
        self.scope = scope
        self.bindingMessage = bindingMessage
        self.browserHash = browserHash
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.codeHash = codeHash
        self.codeExpiresAt = codeExpiresAt
        self.codeUsedAt = codeUsedAt
    }
}

/// What redeeming an authorization code found. The code is spent either way.
public enum CodeRedemption: Sendable, Hashable {
    /// The first redemption: the code is now spent.
    case redeemed(BrowserSignInRecord)
    /// The code had been redeemed before (a replay).
    case alreadyRedeemed(BrowserSignInRecord)
}
