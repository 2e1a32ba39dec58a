/// `faceseal bench face`: side-by-side benchmark against a peer.
enum BenchFace {
    static func run(_ arguments: [String]) async -> Int32 {
        printError("faceseal bench face: not built yet")
        return 1
    }
}
