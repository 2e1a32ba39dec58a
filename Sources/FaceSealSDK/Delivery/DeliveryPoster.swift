/// POSTs a signed result to an application's delivery endpoint (SPEC §4.4). The real implementation
/// is the HTTP client; it sends `Authorization: Bearer <bearer>`, `X-FaceSeal-Signature` and the
/// body bytes unchanged, and never follows redirects.
public protocol DeliveryPoster: Sendable {
    /// Sends the delivery and reports what the application answered.
    func deliver(_ delivery: DeliveryRequest) async -> DeliveryOutcome
}
