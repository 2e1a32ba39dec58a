import Synchronization

/// Holds a router that is set after the server starts (an authority's issuer names the bound port, so its router
/// exists only once the server listens). Until then every request is answered `503` (`HTTPError.unavailable`).
public final class RouterSlot: Sendable {
    private let slot = Mutex<Router?>(nil)

    /// An empty slot.
    public init() {}

    /// Sets (or replaces) the router.
    public func set(_ router: Router) { slot.withLock { $0 = router } }

    /// The router; `HTTPError.unavailable` while none is set.
    public func router() throws(HTTPError) -> Router {
        guard let router = slot.withLock({ $0 }) else { throw .unavailable }
        return router
    }
}
