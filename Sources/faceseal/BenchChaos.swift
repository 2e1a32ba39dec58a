import FaceSealAuthority
import FaceSealCrypto
import FaceSealHTTP
import FaceSealWire
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `faceseal bench chaos` (`make chaos`): SPEC §9's "nothing is lost on a crash", tried. While `--concurrency`
/// ceremonies run as in `bench authority`, the `faceseal serve` child is killed with SIGKILL at random moments
/// (0.2–1 s apart), `--kills` times, and restarted on the same port. Devices and applications retry as the SDK and
/// the application library do: a step that got no answer is sent again (a completion with the same body), a
/// backchannel request that got none is started anew. Afterwards the store is read and checked: every completion a
/// device saw answered is stored whole (request completed with its generation, the user's token at that generation or
/// later); no user's token was rotated more often than their requests were completed (`duplicated`); no ID token
/// exists for a request that is not completed; every ID token an application received is the one stored; and every
/// device still completes a ceremony (`locked_out`). Prints `chaos db=… kills=… ceremonies=… lost=… duplicated=…`;
/// exits 1 unless everything is 0.
///
/// With `--rolling-restarts N` (PostgreSQL) it is SPEC §9's rolling restart instead: two `faceseal serve` processes on one
/// database, each device on another one than its application; N times, one of them in turn gets SIGTERM, drains (new
/// requests get 503 with Retry-After, which the clients honour; in-flight ones finish; long polls answer at once),
/// exits, and is started again on its port. Nothing may be lost or abandoned: every ceremony started is completed and
/// redeemed, and every stopped process exited 0. Prints `restart db=… instances=2 restarts=… … abandoned=0`.
enum BenchChaos {
    static func parse(_ arguments: ParsedArguments) throws(ArgumentError) -> (BenchAuthority.Options, faults: Int, fault: BenchChaosRun.Fault) {
        var options = try BenchAuthority.common(arguments)
        options.modes = [.poll]
        let kills = try arguments.integer("kills", in: 1...1000)
        guard let restarts = try arguments.integer("rolling-restarts", in: 1...1000) else { return (options, kills ?? 50, .kill) }
        guard kills == nil else { throw .conflicting("kills", "rolling-restarts") }
        guard options.database != "sqlite" else {
            throw .badValue(option: "database", value: options.database, expected: "postgres for --rolling-restarts (two processes share one database)")
        }
        return (options, restarts, .rollingRestart)
    }

    static func run(_ parsed: (BenchAuthority.Options, faults: Int, fault: BenchChaosRun.Fault)) async -> Int32 {
        let (options, faults, fault) = parsed
        do {
            return try await BenchChaosRun(BenchAuthorityRun(options, productClient: true), faults: faults, fault: fault).drive()
        } catch {
            printError("faceseal bench chaos: \(error)")
            return 1
        }
    }
}

/// One chaos run over a `BenchAuthorityRun`'s world.
final class BenchChaosRun: Sendable {
    /// What happens to the authority, `faults` times.
    enum Fault: Sendable {
        /// SIGKILL of the one process, then a restart.
        case kill
        /// SIGTERM of one of two processes in turn (a graceful drain), then a restart.
        case rollingRestart
    }

    /// What a client saw of one ceremony.
    struct Seen: Sendable {
        var subject: String
        var rid: String
        var completed = false
        var idToken: String?
    }

    let world: BenchAuthorityRun
    let faults: Int
    let fault: Fault
    private let stopping = Atomic<Bool>(false)
    /// Answers `503` with `Retry-After` the clients waited for and sent again.
    private let unavailable = Atomic<Int>(0)

    init(_ world: BenchAuthorityRun, faults: Int, fault: Fault) {
        self.world = world
        self.faults = faults
        self.fault = fault
    }

    func drive() async throws -> Int32 {
        let (location, keyPath) = try world.prepare()
        defer { world.removeDirectory() }
        let invitations = try await world.seed(location)
        var servers: [BenchServer] = []
        defer { servers.forEach { $0.stop() } }
        var commands: [(arguments: [String], log: String)] = []
        for index in 0..<(fault == .kill ? 1 : 2) {
            // One data directory per instance (its admin key); one master key, issuer and database. No pending limit: every
            // backchannel request whose answer a kill swallowed is left pending, and the retry starts another one.
            let data = index == 0 ? world.directory : world.directory.appendingPathComponent("instance-\(index)")
            try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let arguments = world.serveArguments(location: location, keyPath: keyPath, data: data) + ["--pending-requests-per-user", "0"]
            let log = world.directory.appendingPathComponent("authority-\(index).log").path
            let server = try await BenchServer.start(BenchAuthorityRun.ownPath, arguments + ["--port", "0"], log: log)
            guard let port = URL(string: server.base)?.port else { throw BenchAuthorityError("no port in \(server.base)") }
            servers.append(server)
            commands.append((arguments + ["--port", String(port)], log))
        }
        let parties = try await world.enrol(invitations, bases: servers.map(\.base))
        let keys = try await world.jwks(servers[0].base)
        switch fault {
        case .kill:
            print("faceseal bench chaos: \(world.databaseName), \(world.options.concurrency) concurrent ceremonies, \(faults) SIGKILLs of the "
                  + "authority 0.2–1 s apart, each followed by a restart on its port; pending-request limit off for the run "
                  + "(--pending-requests-per-user 0)")
        case .rollingRestart:
            print("faceseal bench chaos: \(world.databaseName), \(world.options.concurrency) concurrent ceremonies over 2 authority processes, "
                  + "\(faults) rolling restarts 0.2–1 s apart (SIGTERM to each in turn, a graceful drain, a restart on its port)")
        }

        let concurrency = world.options.concurrency
        let pairs = parties.pairs
        async let seen = withTaskGroup(of: [Seen].self) { group in
            for worker in 0..<concurrency {
                let mine = stride(from: worker, to: pairs.count, by: concurrency).map { pairs[$0] }
                group.addTask { [self] in await ceremonies(mine, keys: keys) }
            }
            var all: [Seen] = []
            for await part in group { all += part }
            return all
        }
        var gracefulExits = 0
        for round in 0..<faults {
            try await Task.sleep(for: .milliseconds(Int.random(in: 200...1000)))
            let index = round % servers.count
            servers[index].child.send(fault == .kill ? SIGKILL : SIGTERM)
            if await servers[index].child.waitInBackground().status == 0 { gracefulExits += 1 }
            servers[index] = try await restart(commands[index].arguments, log: commands[index].log)
        }
        stopping.store(true, ordering: .relaxed)
        let outcomes = await seen

        let (lost, duplicated, unissued) = try await check(outcomes, location: location)
        let lockedOut = try await lockedOutDevices(pairs, keys: keys)
        let completed = outcomes.filter(\.completed).count
        let redeemed = outcomes.filter { $0.idToken != nil }.count
        let counts = "ceremonies=\(completed) redeemed=\(redeemed) started=\(outcomes.count) lost=\(lost) duplicated=\(duplicated) "
            + "id_tokens_without_completion=\(unissued) locked_out=\(lockedOut)"
        let clean = lost == 0 && duplicated == 0 && unissued == 0 && lockedOut == 0
        switch fault {
        case .kill:
            print("chaos db=\(world.databaseName) kills=\(faults) " + counts)
            return clean ? 0 : 1
        case .rollingRestart:
            let abandoned = outcomes.count - redeemed
            print("restart db=\(world.databaseName) instances=2 restarts=\(faults) " + counts + " abandoned=\(abandoned) "
                  + "graceful_exits=\(gracefulExits) retried_503=\(unavailable.load(ordering: .relaxed))")
            return clean && abandoned == 0 && gracefulExits == faults ? 0 : 1
        }
    }

    /// Starts the authority again on its port (the old socket may linger a moment).
    private func restart(_ arguments: [String], log: String) async throws -> BenchServer {
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await BenchServer.start(BenchAuthorityRun.ownPath, arguments, log: log)
            } catch where attempt < 50 {
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    /// One worker's ceremonies until the kills are over.
    private func ceremonies(_ pairs: [(BenchDevice, BenchApplication)], keys: JWKSet) async -> [Seen] {
        var seen: [Seen] = []
        var turn = 0
        while !stopping.load(ordering: .relaxed) {
            let (device, application) = pairs[turn % pairs.count]
            turn += 1
            seen.append(await ceremony(device, application, keys: keys))
        }
        return seen
    }

    /// A ceremony whose steps are retried while they get no answer; what the clients saw of it.
    private func ceremony(_ device: BenchDevice, _ application: BenchApplication, keys: JWKSet) async -> Seen {
        var seen = Seen(subject: application.subject, rid: "")
        let deadline = ContinuousClock.now + .seconds(30)
        func retrying<T>(_ step: () async throws -> T) async throws -> T {
            while true {
                do {
                    return try await step()
                } catch let error as HTTPClientError where ContinuousClock.now < deadline && error != .cancelled {
                    try await Task.sleep(for: .milliseconds(50))
                } catch let refusal as BenchUnavailable where ContinuousClock.now < deadline {
                    // A draining instance: wait as it asked, as the SDK and the application library do.
                    unavailable.add(1, ordering: .relaxed)
                    try await Task.sleep(for: .seconds(min(refusal.retryAfter, 5)))
                }
            }
        }
        do {
            seen.rid = try await retrying { try await application.start(notificationToken: world.board.token) }
            // A kill between the outbox's acknowledgement and its answer loses the link: the ceremony is abandoned.
            var nonce: String?
            for _ in 0..<5 where nonce == nil {
                nonce = try await retrying { try await device.pollLinks(wait: 2) }[seen.rid]
            }
            guard let nonce else { return seen }
            try await retrying { try await device.details(rid: seen.rid, nonce: nonce) }
            let download = try await retrying { try await device.download(rid: seen.rid) }
            let completion = try device.completion(rid: seen.rid, from: download)
            try await retrying { try await device.post(completion) }
            seen.completed = true
            seen.idToken = try await retrying { try await application.redeem(seen.rid, issuer: BenchAuthorityRun.issuer, keys: keys) }
        } catch {
            // An answer that is not a retryable silence (e.g. the redemption whose first answer was lost is already
            // redeemed): what was seen so far stands.
        }
        return seen
    }

    /// Devices that can no longer complete a ceremony once the authority runs undisturbed.
    private func lockedOutDevices(_ pairs: [(BenchDevice, BenchApplication)], keys: JWKSet) async throws -> Int {
        let results = try await BenchAuthorityRun.forEach(pairs, width: 16) { [self] device, application in
            await ceremony(device, application, keys: keys).idToken != nil
        }
        return results.filter { !$0 }.count
    }

    /// Lost completions and ID tokens, users rotated more often than completed, ID tokens without a completion.
    private func check(_ seen: [Seen], location: StoreLocation) async throws -> (lost: Int, duplicated: Int, unissued: Int) {
        let store = try await SQLAuthorityStore.open(location)
        var lost = 0, unissued = 0, duplicated = 0
        var completedBySubject: [String: Int] = [:]
        do {
            for ceremony in seen where !ceremony.rid.isEmpty {
                let request = try await store.request(authReqID: ceremony.rid)
                if request.state == .completed {
                    completedBySubject[ceremony.subject, default: 0] += 1
                    if request.stagedGeneration == nil { lost += 1 }
                } else {
                    if ceremony.completed { lost += 1 }
                    if request.idToken != nil { unissued += 1 }
                }
                if let token = ceremony.idToken, request.idToken != token { lost += 1 }
            }
            for subject in Set(seen.map(\.subject)) {
                let rotations = Int(try await store.faceToken(subject: subject).generation) - 1
                let completions = completedBySubject[subject] ?? 0
                if rotations > completions { duplicated += rotations - completions }
                if rotations < completions { lost += completions - rotations }
            }
        } catch {
            await store.close()
            throw error
        }
        await store.close()
        return (lost, duplicated, unissued)
    }
}
