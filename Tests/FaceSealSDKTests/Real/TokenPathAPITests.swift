import FaceSealTestSupport
import Foundation
import Testing

/// No public or internal API of the token path hands out a face token's master or a server share as plain bytes
/// (SPEC §5.1), nor does any private declaration there: the compiler's own view of FaceSealWire, FaceSealSDK and
/// FaceSealAuthority — their symbol graphs down to private declarations, extracted from the modules this very build
/// produced — is read, and every declaration that names a share or a master (a property, a parameter, a tuple label, a
/// function or subscript of such a name or owner) must carry it in a secret type. Adding, say,
/// `var serverShare: [UInt8]` or `func master(for:) -> Data` anywhere there fails it.
@Suite struct TokenPathAPITests {
    static let modules = ["FaceSealWire", "FaceSealSDK", "FaceSealAuthority"]

    @Test func noAPIHandsOutAShareOrAMasterAsPlainBytes() throws {
        let graphs = try SymbolGraphs.extract(Self.modules, minimumAccessLevel: "private")
        var checked: [String] = []
        var violations: [String] = []
        for symbol in graphs {
            let findings = SecretAPIScanner.findings(in: symbol)
            checked += findings.map { _ in symbol.pathText }
            violations += findings.filter(\.isPlain).map { _ in "\(symbol.pathText): \(symbol.declaration)" }
        }
        #expect(violations.isEmpty, "plain copies of secrets in the token path's API:\n\(violations.joined(separator: "\n"))")
        // The scan saw the token path itself, so an empty result is not an extraction that found nothing.
        for expected in ["FaceTokenDownload.serverShare", "CompletionRequest.serverShare", "EnrolmentRequest.serverShare",
                         "FaceTokenEnvelope.serverShare", "PreparedCompletion.rotatedServerShare", "NewFaceToken.serverShare",
                         "CompletionSubmission.serverShare", "FaceTokenMasters.subscript(_:)"] {
            #expect(checked.contains(expected), "\(expected) was not in the symbol graph")
        }
        #expect(checked.contains { $0.hasPrefix("FaceTokenCustody.record(") })
        // The authority's custody (record, download) and the SDK's completion (open the keys layer, prepare the
        // completion) were in the scan: what they return is checked above (FaceTokenDownload, PreparedCompletion).
        let paths = Set(graphs.map(\.pathText))
        for expected in ["FaceTokenCustody.record(envelope:header:subject:serverShare:passwordVerifier:wrappingKey:)", "FaceTokenCustody.download(_:wrappingKey:)",
                         "OpenedFaceToken.openKeys()", "FaceTokenKeys.prepareCompletion(for:issuedAt:)",
                         "OpenedWireFaceToken.openKeys()", "UnlockedWireFaceToken.prepareCompletion(for:issuedAt:)"] {
            #expect(paths.contains(expected), "\(expected) was not in the symbol graph")
        }
    }

    @Test func theScannerFlagsPlainSecretsAndOnlyThose() {
        func plain(_ declaration: String, kind: String = "swift.property", path: [String] = ["T", "x"]) -> Bool {
            SecretAPIScanner.findings(in: SymbolGraphs.Symbol(kind: kind, path: path, declaration: declaration)).contains(where: \.isPlain)
        }
        #expect(plain("let serverShare: [UInt8]"))
        #expect(plain("var share: Data?"))
        #expect(plain("var masters: [String : Base64URLBytes]"))
        #expect(plain("init(token: [UInt8], serverShare: ArraySlice<UInt8>)", kind: "swift.init"))
        #expect(plain("static func rotate(_ download: FaceTokenDownload) throws -> (envelope: FaceTokenEnvelope, share: [UInt8], base: Int)",
                      kind: "swift.type.method", path: ["TestDevice", "rotate(_:)"]))
        #expect(plain("func master(for algorithm: KeyAlgorithm) -> [UInt8]?", kind: "swift.method", path: ["T", "master(for:)"]))
        #expect(plain("subscript(algorithm: KeyAlgorithm) -> String { get }", kind: "swift.subscript", path: ["FaceTokenMasters", "subscript(_:)"]))
        #expect(plain("let rotatedServerShare: some DataProtocol"))

        #expect(!plain("let serverShare: SecretBytes"))
        #expect(!plain("var masters: FaceTokenMasters"))
        #expect(!plain("var serverShare: Base64URLSecret?"))
        #expect(!plain("static let serverShareByteCount: Int"))
        #expect(!plain("var encryptedServerShare: [UInt8]"))
        #expect(!plain("static func shareAAD(subject: String, tokenID: String, generation: Int64) -> [UInt8]", kind: "swift.type.method",
                       path: ["FaceTokenCustody", "shareAAD(subject:tokenID:generation:)"]))
        #expect(!plain("var names: [String] { get }", path: ["FaceTokenMasters", "names"]))
    }
}

/// What the scanner finds in one declaration.
enum SecretAPIScanner {
    struct Finding {
        /// The secret-named thing's type.
        let type: String
        var isPlain: Bool { SecretAPIScanner.isPlain(type) }
    }

    /// Names that hold a share or a master: `…share(s)` or `…master(s)`, but not an encrypted one.
    static func isSecretName(_ name: Substring) -> Bool {
        let lower = name.lowercased()
        guard !lower.hasPrefix("encrypted") else { return false }
        return ["share", "shares", "master", "masters"].contains { lower.hasSuffix($0) }
    }

    /// Every `name: Type` of a secret name, and the result of a function or subscript whose name or owner is secret.
    static func findings(in symbol: SymbolGraphs.Symbol) -> [Finding] {
        let text = symbol.declaration
        var found: [Finding] = []
        var index = text.startIndex
        while let colon = text[index...].firstIndex(of: ":") {
            let name = text[..<colon].reversed().prefix { $0.isLetter || $0.isNumber || $0 == "_" }
            let after = text.index(after: colon)
            // `a : b` inside a dictionary type is a key type, not a label; those sit between brackets and are skipped there.
            if !name.isEmpty, isSecretName(Substring(String(name.reversed()))) {
                found.append(Finding(type: type(in: text, from: after)))
            }
            index = after
        }
        let callable = ["swift.func", "swift.method", "swift.type.method", "swift.subscript", "swift.type.subscript"].contains(symbol.kind)
        let ownName = symbol.path.last.map { Substring($0.prefix { $0 != "(" }) } ?? ""
        if callable, isSecretName(ownName) || symbol.path.dropLast().contains(where: { isSecretName(Substring($0)) }),
           let arrow = text.range(of: "->", options: .backwards) {
            found.append(Finding(type: type(in: text, from: arrow.upperBound)))
        }
        return found
    }

    /// The type that starts at `start`: up to a `,`, `)`, `=` or `{` outside brackets, or a `where` clause.
    static func type(in text: String, from start: String.Index) -> String {
        var depth = 0
        var end = start
        while end < text.endIndex {
            let character = text[end]
            if "([<".contains(character) { depth += 1 }
            if ")]>".contains(character) {
                if depth == 0 { break }
                depth -= 1
            }
            if depth == 0 && ",={".contains(character) { break }
            end = text.index(after: end)
        }
        let type = text[start..<end]
        return String(type.components(separatedBy: " where ")[0]).trimmingCharacters(in: .whitespaces)
    }

    /// Whether a type holds the bytes in the open: byte arrays and slices, `Data`, strings, base64url bytes, or any
    /// `DataProtocol`/`ContiguousBytes` — also as an optional, an array element or a dictionary value.
    static func isPlain(_ type: String) -> Bool {
        var text = type.trimmingCharacters(in: .whitespaces)
        for prefix in ["inout ", "some ", "any ", "borrowing ", "consuming "] where text.hasPrefix(prefix) {
            text = String(text.dropFirst(prefix.count))
        }
        while text.hasSuffix("?") || text.hasSuffix("!") { text.removeLast() }
        if text.hasPrefix("["), text.hasSuffix("]") {
            let inner = String(text.dropFirst().dropLast())
            var depth = 0
            for (offset, character) in inner.enumerated() {
                if "([<".contains(character) { depth += 1 }
                if ")]>".contains(character) { depth -= 1 }
                if character == ":" && depth == 0 { return isPlain(String(inner.dropFirst(offset + 1))) }
            }
            return isPlain(inner)
        }
        return ["UInt8", "Data", "String", "Substring", "Character", "Base64URLBytes", "ArraySlice<UInt8>", "Array<UInt8>",
                "DataProtocol", "ContiguousBytes"].contains(text)
    }
}

/// The symbol graphs of this build's modules, extracted with the toolchain's `swift-symbolgraph-extract` and the very
/// flags SwiftPM compiled each module with (from the build's llbuild manifest).
enum SymbolGraphs {
    struct Symbol {
        let kind: String
        let path: [String]
        let declaration: String
        var pathText: String { path.joined(separator: ".") }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private struct File: Decodable {
        struct Entry: Decodable {
            struct Kind: Decodable { let identifier: String }
            struct Fragment: Decodable { let spelling: String }
            let kind: Kind
            let pathComponents: [String]
            let declarationFragments: [Fragment]?
        }
        let symbols: [Entry]
    }

    /// The symbol graphs of `modules` down to `minimumAccessLevel` (`private`, `internal`, `package`, `public`).
    static func extract(_ modules: [String], minimumAccessLevel: String = "internal") throws -> [Symbol] {
        // The test bundle sits in `.build/<triple>/<configuration>/`; the manifest is `.build/<configuration>.yaml`.
        let binary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        let configuration = binary.deletingLastPathComponent()
        let buildRoot = configuration.deletingLastPathComponent().deletingLastPathComponent()
        let manifest = buildRoot.appendingPathComponent("\(configuration.lastPathComponent).yaml")
        let lines = try String(contentsOf: manifest, encoding: .utf8).split(separator: "\n")
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("faceseal-symbols-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: output) }
        for module in modules {
            guard let line = lines.first(where: { $0.contains("\"-module-name\",\"\(module)\"") && $0.contains("\"-emit-module\"") }),
                  let start = line.firstIndex(of: "["),
                  let arguments = try JSONSerialization.jsonObject(with: Data(line[start...].utf8)) as? [String] else {
                throw Failure(description: "no compile command for \(module) in \(manifest.path)")
            }
            let process = try SpawnedProcess(binary: try tool(), arguments: ["-module-name", module, "-minimum-access-level", minimumAccessLevel,
                                                                                "-output-dir", output.path] + searchFlags(arguments))
            let errors = process.errors.readDataToEndOfFile()
            guard process.wait() == 0 else {
                throw Failure(description: "symbol graph of \(module): \(String(decoding: errors, as: UTF8.self))")
            }
        }
        var symbols: [Symbol] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: output.path) where name.hasSuffix(".symbols.json") {
            let file = try JSONDecoder().decode(File.self, from: Data(contentsOf: output.appendingPathComponent(name)))
            symbols += file.symbols.map { entry in
                Symbol(kind: entry.kind.identifier, path: entry.pathComponents,
                       declaration: (entry.declarationFragments ?? []).map(\.spelling).joined())
            }
        }
        return symbols
    }

    /// The flags that find the module and the C modules below it: search paths, the target, clang's module maps.
    private static func searchFlags(_ arguments: [String]) -> [String] {
        var flags: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if ["-I", "-Xcc", "-target", "-module-cache-path"].contains(argument), index + 1 < arguments.count {
                flags += [argument, arguments[index + 1]]
                index += 2
                continue
            }
            if argument.hasPrefix("-I") { flags.append(argument) }
            index += 1
        }
        return flags
    }

    /// `swift-symbolgraph-extract` next to the `swift` on the PATH (the toolchain that built the modules).
    private static func tool() throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/swift-symbolgraph-extract"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw Failure(description: "swift-symbolgraph-extract is not on the PATH")
    }
}
