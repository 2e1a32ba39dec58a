public import Foundation

/// A child process started with `posix_spawn`, its standard output and error on pipes.
///
/// Not `Foundation.Process`: its `run()` on Linux intermittently crashes reading `/proc/self/fd` in a process with
/// many descriptors open (swift-corelibs-foundation PR #5472), which a test run full of sockets is.
public struct SpawnedProcess: Sendable {
    /// Why a child could not be started.
    public enum Failure: Error { case pipe, spawn(Int32) }

    /// The child's process id.
    public let pid: pid_t
    /// The read end of the child's standard output.
    public let output: FileHandle
    /// The read end of the child's standard error.
    public let errors: FileHandle

    /// Starts `binary` with `arguments` and an environment of `PATH` plus `environment`.
    public init(binary: String, arguments: [String], environment: [String: String] = [:]) throws {
        var out: [Int32] = [-1, -1]
        var err: [Int32] = [-1, -1]
        guard pipe(&out) == 0 else { throw Failure.pipe }
        guard pipe(&err) == 0 else {
            close(out[0]); close(out[1])
            throw Failure.pipe
        }
        // Close-on-exec, so no other child spawned meanwhile keeps these pipes open (dup2 clears it on 1 and 2).
        for descriptor in out + err { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_adddup2(&actions, out[1], 1)
        posix_spawn_file_actions_adddup2(&actions, err[1], 2)
        let argv: [UnsafeMutablePointer<CChar>?] = ([binary] + arguments).map { strdup($0) } + [nil]
        let variables = environment.merging(["PATH": "/usr/bin:/bin"]) { first, _ in first }
        let envp: [UnsafeMutablePointer<CChar>?] = variables.sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") } + [nil]
        var pid = pid_t()
        let status = posix_spawn(&pid, binary, &actions, nil, argv, envp)
        posix_spawn_file_actions_destroy(&actions)
        argv.forEach { free($0) }
        envp.forEach { free($0) }
        close(out[1])
        close(err[1])
        guard status == 0 else {
            close(out[0]); close(err[0])
            throw Failure.spawn(status)
        }
        self.pid = pid
        output = FileHandle(fileDescriptor: out[0], closeOnDealloc: true)
        errors = FileHandle(fileDescriptor: err[0], closeOnDealloc: true)
    }

    /// Waits for the child; its exit status, or 128 + the signal that ended it.
    public func wait() -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
    }

    /// Reads standard output (blocking) until what was read contains `marker` or the output ends; answers what was read.
    public func readOutput(until marker: String) -> Data {
        var output = Data()
        while !String(decoding: output, as: UTF8.self).contains(marker) {
            let chunk = self.output.availableData
            if chunk.isEmpty { break }
            output += chunk
        }
        return output
    }

    /// Sends SIGTERM (the child may already have exited).
    public func terminate() { kill(pid, SIGTERM) }
}
