import Foundation
import Synchronization
import Testing

/// A child process with its standard output and error collected; lines are awaited, not polled for.
package final class ChildProcess: Sendable {
    private struct Buffers {
        var output = ""
        var errors = ""
        var waiters: [(needle: String, continuation: CheckedContinuation<String?, Never>)] = []
        var exitStatus: Int32?
        var terminationStatus: Int32?
        var streamsOpen = 2
        var exitWaiters: [CheckedContinuation<Int32, Never>] = []
    }

    private let pid: pid_t
    private let state = Mutex(Buffers())

    private init(pid: pid_t) { self.pid = pid }

    /// Starts `executable` (an absolute path) with this process's environment, through the shared `posix_spawn`
    /// helper (not `Foundation.Process`, whose `run()` can crash in a descriptor-heavy test process on Linux).
    package static func start(_ executable: String, _ arguments: [String]) throws -> ChildProcess {
        let spawnedProcess = try SpawnedProcess(binary: executable, arguments: arguments, environment: ProcessInfo.processInfo.environment)
        let child = ChildProcess(pid: spawnedProcess.pid)
        // One reader thread per stream until end of file, one thread waiting for the exit; the exit is announced once
        // both streams ended and the process terminated, so the output is complete when a waiter resumes.
        for (handle, isError) in [(spawnedProcess.output, false), (spawnedProcess.errors, true)] {
            Thread.detachNewThread {
                while true {
                    let data = handle.availableData
                    if data.isEmpty { break }
                    child.append(data, error: isError)
                }
                child.finished(status: nil)
            }
        }
        Thread.detachNewThread { child.finished(status: spawnedProcess.wait()) }
        return child
    }

    private func finished(status: Int32?) {
        let ready: Int32? = state.withLock { s in
            if let status { s.terminationStatus = status } else { s.streamsOpen -= 1 }
            guard s.exitStatus == nil, s.streamsOpen == 0, let final = s.terminationStatus else { return nil }
            return final
        }
        if let ready { exited(ready) }
    }

    /// Everything the child wrote to its standard output so far.
    package var output: String { state.withLock { $0.output } }
    /// Everything the child wrote to its standard error so far.
    package var errors: String { state.withLock { $0.errors } }

    private func append(_ data: Data, error: Bool) {
        guard !data.isEmpty else { return }
        let text = String(decoding: data, as: UTF8.self)
        let resumed: [(CheckedContinuation<String?, Never>, String)] = state.withLock { s in
            if error { s.errors += text } else { s.output += text }
            var ready: [(CheckedContinuation<String?, Never>, String)] = []
            s.waiters.removeAll { waiter in
                guard let line = Self.line(in: s.output, containing: waiter.needle) else { return false }
                ready.append((waiter.continuation, line))
                return true
            }
            return ready
        }
        for (continuation, line) in resumed { continuation.resume(returning: line) }
    }

    private func exited(_ status: Int32) {
        let (exitWaiters, lineWaiters) = state.withLock { s in
            s.exitStatus = status
            defer { s.exitWaiters = []; s.waiters = [] }
            return (s.exitWaiters, s.waiters)
        }
        for waiter in exitWaiters { waiter.resume(returning: status) }
        for waiter in lineWaiters { waiter.continuation.resume(returning: nil) }
    }

    private static func line(in text: String, containing needle: String) -> String? {
        text.split(separator: "\n").first { $0.contains(needle) }.map(String.init)
    }

    /// The first complete output line containing `needle`; fails if the process exits or the time runs out first.
    package func line(containing needle: String, within limit: Duration) async throws -> String {
        let found: String? = await Self.race(limit, onTimeout: { self.stop() }) {
            await withCheckedContinuation { continuation in
                let immediate: String?? = self.state.withLock { s in
                    if let line = Self.line(in: s.output, containing: needle) { return .some(line) }
                    if s.exitStatus != nil { return .some(nil) }
                    s.waiters.append((needle, continuation))
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        }
        return try #require(found, "no line containing '\(needle)'; output: \(output)\nerrors: \(errors)")
    }

    /// The exit status; stops the process and fails if it runs longer than `limit`.
    package func exit(within limit: Duration) async throws -> Int32 {
        let status: Int32? = await Self.race(limit, onTimeout: { self.stop() }) {
            await withCheckedContinuation { continuation in
                let done: Int32? = self.state.withLock { s in
                    if let status = s.exitStatus { return status }
                    s.exitWaiters.append(continuation)
                    return nil
                }
                if let done { continuation.resume(returning: done) }
            }
        }
        guard let status else {
            Issue.record("the process did not exit within \(limit); output: \(output)\nerrors: \(errors)")
            return -1
        }
        return status
    }

    /// `signal` (SIGTERM unless told), if still running.
    package func stop(_ signal: Int32 = SIGTERM) {
        if state.withLock({ $0.terminationStatus == nil }) { kill(pid, signal) }
    }

    /// The value of `work`, or nil when `limit` passes first (a watchdog, so a hung child fails the test rather than
    /// hangs it). `onTimeout` must make `work` finish (stopping the process resumes every waiter).
    private static func race<T: Sendable>(_ limit: Duration, onTimeout: @escaping @Sendable () -> Void,
                                          _ work: @escaping @Sendable () async -> T?) async -> T? {
        await withTaskGroup(of: T?.self) { group in
            group.addTask { await work() }
            group.addTask {
                do { try await Task.sleep(for: limit) } catch { return nil }
                onTimeout()
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}
