import Synchronization

/// What every flow machine offers its driver.
protocol FlowMachine: Sendable {
    associatedtype Action: Equatable & Sendable
    /// The "do nothing" action.
    static var noAction: Action { get }
    /// True once the flow ended.
    var isTerminal: Bool { get }
}

extension ApprovalStateMachine: FlowMachine {
    static var noAction: Action { .none }
}

extension RegistrationStateMachine: FlowMachine {
    static var noAction: Action { .none }
}

extension GatedSubmissionStateMachine: FlowMachine {
    static var noAction: Action { .none }
}

/// The driver plumbing shared by every flow: feeds one event at a time to the machine under a
/// lock, publishes the resulting state in order, and runs the returned action on a task whose
/// result becomes the next event.
final class FlowCore<Machine: FlowMachine>: Sendable {
    private let machine: Mutex<Machine>
    private let publish: @Sendable (Machine) -> Void
    private let tasks = TaskTracker()

    /// `publish` is called under the machine's lock after every event, so states reach
    /// subscribers in the order they happened.
    init(_ machine: Machine, publish: @escaping @Sendable (Machine) -> Void) {
        self.machine = Mutex(machine)
        self.publish = publish
        publish(machine)
    }

    /// Feeds one event; runs the action it returns with `perform` on a new task. `whenEnded` runs once, when this
    /// event ends the flow, before the terminal state is published: what it records (the audit entry) is there by the
    /// time a subscriber sees the end. Answers whether the flow is now terminal.
    @discardableResult
    func send(_ event: (inout Machine) -> Machine.Action, perform: @escaping @Sendable (Machine.Action) async -> Void,
              whenEnded: ((Machine, Machine.Action) -> Void)? = nil) -> Bool {
        let (action, terminal) = machine.withLock { m -> (Machine.Action, Bool) in
            let wasTerminal = m.isTerminal
            let action = event(&m)
            if !wasTerminal && m.isTerminal { whenEnded?(m, action) }
            publish(m)
            return (action, m.isTerminal)
        }
        if action != Machine.noAction {
            tasks.spawn { await perform(action) }
        }
        return terminal
    }

    /// Reads the machine.
    func read<T: Sendable>(_ body: (Machine) -> T) -> T {
        machine.withLock { body($0) }
    }

    /// Waits until no action of this flow is running (tests and the CLI use it).
    func waitUntilIdle() async {
        await tasks.waitUntilIdle()
    }
}

/// Keeps the tasks a flow started, so a caller can wait for all of them.
final class TaskTracker: Sendable {
    private struct Storage {
        var next = 0
        var tasks: [Int: Task<Void, Never>] = [:]
    }

    private let storage = Mutex(Storage())

    func spawn(_ body: @escaping @Sendable () async -> Void) {
        storage.withLock { s in
            let id = s.next
            s.next += 1
            // The task removes itself; it cannot do so before it is inserted, because the insert
            // happens under the lock it needs.
            s.tasks[id] = Task { [weak self] in
                await body()
                self?.storage.withLock { _ = $0.tasks.removeValue(forKey: id) }
            }
        }
    }

    func waitUntilIdle() async {
        while let task = storage.withLock({ $0.tasks.values.first }) {
            await task.value
        }
    }
}
