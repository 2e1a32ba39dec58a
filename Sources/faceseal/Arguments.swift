import Foundation

/// One `--option` of a command: a flag, or an option taking one value (`--name VALUE` or `--name=VALUE`), or one
/// taking one or more values (`--faces A B C`, up to the next option).
struct OptionSpec: Sendable {
    enum Arity: Sendable, Equatable {
        case flag
        case one(String)
        case many(String)
    }

    let name: String
    let arity: Arity
    let help: String

    static func flag(_ name: String, _ help: String) -> OptionSpec { OptionSpec(name: name, arity: .flag, help: help) }
    static func value(_ name: String, _ value: String, _ help: String) -> OptionSpec { OptionSpec(name: name, arity: .one(value), help: help) }
    static func values(_ name: String, _ value: String, _ help: String) -> OptionSpec { OptionSpec(name: name, arity: .many(value), help: help) }

    /// `--name VALUE` as the help shows it.
    var label: String {
        switch arity {
        case .flag: "--\(name)"
        case .one(let value): "--\(name) \(value)"
        case .many(let value): "--\(name) \(value)..."
        }
    }
}

/// A command or subcommand of `faceseal`: what it takes and how it explains itself. The options of every enclosing
/// command are accepted too (`faceseal device keys --state-dir D` is `faceseal device --state-dir D keys`).
struct CommandSpec: Sendable {
    let name: String
    /// Other names it answers to (`enroll` for `enrol`).
    var aliases: [String] = []
    /// One line, shown in the enclosing command's list.
    let summary: String
    /// What follows the command's words in the usage line.
    var synopsis: String = "[options]"
    /// Paragraphs shown by `--help` after the usage line.
    var details: String = ""
    var options: [OptionSpec] = []
    /// The names of the positional words it takes, in order (none when it has subcommands).
    var positionals: [String] = []
    var subcommands: [CommandSpec] = []
    /// Options refused on purpose, with the sentence saying why (`--api-key`: never an argument).
    var refusedOptions: [String: String] = [:]

    func subcommand(named word: String) -> CommandSpec? {
        subcommands.first { $0.name == word || $0.aliases.contains(word) }
    }
}

/// A command line `faceseal` refuses (exit 64); each description is a sentence.
enum ArgumentError: Error, Equatable, CustomStringConvertible {
    case unknownOption(String, command: String)
    case missingValue(String)
    case repeated(String)
    case flagWithValue(String)
    case badValue(option: String, value: String, expected: String)
    case missingOption(String)
    case conflicting(String, String)
    case missingSubcommand(command: String, choices: [String])
    case unknownSubcommand(String, command: String, choices: [String])
    case unexpectedArgument(String, command: String)
    case missingArgument(String)
    /// A command's own rule, or an option it refuses on purpose: already a sentence.
    case invalid(String)

    var description: String {
        switch self {
        case .unknownOption(let option, _): "unknown option \(Self.printable(option))."
        case .missingValue(let option): "--\(option) needs a value."
        case .repeated(let option): "--\(option) is given more than once."
        case .flagWithValue(let option): "--\(option) takes no value."
        case .badValue(let option, let value, let expected): "--\(option) \(Self.quoted(value)) is not valid: expected \(expected)."
        case .missingOption(let option): "--\(option) is required."
        case .conflicting(let a, let b): "--\(a) and --\(b) cannot be used together."
        case .missingSubcommand(_, let choices): "a subcommand is needed: \(choices.joined(separator: ", "))."
        case .unknownSubcommand(let word, _, let choices):
            "unknown subcommand \(Self.quoted(word)); expected one of \(choices.joined(separator: ", "))."
        case .unexpectedArgument(let word, _): "unexpected argument \(Self.quoted(word))."
        case .missingArgument(let name): "\(name) is missing."
        case .invalid(let sentence): sentence
        }
    }

    /// A value from the command line, quoted, at most 64 characters and without control characters (it may be hostile).
    static func quoted(_ text: String) -> String {
        "'" + printable(text) + "'"
    }

    static func printable(_ text: String) -> String {
        let clean = String(text.unicodeScalars.map { $0.properties.generalCategory == .control ? "?" : Character($0) })
        return clean.count > 64 ? String(clean.prefix(64)) + "…" : clean
    }
}

/// A command line parsed against a `CommandSpec`: the subcommand chosen, the options given, the positional words.
/// The typed accessors check each value (range, form) and throw an `ArgumentError` naming the option.
struct ParsedArguments {
    /// The command words, from `faceseal` on: `["faceseal", "device", "enrol"]`.
    let path: [String]
    /// The spec of the chosen (innermost) command.
    let command: CommandSpec
    /// Whether `--help` (or `-h`) was given.
    let help: Bool
    private(set) var positionals: [String]
    private let values: [String: [String]]

    /// The most arguments and the longest argument taken; more is refused before anything is looked at.
    static let maxArguments = 4_096
    static let maxArgumentBytes = 64 << 10

    /// Parses `arguments` (without the program name) against `root`.
    static func parse(_ arguments: [String], root: CommandSpec) throws(ArgumentError) -> ParsedArguments {
        guard arguments.count <= maxArguments else { throw .invalid("Too many arguments (at most \(maxArguments)).") }
        if let long = arguments.first(where: { $0.utf8.count > maxArgumentBytes }) {
            throw .invalid("An argument is longer than \(maxArgumentBytes >> 10) KiB: \(ArgumentError.quoted(long)).")
        }
        var chain = [root]
        var path = [root.name]
        var values: [String: [String]] = [:]
        var positionals: [String] = []
        var help = false
        var onlyPositionals = false
        var index = 0

        func spec(for name: String) -> OptionSpec? {
            for command in chain.reversed() {
                if let option = command.options.first(where: { $0.name == name }) { return option }
            }
            return nil
        }

        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            let current = chain[chain.count - 1]
            if !onlyPositionals && (argument == "--help" || argument == "-h") {
                help = true
                continue
            }
            if !onlyPositionals && argument == "--" {
                onlyPositionals = true
                continue
            }
            if !onlyPositionals && argument.hasPrefix("-") && argument != "-" {
                guard argument.hasPrefix("--") else { throw .unknownOption(argument, command: path.joined(separator: " ")) }
                var name = String(argument.dropFirst(2))
                var inline: String?
                if let equals = name.firstIndex(of: "=") {
                    inline = String(name[name.index(after: equals)...])
                    name = String(name[..<equals])
                }
                guard let option = spec(for: name) else {
                    if let reason = chain.lazy.compactMap({ $0.refusedOptions[name] }).first { throw .invalid(reason) }
                    throw .unknownOption("--" + name, command: path.joined(separator: " "))
                }
                guard values[name] == nil else { throw .repeated(name) }
                switch option.arity {
                case .flag:
                    guard inline == nil else { throw .flagWithValue(name) }
                    values[name] = []
                case .one:
                    if let inline {
                        values[name] = [inline]
                    } else {
                        // A following option is never taken as a value (`--link --faces` is a missing link).
                        guard index < arguments.count, !arguments[index].hasPrefix("--") else { throw .missingValue(name) }
                        values[name] = [arguments[index]]
                        index += 1
                    }
                case .many:
                    var taken = inline.map { [$0] } ?? []
                    while index < arguments.count, !arguments[index].hasPrefix("-") || arguments[index] == "-" {
                        taken.append(arguments[index])
                        index += 1
                    }
                    guard !taken.isEmpty else { throw .missingValue(name) }
                    values[name] = taken
                }
                continue
            }
            if !current.subcommands.isEmpty && positionals.isEmpty {
                guard let next = current.subcommand(named: argument) else {
                    if help { break }
                    throw .unknownSubcommand(argument, command: path.joined(separator: " "), choices: current.subcommands.map(\.name))
                }
                chain.append(next)
                path.append(next.name)
                continue
            }
            positionals.append(argument)
        }

        let command = chain[chain.count - 1]
        let parsed = ParsedArguments(path: path, command: command, help: help, positionals: positionals, values: values)
        if help { return parsed }
        if !command.subcommands.isEmpty {
            throw .missingSubcommand(command: path.joined(separator: " "), choices: command.subcommands.map(\.name))
        }
        if positionals.count > command.positionals.count {
            throw .unexpectedArgument(positionals[command.positionals.count], command: path.joined(separator: " "))
        }
        return parsed
    }

    /// The command as typed: `faceseal device enrol`.
    var commandName: String { path.joined(separator: " ") }

    /// Whether the flag `--name` was given.
    func flag(_ name: String) -> Bool { values[name] != nil }

    /// The value of `--name`, if given.
    func string(_ name: String) -> String? { values[name]?.first }

    /// Every value of a many-valued `--name` (empty when not given).
    func strings(_ name: String) -> [String] { values[name] ?? [] }

    /// The value of `--name`, which must be given and not be empty.
    func required(_ name: String) throws(ArgumentError) -> String {
        guard let value = string(name) else { throw .missingOption(name) }
        guard !value.isEmpty else { throw .badValue(option: name, value: value, expected: "a value that is not empty") }
        return value
    }

    /// A whole number in `range` (at most 12 characters, so no arithmetic on it can overflow).
    func integer(_ name: String, in range: ClosedRange<Int>) throws(ArgumentError) -> Int? {
        guard let text = string(name) else { return nil }
        return try Self.integer(text, option: name, in: range)
    }

    static func integer(_ text: String, option: String, in range: ClosedRange<Int>) throws(ArgumentError) -> Int {
        guard text.utf8.count <= 12, let value = Int(text), range.contains(value) else {
            throw .badValue(option: option, value: text, expected: "a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    /// A boolean (`true`/`false`, `yes`/`no`, `on`/`off`, `1`/`0`).
    func boolean(_ name: String) throws(ArgumentError) -> Bool? {
        guard let text = string(name) else { return nil }
        switch text.lowercased() {
        case "true", "yes", "on", "1": return true
        case "false", "no", "off", "0": return false
        default: throw .badValue(option: name, value: text, expected: "true or false")
        }
    }

    /// One of the raw values of `T`.
    func choice<T: RawRepresentable & CaseIterable>(_ name: String, _ type: T.Type) throws(ArgumentError) -> T? where T.RawValue == String {
        guard let text = string(name) else { return nil }
        guard let value = T(rawValue: text) else {
            throw .badValue(option: name, value: text, expected: T.allCases.map(\.rawValue).joined(separator: " or "))
        }
        return value
    }

    /// An absolute `http://` or `https://` URL with a host, without a trailing slash.
    func httpURL(_ name: String) throws(ArgumentError) -> String? {
        guard let text = string(name) else { return nil }
        guard let url = Self.httpURL(text) else {
            throw .badValue(option: name, value: text, expected: "an http:// or https:// URL with a host, e.g. http://127.0.0.1:8080")
        }
        return url
    }

    /// `text` as an http(s) URL with a host and nothing after the path, trailing slashes removed; nil if it is not one.
    static func httpURL(_ text: String) -> String? {
        var trimmed = text
        while trimmed.hasSuffix("/") { trimmed.removeLast() }
        guard trimmed.utf8.count <= 2048, !trimmed.contains(where: { $0.isWhitespace }),
              let components = URLComponents(string: trimmed), let scheme = components.scheme?.lowercased(),
              scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty,
              components.query == nil, components.fragment == nil, components.user == nil, components.password == nil
        else { return nil }
        return trimmed
    }

    /// Removes and returns the next positional word.
    mutating func word(_ what: String) throws(ArgumentError) -> String {
        guard !positionals.isEmpty else { throw .missingArgument(what) }
        return positionals.removeFirst()
    }
}

extension CommandSpec {
    /// `--help` text for this command, reached through `path` (from `faceseal` on); `enclosing` are the commands
    /// around it, outermost first, whose options it accepts too.
    func helpText(path: [String], enclosing: [CommandSpec]) -> String {
        var lines = ["usage: " + (path + [synopsis]).filter { !$0.isEmpty }.joined(separator: " ")]
        lines.append("")
        lines.append(summary.prefix(1).uppercased() + summary.dropFirst() + (summary.hasSuffix(".") ? "" : "."))
        if !details.isEmpty {
            lines.append("")
            lines.append(details)
        }
        if !subcommands.isEmpty {
            lines.append("")
            lines.append("subcommands:")
            let width = subcommands.map(\.name.count).max() ?? 0
            for command in subcommands {
                lines.append("  " + command.name.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + command.summary)
            }
            lines.append("")
            lines.append("`\(path.joined(separator: " ")) SUBCOMMAND --help` explains each one.")
        }
        func table(_ title: String, _ options: [OptionSpec]) {
            guard !options.isEmpty else { return }
            lines.append("")
            lines.append(title)
            let width = min(30, options.map(\.label.count).max() ?? 0)
            for option in options {
                let label = option.label
                if label.count > width {
                    lines.append("  " + label)
                    lines.append("  " + String(repeating: " ", count: width) + "  " + option.help)
                } else {
                    lines.append("  " + label.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + option.help)
                }
            }
        }
        table("options:", options)
        for (depth, command) in enclosing.enumerated().reversed() {
            table("options of `\(path.prefix(depth + 1).joined(separator: " "))`:", command.options)
        }
        return lines.joined(separator: "\n")
    }
}

extension ParsedArguments {
    /// The help of the chosen command.
    func helpText(root: CommandSpec) -> String {
        var chain = [root]
        for word in path.dropFirst() { if let next = chain.last?.subcommand(named: word) { chain.append(next) } }
        return command.helpText(path: path, enclosing: Array(chain.dropLast()))
    }
}
