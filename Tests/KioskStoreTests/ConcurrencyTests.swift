import Foundation
import KioskCore
import KioskSQL
import KioskSigning
import KioskTestSupport
import KioskTesting
import Logging
import Synchronization
import Testing

/// Requests racing each other, with the race made to happen: on PostgreSQL the test holds a table lock so the
/// store's statements stop exactly where the race is, and lets them go once the other side has run.
@Suite struct ConcurrencyTests {
    /// A queue snapshot reads its cursor before its entries: a restore committed while `GET /queue` is being read
    /// is not in the snapshot, so it must be after the snapshot's cursor, where the updates stream delivers it.
    @Test(arguments: TestDatabase.available)
    func queueSnapshotLosesNothingCommittedWhileItIsRead(database: TestDatabase) async throws {
        try await database.withFreshDatabase { url in
            try await withTestStore(databaseURL: url) { store in
                try await store.preparePurchaseCatalog()
                let token = try await store.signIn()
                _ = try await store.pay(TestStore.removeAds, token: token)
                let otherDevice = try await store.signIn()
                // The snapshot lists the purchase, then waits to read its payment while the restore commits.
                let (snapshots, restoredAnswer) = try await whileHeld(url, table: "payments", mode: "ACCESS EXCLUSIVE")
                {
                    [{ try await store.client(.GET, "/queue", token: token) }]
                } meanwhile: {
                    try await store.client(.POST, "/restore", token: otherDevice, json: [:])
                }
                let snapshot = try #require(snapshots.first)
                #expect(snapshot.status == 200, "\(snapshot.text)")
                let restored = try #require(
                    (restoredAnswer.json["entries"] as? [[String: Any]])?.first?["sequence"] as? Int,
                    "\(restoredAnswer.text)")
                let listed = try #require(snapshot.json["entries"] as? [[String: Any]]).compactMap {
                    $0["sequence"] as? Int
                }
                let cursor = try #require(snapshot.json["cursor"] as? Int, "\(snapshot.text)")
                #expect(listed.count == 1 && !listed.contains(restored), "\(snapshot.text)")
                try #require(cursor < restored, "the restore is neither in the snapshot nor after its cursor")
                let updates = try await store.readUpdates(token: token, after: Int64(cursor), count: 1)
                #expect(updates.first?["sequence"] as? Int == restored)
            }
        }
    }

    /// A one-time offer code taken by several purchases at once is redeemed by exactly one: the others fail with
    /// `offer_code_redeemed` and charge nothing.
    @Test(arguments: TestDatabase.available)
    func concurrentPurchasesRedeemAnOfferCodeOnce(database: TestDatabase) async throws {
        try await database.withFreshDatabase { url in
            try await withTestStore(databaseURL: url, clock: ManualClock(SubscriptionPurchaseTests.start)) { store in
                try await SubscriptionPurchaseTests.prepareCatalog(store)
                let created = try await OfferCodeTests.create(["count": 1], store: store)
                let code = try #require(OfferCodeTests.codes(created).first?["code"] as? String, "\(created.text)")
                // One buyer per connection of the store's pool, each its own tester so only the code is shared.
                let buyers = PostgresTestSlots.storePoolSize
                var signedIn: [String] = []
                for index in 0..<buyers {
                    try await store.createTester("buyer\(index)@example.com")
                    signedIn.append(try await store.signIn("buyer\(index)@example.com"))
                }
                let tokens = signedIn
                // Every purchase has read the unredeemed code and waits to mark it redeemed.
                let (answers, _) = try await whileHeld(url, table: "offer_codes", mode: "EXCLUSIVE", waiting: buyers) {
                    tokens.map { token in
                        {
                            try await OfferCodeTests.pay(
                                SubscriptionPurchaseTests.premium, code: code, token: token, store: store)
                        }
                    }
                }
                let states = answers.map { $0.json["state"] as? String }
                #expect(states.filter { $0 == "purchased" }.count == 1, "\(answers.map(\.text))")
                let refused = answers.filter { $0.json["state"] as? String == "failed" }
                #expect(refused.count == buyers - 1, "\(answers.map(\.text))")
                for answer in refused {
                    #expect(answer.errorCode == "offer_code_redeemed", "\(answer.text)")
                    #expect(answer.transactionId == nil)
                }
                let listed = try await store.request(.GET, OfferCodeTests.path)
                #expect(OfferCodeTests.codes(listed).map { $0["state"] as? String } == ["redeemed"], "\(listed.text)")
            }
        }
    }

    /// A custom offer code raced by more customers than it has redemptions is redeemed exactly that many times:
    /// every purchase has read the code with redemptions left and waits to count its own; under the batch's row
    /// lock the later ones find none left, fail with `offer_code_redeemed` and charge nothing.
    @Test(arguments: TestDatabase.available)
    func concurrentPurchasesRedeemACustomCodeAsOftenAsItHasCodes(database: TestDatabase) async throws {
        let clock = ManualClock(SubscriptionPurchaseTests.start)
        try await database.withFreshDatabase { url in
            try await withTestStore(databaseURL: url, clock: clock) { store in
                try await store.prepareSubscriptionCatalog()
                let client = try await ConnectCatalogTests.Client.make(store, role: "APP_MANAGER", clock: clock)
                let subscription = try await ConnectOfferAndAvailabilityTests.monthlyId(client)
                let campaign = try await client.send(
                    .POST, "/v1/subscriptionOfferCodes",
                    json: ConnectOfferAndAvailabilityTests.offerCode(
                        "Launch", ["NEW"], mode: "FREE_TRIAL", price: nil, subscription: subscription))
                let campaignId = try #require(ConnectCatalogTests.data(campaign)["id"] as? String, "\(campaign.text)")
                let type = "subscriptionOfferCodeCustomCodes"
                let made = try await client.send(
                    .POST, "/v1/\(type)",
                    json: ConnectOfferAndAvailabilityTests.codes(
                        type, of: campaignId, ["customCode": "LAUNCH", "numberOfCodes": 2]))
                #expect(made.status == 201, "\(made.text)")
                let buyers = PostgresTestSlots.storePoolSize
                var signedIn: [String] = []
                for index in 0..<buyers {
                    try await store.createTester("buyer\(index)@example.com")
                    signedIn.append(try await store.signIn("buyer\(index)@example.com"))
                }
                let tokens = signedIn
                let (answers, _) = try await whileHeld(
                    url, table: "offer_code_batches", mode: "EXCLUSIVE", waiting: buyers
                ) {
                    tokens.map { token in
                        { try await OfferCodeTests.pay(TestStore.monthly, code: "LAUNCH", token: token, store: store) }
                    }
                }
                let states = answers.map { $0.json["state"] as? String }
                #expect(states.filter { $0 == "purchased" }.count == 2, "\(answers.map(\.text))")
                let refused = answers.filter { $0.json["state"] as? String == "failed" }
                #expect(refused.count == buyers - 2, "\(answers.map(\.text))")
                for answer in refused {
                    #expect(answer.errorCode == "offer_code_redeemed" && answer.transactionId == nil, "\(answer.text)")
                }
            }
        }
    }

    /// A retention offer accepted by several cancellations at once is redeemed by exactly one: each read the offer
    /// as eligible and waits for the subscription's row; under its lock the others find an offer pending and are
    /// refused, charging and notifying nothing.
    @Test(arguments: TestDatabase.available)
    func concurrentAcceptsRedeemARetentionOfferOnce(database: TestDatabase) async throws {
        let clock = ManualClock(SubscriptionPurchaseTests.start)
        try await withRetentionEndpoint { endpoint in
            try await withNotificationReceiver { receiver in
                try await database.withFreshDatabase { url in
                    try await withTestStore(
                        databaseURL: url, clock: clock,
                        configure: endpoint.configure(budget: RetentionCancelFlowTests.answeringBudget)
                    ) { store in
                        try await Self.raceRetentionOffer(
                            store, url: url, clock: clock, endpoint: endpoint, receiver: receiver)
                    }
                }
            }
        }
    }

    private static func raceRetentionOffer(
        _ store: TestStore, url: String?, clock: ManualClock, endpoint: RetentionEndpoint,
        receiver: NotificationReceiver
    ) async throws {
        let (key, original) = try await RetentionCancelFlowTests.prepare(
            store, endpoint: endpoint, receiver: receiver, clock: clock)
        try await RetentionCancelFlowTests.offerRetention(store, key: key, clock: clock)
        // Nobody to ask: the fallback, the retention offer, is what each cancellation shows.
        let deleted = try await store.inApps(.DELETE, "/inApps/v1/messaging/realtime/url", key: key, clock: clock)
        #expect(deleted.status == 200, "\(deleted.text)")
        let accepts = PostgresTestSlots.storePoolSize
        let (answers, _) = try await whileHeld(url, table: "subscriptions", mode: "EXCLUSIVE", waiting: accepts) {
            (0..<accepts).map { _ in
                {
                    try await store.request(
                        .POST, "/sandbox/test/v1/apps/\(TestStore.bundleId)/subscriptions/\(original)",
                        json: ["action": "auto-renew-off", "retentionChoice": "accept"], token: .some(store.adminToken))
                }
            }
        }
        let outcomes = answers.map { ($0.json["retention"] as? [String: Any])?["outcome"] as? String }
        #expect(answers.allSatisfy { $0.status == 200 }, "\(answers.map(\.text))")
        #expect(outcomes.filter { $0 == "offer-redeemed" }.count == 1, "\(answers.map(\.text))")
        #expect(answers.allSatisfy { $0.json["autoRenewStatus"] as? Bool == true }, "\(answers.map(\.text))")
        let sent = try await receiver.payloads(from: store).map {
            try AppleVerifier.claims(of: $0)["notificationType"] as? String
        }
        #expect(sent == ["OFFER_REDEEMED"])
    }

    /// An account's first two sign-ins to an app, at once (two devices, or two replicas), both succeed: each
    /// records the account's app transaction, whose id is derived from the account, so the two collide on the
    /// primary key as well as on the account; the one that loses that race must not fail. Seen with replicas,
    /// where the loser answered 409 `already_exists`.
    @Test(arguments: TestDatabase.available)
    func firstSignInsOfOneAccountAtOnceBothSucceed(database: TestDatabase) async throws {
        try await database.withFreshDatabase { url in
            try await withTestStore(databaseURL: url) { store in
                try await store.preparePurchaseCatalog()
                // Both sign-ins wait to insert the app transaction, then go at once.
                let (answers, _) = try await whileHeld(url, table: "app_transactions", mode: "SHARE", waiting: 2) {
                    (0..<2).map { _ in
                        {
                            try await store.request(
                                .POST, TestStore.clientPath("/sessions", sandbox: true),
                                json: [
                                    "email": TestStore.testerEmail, "password": TestStore.password,
                                    "bundleId": TestStore.bundleId, "deviceId": UUID().uuidString,
                                ])
                        }
                    }
                }
                for answer in answers { #expect(answer.status == 201, "\(answer.text)") }
                let token = try await store.signIn()
                let receipt = try await store.client(.GET, "/receipt", token: token)
                #expect(receipt.status == 200, "the app transaction behind the receipt: \(receipt.text)")
            }
        }
    }

    /// Sign-ins run scrypt off Swift concurrency's few threads: while more sign-ins than the machine has cores are
    /// hashing (each a costly, but accepted, scrypt), `/health` answers again and again before any of them answers.
    @Test(arguments: TestDatabase.available)
    func signInsDoNotStallOtherRequests(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.preparePurchaseCatalog()
            // Seconds of scrypt per sign-in (N = 2^15, p = 16), so the sign-ins are provably still in flight.
            let costly = try await PasswordHasher(rounds: 1 << 15, blockSize: 8, parallelism: 16)
                .hashOffCooperativePool(TestStore.password)
            try await store.built.database.transaction { tx in
                var tester = try #require(try await tx.account(email: TestStore.testerEmail, environment: .sandbox))
                tester.passwordHash = costly
                try await tx.updateAccount(tester)
            }
            let signedIn = Counter()
            let signIns = ProcessInfo.processInfo.activeProcessorCount * 2
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<signIns {
                    group.addTask {
                        _ = try await store.signIn()
                        signedIn.increment()
                    }
                }
                var answeredMeanwhile = 0
                while answeredMeanwhile < 10, signedIn.value == 0 {
                    let health = try await store.request(.GET, "/health")
                    #expect(health.status == 200, "\(health.text)")
                    if signedIn.value == 0 { answeredMeanwhile += 1 }
                }
                #expect(answeredMeanwhile == 10, "/health waited for the sign-ins' scrypt")
                try await group.waitForAll()
            }
            #expect(signedIn.value == signIns)
        }
    }
}

/// A count shared by concurrent tasks.
private final class Counter: Sendable {
    private let count = Mutex(0)
    var value: Int { count.withLock { $0 } }
    func increment() { count.withLock { $0 += 1 } }
}

/// Runs `requests` at once with the store's statements on `table` held at a lock, and answers their answers in
/// order. On PostgreSQL a connection of the test's own holds `LOCK TABLE table IN mode MODE` until `waiting` of
/// the store's statements wait for it (seen in `pg_locks`), runs `meanwhile`, then lets them go. On SQLite, whose
/// transactions take turns on one connection, nothing can interleave: the requests run, then `meanwhile`.
private func whileHeld<Meanwhile: Sendable>(
    _ url: String?, table: String, mode: String, waiting: Int = 1,
    _ requests: @Sendable () -> [@Sendable () async throws -> TestStore.Answer],
    meanwhile: @Sendable () async throws -> Meanwhile = {}
) async throws -> ([TestStore.Answer], Meanwhile) {
    guard let url else {
        let answers = try await withThrowingTaskGroup(of: (Int, TestStore.Answer).self) { group in
            for (index, request) in requests().enumerated() { group.addTask { (index, try await request()) } }
            return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
        return (answers.sorted { $0.key < $1.key }.map(\.value), try await meanwhile())
    }
    var logger = Logger(label: "kiosk-test-lock")
    logger.logLevel = .warning
    let holder = try await DatabaseOpener.open(url: url, migrations: [], poolSize: 1, logger: logger)
    do {
        let (tasks, result) = try await holder.withSession { session in
            try await session.run("LOCK TABLE \(ident: table) IN \(unsafeRaw: mode) MODE")
            let tasks = requests().map { request in Task { try await request() } }
            // A request that never waits on the lock is a broken test, not a slow one: give up after a minute.
            let deadline = ContinuousClock.now + .seconds(60)
            while true {
                guard ContinuousClock.now < deadline else {
                    for task in tasks { task.cancel() }
                    throw TestLockError.fewerWaiters(table: table, expected: waiting)
                }
                let row = try await session.first(
                    "SELECT count(*) AS waiting FROM pg_locks WHERE relation = \(bind: table)::regclass AND NOT granted"
                )
                if try row?.decode(column: "waiting", as: Int.self) ?? 0 >= waiting { break }
                try await Task.sleep(for: .milliseconds(10))
            }
            return (tasks, try await meanwhile())
        }
        var answers: [TestStore.Answer] = []
        for task in tasks { answers.append(try await task.value) }
        try await holder.close()
        return (answers, result)
    } catch {
        try? await holder.close()
        throw error
    }
}

private enum TestLockError: Error, CustomStringConvertible {
    case fewerWaiters(table: String, expected: Int)

    var description: String {
        switch self {
        case .fewerWaiters(let table, let expected):
            "fewer than \(expected) requests ever waited on the lock of \(table): they do not reach it together"
        }
    }
}
