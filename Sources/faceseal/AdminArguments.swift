import Foundation

/// A usage error of `faceseal admin`: the command line itself is wrong (exit 64, EX_USAGE).
struct AdminUsageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The words and `--options` of a command line. Options take a value (`--name value` or `--name=value`)
/// unless they are declared as flags; each may appear once.
struct AdminArguments {
    /// Options that take no value.
    static let flags: Set<String> = ["json", "help", "id-token", "device"]

    private(set) var positionals: [String] = []
    private var options: [String: String] = [:]
    private var consumed: Set<String> = []

    init(_ arguments: [String]) throws(AdminUsageError) {
        var index = 0
        var onlyPositionals = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositionals || !argument.hasPrefix("--") || argument == "-" {
                positionals.append(argument)
                continue
            }
            if argument == "--" {
                onlyPositionals = true
                continue
            }
            var name = String(argument.dropFirst(2))
            var value: String?
            if let equals = name.firstIndex(of: "=") {
                value = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            guard !name.isEmpty else { throw AdminUsageError("malformed option '\(argument)'") }
            if Self.flags.contains(name) {
                guard value == nil else { throw AdminUsageError("--\(name) takes no value") }
                value = "true"
            } else if value == nil {
                guard index < arguments.count else { throw AdminUsageError("--\(name) needs a value") }
                value = arguments[index]
                index += 1
            }
            guard options[name] == nil else { throw AdminUsageError("--\(name) given twice") }
            options[name] = value
        }
    }

    /// The value of `--name`, if given.
    mutating func option(_ name: String) -> String? {
        consumed.insert(name)
        return options[name]
    }

    /// The value of `--name`, which must be given.
    mutating func required(_ name: String) throws(AdminUsageError) -> String {
        guard let value = option(name) else { throw AdminUsageError("--\(name) is required") }
        return value
    }

    /// Whether the flag `--name` was given.
    mutating func flag(_ name: String) -> Bool { option(name) != nil }

    /// An integer option.
    mutating func integer(_ name: String) throws(AdminUsageError) -> Int? {
        guard let text = option(name) else { return nil }
        guard let value = Int(text) else { throw AdminUsageError("--\(name) must be an integer, not '\(text)'") }
        return value
    }

    /// A boolean option (`true`/`false`, `yes`/`no`, `on`/`off`).
    mutating func boolean(_ name: String) throws(AdminUsageError) -> Bool? {
        guard let text = option(name) else { return nil }
        switch text.lowercased() {
        case "true", "yes", "on", "1": return true
        case "false", "no", "off", "0": return false
        default: throw AdminUsageError("--\(name) must be true or false, not '\(text)'")
        }
    }

    /// Removes and returns the first positional word.
    mutating func word(_ what: String) throws(AdminUsageError) -> String {
        guard !positionals.isEmpty else { throw AdminUsageError("missing \(what)") }
        return positionals.removeFirst()
    }

    /// Refuses options nobody asked for and words left over, so a typo never goes unnoticed.
    func finish() throws(AdminUsageError) {
        if let unknown = options.keys.sorted().first(where: { !consumed.contains($0) }) {
            throw AdminUsageError("unknown option --\(unknown)")
        }
        if let extra = positionals.first { throw AdminUsageError("unexpected argument '\(extra)'") }
    }
}
