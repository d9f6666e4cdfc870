import AsyncHTTPClient
import Foundation
import KioskMerchant
import KioskTestSupport
import KioskTesting
import NIOCore
import NIOHTTP1
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Every charged payment is delivered exactly once, whatever crashes: a real `kiosk merchant serve` is killed with
/// SIGKILL while the app delivers 60 paid consumables to it, 8 at a time; restarted on the same configuration,
/// database and port, it is sent all 60 again (as an app retries whatever it got no 200 for), and the user ends up
/// with exactly 60 grants and 60 × `amount` coins. Killed and restarted once more, all 60 replays change nothing.
///
/// Killing the merchant exactly between a grant's commit and its answer cannot be aimed at from outside the
/// process. What this covers instead is the case that matters to the app: a delivery whose answer was lost (the
/// connection dropped at the kill, whether or not its grant had committed) and which is retried. Which cut-off
/// deliveries had committed is read from the restarted merchant's ledger before anything is retried: each of
/// those (and each delivery answered before the kill) must be `already_granted` on retry, every other one
/// `granted`; and the ledger's history and balance must show exactly one grant per transaction. Only the app's
/// delivery path runs: the store sends the merchant no notifications (the app has no notification URL).
@Suite(.runsServers) struct MerchantCrashTests {
    static let app = "com.example.crash-shop"
    static let coins = "com.example.crash_shop.coins"
    static let tester = "crash@example.com"
    static let user = "alice"
    static let purchases = 60
    static let amount: Int64 = 5
    static let inFlight = 8
    /// Answers to wait for before the kill: the merchant is demonstrably working, and the rest are in flight.
    static let killAfterAnswers = 5

    @Test(.timeLimit(.minutes(20)), arguments: TestDatabaseEngine.available)
    func deliveriesAreGrantedOnceAcrossKills(engine: TestDatabaseEngine) async throws {
        let started = ContinuousClock.now
        try await withTestStore(engine: engine, port: .free) { store in
            try await Self.createShop(on: store)
            var signed: [String] = []
            var transactionIds: [String] = []
            for _ in 0..<Self.purchases {
                let bought = try await store.request(
                    .POST, "/sandbox/test/v1/apps/\(Self.app)/purchases",
                    json: ["tester": Self.tester, "productId": Self.coins], token: .some(store.adminToken))
                try #require(bought.status == 201, "\(bought.text)")
                let transaction = try #require(bought.json["transaction"] as? [String: Any], "\(bought.text)")
                signed.append(try #require(transaction["signedTransaction"] as? String, "\(bought.text)"))
                transactionIds.append(try #require(transaction["transactionId"] as? String, "\(bought.text)"))
            }
            #expect(Set(transactionIds).count == Self.purchases)

            // The merchant's folder: configuration, roots, key; its ledger in its own database.
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
                "kiosk-merchant-crash-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: folder) }
            let config = folder.appendingPathComponent("merchant.json")
            let configuration = try await MerchantSetup.configuration(
                storeURL: store.baseURL, adminToken: store.adminToken, bundleId: Self.app,
                products: [.init(productId: Self.coins, type: .consumable, balance: "coins", amount: Self.amount)],
                directory: folder)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try encoder.encode(configuration).write(to: config, options: .atomic)
            try await engine.withFreshDatabase { fresh in
                let database = fresh ?? "sqlite://\(folder.appendingPathComponent("ledger.sqlite").path)"
                let token = try await KioskProcess.run([
                    "merchant", "token", "--config", config.path, "--user", Self.user,
                ])
                try #require(token.status == 0, "\(token.stderr)")
                let userToken = token.stdout.trimmingCharacters(in: .whitespacesAndNewlines)

                let merchants = Merchants(config: config.path, database: database)
                defer { merchants.killAll() }
                let client = Self.makeClient()
                do {
                    try await Self.run(
                        merchants: merchants, client: client, userToken: userToken, signed: signed,
                        transactionIds: transactionIds, engine: engine)
                } catch {
                    try? await client.shutdown()
                    throw error
                }
                try await client.shutdown()
            }
        }
        print("MerchantCrashTests[\(engine)]: \(ContinuousClock.now - started)")
    }

    /// The kills, restarts, deliveries and checks, against a merchant on `merchants`' configuration and database.
    static func run(
        merchants: Merchants, client: HTTPClient, userToken: String, signed: [String], transactionIds: [String],
        engine: TestDatabaseEngine
    ) async throws {
        // 1. Deliver all 60, 8 at a time; SIGKILL the merchant as the fifth answer arrives.
        let first = try await merchants.start(port: 0)
        let base = first.base
        let port = first.port
        let killed = KillSwitch()
        let beforeKill = try await deliverAll(signed, client: client, base: base, token: userToken) { answered in
            if answered == killAfterAnswers { killed.kill(first.process) }
        }
        #expect(killed.wasKilled, "the merchant was killed after \(killAfterAnswers) answers")
        try await merchants.waitForExit(first)
        var firstGranted: Set<String> = []
        var lostAnswers = 0
        for (index, result) in beforeKill.enumerated() {
            switch result {
            case .answered(let status, let outcome, let text):
                // Nothing was granted before: an answer the merchant gave at all is a 200 `granted`.
                #expect(
                    status == 200 && outcome == "granted",
                    "first delivery of \(transactionIds[index]): \(status) \(text)")
                if status == 200 && outcome == "granted" { firstGranted.insert(transactionIds[index]) }
            case .failed:
                lostAnswers += 1
            }
        }
        #expect(firstGranted.count >= killAfterAnswers, "answers before the kill: \(firstGranted.count)")
        #expect(lostAnswers > 0, "some deliveries were cut off by the kill")

        // 2. Restarted on the same configuration, database and port. What the ledger holds before any retry says
        // which deliveries committed before the kill: every answered one, and perhaps some whose answer was lost.
        let second = try await merchants.start(port: port)
        let survived = try await ledgerState(client: client, base: base, token: userToken)
        let committed = Set(survived.granted)
        #expect(survived.granted.count == committed.count, "one grant per transaction: \(survived.granted)")
        #expect(firstGranted.isSubset(of: committed), "answered grants survive the kill: \(survived.granted)")
        #expect(committed.isSubset(of: Set(transactionIds)), "only bought transactions: \(survived.granted)")
        #expect(survived.coins == Int64(committed.count) * amount, "coins before the retries: \(survived.coins)")
        #expect(survived.otherKinds.isEmpty, "no other history: \(survived.otherKinds)")
        let committedButUnanswered = committed.subtracting(firstGranted).count

        // The app sends everything again: what committed is already granted, the rest is granted now.
        let retried = try await deliverAll(signed, client: client, base: base, token: userToken)
        var secondGranted: Set<String> = []
        for (index, result) in retried.enumerated() {
            let id = transactionIds[index]
            guard case .answered(let status, let outcome, let text) = result else {
                Issue.record("retry of \(id) reached no merchant: \(result)")
                continue
            }
            #expect(status == 200, "retry of \(id): \(status) \(text)")
            let expected = committed.contains(id) ? "already_granted" : "granted"
            #expect(
                outcome == expected,
                "retry of \(id) (\(committed.contains(id) ? "committed" : "not committed") before the kill): \(text)")
            if outcome == "granted" { secondGranted.insert(id) }
        }
        #expect(secondGranted == Set(transactionIds).subtracting(committed), "granted on retry: \(secondGranted)")

        // 3. The ledger: exactly one grant per paid transaction.
        let ledger = try await ledgerState(client: client, base: base, token: userToken)
        #expect(ledger.coins == Int64(signed.count) * amount, "coins: \(ledger.coins)")
        #expect(ledger.granted.count == signed.count, "granted entries: \(ledger.granted.count)")
        #expect(Set(ledger.granted) == Set(transactionIds), "granted transactions are the bought ones")
        #expect(ledger.otherKinds.isEmpty, "no other history: \(ledger.otherKinds)")

        // 4. Killed again in the middle of replays and restarted: all 60 replayed, nothing changes.
        let replayKill = KillSwitch()
        let replaysBeforeKill = try await deliverAll(signed, client: client, base: base, token: userToken) { answered in
            if answered == killAfterAnswers { replayKill.kill(second.process) }
        }
        #expect(replayKill.wasKilled)
        try await merchants.waitForExit(second)
        for case .answered(let status, let outcome, let text) in replaysBeforeKill {
            #expect(status == 200 && outcome == "already_granted", "replay before the second kill: \(status) \(text)")
        }
        let third = try await merchants.start(port: port)
        let replayed = try await deliverAll(signed, client: client, base: base, token: userToken)
        for (index, result) in replayed.enumerated() {
            guard case .answered(let status, let outcome, let text) = result else {
                Issue.record("replay of \(transactionIds[index]) reached no merchant: \(result)")
                continue
            }
            #expect(
                status == 200 && outcome == "already_granted", "replay of \(transactionIds[index]): \(status) \(text)")
        }
        let after = try await ledgerState(client: client, base: base, token: userToken)
        #expect(after == ledger, "replays after a second kill changed the ledger")

        print(
            "MerchantCrashTests[\(engine)]: \(firstGranted.count) answered before the kill, \(lostAnswers) cut off "
                + "(\(committedButUnanswered) of them committed before the kill), \(secondGranted.count) granted on retry"
        )
        #expect(try await third.terminate() == 0)
    }

    // MARK: Deliveries

    /// One delivery's result: the merchant's answer (status, the delivery's outcome, the body), or no answer.
    enum DeliveryResult: Sendable, CustomStringConvertible {
        case answered(status: Int, outcome: String?, text: String)
        case failed(String)

        var description: String {
            switch self {
            case .answered(let status, let outcome, let text): "\(status) \(outcome ?? "-") \(text)"
            case .failed(let error): "no answer: \(error)"
            }
        }
    }

    /// Delivers every signed transaction, `inFlight` at a time, in order of index; `onAnswer` hears the running
    /// count of answers as each arrives. Connection failures are results, not errors.
    static func deliverAll(
        _ signed: [String], client: HTTPClient, base: String, token: String,
        onAnswer: @escaping @Sendable (Int) -> Void = { _ in }
    ) async throws -> [DeliveryResult] {
        let counter = Counter()
        return try await withThrowingTaskGroup(of: (Int, DeliveryResult).self) { group in
            var results = [DeliveryResult?](repeating: nil, count: signed.count)
            var next = 0
            func add() {
                let index = next
                next += 1
                group.addTask {
                    let result = await deliver(signed[index], client: client, base: base, token: token)
                    if case .answered = result { onAnswer(counter.increment()) }
                    return (index, result)
                }
            }
            while next < min(inFlight, signed.count) { add() }
            while let (index, result) = try await group.next() {
                results[index] = result
                if next < signed.count { add() }
            }
            return results.map { $0! }
        }
    }

    static func deliver(_ jws: String, client: HTTPClient, base: String, token: String) async -> DeliveryResult {
        do {
            var request = HTTPClientRequest(url: base + "/merchant/v1/transactions")
            request.method = .POST
            request.headers.add(name: "Authorization", value: "Bearer \(token)")
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(
                ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: ["signedTransaction": jws])))
            // Generous: a loaded 2-core machine; the kill ends requests in flight at once anyway.
            let response = try await client.execute(request, timeout: .seconds(90))
            let text = String(buffer: try await response.body.collect(upTo: 1 << 20))
            let json = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
            let deliveries = json?["deliveries"] as? [[String: Any]]
            return .answered(
                status: Int(response.status.code), outcome: deliveries?.first?["outcome"] as? String, text: text)
        } catch {
            return .failed(String(describing: error))
        }
    }

    /// What the user's ledger shows: the coin balance and the history's transactions by kind.
    struct LedgerState: Equatable {
        var coins: Int64
        var granted: [String]
        var otherKinds: [String]
    }

    static func ledgerState(client: HTTPClient, base: String, token: String) async throws -> LedgerState {
        let entitlements = try await get(base + "/merchant/v1/entitlements", client: client, token: token)
        let balances = entitlements["balances"] as? [[String: Any]] ?? []
        let coins = balances.first { $0["name"] as? String == "coins" }.flatMap {
            ($0["amount"] as? NSNumber)?.int64Value
        }
        let explained = try await get(base + "/merchant/v1/explain", client: client, token: token)
        let history = explained["history"] as? [[String: Any]] ?? []
        return LedgerState(
            coins: coins ?? 0,
            granted: history.filter { $0["kind"] as? String == "granted" }.compactMap { $0["transactionId"] as? String }
                .sorted(),
            otherKinds: history.compactMap { $0["kind"] as? String }.filter { $0 != "granted" })
    }

    static func get(_ url: String, client: HTTPClient, token: String) async throws -> [String: Any] {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        let response = try await client.execute(request, timeout: .seconds(90))
        let text = String(buffer: try await response.body.collect(upTo: 16 << 20))
        try #require(response.status.code == 200, "GET \(url): \(response.status.code) \(text)")
        return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text)")
    }

    /// A client of its own that fails a request at once when nobody listens (the shared client's pool keeps
    /// retrying to connect until the request's deadline).
    static func makeClient() -> HTTPClient {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout.connect = .seconds(30)
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    // MARK: Processes

    /// The merchant processes started on one configuration and database; `killAll` ends those still running.
    final class Merchants: @unchecked Sendable {
        let config: String
        let database: String
        private let lock = NSLock()
        private var started: [ServeProcess] = []

        init(config: String, database: String) {
            self.config = config
            self.database = database
        }

        struct Running {
            var process: ServeProcess
            var base: String
            var port: Int

            func terminate() async throws -> Int32 { try await process.terminate() }
        }

        /// Starts `kiosk merchant serve` on `port` (0: any) and waits until it listens.
        func start(port: Int) async throws -> Running {
            // Generous: a debug build starting on a loaded machine.
            let process = try await ServeProcess.listening(
                command: ["merchant", "serve"],
                [
                    "--config", config, "--port", String(port), "--database", database,
                    "--database-pool-size", String(PostgresTestSlots.ledgerPoolSize), "--log-level", "warning",
                ])
            lock.withLock { started.append(process) }
            let base = try await process.baseURL()
            let listening = try #require(base.split(separator: ":").last.flatMap { Int($0) }, "\(base)")
            return Running(process: process, base: base, port: listening)
        }

        /// Waits (at most `seconds`) until a killed merchant is gone.
        func waitForExit(_ running: Running, seconds: Double = 60) async throws {
            let deadline = Date().addingTimeInterval(seconds)
            while running.process.isRunning && Date() < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            try #require(!running.process.isRunning, "the killed merchant did not exit")
            #expect(running.process.wasKilled)
        }

        func killAll() {
            for process in lock.withLock({ started }) where process.isRunning {
                process.kill()
            }
        }
    }

    /// Kills a merchant once, from whichever delivery task gets there first.
    final class KillSwitch: @unchecked Sendable {
        private let lock = NSLock()
        private var killed = false
        var wasKilled: Bool { lock.withLock { killed } }

        func kill(_ merchant: ServeProcess) {
            lock.withLock {
                guard !killed else { return }
                killed = true
                merchant.kill()
            }
        }
    }

    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var value = 0

        func increment() -> Int {
            lock.withLock {
                value += 1
                return value
            }
        }
    }

    // MARK: The shop

    /// The app with one consumable, the paid-apps agreement and a tester; no notification URL.
    static func createShop(on store: TestStore) async throws {
        let steps: [(String, [String: Any])] = [
            ("/admin/v1/apps", ["bundleId": app, "name": "Crash Shop"]),
            (
                "/admin/v1/apps/\(app)/products",
                [
                    "productId": coins, "type": "consumable", "referenceName": "Coins", "pricing": ["tier": 1],
                    "localizations": [["locale": "en_US", "displayName": "Coins", "description": "A pile of coins"]],
                ]
            ),
            ("/admin/v1/agreements/paid-apps/accept", SampleAgreement.json),
            ("/admin/v1/testers", ["email": tester, "password": "sandbox-pass", "storefront": "USA"]),
        ]
        for (path, body) in steps {
            let answer = try await store.request(.POST, path, json: body)
            try #require((200..<300).contains(answer.status), "\(path): \(answer.text)")
        }
    }
}
