import Foundation
import KioskCore
import KioskSQL
import KioskTestSupport
import KioskTesting
import Logging
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Invariants 1 and 2 across real crashes of the app and of the store: the process dies by SIGKILL, with no
/// cleanup, at a step the test names (a proxy on the app's wire for the coin shop, `KIOSK_CRASH_AT` for the store),
/// and a relaunch on the same state delivers every charged payment exactly once.
@Suite(.runsServers) struct CrashTests {
    /// The app dies once the store has charged the payment, before the answer reaches it. Relaunched on the same
    /// device, it learns of the purchase, delivers it once and finishes it; the store charged once.
    @Test(arguments: TestDatabaseEngine.available)
    func appKilledBeforeTheAnswerIsChargedAndDeliveredOnce(engine: TestDatabaseEngine) async throws {
        try await withTestStore(engine: engine) { store in
            try await CoinShop.createShop(on: store)
            let device = CoinShop.temporaryDevice()
            defer { try? FileManager.default.removeItem(at: device) }
            let (killed, killedAt) = try await withKillingProxy(to: store.baseURL) { method, path in
                method == "POST" && path == "/sandbox/storekit/v1/payments" ? .afterAnswer : nil
            } _: { proxy in
                let run = try await CoinShop.run(
                    ["buy", "coins"], server: proxy.url, device: device, onStart: proxy.watch)
                return (run, proxy.killedAt)
            }
            #expect(killed.signal == SIGKILL, "the shop died by SIGKILL: \(killed.stdout) \(killed.stderr)")
            #expect(killedAt == "POST /sandbox/storekit/v1/payments")
            let charged = try await CoinShop.testerTransactions(on: store)
            #expect(charged.count == 1 && charged.allSatisfy { !$0.finished }, "charged, not finished: \(charged)")
            #expect(try CoinShop.ledger(of: device)["coins"] as? Int == 0, "the shop never heard of it")

            let relaunched = try await CoinShop.run(["products"], store: store, device: device)
            #expect(relaunched.status == 0, "\(relaunched.stderr)")
            #expect(relaunched.stdout.contains("Balance: 100 coins"), "\(relaunched.stdout)")
            let settled = try await CoinShop.testerTransactions(on: store)
            #expect(settled.map(\.id) == charged.map(\.id), "charged once: \(settled)")
            #expect(settled.allSatisfy { $0.finished }, "finished after the delivery: \(settled)")
        }
    }

    /// The app dies after delivering the purchase into its ledger, as its finish is about to leave. Relaunched,
    /// the transaction comes back from the store, is not delivered a second time, and is finished.
    @Test(arguments: TestDatabaseEngine.available)
    func appKilledBeforeTheFinishDeliversOnce(engine: TestDatabaseEngine) async throws {
        try await withTestStore(engine: engine) { store in
            try await CoinShop.createShop(on: store)
            let device = CoinShop.temporaryDevice()
            defer { try? FileManager.default.removeItem(at: device) }
            let (killed, killedAt) = try await withKillingProxy(to: store.baseURL) { method, path in
                method == "POST" && path.hasPrefix("/sandbox/storekit/v1/queue/") && path.hasSuffix("/finish")
                    ? .beforeForwarding : nil
            } _: { proxy in
                let run = try await CoinShop.run(
                    ["buy", "coins", "--quantity", "2"], server: proxy.url, device: device, onStart: proxy.watch)
                return (run, proxy.killedAt)
            }
            #expect(killed.signal == SIGKILL, "the shop died by SIGKILL: \(killed.stdout) \(killed.stderr)")
            #expect(killedAt?.hasSuffix("/finish") == true, "\(String(describing: killedAt))")
            let charged = try await CoinShop.testerTransactions(on: store)
            #expect(charged.count == 1 && charged.allSatisfy { !$0.finished }, "the finish never left: \(charged)")
            let ledger = try CoinShop.ledger(of: device)
            #expect(ledger["coins"] as? Int == 200, "delivered before the finish: \(ledger)")

            let relaunched = try await CoinShop.run(["products"], store: store, device: device)
            #expect(relaunched.status == 0, "\(relaunched.stderr)")
            #expect(relaunched.stdout.contains("Balance: 200 coins"), "not delivered twice: \(relaunched.stdout)")
            let settled = try await CoinShop.testerTransactions(on: store)
            #expect(settled.map(\.id) == charged.map(\.id) && settled.allSatisfy { $0.finished }, "\(settled)")
        }
    }

    /// The store dies (`KIOSK_CRASH_AT=payment-committed`: SIGKILL right after the charge commits, before it
    /// answers) while the app pays. The app keeps retrying with the same key; the store, started again on the
    /// same data, answers with the transaction it committed: charged once, delivered once. The app reaches the
    /// store through a proxy, its one address while the store is down and started again on a new port.
    @Test(arguments: TestDatabaseEngine.available)
    func storeKilledAfterChargingChargesOnceWhenItIsBack(engine: TestDatabaseEngine) async throws {
        try await engine.withFreshDatabase { databaseURL in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-crash-\(UUID())")
            let device = CoinShop.temporaryDevice()
            defer {
                try? FileManager.default.removeItem(at: directory)
                try? FileManager.default.removeItem(at: device)
            }
            let token = "kiosk_crash_admin_token_0123456789"
            var arguments = [
                "--port", "0", "--data-dir", directory.path, "--admin-token", token, "--log-level", "warning",
            ]
            if let databaseURL {
                arguments += [
                    "--database", databaseURL, "--database-pool-size", String(PostgresTestSlots.storePoolSize),
                ]
            }
            let serve = arguments
            let first = try ServeProcess(
                serve, environment: [CrashPoint.environmentVariable: CrashPoint.paymentCommitted.rawValue])
            let firstURL = try await first.baseURL()
            try await CoinShop.createShop(server: firstURL, token: token)

            try await withKillingProxy(to: firstURL, killAt: { _, _ in nil }) { proxy in
                async let bought = CoinShop.run(["buy", "coins"], server: proxy.url, device: device)
                let status = try await first.waitForExit()
                #expect(
                    first.wasKilled && status == SIGKILL,
                    "killed at its crash point")
                // Between the kill and the restart, the store's database already holds the charge: one payment,
                // purchased, and its transaction.
                let stored = try await Self.payments(
                    databaseURL ?? "sqlite://" + directory.appendingPathComponent("kiosk.sqlite").path)
                #expect(stored == ["purchased 1"], "committed before the kill: \(stored)")

                let second = try ServeProcess(serve)
                let secondURL = try await second.baseURL()
                proxy.forward(to: secondURL)
                let result = try await bought
                #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
                #expect(result.stdout.contains("Balance: 100 coins"), "\(result.stdout)")
                let transactions = try await CoinShop.testerTransactions(server: secondURL, token: token)
                #expect(transactions.count == 1 && transactions.allSatisfy { $0.finished }, "\(transactions)")
                #expect(try await second.terminate() == 0)
            }
        }
    }

    /// Each payment in the store's database as `state n`, n its transactions (read with no store running).
    static func payments(_ url: String) async throws -> [String] {
        var logger = Logger(label: "crash-payments")
        logger.logLevel = .warning
        let database = try await DatabaseOpener.open(url: url, migrations: [], poolSize: 1, logger: logger)
        do {
            let rows = try await database.withSession { session in
                try await session.all(
                    """
                    SELECT p.state AS state, COUNT(t.id) AS charged FROM payments p
                    LEFT JOIN transactions t ON t.environment = p.environment AND t.id = p.transaction_id
                    GROUP BY p.id, p.state
                    """)
            }
            try await database.close()
            return try rows.map {
                "\(try $0.decode(column: "state", as: String.self)) \(try $0.decode(column: "charged", as: Int64.self))"
            }
        } catch {
            try? await database.close()
            throw error
        }
    }
}
