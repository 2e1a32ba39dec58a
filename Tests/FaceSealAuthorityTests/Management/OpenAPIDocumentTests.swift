import Foundation
import Testing
@testable import FaceSealAuthority

/// `docs/openapi.yaml` must describe exactly the routes the authority serves, with the query parameters each accepts.
/// (Its syntax is validated outside Swift; see the report. This reads only the `paths` outline.)
@Suite("Management API: docs/openapi.yaml matches the routes")
struct OpenAPIDocumentTests {
    struct Operation: Hashable, CustomStringConvertible {
        let method: String
        let path: String
        let query: Set<String>
        var description: String { "\(method.uppercased()) \(path) \(query.sorted())" }
    }

    static let document: String? = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/openapi.yaml")
        return try? String(contentsOf: url, encoding: .utf8)
    }()

    /// The operations of the `paths` section: path lines at indent 2, methods at 4, query parameters inline
    /// (`- name: x` + `in: query`) or by `$ref` to a component parameter that is `in: query`.
    static func operations(in text: String) -> Set<Operation> {
        let lines = text.components(separatedBy: "\n")
        // Component parameters that live in the query.
        var queryComponents: Set<String> = []
        if let start = lines.firstIndex(of: "  parameters:") {
            var current: String?
            for line in lines[(start + 1)...] {
                if !line.hasPrefix("    ") && !line.isEmpty { break }
                if line.hasPrefix("    ") && !line.hasPrefix("     ") && line.hasSuffix(":") { current = String(line.dropFirst(4).dropLast()) }
                if line.trimmingCharacters(in: .whitespaces) == "in: query", let current { queryComponents.insert(current) }
            }
        }
        var operations: Set<Operation> = []
        var path: String?
        var method: String?
        var query: Set<String> = []
        var pendingName: String?
        func flush() {
            if let path, let method { operations.insert(Operation(method: method, path: path, query: query)) }
            method = nil
            query = []
        }
        guard let start = lines.firstIndex(of: "paths:"), let end = lines.firstIndex(of: "components:") else { return [] }
        for line in lines[(start + 1)..<end] {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("  /"), line.hasSuffix(":") {
                flush()
                path = String(line.dropFirst(2).dropLast())
            } else if line.hasPrefix("    "), !line.hasPrefix("     "), ["get:", "post:", "patch:", "put:", "delete:"].contains(trimmed) {
                flush()
                method = String(trimmed.dropLast())
            } else if method != nil {
                if trimmed.hasPrefix("- name: ") { pendingName = String(trimmed.dropFirst("- name: ".count)) }
                if trimmed == "in: query", let name = pendingName { query.insert(name) }
                if trimmed.hasPrefix("- $ref: \"#/components/parameters/") {
                    let name = String(trimmed.dropFirst("- $ref: \"#/components/parameters/".count).dropLast())
                    if queryComponents.contains(name) { query.insert(name) }
                }
            }
        }
        flush()
        return operations
    }

    @Test("every served route is documented with its method and query parameters, and nothing else is")
    func documentMatchesRoutes() throws {
        let text = try #require(Self.document, "docs/openapi.yaml is missing")
        #expect(text.hasPrefix("openapi: 3.1."))
        let documented = Self.operations(in: text)
        let served = Set(Authority.managementRoutes.map { route in
            let path = route.pattern.split(separator: "/").map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : String($0) }.joined(separator: "/")
            return Operation(method: route.method.rawValue.lowercased(), path: "/" + path, query: route.query)
        })
        #expect(documented.count == 37)
        #expect(served.subtracting(documented).isEmpty, "undocumented: \(served.subtracting(documented))")
        #expect(documented.subtracting(served).isEmpty, "not served: \(documented.subtracting(served))")
        #expect(text.contains("servers:\n  - url: http://127.0.0.1:8080\(Authority.managementPrefix)"))
    }
}
