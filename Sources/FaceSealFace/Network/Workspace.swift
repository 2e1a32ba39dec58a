import Synchronization

/// Scratch memory for the layers of one forward pass, recycled between passes by `WorkspacePool`.
/// Held as an address so it can live in the pool's mutex; only one pass uses it at a time.
struct Workspace: Sendable {
    private var address: UInt = 0
    private var capacity = 0

    /// At least `count` floats, valid until the next `reserve`; contents are undefined.
    mutating func reserve(_ count: Int) -> UnsafeMutablePointer<Float> {
        if count > capacity || address == 0 {
            release()
            capacity = max(count, 1)
            address = UInt(bitPattern: UnsafeMutablePointer<Float>.allocate(capacity: capacity))
        }
        return UnsafeMutablePointer<Float>(bitPattern: address)!
    }

    /// Frees the memory; the workspace is empty afterwards.
    mutating func release() {
        UnsafeMutablePointer<Float>(bitPattern: address)?.deallocate()
        address = 0
        capacity = 0
    }
}

/// Keeps a couple of workspaces between forward passes: a fresh multi-megabyte buffer per detection
/// would be fresh pages, and faulting them in costs about as much as a layer's copies.
final class WorkspacePool: Sendable {
    private static let kept = 2
    private let idle = Mutex<[Workspace]>([])

    func take() -> Workspace {
        idle.withLock { $0.popLast() } ?? Workspace()
    }

    func give(_ workspace: Workspace) {
        var surplus: Workspace? = idle.withLock { list in
            guard list.count < Self.kept else { return workspace }
            list.append(workspace)
            return nil
        }
        surplus?.release()
    }

    deinit {
        idle.withLock { list in
            for index in list.indices { list[index].release() }
            list.removeAll()
        }
    }
}
