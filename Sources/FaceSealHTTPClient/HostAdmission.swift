/// Which transfers may start: at most `limit` at once per host (`host:port`); the rest wait in arrival order.
///
/// The transfer loop keeps this queue itself instead of leaving it to libcurl (`CURLMOPT_MAX_HOST_CONNECTIONS`).
/// libcurl 7.88 (Debian 12) moves one queued transfer on when another finishes; when that one finds no free
/// connection yet it goes back to the queue and nothing moves it again, so the last transfers of a burst waited,
/// unsent, until their deadline. A value type owned by the loop thread.
struct HostAdmission<Item> {
    /// Transfers running at once to one host.
    let limit: Int
    private var running: [String: Int] = [:]
    private var queue: [(address: String, item: Item)] = []

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// The items waiting, oldest first.
    var waiting: [Item] { queue.map(\.item) }

    /// Whether any item waits.
    var hasWaiting: Bool { !queue.isEmpty }

    /// Takes `item` for `address`: true when it may start now (it then holds one of the host's slots), false when
    /// it waits.
    mutating func offer(_ item: Item, to address: String) -> Bool {
        // Items wait for a host only while all its slots are taken (`release` hands a slot straight on).
        let count = running[address, default: 0]
        guard count < limit else {
            queue.append((address, item))
            return false
        }
        running[address] = count + 1
        return true
    }

    /// Frees one slot of `address`; the oldest item waiting for that host, if any, takes it and is returned.
    mutating func release(_ address: String) -> Item? {
        if let index = queue.firstIndex(where: { $0.address == address }) {
            return queue.remove(at: index).item
        }
        let count = running[address, default: 0]
        running[address] = count > 1 ? count - 1 : nil
        return nil
    }

    /// Removes and returns the waiting items that `shouldLeave` picks (cancelled, past their deadline).
    mutating func removeWaiting(where shouldLeave: (Item) -> Bool) -> [Item] {
        var left: [Item] = []
        queue.removeAll { entry in
            guard shouldLeave(entry.item) else { return false }
            left.append(entry.item)
            return true
        }
        return left
    }

    /// Transfers running to `address`.
    func runningCount(_ address: String) -> Int { running[address, default: 0] }
}
