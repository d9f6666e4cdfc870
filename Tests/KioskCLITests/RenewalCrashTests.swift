import AsyncHTTPClient
import Foundation
import Hummingbird
import KioskStorage
import KioskTesting
import Logging
import NIOCore
import NIOHTTP1
import SQLKit
import ServiceLifecycle
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The renewal scheduler renews exactly once, even when the store dies in the middle: a real `kiosk serve` on an
/// SQLite file is killed with SIGKILL while it renews 400 subscriptions, restarted on the same data, and every
/// subscription ends up with exactly one renewal at its period boundary.
@Suite struct RenewalCrashTests {
    static let token = "kiosk_crash_admin_token_0123456789"
    static let app = "com.example.crash"
    static let groups = 20
    static let testers = 20

    @Test func renewalsHappenOnceAcrossAKill() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kiosk-crash-\(UUID().uuidString)")
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
        #expect(originals.count == Self.groups * Self.testers)

        // Every subscription is due after a sandbox month. The first DID_RENEW arrives once the first batch of
        // renewals committed: the store is killed then, while it renews the rest.
        let (receiver, killed) = try await Self.killingReceiver(pid: first.process.processIdentifier)
        let configured = try await Self.send(
            .PATCH, server + "/admin/v1/apps/\(Self.app)", json: ["sandboxNotificationURLs": [receiver.url]])
        #expect(configured.0 == 200, "\(configured.1)")
        let advance = try await KioskProcess.run(
            ["test", "clock", "advance", "5m", "--server", server, "--token", Self.token])
        first.process.waitUntilExit()
        #expect(killed.wasKilled, "the store was killed by the first notification: \(advance.stdout)")
        // The kill landed mid-work: some renewals were committed (one was notified), not all of them.
        let committed = try await Self.renewalCount(directory.appendingPathComponent("kiosk.sqlite").path)
        #expect(
            committed > 0 && committed < Int64(originals.count),
            "\(committed) of \(originals.count) renewals were committed before the kill")
        await receiver.stop()

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

    /// Whether the receiver killed the store.
    final class KillSwitch: @unchecked Sendable {
        private let lock = NSLock()
        private var killed = false
        var wasKilled: Bool { lock.withLock { killed } }

        func kill(_ pid: Int32) {
            lock.withLock {
                guard !killed else { return }
                killed = true
                _ = Glibc.kill(pid, SIGKILL)
            }
        }
    }

    /// A notification endpoint on 127.0.0.1 that SIGKILLs `pid` when the first notification arrives.
    static func killingReceiver(pid: Int32) async throws -> (KillingReceiver, KillSwitch) {
        let killSwitch = KillSwitch()
        let router = Router()
        router.post("notifications") { request, _ -> HTTPResponse.Status in
            // Only a renewal's notification: the purchases' SUBSCRIBED may still be on their way.
            let body = try await request.body.collect(upTo: 1 << 20)
            let json = try JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]
            if let signed = json?["signedPayload"] as? String,
                (try? payload(of: signed))?["notificationType"] as? String == "DID_RENEW"
            {
                killSwitch.kill(pid)
            }
            return .ok
        }
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        var logger = Logger(label: "crash-receiver")
        logger.logLevel = .warning
        let application = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port ?? 0)
                continuation.finish()
            }, logger: logger)
        let group = ServiceGroup(
            configuration: .init(services: [application], gracefulShutdownSignals: [], logger: logger))
        let task = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())
        return (KillingReceiver(url: "http://127.0.0.1:\(port)/notifications", group: group, task: task), killSwitch)
    }

    struct KillingReceiver {
        var url: String
        var group: ServiceGroup
        var task: Task<Void, any Error>

        func stop() async {
            await group.triggerGracefulShutdown()
            _ = try? await task.value
        }
    }

    static func baseURL(of process: ServeProcess) async throws -> String {
        let listening = try await process.waitForLine(containing: "listening on http://")
        return try #require(listening.split(separator: " ").last.map(String.init))
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

    /// How many renewals the store's SQLite file holds (opened as the restarted store would, before it starts).
    static func renewalCount(_ file: String) async throws -> Int64 {
        var logger = Logger(label: "renewal-crash-count")
        logger.logLevel = .warning
        let database = try await DatabaseOpener.open(url: "sqlite://" + file, migrations: [], logger: logger)
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
