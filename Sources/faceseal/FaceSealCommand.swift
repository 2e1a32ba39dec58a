import Foundation

/// Dispatches the first argument to a subcommand; each subcommand lives in its own file.
enum FaceSealCommand {
    static let usage = """
    usage: faceseal <command> [options]

    commands:
      serve     run the authority
      admin     the management API from the command line
      device    the authenticator for Linux
      rp        a sample application
      demo      run the whole system on loopback
      bench     benchmarks against a peer: `bench crypto [--all] [--peer DIR] [--openssl MODULE --python-library LIB]`, `bench face`, `bench auth`, `bench wait`, `bench authority`, `bench chaos`
    """

    static func run(_ arguments: [String]) async -> Int32 {
        guard let command = arguments.first else {
            printError(usage)
            return 64
        }
        let rest = Array(arguments.dropFirst())
        switch command {
        case "help", "--help", "-h":
            print(usage)
            return 0
        case "serve":
            return await Serve.run(rest)
        case "admin":
            return await AdminCommand.run(rest)
        case "bench":
            switch rest.first {
            case "crypto": return await BenchCrypto.run(Array(rest.dropFirst()))
            case "face": return await BenchFace.run(Array(rest.dropFirst()))
            case "auth": return await BenchAuth.run(Array(rest.dropFirst()))
            case "wait": return await BenchWait.run(Array(rest.dropFirst()))
            case "authority": return await BenchAuthority.run(Array(rest.dropFirst()))
            case "chaos": return await BenchChaos.run(Array(rest.dropFirst()))
            default:
                printError("faceseal bench: expected `crypto`, `face`, `auth`, `wait`, `authority` or `chaos`\n\(usage)")
                return 64
            }
        case "rp":
            return await RPCommand.run(rest)
        case "device":
            return await DeviceCommand.run(rest)
        case "demo":
            return await DemoCommand.run(rest)
        default:
            printError("faceseal: unknown command '\(command)'\n\(usage)")
            return 64
        }
    }
}

/// Writes one line to standard error.
func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}
