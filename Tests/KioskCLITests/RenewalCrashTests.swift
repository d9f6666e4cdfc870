import AsyncHTTPClient
import Foundation
import KioskCore
import KioskSQL
import KioskTestSupport
import KioskTesting
import Logging
import NIOCore
import NIOHTTP1
import SQLKit
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The renewal scheduler renews exactly once, even when the store dies in the middle: a real `kiosk serve` kills
/// itself with SIGKILL (`KIOSK_CRASH_AT=renewal-batch-committed`) after the first batch of 400 due renewals
/// committed, is restarted on the same data, and every subscription ends up with exactly one renewal at its period
/// boundary. On SQLite and PostgreSQL.
@Suite(.runsServers) struct RenewalCrashTests {
    static let token = "kiosk_crash_admin_token_0123456789"
    static let app = "com.example.crash"
    static let groups = 20
    static let testers = 20

    @Test(arguments: TestDatabaseEngine.available)
    func renewalsHappenOnceAcrossAKill(engine: TestDatabaseEngine) async throws {
        try await engine.withFreshDatabase { databaseURL in
            try await Self.renewalsHappenOnceAcrossAKill(databaseURL: databaseURL)
        }
    }

    /// The test on `databaseURL` (nil: SQLite in the data directory).
    static func renewalsHappenOnceAcrossAKill(databaseURL: String?) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kiosk-crash-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        // A long interval: after start, the scheduler acts only when the clock moves.
        var arguments = [
            "--port", "0", "--data-dir", directory.path, "--admin-token", Self.token, "--log-level", "warning",
            "--scheduler-interval", "3600",
        ]
        if let databaseURL {
            arguments += ["--database", databaseURL, "--database-pool-size", String(PostgresTestSlots.storePoolSize)]
        }
        // The first store kills itself once its first batch of renewals has committed: mid-work, by construction.
        let first = try ServeProcess(
            arguments,
            environment: [CrashPoint.environmentVariable: CrashPoint.renewalBatchCommitted.rawValue])
        let server = try await first.baseURL()
        try await Self.prepare(server)
        var originals: [String] = []
        for tester in 0..<Self.testers {
            for group in 0..<Self.groups {
                let bought = try await Self.send(
                    .POST, server + "/sandbox/test/v1/apps/\(Self.app)/purchases",
                    json: ["tester": "t\(tester)@example.com", "productId": "com.example.crash.g\(group)"])
                #expect(bought.0 == 201, "\(bought.1)")
                let entry = try JSONSerialization.jsonObject(with: Data(bought.1.utf8)) as? [String: Any]
                originals.append(try #require((entry?["transaction"] as? [String: Any])?["transactionId"] as? String))
            }
        }
        #expect(originals.count == Self.groups * Self.testers)

        // Every subscription is due after a sandbox month.
        let advance = try await KioskProcess.run(
            ["test", "clock", "advance", "5m", "--server", server, "--token", Self.token])
        let status = try await first.waitForExit()
        #expect(
            first.wasKilled && status == SIGKILL,
            "the store killed itself at its crash point: \(advance.stdout) \(advance.stderr)")
        let committed = try await Self.renewalCount(
            databaseURL ?? "sqlite://" + directory.appendingPathComponent("kiosk.sqlite").path)
        #expect(
            committed > 0 && committed < Int64(originals.count),
            "\(committed) of \(originals.count) renewals were committed before the kill")

        // Restarted, the store finishes what is due at start; a clock change then waits for that pass to end.
        let second = try ServeProcess(arguments)
        let restarted = try await second.baseURL()
        let shown = try await KioskProcess.run(
            ["test", "clock", "advance", "1s", "--json", "--server", restarted, "--token", Self.token])
        #expect(shown.status == 0, "\(shown.stderr)")

        var renewalsPerSubscription: [String: [Int64]] = [:]
        var expiries: [String: Int64] = [:]
        for tester in 0..<Self.testers {
            let listed = try await KioskProcess.run([
                "test", "transactions", "--app", Self.app, "--tester", "t\(tester)@example.com", "--json",
                "--server", restarted, "--token", Self.token,
            ])
            let json = try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any]
            for entry in json?["transactions"] as? [[String: Any]] ?? [] {
                let payload = try Self.payload(of: try #require(entry["signedTransaction"] as? String))
                let original = try #require(payload["originalTransactionId"] as? String)
                let purchaseDate = try #require((payload["purchaseDate"] as? NSNumber)?.int64Value)
                if payload["transactionReason"] as? String == "RENEWAL" {
                    renewalsPerSubscription[original, default: []].append(purchaseDate)
                } else {
                    expiries[original] = (payload["expiresDate"] as? NSNumber)?.int64Value
                }
            }
        }
        #expect(
            renewalsPerSubscription.count == originals.count,
            "every subscription renewed (\(committed) before the kill)")
        for original in originals {
            let renewals = renewalsPerSubscription[original] ?? []
            #expect(renewals.count == 1, "\(original) renewed \(renewals.count) times")
            #expect(renewals.first == expiries[original], "\(original) renews at its period boundary")
        }
        #expect(try await second.terminate() == 0)
    }

    /// An app with 20 monthly subscriptions in 20 groups, and 20 testers.
    static func prepare(_ server: String) async throws {
        #expect(try await send(.POST, server + "/admin/v1/apps", json: ["bundleId": app, "name": "Crash"]).0 == 201)
        for group in 0..<groups {
            let created = try await send(
                .POST, server + "/admin/v1/apps/\(app)/subscription-groups",
                json: ["referenceName": "G\(group)", "localizations": [["locale": "en-US", "name": "G\(group)"]]])
            #expect(created.0 == 201, "\(created.1)")
            let product = try await send(
                .POST, server + "/admin/v1/apps/\(app)/products",
                json: [
                    "productId": "com.example.crash.g\(group)", "type": "auto_renewable", "referenceName": "G\(group)",
                    "pricing": ["tier": 1], "subscription": ["group": "G\(group)", "level": 1], "duration": "P1M",
                    "localizations": [["locale": "en_US", "displayName": "G\(group)", "description": "Monthly"]],
                ])
            #expect(product.0 == 201, "\(product.1)")
        }
        #expect(
            try await send(.POST, server + "/admin/v1/agreements/paid-apps/accept", json: SampleAgreement.json).0 == 200
        )
        for tester in 0..<testers {
            let created = try await send(
                .POST, server + "/admin/v1/testers",
                json: ["email": "t\(tester)@example.com", "password": "sandbox-pass", "storefront": "USA"])
            #expect(created.0 == 201, "\(created.1)")
        }
    }

    /// Sends an admin request; returns the status and body.
    static func send(_ method: HTTPMethod, _ url: String, json: [String: Any]? = nil) async throws -> (Int, String) {
        var request = HTTPClientRequest(url: url)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        if let json {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: json)))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 16 * 1024 * 1024)
        return (Int(response.status.code), String(buffer: body))
    }

    /// How many renewals the store's database holds (read before the restarted store finishes them).
    static func renewalCount(_ url: String) async throws -> Int64 {
        var logger = Logger(label: "renewal-crash-count")
        logger.logLevel = .warning
        let database = try await DatabaseOpener.open(url: url, migrations: [], poolSize: 1, logger: logger)
        let count = try await database.withSession { session in
            try await session.first(
                "SELECT COUNT(*) AS n FROM transactions WHERE transaction_reason = 'RENEWAL'"
            )?.decode(column: "n", as: Int64.self)
        }
        try await database.close()
        return try #require(count)
    }

    /// The payload of a compact JWS (the store's own signature; this test checks counts, not signatures).
    static func payload(of jws: String) throws -> [String: Any] {
        let parts = jws.split(separator: ".")
        var base64 = String(parts[1]).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        let data = try #require(Data(base64Encoded: base64))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }
}
