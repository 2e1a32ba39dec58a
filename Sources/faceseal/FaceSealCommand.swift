import Foundation

/// Dispatches the first argument to a subcommand. Each subcommand lives in its own file and registers here.
enum FaceSealCommand {
    static let usage = """
    usage: faceseal <command> [options]

    commands:
      serve     run the authority
      demo      run the whole system on loopback
      device    the authenticator for Linux
      rp        a sample application
      admin     the management API from the command line
      bench     benchmarks against a peer (crypto, face)
    """

    static func run(_ arguments: [String]) async -> Int32 {
        guard let command = arguments.first else {
            FileHandle.standardError.write(Data((usage + "\n").utf8))
            return 64
        }
        switch command {
        case "help", "--help", "-h":
            print(usage)
            return 0
        default:
            FileHandle.standardError.write(Data("faceseal: unknown command '\(command)'\n\(usage)\n".utf8))
            return 64
        }
    }
}
