/// Which of the device's identities at a link's authority acts for a request: the approval machine embeds it while
/// it reads the request's details. The authority answers a request only to a key of the request's user and
/// application, so with several identities at one authority each is asked in turn (most recent first); the first
/// one answered is the one, and the details' client id (and identity id) confirm it.
struct IdentitySelection: Equatable, Sendable {
    /// What the outer machine must do.
    enum Action: Equatable, Sendable {
        /// Read the details with this identity's ambient key → `answered(_:among:)` / `refused(_:settled:)`.
        case ask(KeyRecord)
        /// This identity acts for the request.
        case chosen(KeyRecord)
        /// No identity of this device acts for the request.
        case failed(AuthorityFailure)
    }

    /// The identity asked now.
    private(set) var asking: KeyRecord
    private var waiting: [KeyRecord]
    /// What to answer when every identity was refused.
    private var lastFailure: AuthorityFailure = .linkRefused(.unknownIdentity)

    /// Starts with the device's usable identities at the link's authority, most recent first.
    static func start(_ candidates: [KeyRecord]) -> (Self?, Action) {
        guard let first = candidates.first else { return (nil, .failed(.linkRefused(.unknownIdentity))) }
        return (Self(asking: first, waiting: Array(candidates.dropFirst())), .ask(first))
    }

    /// The asked identity got the details; `candidates` are the usable identities now. The record chosen is the one
    /// whose enrolment is for the request's application (and identity, when the details name one), preferring the
    /// one answered: a key of another application of the user never acts for it.
    func answered(_ details: RequestDetails, among candidates: [KeyRecord]) -> Action {
        let fits = { (record: KeyRecord) in
            record.key.clientId == details.clientId && (details.identityId.isEmpty || record.key.identityId == details.identityId)
        }
        guard let chosen = fits(asking) ? asking : candidates.first(where: fits) else { return .failed(.linkRefused(.unknownIdentity)) }
        return .chosen(chosen)
    }

    /// The asked identity was refused. `settled` is its record on its new keys when the refusal only said its key
    /// outlived a rotation's overlap (the driver settled it): it is asked again with them.
    mutating func refused(_ failure: AuthorityFailure, settled: KeyRecord?) -> Action {
        switch failure {
        case .linkRefused(.unknownIdentity):
            break
        case .deviceKeyRevoked, .deviceKeyTerminated, .deviceKeyReplaced:
            // An ended key says nothing about the other identities.
            lastFailure = failure
            if let settled, settled.ambient != asking.ambient { waiting.insert(settled, at: 0) }
        default:
            return .failed(failure)
        }
        guard !waiting.isEmpty else { return .failed(lastFailure) }
        asking = waiting.removeFirst()
        return .ask(asking)
    }
}
