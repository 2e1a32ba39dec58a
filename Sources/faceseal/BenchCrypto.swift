/// `faceseal bench crypto`: side-by-side benchmark against a peer.
enum BenchCrypto {
    static func run(_ arguments: [String]) async -> Int32 {
        printError("faceseal bench crypto: not built yet")
        return 1
    }
}
