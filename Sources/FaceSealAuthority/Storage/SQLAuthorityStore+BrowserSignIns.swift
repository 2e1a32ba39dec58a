public import Foundation

/// A new browser sign-in was refused: its application already has as many unexpired sign-ins as allowed.
public struct BrowserSignInLimitReached: Error, Sendable, Equatable {
    /// The limit that was reached.
    public let limit: Int
}

// Browser sign-ins of the authorization code flow: the page's session and its one authorization code.
extension SQLAuthorityStore {
    static func browserSignIn(from row: SQLRow) throws -> BrowserSignInRecord {
        BrowserSignInRecord(
            id: try row.text("id"), tenantID: try row.text("tenant_id"), clientID: try row.text("client_id"),
            redirectURI: try row.text("redirect_uri"), state: try row.optionalText("state"), nonce: try row.optionalText("nonce"),
            codeChallenge: try row.text("code_challenge"), scope: try row.text("scope"), bindingMessage: try row.text("binding_message"),
            browserHash: try row.blob("browser_hash"), expiresAt: try row.date("expires_at"), createdAt: try row.date("created_at"),
            codeHash: try row.optionalBlob("code_hash"), codeExpiresAt: try row.optionalDate("code_expires_at"),
            codeUsedAt: try row.optionalDate("code_used_at"))
    }

    static func loadBrowserSignIn(_ tx: any SQLTransaction, id: String, lock: SQLDialect? = nil) throws -> BrowserSignInRecord {
        guard let row = try tx.queryOne("SELECT * FROM browser_sign_ins WHERE id = ?" + (lock?.forUpdate ?? ""), [.text(id)]) else {
            throw AuthorityStoreError.notFound(.browserSignIn, id: id)
        }
        return try browserSignIn(from: row)
    }

    public func createBrowserSignIn(_ signIn: BrowserSignInRecord, liveLimit: Int?) async throws -> BrowserSignInRecord {
        try Self.checkIdentifier(signIn.id, field: "id")
        try Self.checkIdentifier(signIn.clientID, field: "clientID")
        for (field, value, max) in [("redirectURI", signIn.redirectURI, 2048), ("codeChallenge", signIn.codeChallenge, 128),
                                    ("scope", signIn.scope, 2048), ("bindingMessage", signIn.bindingMessage, 256),
                                    ("state", signIn.state ?? "", 2048), ("nonce", signIn.nonce ?? "", 2048)] {
            try Self.checkLength(value, field: field, max: max)
        }
        guard signIn.browserHash.count == 32 else { throw AuthorityStoreError.invalidInput(field: "browserHash", reason: "must be 32 bytes") }
        return try await transact(conflict: (.browserSignIn, signIn.id)) { tx, now in
            let application = try Self.loadApplication(tx, clientID: signIn.clientID)
            guard application.tenantID == signIn.tenantID else { throw AuthorityStoreError.notFound(.application, id: signIn.clientID) }
            guard signIn.expiresAt > now else { throw AuthorityStoreError.invalidInput(field: "expiresAt", reason: "already passed") }
            // Unclaimed and expired: nothing refers to them, nothing can use them any more.
            try tx.execute(
                """
                DELETE FROM browser_sign_ins WHERE client_id = ? AND expires_at <= ?
                    AND NOT EXISTS (SELECT 1 FROM ciba_requests r WHERE r.auth_req_id = browser_sign_ins.id)
                """,
                [.text(signIn.clientID), .date(now)])
            if let liveLimit {
                let row = try tx.queryOne(
                    "SELECT COUNT(*) AS live FROM browser_sign_ins WHERE client_id = ? AND expires_at > ?",
                    [.text(signIn.clientID), .date(now)])
                if let row, try row.int("live") >= Int64(liveLimit) { throw BrowserSignInLimitReached(limit: liveLimit) }
            }
            try tx.execute(
                """
                INSERT INTO browser_sign_ins (id, tenant_id, client_id, redirect_uri, state, nonce, code_challenge, scope,
                    binding_message, browser_hash, created_at, expires_at, code_hash, code_expires_at, code_used_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, NULL)
                """,
                [
                    .text(signIn.id), .text(signIn.tenantID), .text(signIn.clientID), .text(signIn.redirectURI),
                    .optionalText(signIn.state), .optionalText(signIn.nonce), .text(signIn.codeChallenge), .text(signIn.scope),
                    .text(signIn.bindingMessage), .blob(signIn.browserHash), .date(now), .date(signIn.expiresAt),
                ])
            return try Self.loadBrowserSignIn(tx, id: signIn.id)
        }
    }

    public func browserSignIn(id: String) async throws -> BrowserSignInRecord {
        try await readStatement { tx, _ in try Self.loadBrowserSignIn(tx, id: id) }
    }

    public func issueBrowserSignInCode(id: String, codeHash: [UInt8], expiresAt: Date) async throws -> BrowserSignInRecord {
        guard codeHash.count == 32 else { throw AuthorityStoreError.invalidInput(field: "codeHash", reason: "must be 32 bytes") }
        let dialect = database.dialect
        return try await transact(conflict: (.browserSignIn, id)) { tx, _ in
            let signIn = try Self.loadBrowserSignIn(tx, id: id, lock: dialect)
            guard signIn.codeHash == nil else { throw AuthorityStoreError.conflict(.browserSignIn, id: id) }
            try tx.execute("UPDATE browser_sign_ins SET code_hash = ?, code_expires_at = ? WHERE id = ?",
                           [.blob(codeHash), .date(expiresAt), .text(id)])
            return try Self.loadBrowserSignIn(tx, id: id)
        }
    }

    public func redeemBrowserSignInCode(codeHash: [UInt8]) async throws -> CodeRedemption {
        let dialect = database.dialect
        return try await transact { tx, now in
            guard let row = try tx.queryOne("SELECT * FROM browser_sign_ins WHERE code_hash = ?" + dialect.forUpdate, [.blob(codeHash)]) else {
                throw AuthorityStoreError.notFound(.browserSignIn, id: "(code)")
            }
            let signIn = try Self.browserSignIn(from: row)
            guard signIn.codeUsedAt == nil else { return .alreadyRedeemed(signIn) }
            try tx.execute("UPDATE browser_sign_ins SET code_used_at = ? WHERE id = ?", [.date(now), .text(signIn.id)])
            return .redeemed(try Self.loadBrowserSignIn(tx, id: signIn.id))
        }
    }
}
