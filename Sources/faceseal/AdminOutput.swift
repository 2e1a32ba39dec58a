import FaceSealCrypto
import FaceSealWire
import Foundation

/// Human-readable output of `faceseal admin`: aligned tables and key/value blocks.
enum AdminOutput {
    /// Columns padded to their widest cell; the last column is not padded.
    static func table(_ header: [String], _ rows: [[String]]) -> String {
        guard !rows.isEmpty else { return "(none)" }
        let all = [header] + rows
        var widths = Array(repeating: 0, count: header.count)
        for row in all { for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) } }
        return all.map { row in
            row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }

    /// `name  value` lines, names aligned.
    static func fields(_ pairs: [(String, String?)]) -> String {
        let present = pairs.compactMap { name, value in value.map { (name, $0) } }
        let width = present.map(\.0.count).max() ?? 0
        return present.map { $0.0.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + $0.1 }.joined(separator: "\n")
    }

    /// RFC 3339 in UTC.
    static func time(_ date: Date?) -> String? {
        guard let date else { return nil }
        return ISO8601DateFormatter().string(from: date)
    }

    static func tenant(_ tenant: ManagedTenant) -> String {
        let policy = tenant.policy
        return fields([
            ("tenant", tenant.id), ("name", tenant.name), ("created", time(tenant.createdAt)),
            ("key algorithms", policy.keyAlgorithms.joined(separator: ", ")),
            ("attempts max", String(policy.attemptsMax)),
            ("liveness required", String(policy.livenessRequired)),
            ("password", "\(policy.passwordPolicy.mode.rawValue) (minimum length \(policy.passwordPolicy.minimumLength))"),
            ("one device per user", String(policy.oneDevicePerUser)),
            ("request lifetime", "\(policy.requestLifetimeSeconds) s"),
        ])
    }

    static func tenants(_ tenants: [ManagedTenant]) -> String {
        table(["TENANT", "NAME", "ALGORITHMS", "ATTEMPTS", "LIVENESS", "CREATED"], tenants.map {
            [$0.id, $0.name, $0.policy.keyAlgorithms.joined(separator: ","), String($0.policy.attemptsMax),
             String($0.policy.livenessRequired), time($0.createdAt) ?? ""]
        })
    }

    static func apiKey(_ key: ManagedAPIKey) -> String {
        var text = fields([("key id", key.id), ("tenant", key.tenantID ?? "(administrator)"), ("label", key.label),
                           ("created", time(key.createdAt)), ("revoked", time(key.revokedAt))])
        if let secret = key.key {
            text += "\n\nAPI key (shown once, store it now):\n\(secret)"
        }
        return text
    }

    static func apiKeys(_ keys: [ManagedAPIKey]) -> String {
        table(["KEY ID", "TENANT", "LABEL", "CREATED", "REVOKED"], keys.map {
            [$0.id, $0.tenantID ?? "(administrator)", $0.label, time($0.createdAt) ?? "", time($0.revokedAt) ?? "-"]
        })
    }

    static func application(_ application: ManagedApplication) -> String {
        var text = fields([
            ("client id", application.clientID), ("tenant", application.tenantID), ("label", application.label),
            ("client auth", application.clientAuth), ("delivery mode", application.deliveryMode.rawValue),
            ("notification endpoint", application.notificationEndpoint), ("delivery endpoint", application.deliveryEndpoint),
            ("id token alg", application.idTokenSignedResponseAlg),
            ("redirect uris", application.redirectURIs.isEmpty ? nil : application.redirectURIs.joined(separator: " ")),
            ("branding name", application.branding.name),
            ("logo", application.branding.logoURL.map { $0.hasPrefix("data:") ? "(data URL, \($0.utf8.count) bytes)" : $0 }),
            ("primary colour", application.branding.primaryColor), ("secondary colour", application.branding.secondaryColor),
            ("created", time(application.createdAt)),
        ])
        if let secret = application.clientSecret {
            text += "\n\nclient secret (shown once, store it now):\n\(secret)"
        }
        return text
    }

    static func applications(_ applications: [ManagedApplication]) -> String {
        table(["CLIENT ID", "LABEL", "AUTH", "MODE", "DELIVERY ENDPOINT", "ALG"], applications.map {
            [$0.clientID, $0.label, $0.clientAuth, $0.deliveryMode.rawValue, $0.deliveryEndpoint ?? "-", $0.idTokenSignedResponseAlg]
        })
    }

    static func user(_ user: ManagedUser) -> String {
        fields([("subject", user.subject), ("tenant", user.tenantID), ("email", user.email), ("created", time(user.createdAt))])
    }

    static func users(_ users: [ManagedUser]) -> String {
        table(["SUBJECT", "EMAIL", "CREATED"], users.map { [$0.subject, $0.email, time($0.createdAt) ?? ""] })
    }

    static func invitation(_ invitation: ManagedInvitation) -> String {
        fields([
            ("invitation", invitation.id), ("tenant", invitation.tenantID), ("subject", invitation.subject),
            ("client id", invitation.clientID), ("status", invitation.status.rawValue), ("expires", time(invitation.expiresAt)),
            ("consumed", time(invitation.consumedAt)), ("cancelled", time(invitation.cancelledAt)),
        ]) + "\n\nenrolment link:\n\(invitation.link)\n\nuniversal link:\n\(invitation.universalLink)"
    }

    static func invitations(_ invitations: [ManagedInvitation]) -> String {
        table(["INVITATION", "SUBJECT", "CLIENT ID", "STATUS", "CREATED", "EXPIRES"], invitations.map {
            [$0.id, $0.subject, $0.clientID, $0.status.rawValue, time($0.createdAt) ?? "", time($0.expiresAt) ?? ""]
        })
    }

    static func authorityKeys(_ keys: ManagedAuthorityKeys) -> String {
        "device key in use: \(keys.devicePublicKey)\n\n" + table(["KEY ID", "USE", "ALG", "CREATED", "RETIRED", "JWKS", "ROLLOVER UNTIL"], keys.keys.map {
            [$0.keyID, $0.use, $0.algorithm, time($0.createdAt) ?? "", time($0.retiredAt) ?? "-", $0.published.map { $0 ? "yes" : "no" } ?? "-",
             time($0.rolloverExpiresAt) ?? "-"]
        })
    }

    static func deletion(_ deletion: ManagedDeletion) -> String {
        fields([
            ("deleted", "\(deletion.deleted) \(deletion.id)"), ("enrolments ended", String(deletion.enrolmentsEnded)),
            ("requests ended", String(deletion.requestsEnded)), ("invitations cancelled", String(deletion.invitationsCancelled)),
            ("face tokens erased", String(deletion.faceTokensErased)), ("API keys revoked", String(deletion.apiKeysRevoked)),
        ])
    }

    static func devices(_ devices: [ManagedDevice]) -> String {
        table(["ENROLMENT", "DEVICE", "SUBJECT", "CLIENT ID", "STATUS", "KEYS"], devices.map { device in
            [device.id, device.deviceLabel.isEmpty ? device.deviceID : "\(device.deviceID) (\(device.deviceLabel))", device.subject,
             device.clientID, device.status.rawValue,
             device.keys.map { "\($0.keyID):\($0.role.rawValue):\($0.status.rawValue)" }.joined(separator: " ")]
        })
    }

    static func device(_ device: ManagedDevice) -> String {
        fields([
            ("enrolment", device.id), ("device", device.deviceID), ("label", device.deviceLabel), ("tenant", device.tenantID),
            ("subject", device.subject), ("client id", device.clientID), ("status", device.status.rawValue),
            ("created", time(device.createdAt)), ("status changed", time(device.statusChangedAt)),
        ]) + "\n\n" + table(["KEY ID", "ROLE", "STATUS"], device.keys.map { [$0.keyID, $0.role.rawValue, $0.status.rawValue] })
    }

    static func audit(_ page: ManagedAuditPage) -> String {
        var text = table(["SEQ", "AT", "KIND", "ACTOR", "TARGET", "DETAIL"], page.events.map {
            [String($0.sequence), time($0.at) ?? "", $0.kind, $0.actor ?? "-", $0.target ?? "-", $0.detail.value.serializedString]
        })
        if let next = page.nextBefore { text += "\n(more: --before \(next))" }
        return text
    }
}
