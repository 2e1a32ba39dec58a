import Foundation

/// Parses the whole command line against one tree of `CommandSpec`s and dispatches to the command's file.
enum FaceSealCommand {
    /// The release this binary belongs to (`faceseal --version`).
    static let version = "0.1.0"

    static let spec = CommandSpec(
        name: "faceseal", summary: "FaceSeal: an open face-locked public-key infrastructure.", synopsis: "COMMAND [options]",
        details: """
        `faceseal --version` prints the version. Every command and subcommand explains itself with --help.
        Exit status: 0 done, 1 refused or failed, 64 a command line that cannot be run.
        """,
        subcommands: [Serve.spec, AdminCommand.spec, DeviceCommand.spec, RPCommand.spec, DemoCommand.spec, BenchCommand.spec])

    static func run(_ arguments: [String]) async -> Int32 {
        if arguments == ["--version"] || arguments == ["version"] {
            print("faceseal \(version)")
            return 0
        }
        let parsed: ParsedArguments
        do {
            parsed = try ParsedArguments.parse(arguments, root: spec)
        } catch {
            return usageError(error, command: commandName(arguments))
        }
        if parsed.help {
            print(parsed.helpText(root: spec))
            return 0
        }
        do {
            switch parsed.path.dropFirst().first {
            case "serve": return await Serve.run(parsed)
            case "admin": return await AdminCommand.run(parsed)
            case "device": return try await DeviceCommand.run(parsed)
            case "rp": return try await RPCommand.run(parsed)
            case "demo": return await DemoCommand.run(parsed)
            default: return try await BenchCommand.run(parsed)
            }
        } catch {
            return usageError(error, command: parsed.commandName)
        }
    }

    /// Prints a refused command line and where its help is; exit 64 (EX_USAGE).
    static func usageError(_ error: ArgumentError, command: String) -> Int32 {
        printError("\(command): \(error)\nRun `\(command) --help` for usage.")
        return 64
    }

    /// The command words of `arguments` as far as they name commands (for a message before parsing succeeded).
    private static func commandName(_ arguments: [String]) -> String {
        var current = spec
        var path = [spec.name]
        for argument in arguments where !argument.hasPrefix("-") {
            guard let next = current.subcommand(named: argument) else { break }
            current = next
            path.append(next.name)
        }
        return path.joined(separator: " ")
    }
}

/// Writes one line to standard error.
func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}
