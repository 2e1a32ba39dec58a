import FaceSealCrypto
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

// The fixed-rate mode of `faceseal bench authority` (`--rate`, the soak of SPEC §11): ceremonies are started on a
// schedule rather than as fast as the answers come, so a slow-down shows as latency and a backlog instead of a lower
// rate, and the authority's memory and latency can be watched window by window over a long run.
extension BenchAuthorityRun {
    /// Ceremonies and failures as they end, taken window by window by the reporter.
    final class SoakLog: Sendable {
        private let state = Mutex<(ended: [(ContinuousClock.Instant, Double)], failures: Int, firstFailure: String?)>(([], 0, nil))
        /// Set when every worker has stopped (the last window waits for the ceremonies still running at the end).
        let finished = Atomic<Bool>(false)

        func ended(_ at: ContinuousClock.Instant, milliseconds: Double) { state.withLock { $0.ended.append((at, milliseconds)) } }

        func failed(_ error: any Error) {
            state.withLock {
                $0.failures += 1
                if $0.firstFailure == nil { $0.firstFailure = String(describing: error) }
            }
        }

        /// The latencies of the ceremonies that ended up to `end` (removed), and the failures so far.
        func take(until end: ContinuousClock.Instant) -> (latencies: [Double], failures: Int, firstFailure: String?) {
            state.withLock {
                let taken = $0.ended.filter { $0.0 <= end }.map(\.1)
                $0.ended.removeAll { $0.0 <= end }
                return (taken, $0.failures, $0.firstFailure)
            }
        }
    }

    /// `options.rate` ceremonies a second for `options.seconds`: ceremony `k` is due at `k / rate` seconds and is run by
    /// worker `k mod concurrency` on its next device (one ceremony at a time per device, as in the closed loop). Its
    /// latency runs from when it was due, so a worker that falls behind shows it. One line per `--report-every` window.
    func soak(mode: BenchAuthority.Mode, pairs: [(BenchDevice, BenchApplication)], keys: JWKSet,
              authorities: [pid_t]) async -> PhaseResult {
        let rate = Double(options.rate ?? 1)
        let concurrency = options.concurrency
        let start = ContinuousClock.now
        let end = start + .seconds(options.seconds)
        let log = SoakLog()
        async let windows = reportWindows(mode: mode, log: log, start: start, end: end, authorities: authorities)
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<concurrency {
                let mine = stride(from: worker, to: pairs.count, by: concurrency).map { pairs[$0] }
                group.addTask { [self] in
                    var k = worker, turn = 0
                    while true {
                        let due = start + .seconds(Double(k) / rate)
                        guard due < end else { return }
                        try? await Task.sleep(until: due)
                        let (device, application) = mine[turn % mine.count]
                        do {
                            let ceremony = try await ceremony(mode: mode, device: device, application: application, keys: keys)
                            log.ended(ceremony.ended, milliseconds: Self.milliseconds(ceremony.ended - due))
                        } catch {
                            log.failed(error)
                        }
                        k += concurrency
                        turn += 1
                    }
                }
            }
        }
        log.finished.store(true, ordering: .releasing)
        let (lines, failures) = await windows
        return PhaseResult(lines: lines, failures: failures, ceremoniesPerSecond: 0)
    }

    /// Prints (at once, a soak is long) and answers one line per window and a start-against-end summary.
    private func reportWindows(mode: BenchAuthority.Mode, log: SoakLog, start: ContinuousClock.Instant, end: ContinuousClock.Instant,
                               authorities: [pid_t]) async -> (lines: [String], failures: Int) {
        func cpu() -> Double { authorities.reduce(0) { $0 + (ProcessSample.cpuSeconds($1) ?? 0) } }
        let own = "db=\(databaseName) mode=\(mode.rawValue) id_token_alg=\(options.idTokenAlgorithm.rawValue) rate=\(options.rate ?? 0)"
        let window = Duration.seconds(options.reportEvery)
        let count = Int((Double(options.seconds) / Double(options.reportEvery)).rounded(.up))
        let startRSS = Self.residentMB(authorities)?.current ?? 0
        print("bench=authority soak \(own) window=0/\(count) t_s=0 rss_mb=\(Self.format(startRSS, 1))")
        fflush(nil)
        var figures: [(p50: Double, p99: Double, rss: Double)] = []
        var failures = 0
        var cpu0 = cpu(), own0 = ProcessCPU.seconds(), machine0 = ProcessSample.machineSeconds()
        for index in 1...count {
            try? await Task.sleep(until: min(start + window * index, end))
            while index == count && !log.finished.load(ordering: .acquiring) { try? await Task.sleep(for: .milliseconds(100)) }
            let taken = log.take(until: ContinuousClock.now)
            let cpu1 = cpu(), own1 = ProcessCPU.seconds(), machine1 = ProcessSample.machineSeconds()
            let seconds = index == count ? Double(options.seconds) - Double(options.reportEvery * (count - 1)) : Double(options.reportEvery)
            let n = Double(max(taken.latencies.count, 1))
            let rss = Self.residentMB(authorities)
            let p50 = Self.percentile(taken.latencies, 0.5), p99 = Self.percentile(taken.latencies, 0.99)
            figures.append((p50, p99, rss?.current ?? 0))
            let machineBusy = (machine1?.busy ?? 0) - (machine0?.busy ?? 0)
            let line = "bench=authority soak \(own) window=\(index)/\(count) t_s=\(Int(Double(options.reportEvery) * Double(index - 1) + seconds)) "
                + "ceremonies=\(taken.latencies.count) ceremonies_per_s=\(Self.format(Double(taken.latencies.count) / seconds, 1)) "
                + "p50_ms=\(Self.format(p50, 2)) p99_ms=\(Self.format(p99, 2)) max_ms=\(Self.format(taken.latencies.max() ?? .nan, 1)) "
                + "rss_mb=\(Self.format(rss?.current ?? 0, 1)) rss_peak_mb=\(Self.format(rss?.peak ?? 0, 1)) "
                + "cpu_ms_per_ceremony=\(Self.format(1000 * (cpu1 - cpu0) / n, 3)) loadgen_cpu_ms_per_ceremony=\(Self.format(1000 * (own1 - own0) / n, 3)) "
                + "others_cores=\(Self.format(max(0, machineBusy - (cpu1 - cpu0) - (own1 - own0)) / seconds, 2)) failures=\(taken.failures - failures)"
            failures = taken.failures
            cpu0 = cpu1; own0 = own1; machine0 = machine1
            print(line)
            if let first = taken.firstFailure, index == count { print("first failure (\(mode.rawValue)): \(first)") }
            fflush(nil)
        }
        var lines: [String] = []
        if let first = figures.first, let last = figures.last {
            lines.append("bench=authority soak \(own) seconds=\(options.seconds) rss_mb_start=\(Self.format(startRSS, 1)) "
                         + "rss_mb_first_window=\(Self.format(first.rss, 1)) rss_mb_end=\(Self.format(last.rss, 1)) "
                         + "p50_ms_first=\(Self.format(first.p50, 2)) p50_ms_last=\(Self.format(last.p50, 2)) "
                         + "p99_ms_first=\(Self.format(first.p99, 2)) p99_ms_last=\(Self.format(last.p99, 2)) failures=\(failures)")
        }
        return (lines, failures)
    }
}
