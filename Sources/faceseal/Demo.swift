import Foundation

/// `faceseal demo`: the whole system on loopback (see DemoRun).
enum DemoCommand {
    static func run(_ arguments: [String]) async -> Int32 {
        printError("faceseal demo: not yet")
        return 1
    }
}
