import AsyncHTTPClient
import Foundation
import KioskTesting
import NIOCore
import NIOHTTP1
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The renewal scheduler renews exactly once, even when the store dies in the middle: a real `kiosk serve` on an
/// SQLite file is killed with SIGKILL while it renews 200 subscriptions, restarted on the same data, and every
/// subscription ends up with exactly one renewal at its period boundary.
@Suite struct RenewalCrashTests {
    static let token = "kiosk_crash_admin_token_0123456789"
    static let app = "com.example.crash"
    static let groups = 10
    static let testers = 20

    @Test func renewalsHappenOnceAcrossAKill() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-crash-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        // A long interval: after start, the scheduler acts only when the clock moves.
        let arguments = [
            "--port", "0", "--data-dir", directory.path, "--admin-token", Self.token, "--log-level", "warning",
            "--scheduler-interval", "3600",
        ]
        let first = try ServeProcess(arguments)
        let server = try await Self.baseURL(of: first)
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
        #expect(originals.count == 200)

        // Every subscription is due after a sandbox month; kill the store once renewals are being committed.
        let advance = Task {
            try await KioskProcess.run(["test", "clock", "advance", "5m", "--server", server, "--token", Self.token])
        }
        let database = directory.appendingPathComponent("kiosk.sqlite").path
        var committed = 0
        var polls = 0
        while committed == 0, first.process.isRunning, polls < 5_000 {
            committed = try await Self.renewalCount(database)
            polls += 1
        }
        kill(first.process.processIdentifier, SIGKILL)
        first.process.waitUntilExit()
        _ = try await advance.value

        // Restarted, the store finishes what is due at start; a clock change then waits for that pass to end.
        let second = try ServeProcess(arguments)
        let restarted = try await Self.baseURL(of: second)
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
        #expect(renewalsPerSubscription.count == 200, "every subscription renewed (\(committed) before the kill)")
        for original in originals {
            let renewals = renewalsPerSubscription[original] ?? []
            #expect(renewals.count == 1, "\(original) renewed \(renewals.count) times")
            #expect(renewals.first == expiries[original], "\(original) renews at its period boundary")
        }
        #expect(try await second.terminate() == 0)
    }

    static func baseURL(of process: ServeProcess) async throws -> String {
        let listening = try await process.waitForLine(containing: "listening on http://")
        return try #require(listening.split(separator: " ").last.map(String.init))
    }

    /// An app with 10 monthly subscriptions in 10 groups, and 20 testers.
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
        #expect(try await send(.POST, server + "/admin/v1/agreements/paid-apps/accept").0 == 200)
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

    /// How many renewals the database file holds now (read beside the running store; WAL allows it).
    static func renewalCount(_ database: String) async throws -> Int {
        let (_, output) = try await runProcess(
            "/usr/bin/env",
            ["sqlite3", database, "SELECT COUNT(*) FROM transactions WHERE transaction_reason = 'RENEWAL'"])
        return Int(output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
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
