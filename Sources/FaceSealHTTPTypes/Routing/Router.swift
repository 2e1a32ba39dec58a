/// A handler: a plain async function from a request to a response. Throw an
/// `HTTPResponseConvertible` error to answer with a specific error response.
public typealias HTTPHandler = @Sendable (HTTPRequest) async throws -> HTTPResponse

/// Routes requests by method and path pattern to handlers.
///
/// Patterns are absolute paths whose segments are literals or `:name` parameters
/// (`/devices/:id/keys`). A literal segment wins over a parameter at the same position, so
/// `/devices/current` and `/devices/:id` can coexist. Segments are compared after percent-decoding.
/// A path that matches no pattern answers 404; a path that matches with another method answers 405
/// with `Allow`. `HEAD` is served by the `GET` handler when no `HEAD` handler exists (libmicrohttpd
/// drops the body).
public struct Router: Sendable {
    private var root = Node()
    private var missObserver: (@Sendable (HTTPStatus) -> Void)?

    /// An empty router (every request answers 404).
    public init() {}

    /// Registers `handler` for `method` on `pattern`. Registering the same method and pattern twice,
    /// or a malformed pattern, is a programming error.
    public mutating func on(_ method: HTTPMethod, _ pattern: String, use handler: @escaping HTTPHandler) {
        precondition(pattern.hasPrefix("/"), "route pattern '\(pattern)' must start with '/'")
        let segments = pattern.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        var names = Set<String>()
        for segment in segments where segment.hasPrefix(":") {
            precondition(segment.count > 1, "route pattern '\(pattern)' has an unnamed parameter")
            precondition(names.insert(String(segment.dropFirst())).inserted,
                         "route pattern '\(pattern)' repeats parameter '\(segment)'")
        }
        root.insert(segments[...], method: method, pattern: pattern, handler: handler)
    }

    /// Registers a `GET` route (which also answers `HEAD`).
    public mutating func get(_ pattern: String, use handler: @escaping HTTPHandler) { on(.get, pattern, use: handler) }
    /// Registers a `POST` route.
    public mutating func post(_ pattern: String, use handler: @escaping HTTPHandler) { on(.post, pattern, use: handler) }
    /// Registers a `PUT` route.
    public mutating func put(_ pattern: String, use handler: @escaping HTTPHandler) { on(.put, pattern, use: handler) }
    /// Registers a `PATCH` route.
    public mutating func patch(_ pattern: String, use handler: @escaping HTTPHandler) { on(.patch, pattern, use: handler) }
    /// Registers a `DELETE` route.
    public mutating func delete(_ pattern: String, use handler: @escaping HTTPHandler) { on(.delete, pattern, use: handler) }

    /// Finds the route for `request` and runs it with `pathParameters` filled in.
    /// Throws `HTTPError` 404 or 405 when no route fits.
    public func respond(to request: HTTPRequest) async throws -> HTTPResponse {
        switch match(method: request.method, segments: request.pathSegments) {
        case .found(let handler, let parameters):
            var request = request
            request.pathParameters = parameters
            return try await handler(request)
        case .methodNotAllowed(let allowed):
            missObserver?(.methodNotAllowed)
            throw HTTPError(.methodNotAllowed, code: "method_not_allowed",
                            description: "method \(HTTPError.quoted(request.method.rawValue)) not allowed",
                            headers: ["Allow": allowed.map(\.rawValue).joined(separator: ", ")])
        case .notFound:
            missObserver?(.notFound)
            throw HTTPError.notFound
        }
    }

    /// This router with every handler replaced by `wrap(method, pattern, handler)`, called once per route here (not
    /// per request): for instrumentation that needs the route pattern, never the raw path.
    public func wrappingHandlers(_ wrap: (_ method: HTTPMethod, _ pattern: String, _ handler: @escaping HTTPHandler) -> HTTPHandler) -> Router {
        var wrapped = self
        wrapped.root = root.mapRoutes(wrap)
        return wrapped
    }

    /// Calls `observer` with the status (404 or 405) of every request that matches no route.
    public mutating func observeMisses(_ observer: @escaping @Sendable (HTTPStatus) -> Void) {
        missObserver = observer
    }

    /// The outcome of matching a method and decoded path segments.
    enum Match {
        case found(HTTPHandler, [String: String])
        case methodNotAllowed([HTTPMethod])
        case notFound
    }

    func match(method: HTTPMethod, segments: [String]) -> Match {
        guard let (node, parameters) = root.find(segments[...], parameters: []) else { return .notFound }
        if let route = node.routes[method] ?? (method == HTTPMethod.head ? node.routes[HTTPMethod.get] : nil) {
            var values: [String: String] = [:]
            for parameter in parameters { values[parameter.name] = parameter.value }
            return .found(route.handler, values)
        }
        var allowed = Set<HTTPMethod>(node.routes.keys)
        if allowed.contains(.get) { allowed.insert(.head) }
        return .methodNotAllowed(allowed.sorted())
    }

    /// A trie over path segments. A node is a match only if it has at least one route.
    private struct Node: Sendable {
        struct Route: Sendable {
            let pattern: String
            let handler: HTTPHandler
        }

        var literals: [String: Node] = [:]
        /// At most one element; an array gives the recursive struct a finite size.
        var parameter: [(name: String, node: Node)] = []
        var routes: [HTTPMethod: Route] = [:]

        func mapRoutes(_ wrap: (HTTPMethod, String, @escaping HTTPHandler) -> HTTPHandler) -> Node {
            var node = self
            for (method, route) in routes {
                node.routes[method] = Route(pattern: route.pattern, handler: wrap(method, route.pattern, route.handler))
            }
            node.literals = literals.mapValues { $0.mapRoutes(wrap) }
            node.parameter = parameter.map { ($0.name, $0.node.mapRoutes(wrap)) }
            return node
        }

        mutating func insert(_ segments: ArraySlice<String>, method: HTTPMethod, pattern: String, handler: @escaping HTTPHandler) {
            guard let segment = segments.first else {
                if let existing = routes[method] {
                    preconditionFailure("route \(method) \(pattern) registered twice (first as \(existing.pattern))")
                }
                routes[method] = Route(pattern: pattern, handler: handler)
                return
            }
            let rest = segments.dropFirst()
            if segment.hasPrefix(":") {
                let name = String(segment.dropFirst())
                if parameter.isEmpty { parameter = [(name, Node())] }
                precondition(parameter[0].name == name,
                             "route \(pattern) names parameter ':\(name)' where another route has ':\(parameter[0].name)'")
                parameter[0].node.insert(rest, method: method, pattern: pattern, handler: handler)
            } else {
                literals[segment, default: Node()].insert(rest, method: method, pattern: pattern, handler: handler)
            }
        }

        /// Depth-first: literal child first, then the parameter child, so literals take precedence
        /// and a dead end under a literal still lets the parameter route match.
        func find(
            _ segments: ArraySlice<String>,
            parameters: [(name: String, value: String)]
        ) -> (Node, [(name: String, value: String)])? {
            guard let segment = segments.first else { return routes.isEmpty ? nil : (self, parameters) }
            let rest = segments.dropFirst()
            if let literal = literals[segment], let found = literal.find(rest, parameters: parameters) {
                return found
            }
            if let (name, node) = parameter.first, !segment.isEmpty {
                return node.find(rest, parameters: parameters + [(name, segment)])
            }
            return nil
        }
    }
}
