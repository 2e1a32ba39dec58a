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
enum BenchChaos {
    static func parse(_ arguments: ParsedArguments) throws(ArgumentError) -> (BenchAuthority.Options, kills: Int) {
        var options = try BenchAuthority.common(arguments)
        options.modes = [.poll]
        return (options, try arguments.integer("kills", in: 1...1000) ?? 50)
    }

    static func run(_ parsed: (BenchAuthority.Options, kills: Int)) async -> Int32 {
        let (options, kills) = parsed
        do {
            return try await BenchChaosRun(BenchAuthorityRun(options), kills: kills).drive()
        } catch {
            printError("faceseal bench chaos: \(error)")
            return 1
        }
    }
}

/// One chaos run over a `BenchAuthorityRun`'s world.
final class BenchChaosRun: Sendable {
    /// What a client saw of one ceremony.
    struct Seen: Sendable {
        var subject: String
        var rid: String
        var completed = false
        var idToken: String?
    }

    let world: BenchAuthorityRun
    let kills: Int
    private let stopping = Atomic<Bool>(false)

    init(_ world: BenchAuthorityRun, kills: Int) {
        self.world = world
        self.kills = kills
    }

    func drive() async throws -> Int32 {
        let (location, keyPath) = try world.prepare()
        defer { world.removeDirectory() }
        let invitations = try await world.seed(location)
        // No pending limit: every backchannel request whose answer a kill swallowed is left pending, and the retry
        // starts another one for the same user.
        let arguments = world.serveArguments(location: location, keyPath: keyPath, data: world.directory) + ["--pending-requests-per-user", "0"]
        let log = world.directory.appendingPathComponent("authority.log").path
        var server = try await BenchServer.start(BenchAuthorityRun.ownPath, arguments + ["--port", "0"], log: log)
        guard let port = URL(string: server.base)?.port else { throw BenchAuthorityError("no port in \(server.base)") }
        let fixed = arguments + ["--port", String(port)]
        let parties = try await world.enrol(invitations, bases: [server.base])
        let keys = try await world.jwks(server.base)
        print("faceseal bench chaos: \(world.databaseName), \(world.options.concurrency) concurrent ceremonies, \(kills) SIGKILLs of the authority "
              + "0.2–1 s apart, each followed by a restart on port \(port); pending-request limit off for the run (--pending-requests-per-user 0)")

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
        for _ in 0..<kills {
            try await Task.sleep(for: .milliseconds(Int.random(in: 200...1000)))
            server.child.send(SIGKILL)
            _ = await server.child.waitInBackground()
            server = try await restart(fixed, log: log)
        }
        stopping.store(true, ordering: .relaxed)
        let outcomes = await seen
        defer { server.stop() }

        let (lost, duplicated, unissued) = try await check(outcomes, location: location)
        let lockedOut = try await lockedOutDevices(pairs, keys: keys)
        let completed = outcomes.filter(\.completed).count
        print("chaos db=\(world.databaseName) kills=\(kills) ceremonies=\(completed) redeemed=\(outcomes.filter { $0.idToken != nil }.count) "
              + "started=\(outcomes.count) lost=\(lost) duplicated=\(duplicated) id_tokens_without_completion=\(unissued) locked_out=\(lockedOut)")
        return lost == 0 && duplicated == 0 && unissued == 0 && lockedOut == 0 ? 0 : 1
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
