import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A benchmark's child process, started with `posix_spawn`: standard output on a pipe, standard error on a pipe or
/// into a file (a server logging every request must never block on a full pipe), reaped with `wait4` for its rusage.
struct BenchChild: Sendable {
    struct Result: Sendable {
        var status: Int32
        var cpu: Double
        var wall: Double
        var voluntarySwitches: Int
        var output: String
        var errors: String
    }

    let pid: pid_t
    let started = ContinuousClock.now
    private let output: FileHandle
    private let errors: FileHandle?

    /// Starts `binary`; with `errorsTo`, standard error is appended to that file instead of a pipe.
    init(_ binary: String, _ arguments: [String], errorsTo errorFile: String? = nil) throws {
        var out: [Int32] = [-1, -1], err: [Int32] = [-1, -1]
        guard pipe(&out) == 0, errorFile != nil || pipe(&err) == 0 else { throw BenchWaitError("pipe failed") }
        for descriptor in out + err where descriptor >= 0 { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_adddup2(&actions, out[1], 1)
        if let errorFile {
            posix_spawn_file_actions_addopen(&actions, 2, errorFile, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        } else {
            posix_spawn_file_actions_adddup2(&actions, err[1], 2)
        }
        let argv: [UnsafeMutablePointer<CChar>?] = ([binary] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid = pid_t()
        let status = posix_spawn(&pid, binary, &actions, nil, argv, envp)
        posix_spawn_file_actions_destroy(&actions)
        close(out[1])
        if err[1] >= 0 { close(err[1]) }
        output = FileHandle(fileDescriptor: out[0], closeOnDealloc: true)
        errors = err[0] >= 0 ? FileHandle(fileDescriptor: err[0], closeOnDealloc: true) : nil
        guard status == 0 else { throw BenchWaitError("cannot start \(binary): \(String(cString: strerror(status)))") }
        self.pid = pid
    }

    /// Reads standard output up to the first line containing `marker` and answers what follows it on that line; nil
    /// when the output ends first (the child exited). Blocking: on a thread of its own.
    func line(containing marker: String) async -> String? {
        let descriptor = output.fileDescriptor
        return await withCheckedContinuation { continuation in
            Thread {
                var line: [UInt8] = []
                var byte: UInt8 = 0
                while read(descriptor, &byte, 1) == 1 {
                    guard byte == UInt8(ascii: "\n") else {
                        line.append(byte)
                        continue
                    }
                    let text = String(decoding: line, as: UTF8.self)
                    if let range = text.range(of: marker) { return continuation.resume(returning: String(text[range.upperBound...])) }
                    line = []
                }
                continuation.resume(returning: nil)
            }.start()
        }
    }

    /// Sends `signal` (the child may already have exited).
    func send(_ signal: Int32) { kill(pid, signal) }

    /// Reads the child's output to its end, then reaps it.
    func wait() -> Result {
        let text = String(decoding: output.readDataToEndOfFile(), as: UTF8.self)
        let problems = errors.map { String(decoding: $0.readDataToEndOfFile(), as: UTF8.self) } ?? ""
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
        let elapsed = ContinuousClock.now - started
        let wall = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let code = status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return Result(status: code, cpu: ProcessCPU.seconds(usage), wall: wall, voluntarySwitches: usage.ru_nvcsw,
                      output: text, errors: problems.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Reaps the child on a thread of its own (never on the pool that serves the benchmark's own handlers).
    func waitInBackground() async -> Result {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: wait()) }.start()
        }
    }
}

/// What `/proc` says about a running process (Linux): its CPU time so far and its resident memory.
enum ProcessSample {
    /// User + system CPU seconds of `pid` so far (`/proc/PID/stat`, clock ticks); nil when it is gone.
    static func cpuSeconds(_ pid: pid_t) -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        // Fields after the command name, which may hold spaces: state is field 3, utime 14, stime 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// `VmRSS` and `VmHWM` (peak) of `pid` in MB; nil when it is gone.
    static func residentMB(_ pid: pid_t) -> (current: Double, peak: Double)? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        func kilobytes(_ field: String) -> Double? {
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }) else { return nil }
            return line.split(separator: " ").dropFirst().first.flatMap { Double($0) }
        }
        guard let current = kilobytes("VmRSS"), let peak = kilobytes("VmHWM") else { return nil }
        return (current / 1024, peak / 1024)
    }

    /// Busy and total CPU seconds of the whole machine so far (`/proc/stat`), to tell how quiet it was.
    static func machineSeconds() -> (busy: Double, total: Double)? {
        guard let stat = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
              let line = stat.split(separator: "\n").first, line.hasPrefix("cpu ") else { return nil }
        let ticks = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        guard ticks.count >= 5 else { return nil }
        let total = ticks.prefix(8).reduce(0, +)
        let idle = ticks[3] + ticks[4]
        let hz = Double(sysconf(Int32(_SC_CLK_TCK)))
        return ((total - idle) / hz, total / hz)
    }
}
