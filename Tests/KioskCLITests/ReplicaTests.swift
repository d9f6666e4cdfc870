import AsyncHTTPClient
import Foundation
import KioskCore
import KioskSQL
import KioskSigning
import KioskTestSupport
import KioskTesting
import Logging
import NIOCore
import NIOHTTP1
import SQLKit
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// One store, many replicas (issue 15): `kiosk serve` processes on one PostgreSQL schema, each with its own data
/// directory, are one store. The first creates the signing identity; the others, given its identity key, adopt it;
/// behind a real nginx with the documented configuration (docs/operations.md), every purchase, receipt and Server API answer is the same
/// store's, renewals and notifications happen once however many replicas look, and a replica killed mid-renewal
/// changes nothing.
@Suite(.runsServers) struct ReplicaTests {
    static let token = "kiosk_replica_admin_token_0123456789"
    static let app = "com.example.replicas"
    /// Monthly subscriptions: each tester buys one in every group.
    static let groups = 15
    static let testers = 20
    static var subscriptions: Int { groups * testers }
    static let sealedMessage =
        "This database's signing identity is sealed; copy identity.key from the first replica's data dir or set "
        + "KIOSK_IDENTITY_KEY."

    @Test(
        .enabled(
            if: TestEnvironment.runs(.postgreSQL) && TestEnvironment.runs(.nginx),
            "needs PostgreSQL (KIOSK_TEST_POSTGRES_URL) and nginx (apt-get install nginx-light); .ci/run installs both")
    )
    func threeReplicasBehindNginxAreOneStore() async throws {
        _ = try TestEnvironment.require(.nginx)
        let started = ContinuousClock.now
        let root = Self.temporaryDirectory("kiosk-replicas")
        defer { try? FileManager.default.removeItem(at: root) }
        let fleet = Fleet()
        defer { fleet.killAll() }
        let slotTaken = try await TestDatabaseEngine.postgres.withFreshDatabase { databaseURL in
            let slotTaken = ContinuousClock.now
            let databaseURL = try #require(databaseURL)
            try await withNotificationSink { sink in
                try await Self.runReplicas(databaseURL: databaseURL, root: root, sink: sink, fleet: fleet)
            }
            return slotTaken
        }
        print(
            "ReplicaTests: \(ContinuousClock.now - started), of which \(slotTaken - started) waiting for a "
                + "PostgreSQL slot")
    }

    /// The whole scenario on a fresh schema.
    static func runReplicas(databaseURL: String, root: URL, sink: NotificationSink, fleet: Fleet) async throws {
        let proxyPort = try freeLoopbackPort()
        let publicURL = "http://127.0.0.1:\(proxyPort)"
        let directories = (1...3).map { root.appendingPathComponent("replica-\($0)") }
        let keyFile = directories[0].appendingPathComponent("identity.key")

        // The first replica creates the identity and its key; the others adopt it, one given the key's text, one
        // its file. The third kills itself once it committed its first batch of renewals.
        let first = try await Replica.start(
            directories[0], databaseURL: databaseURL, publicURL: publicURL, fleet: fleet)
        #expect(first.printed("Signing identity: created in the database"), "\(first.process.lines)")
        #expect(first.printed("Identity key:     \(keyFile.path) (generated now"), "\(first.process.lines)")
        let keyMode = try FileManager.default.attributesOfItem(atPath: keyFile.path)[.posixPermissions] as? Int
        #expect(keyMode == 0o600, "identity.key must be readable by its owner only")
        let keyText = try String(contentsOf: keyFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let second = try await Replica.start(
            directories[1], databaseURL: databaseURL, publicURL: publicURL,
            environment: ["KIOSK_IDENTITY_KEY": keyText], fleet: fleet)
        let third = try await Replica.start(
            directories[2], databaseURL: databaseURL, publicURL: publicURL,
            arguments: ["--identity-key-file", keyFile.path],
            environment: [CrashPoint.environmentVariable: CrashPoint.renewalBatchCommitted.rawValue], fleet: fleet)
        for replica in [second, third] {
            #expect(replica.printed("Signing identity: adopted from the database"), "\(replica.process.lines)")
            #expect(!replica.printed("generated now"), "\(replica.process.lines)")
        }
        let replicas = [first, second, third]
        let roots = try await Self.roots(of: replicas)
        for environment in StoreEnvironment.allCases {
            for directory in directories {
                let local = try await SigningKeyStore(baseDirectory: directory.appendingPathComponent("signing").path)
                    .load(environment: environment, now: Date())
                #expect(local.rootDER == roots[environment], "\(directory.lastPathComponent) keeps a copy")
            }
        }

        let nginxDirectory = root.appendingPathComponent("nginx")
        try await Nginx.with(listen: proxyPort, upstreams: replicas.map(\.port), directory: nginxDirectory) { proxy in
            try await Self.prepareCatalog(proxy, notificationURL: sink.url)
            // Frozen, so every replica signs one instant and the month advances are exact.
            #expect(
                try await Self.send(.POST, proxy + "/sandbox/test/v1/clock", json: ["action": "freeze"]).status == 200)
            for replica in replicas { try await Self.waitForFrozenClock(replica) }

            let bought = try await Self.buyEverySubscription(through: proxy)
            #expect(bought.count == subscriptions)
            #expect(
                try Nginx.upstreamPorts(directory: nginxDirectory) == Set(replicas.map(\.port)),
                "nginx passes requests to every replica in turn")
            let sandboxRoot = try #require(roots[.sandbox])
            for signed in bought.values {
                #expect(try Self.x5cRoot(of: signed) == sandboxRoot, "every replica signs with the one chain")
            }
            let database = try await Self.openDatabase(databaseURL)
            do {
                try await Self.waitForDeliveries(database, renewals: 0, sink: sink)
                try await Self.checkReceiptsAndServerAPI(
                    replicas: replicas, proxy: proxy, bought: bought, root: sandboxRoot)
                try await Self.checkChangesReachEveryReplica(replicas)

                // A sandbox month, sent to the third replica while the others are stopped (SIGSTOP): it takes the
                // first batch of renewals and dies (SIGKILL) right after it commits, before any of that batch's
                // notifications leave, so the kill lands mid-month with no delivery in flight. The others, let go,
                // finish the month side by side.
                for replica in [first, second] { replica.process.send(SIGSTOP) }
                let killedAdvance = try? await Self.send(
                    .POST, third.url + "/sandbox/test/v1/clock", json: ["action": "advance", "by": "6m"])
                let status = try await third.process.waitForExit(seconds: 300)
                for replica in [first, second] { replica.process.send(SIGCONT) }
                #expect(
                    third.process.wasKilled && status == SIGKILL,
                    "the third replica killed itself after its first renewal batch: \(String(describing: killedAdvance))"
                )
                let committedAtKill = try await Self.renewalsPerSubscription(database).values.reduce(0, +)
                #expect(
                    committedAtKill > 0 && committedAtKill < subscriptions,
                    "the killed replica's batch, and only it, committed before it died: \(committedAtKill)")
                try await Self.waitForDeliveries(database, renewals: subscriptions, sink: sink)
                let firstMonth = try await Self.renewalsPerSubscription(database)
                #expect(
                    firstMonth.count == subscriptions && firstMonth.values.allSatisfy { $0 == 1 },
                    "one renewal each in the month a replica died: \(firstMonth.filter { $0.value != 1 })")
                print("ReplicaTests: \(committedAtKill) of \(subscriptions) renewals committed when the replica died")

                // Back on its port with the key's text, the third adopts the identity again; a second month goes
                // through nginx to whichever replica, all three renewing.
                let restarted = try await Replica.start(
                    directories[2], databaseURL: databaseURL, publicURL: publicURL, port: third.port,
                    environment: ["KIOSK_IDENTITY_KEY": keyText], fleet: fleet)
                #expect(restarted.printed("Signing identity: adopted from the database"), "\(restarted.process.lines)")
                let advanced = try await Self.send(
                    .POST, proxy + "/sandbox/test/v1/clock", json: ["action": "advance", "by": "5m"])
                #expect(advanced.status == 200, "\(advanced.text)")
                try await Self.waitForDeliveries(database, renewals: 2 * subscriptions, sink: sink)

                let perSubscription = try await Self.renewalsPerSubscription(database)
                #expect(perSubscription.count == subscriptions, "every subscription renewed")
                #expect(
                    perSubscription.values.allSatisfy { $0 == 2 },
                    "renewed more or less than twice: \(perSubscription.filter { $0.value != 2 })")
                #expect(Set(perSubscription.keys) == Set(bought.keys))
                let delivered = try await Self.notificationUUIDs(database)
                let received = sink.uuids
                #expect(received.count == Set(received).count, "a notification arrived twice")
                #expect(Set(received) == Set(delivered), "the notifications the database holds are the ones received")
                #expect(delivered.count >= 3 * subscriptions, "a purchase and two renewals each notify")
                #expect(try await Self.roots(of: [first, second, restarted]) == roots)
                for replica in [first, second, restarted] { #expect(try await replica.process.terminate() == 0) }
                try await database.close()
            } catch {
                try? await database.close()
                throw error
            }
        }
    }

    /// The first replica's data directory holds the identity key; without it, with another, or with a data
    /// directory holding another chain, a replica refuses to start and says what to do. Replicas started at once
    /// with one key agree on one identity. The first one is a store that existed before replicas (its chain in its
    /// data directory): its chain becomes the database's.
    @Test(.enabled(if: TestEnvironment.runs(.postgreSQL), "needs PostgreSQL (KIOSK_TEST_POSTGRES_URL)"))
    func replicasWithoutTheIdentityRefuseToStart() async throws {
        let root = Self.temporaryDirectory("kiosk-identity")
        defer { try? FileManager.default.removeItem(at: root) }
        let fleet = Fleet()
        defer { fleet.killAll() }
        try await TestDatabaseEngine.postgres.withFreshDatabase { databaseURL in
            let databaseURL = try #require(databaseURL)
            let publicURL = "http://127.0.0.1:9"
            // A store from before: its sandbox chain already in its data directory.
            let firstDirectory = root.appendingPathComponent("first")
            let existing = try await SigningKeyStore(
                baseDirectory: firstDirectory.appendingPathComponent("signing").path
            ).loadOrCreate(environment: .sandbox, now: Date()).identity
            let first = try await Replica.start(
                firstDirectory, databaseURL: databaseURL, publicURL: publicURL, fleet: fleet)
            #expect(first.printed("Signing identity: created in the database"), "\(first.process.lines)")
            #expect(first.printed("generated now for production"), "\(first.process.lines)")
            #expect(!first.printed("generated now for production, sandbox"), "the existing sandbox chain is kept")
            #expect(try await Self.roots(of: [first])[.sandbox] == existing.rootDER)
            let keyFile = firstDirectory.appendingPathComponent("identity.key")

            func serve(_ directory: URL, _ extra: [String] = [], environment: [String: String] = [:]) async throws
                -> KioskProcess.Result
            {
                try await KioskProcess.run(
                    Replica.arguments(directory, databaseURL: databaseURL, publicURL: publicURL, port: 0) + extra,
                    environment: environment)
            }

            let keyless = root.appendingPathComponent("keyless")
            let sealed = try await serve(keyless)
            #expect(sealed.status == 1)
            #expect(sealed.stderr.contains("error: \(Self.sealedMessage)"), "\(sealed.stderr)")
            #expect(sealed.stderr.contains("KIOSK_IDENTITY_KEY to its text"), "\(sealed.stderr)")
            #expect(
                !FileManager.default.fileExists(atPath: keyless.appendingPathComponent("signing").path),
                "a refused replica generated a chain of its own")
            #expect(!FileManager.default.fileExists(atPath: keyless.appendingPathComponent("identity.key").path))

            let wrong = try await serve(
                root.appendingPathComponent("wrong"),
                environment: ["KIOSK_IDENTITY_KEY": IdentityKey.generate(source: "test").base64])
            #expect(wrong.status == 1)
            #expect(
                wrong.stderr.contains(
                    "The identity key from KIOSK_IDENTITY_KEY does not open this database's production signing keys"),
                "\(wrong.stderr)")

            let garbled = root.appendingPathComponent("garbled")
            let invalid = try await serve(garbled, environment: ["KIOSK_IDENTITY_KEY": "not-a-key\u{1B}"])
            #expect(invalid.status == 1)
            #expect(invalid.stderr.contains("is not base64 of 32 bytes"), "\(invalid.stderr)")
            #expect(!FileManager.default.fileExists(atPath: garbled.path), "a refused key left a data directory")

            // Another store's chain in the data directory: refused, naming both roots' fingerprints.
            let otherDirectory = root.appendingPathComponent("other")
            let other = try await SigningKeyStore(baseDirectory: otherDirectory.appendingPathComponent("signing").path)
                .loadOrCreate(environment: .production, now: Date()).identity
            let databaseRoot = try await SigningKeyStore(
                baseDirectory: firstDirectory.appendingPathComponent("signing").path
            ).load(environment: .production, now: Date())
            let differs = try await serve(otherDirectory, ["--identity-key-file", keyFile.path])
            #expect(differs.status == 1)
            #expect(differs.stderr.contains("root SHA-256 \(other.rootSHA256)"), "\(differs.stderr)")
            #expect(differs.stderr.contains("root SHA-256 \(databaseRoot.rootSHA256)"), "\(differs.stderr)")
            #expect(try await Self.roots(of: [first]) != [:], "the first replica kept serving meanwhile")
            #expect(try await first.process.terminate() == 0)
        }

        // Two replicas started at once on a new database with one key: one stores its chains, the other adopts them.
        try await TestDatabaseEngine.postgres.withFreshDatabase { databaseURL in
            let databaseURL = try #require(databaseURL)
            let key = IdentityKey.generate(source: "test").base64
            async let left = Replica.start(
                root.appendingPathComponent("left"), databaseURL: databaseURL, publicURL: "http://127.0.0.1:9",
                environment: ["KIOSK_IDENTITY_KEY": key], fleet: fleet)
            async let right = Replica.start(
                root.appendingPathComponent("right"), databaseURL: databaseURL, publicURL: "http://127.0.0.1:9",
                environment: ["KIOSK_IDENTITY_KEY": key], fleet: fleet)
            let both = try await [left, right]
            #expect(both.filter { $0.printed("Signing identity: created in the database") }.count == 1)
            #expect(both.filter { $0.printed("Signing identity: adopted from the database") }.count == 1)
            _ = try await Self.roots(of: both)
            for replica in both { #expect(try await replica.process.terminate() == 0) }
        }
    }
}

// MARK: - Replicas

/// The test's `kiosk serve` processes, all killed (SIGKILL) when it ends, however it ends.
final class Fleet: Sendable {
    private let processes = Mutex<[ServeProcess]>([])

    func add(_ process: ServeProcess) { processes.withLock { $0.append(process) } }

    func killAll() {
        for serve in processes.withLock({ $0 }) { serve.killAndWait() }
    }
}

/// One `kiosk serve` of a test, on the shared database with a data directory of its own.
struct Replica: Sendable {
    let process: ServeProcess
    /// `http://127.0.0.1:<port>`.
    let url: String
    let port: Int

    /// What every replica of the tests is started with: a small pool, a scheduler that looks often (so replicas
    /// compete for due renewals), the proxy's URL as public URL.
    static func arguments(_ directory: URL, databaseURL: String, publicURL: String, port: Int) -> [String] {
        [
            "serve", "--port", String(port), "--data-dir", directory.path, "--database", databaseURL,
            "--database-pool-size", "2", "--admin-token", ReplicaTests.token, "--public-url", publicURL,
            "--log-level", "warning", "--scheduler-interval", "0.2",
        ]
    }

    static func start(
        _ directory: URL, databaseURL: String, publicURL: String, port: Int = 0, arguments extra: [String] = [],
        environment: [String: String] = [:], fleet: Fleet
    ) async throws -> Replica {
        let process = try ServeProcess(
            command: [],
            arguments(directory, databaseURL: databaseURL, publicURL: publicURL, port: port) + extra,
            environment: environment)
        fleet.add(process)
        let url = try await process.baseURL()
        let port = try #require(url.split(separator: ":").last.flatMap { Int($0) }, "\(url)")
        return Replica(process: process, url: url, port: port)
    }

    /// Whether the replica printed a line containing `text` (its startup report, say).
    func printed(_ text: String) -> Bool {
        process.lines.contains { $0.contains(text) }
    }
}

// MARK: - Steps

extension ReplicaTests {
    static func temporaryDirectory(_ prefix: String) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
    }

    /// An app notifying `notificationURL` in the sandbox, with a shared secret, `groups` monthly subscriptions in
    /// as many groups, the Paid Apps agreement and `testers` testers; all through `server`.
    static func prepareCatalog(_ server: String, notificationURL: String) async throws {
        #expect(
            try await send(.POST, server + "/admin/v1/apps", json: ["bundleId": app, "name": "Replicas"]).status == 201)
        let patched = try await send(
            .PATCH, server + "/admin/v1/apps/\(app)", json: ["sandboxNotificationURLs": [notificationURL]])
        #expect(patched.status == 200, "\(patched.text)")
        #expect(try await send(.POST, server + "/admin/v1/apps/\(app)/shared-secret").status == 200)
        for group in 0..<groups {
            let created = try await send(
                .POST, server + "/admin/v1/apps/\(app)/subscription-groups",
                json: ["referenceName": "G\(group)", "localizations": [["locale": "en-US", "name": "G\(group)"]]])
            #expect(created.status == 201, "\(created.text)")
            let product = try await send(
                .POST, server + "/admin/v1/apps/\(app)/products",
                json: [
                    "productId": "\(app).g\(group)", "type": "auto_renewable", "referenceName": "G\(group)",
                    "pricing": ["tier": 1], "subscription": ["group": "G\(group)", "level": 1], "duration": "P1M",
                    "localizations": [["locale": "en_US", "displayName": "G\(group)", "description": "Monthly"]],
                ])
            #expect(product.status == 201, "\(product.text)")
        }
        #expect(
            try await send(.POST, server + "/admin/v1/agreements/paid-apps/accept", json: SampleAgreement.json).status
                == 200)
        for tester in 0..<testers {
            let created = try await send(
                .POST, server + "/admin/v1/testers",
                json: ["email": "t\(tester)@example.com", "password": "sandbox-pass", "storefront": "USA"])
            #expect(created.status == 201, "\(created.text)")
        }
    }

    /// Waits until the replica's sandbox clock shows the frozen state every replica reloads each tick.
    static func waitForFrozenClock(_ replica: Replica) async throws {
        try await waitUntil("\(replica.url)'s sandbox clock is frozen") {
            try await send(.GET, replica.url + "/sandbox/test/v1/clock").json["frozen"] as? Bool == true
        }
    }

    /// Every tester buys every group's subscription through `server`, a few at a time; answers each
    /// subscription's original transaction id and signed transaction.
    static func buyEverySubscription(through server: String) async throws -> [String: String] {
        let purchases = (0..<testers).flatMap { tester in (0..<groups).map { (tester, $0) } }
        var bought: [String: String] = [:]
        for batch in stride(from: 0, to: purchases.count, by: 6) {
            let answers = try await withThrowingTaskGroup(of: (String, String).self) { group in
                for (tester, product) in purchases[batch..<min(batch + 6, purchases.count)] {
                    group.addTask {
                        let answer = try await send(
                            .POST, server + "/sandbox/test/v1/apps/\(app)/purchases",
                            json: ["tester": "t\(tester)@example.com", "productId": "\(app).g\(product)"])
                        let transaction = try #require(answer.json["transaction"] as? [String: Any], "\(answer.text)")
                        return (
                            try #require(transaction["originalTransactionId"] as? String),
                            try #require(transaction["signedTransaction"] as? String)
                        )
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            for (original, signed) in answers { bought[original] = signed }
        }
        return bought
    }

    /// A change made through one replica is seen by the very next request at every other, though each keeps
    /// copies of the catalog and settings: the copies are checked against the database's version, not a timer.
    static func checkChangesReachEveryReplica(_ replicas: [Replica]) async throws {
        let path = "/admin/v1/apps/\(app)/products/\(app).g0/availability?environment=sandbox"
        func availability(_ replica: Replica) async throws -> (available: Bool, reasons: [String]) {
            let answer = try await send(.GET, replica.url + path)
            let reasons = try #require(answer.json["reasons"] as? [[String: Any]], "\(answer.text)")
            return (answer.json["available"] as? Bool == true, reasons.compactMap { $0["code"] as? String })
        }
        for replica in replicas { #expect(try await availability(replica).available, "\(replica.url)") }
        let pending = try await send(
            .PUT, replicas[0].url + "/admin/v1/agreements/paid-apps", json: ["status": "pending"])
        #expect(pending.status == 200, "\(pending.text)")
        for replica in replicas {
            let seen = try await availability(replica)
            #expect(!seen.available && !seen.reasons.isEmpty, "\(replica.url) still sells: \(seen)")
        }
        #expect(try await send(.POST, replicas[2].url + "/admin/v1/agreements/paid-apps/accept").status == 200)
        for replica in replicas { #expect(try await availability(replica).available, "\(replica.url)") }
    }

    /// Receipts made at each replica verify at every replica and through the proxy; a Server API key made through
    /// the proxy reads a transaction at every replica, signed with the one chain.
    static func checkReceiptsAndServerAPI(replicas: [Replica], proxy: String, bought: [String: String], root: [UInt8])
        async throws
    {
        let secret = try #require(
            try await send(.GET, proxy + "/admin/v1/apps/\(app)").json["sharedSecret"] as? String)
        for (index, maker) in replicas.enumerated() {
            let made = try await send(
                .GET, maker.url + "/sandbox/test/v1/apps/\(app)/receipt?tester=t\(index)%40example.com")
            let receipt = try #require(made.json["receipt"] as? String, "\(made.text)")
            for verifier in replicas.map(\.url) + [proxy] {
                let verified = try await send(
                    .POST, verifier + "/sandbox/verifyReceipt", json: ["receipt-data": receipt, "password": secret],
                    bearer: nil)
                #expect(
                    verified.json["status"] as? Int == 0,
                    "a receipt made at \(maker.url) verifies at \(verifier): \(verified.text.prefix(300))")
            }
        }
        let key = try await send(.POST, proxy + "/admin/v1/apps/\(app)/keys", json: ["name": "replicas"])
        #expect(key.status == 201, "\(key.text)")
        let bearer = try ServerAPIToken.sign(
            keyId: try #require(key.json["keyId"] as? String), issuerId: try #require(key.json["issuerId"] as? String),
            bundleId: app, privateKeyPEM: try #require(key.json["privateKey"] as? String),
            expiresAt: Date().addingTimeInterval(600))
        let transactionId = try #require(bought.keys.sorted().first)
        for server in replicas.map(\.url) + [proxy] {
            let info = try await send(
                .GET, server + "/sandbox/inApps/v1/transactions/\(transactionId)", bearer: bearer)
            #expect(info.status == 200, "\(server): \(info.text)")
            let signed = try #require(info.json["signedTransactionInfo"] as? String, "\(info.text)")
            #expect(try x5cRoot(of: signed) == root)
        }
    }

    /// Waits until the database holds `renewals` renewal transactions, no notification waits for delivery, and the
    /// sink received as many notifications as the database holds.
    static func waitForDeliveries(_ database: any SQLDatabaseEngine, renewals: Int, sink: NotificationSink) async throws
    {
        var seen = ""
        try await waitUntil("\(renewals) renewals, every notification delivered", seen: { seen }) {
            let counts = try await database.withSession { session in
                (
                    try await session.first(
                        "SELECT COUNT(*) AS n FROM transactions WHERE transaction_reason = 'RENEWAL'"
                    )?.decode(column: "n", as: Int64.self),
                    try await session.first(
                        "SELECT COUNT(*) AS n FROM notifications WHERE state <> 'delivered'"
                    )?.decode(column: "n", as: Int64.self),
                    try await session.first("SELECT COUNT(*) AS n FROM notifications")?.decode(
                        column: "n", as: Int64.self),
                    try await session.all(
                        "SELECT result, COUNT(*) AS n FROM notification_attempts GROUP BY result ORDER BY result"
                    ).map {
                        "\(try $0.decode(column: "result", as: String.self)) \(try $0.decode(column: "n", as: Int64.self))"
                    }
                )
            }
            seen =
                "\(counts.0.map(String.init) ?? "?") renewals, \(counts.1.map(String.init) ?? "?") of "
                + "\(counts.2.map(String.init) ?? "?") notifications undelivered, \(sink.uuids.count) received, "
                + "attempts by result: \(counts.3)"
            return counts.0 == Int64(renewals) && counts.1 == 0 && counts.2 == Int64(sink.uuids.count)
        }
    }

    static func renewalsPerSubscription(_ database: any SQLDatabaseEngine) async throws -> [String: Int] {
        try await database.withSession { session in
            try await session.all(
                """
                SELECT original_transaction_id, COUNT(*) AS n FROM transactions
                WHERE transaction_reason = 'RENEWAL' GROUP BY original_transaction_id
                """
            ).reduce(into: [:]) { counts, row in
                counts[String(try row.decode(column: "original_transaction_id", as: Int64.self))] = Int(
                    try row.decode(column: "n", as: Int64.self))
            }
        }
    }

    static func notificationUUIDs(_ database: any SQLDatabaseEngine) async throws -> [String] {
        try await database.withSession { session in
            try await session.all("SELECT uuid FROM notifications WHERE state = 'delivered'").map {
                try $0.decode(column: "uuid", as: String.self)
            }
        }
    }

    static func openDatabase(_ url: String) async throws -> any SQLDatabaseEngine {
        var logger = Logger(label: "replica-tests")
        logger.logLevel = .warning
        return try await DatabaseOpener.open(url: url, migrations: [], poolSize: 1, logger: logger)
    }

    /// Each environment's root certificate (DER) as every one of `replicas` serves it; fails unless they agree.
    static func roots(of replicas: [Replica]) async throws -> [StoreEnvironment: [UInt8]] {
        var roots: [StoreEnvironment: [UInt8]] = [:]
        for environment in StoreEnvironment.allCases {
            for replica in replicas {
                let answer = try await send(
                    .GET, replica.url + "/admin/v1/certificates/\(environment.rawValue)/root?format=der")
                #expect(answer.status == 200, "\(answer.text)")
                let der = [UInt8](answer.body)
                if let known = roots[environment] {
                    #expect(known == der, "\(replica.url) serves another \(environment.rawValue) root")
                } else {
                    roots[environment] = der
                }
            }
        }
        return roots
    }

    /// The root certificate (DER) a JWS's `x5c` header carries.
    static func x5cRoot(of jws: String) throws -> [UInt8] {
        let header = try #require(jws.split(separator: ".").first.map(String.init))
        var base64 = header.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        let json = try #require(Data(base64Encoded: base64))
        let chain = try #require((try JSONSerialization.jsonObject(with: json) as? [String: Any])?["x5c"] as? [String])
        let root = try #require(chain.last)
        return [UInt8](try #require(Data(base64Encoded: root)))
    }

    /// Polls `condition` until it holds, for at most `seconds`, and looks once more after the deadline (a slow
    /// machine's late wake-up must not fail a condition that holds by then).
    /// `seen` says, when it does not hold, what the last look found.
    static func waitUntil(
        _ what: String, seconds: Double = 300, seen: () -> String = { "" }, _ condition: () async throws -> Bool
    ) async throws {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(200))
        }
        try #require(try await condition(), "waited \(seconds) s for \(what); \(seen())")
    }

    /// An HTTP answer: status, body, the body as JSON.
    struct Answer: Sendable {
        var status: Int
        var body: Data
        var text: String { String(decoding: body, as: UTF8.self) }
        var json: [String: Any] { ((try? JSONSerialization.jsonObject(with: body)) as? [String: Any]) ?? [:] }
    }

    /// Sends a request with the admin token (or `bearer`) and a JSON body.
    static func send(
        _ method: HTTPMethod, _ url: String, json: [String: Any]? = nil, bearer: String? = token
    ) async throws -> Answer {
        var request = HTTPClientRequest(url: url)
        request.method = method
        if let bearer { request.headers.add(name: "Authorization", value: "Bearer \(bearer)") }
        if let json {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: json)))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(120))
        let body = try await response.body.collect(upTo: 16 * 1024 * 1024)
        return Answer(status: Int(response.status.code), body: Data(body.readableBytesView))
    }
}
