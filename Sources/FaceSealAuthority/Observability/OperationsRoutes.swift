public import FaceSealHTTP
import Foundation

/// The paths of the operations endpoints (docs/PROTOCOL.md, "Operations").
public enum OperationsPaths {
    /// The process is up: always 200 while it serves.
    public static let health = "/healthz"
    /// The authority can serve: database reachable, schema current, ID-token keys loaded (503 otherwise).
    public static let readiness = "/readyz"
    /// The counters in the Prometheus text format.
    public static let metrics = "/metrics"
}

extension Authority {
    /// The `Content-Type` of the Prometheus text exposition format.
    static let metricsContentType = "text/plain; version=0.0.4; charset=utf-8"

    /// Installs `/healthz` and `/readyz`, and `/metrics` — which on the public listener needs an administrator API
    /// key (traffic volumes and deny rates tell an attacker whether an attack works); the loopback admin listener
    /// serves it without one.
    func installOperationsRoutes(into router: inout Router, metricsNeedAdministrator: Bool) {
        router.get(OperationsPaths.health) { _ in .text("ok\n", headers: ["Cache-Control": "no-store"]) }
        router.get(OperationsPaths.readiness) { [self] _ in await readinessResponse() }
        router.get(OperationsPaths.metrics) { [self] request in
            if metricsNeedAdministrator { try await authenticateManagement(request).requireAdministrator() }
            return await metricsResponse()
        }
    }

    /// The routes of the admin listener (`faceseal serve --admin-port`, loopback only): health, readiness and
    /// metrics, without credentials.
    public func makeAdminRouter() -> Router {
        var router = Router()
        installOperationsRoutes(into: &router, metricsNeedAdministrator: false)
        return instrumented(router)
    }

    /// Each check of `/readyz` by name, and whether it passed. A failure's cause goes to the log, never to the
    /// answer (it may name hosts or files).
    func readinessChecks() async -> [(name: String, passed: Bool)] {
        var checks: [(String, Bool)] = []
        do {
            let version = try await store.schemaVersion()
            checks.append(("database", true))
            checks.append(("migrations", version == SchemaMigrator.latestVersion))
        } catch {
            log.event(.warn, "readiness.database_failed", ["error": .string(String(reflecting: type(of: error)))])
            checks.append(("database", false))
            checks.append(("migrations", false))
        }
        do {
            _ = try await idTokenKeyRing()
            checks.append(("keys", true))
        } catch {
            log.event(.warn, "readiness.keys_failed", ["error": .string(String(reflecting: type(of: error)))])
            checks.append(("keys", false))
        }
        // A draining process (SIGTERM) is not ready, so a load balancer stops sending it requests.
        checks.append(("serving", !lifecycle.isDraining))
        return checks
    }

    private func readinessResponse() async -> HTTPResponse {
        let checks = await readinessChecks()
        let ready = checks.allSatisfy(\.passed)
        let fields = checks.map { "\"\($0.name)\":\"\($0.passed ? "ok" : "failed")\"" }.joined(separator: ",")
        let body = "{\"checks\":{\(fields)},\"status\":\"\(ready ? "ready" : "not_ready")\"}"
        return HTTPResponse(jsonBytes: Array(body.utf8), status: ready ? .ok : .serviceUnavailable, headers: ["Cache-Control": "no-store"])
    }

    private func metricsResponse() async -> HTTPResponse {
        let pending = try? await store.pendingRequestCount()
        let text = metrics.exposition(AuthorityMetrics.Gauges(
            pendingRequests: pending, outboxWaiters: outbox.totalWaiters, databaseErrors: store.databaseErrorCount))
        return .text(text, headers: ["Content-Type": Self.metricsContentType, "Cache-Control": "no-store"])
    }

    /// `router` with every route counted and timed under its pattern, unmatched requests counted as `unmatched`, and
    /// the request id bound for every event the handler logs.
    func instrumented(_ router: Router) -> Router {
        let metrics = self.metrics
        var router = router.wrappingHandlers { method, pattern, handler in
            let series = metrics.series(method: method.rawValue, route: pattern)
            return { request in
                let started = ContinuousClock.now
                return try await EventLog.$requestID.withValue(request.id) {
                    do {
                        let response = try await handler(request)
                        series.record(status: response.status.code, duration: ContinuousClock.now - started)
                        return response
                    } catch let error as any HTTPResponseConvertible {
                        // What the server would answer for it; answering here lets the status be counted.
                        let response = error.httpResponse
                        series.record(status: response.status.code, duration: ContinuousClock.now - started)
                        return response
                    } catch {
                        series.record(status: HTTPStatus.internalServerError.code, duration: ContinuousClock.now - started)
                        throw error
                    }
                }
            }
        }
        let unmatched = metrics.unmatched
        router.observeMisses { status in unmatched.record(status: status.code, duration: nil) }
        return router
    }
}
