public import FaceSealHTTP

extension Authority {
    /// The path segments after which a request path carries a bearer: invitation ids (`/device/v1/enrolments/{inv}`,
    /// `/manage/v1/tenants/{t}/invitations/{inv}`), request ids (`/device/v1/requests/{rid}`) and universal links
    /// (`/l/{link}`).
    public static let bearerPathMarkers: Set<String> = ["enrolments", "invitations", "requests", "l"]

    /// `logger` with every bearer in a logged path replaced by `-`: every authority server logs through it.
    public static func redactingBearers(_ logger: RequestLogger) -> RequestLogger {
        logger.redactingPathSegments(after: bearerPathMarkers)
    }
}
