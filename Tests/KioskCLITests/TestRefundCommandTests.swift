import Foundation
import KioskTestSupport
import KioskTesting
import Testing

/// Refunds, notification retries and replays as typed at the command line.
@Suite struct TestRefundCommandTests {
    /// `kiosk apps update --sandbox-notification-retries off`, `kiosk test refund` (prorated, of a tester's latest
    /// purchase of a product), a repeat that changes nothing, refusals naming the flag, `reverse-refund`,
    /// `notifications` listing what was sent and `resend-notification`.
    @Test func refundsAndNotificationsFromTheCommandLine() async throws {
        try await withTestStore { store in
            let app = "com.example.coins"
            let kiosk = { @Sendable (arguments: [String]) async throws -> KioskProcess.Result in
                try await KioskProcess.run(arguments + ["--server", store.baseURL, "--token", store.adminToken])
            }
            #expect(try await kiosk(["apps", "create", "--bundle-id", app, "--name", "Coins"]).status == 0)
            #expect(
                try await kiosk([
                    "products", "create", "--app", app, "--id", "com.example.coins.100", "--type", "consumable",
                    "--reference-name", "100 coins", "--tier", "1", "--locale", "en_US", "--display-name", "100 Coins",
                    "--description", "A small pile of coins",
                ]).status == 0)
            #expect(try await kiosk(SampleAgreement.commandLine).status == 0)
            #expect(
                try await kiosk(["testers", "create", "--email", "kid@example.com", "--password", "sandbox-pass"])
                    .status == 0)
            let retries = try await kiosk(["apps", "update", app, "--sandbox-notification-retries", "off"])
            #expect(retries.status == 0, "\(retries.stderr)")
            #expect(retries.stdout.contains("sandbox retries off"), "\(retries.stdout)")
            let bought = try await kiosk([
                "test", "buy", "--app", app, "--tester", "kid@example.com", "--product", "com.example.coins.100",
            ])
            #expect(bought.status == 0, "\(bought.stderr)")

            // The tester's latest purchase of the product, without looking its id up; what changed and who hears.
            let refunded = try await kiosk([
                "test", "refund", "--app", app, "--tester", "kid@example.com", "--product", "com.example.coins.100",
                "--percentage", "50",
            ])
            #expect(refunded.status == 0, "\(refunded.stderr)")
            #expect(
                refunded.stdout.hasPrefix(
                    "Refunded transaction 2000000000000001 (com.example.coins.100) in part, USD 0.49, reason 0: "
                        + "its devices see it revoked at their next sync"),
                "\(refunded.stdout)")
            // The app has no notification URL: the store keeps REFUND unconfigured and sends nothing, and says so.
            Self.expectNotSent("REFUND", in: refunded.stdout, app: app)
            let again = try await kiosk(["test", "refund", "--app", app, "2000000000000001", "--percentage", "50"])
            #expect(again.status == 0, "\(again.stderr)")
            #expect(again.stdout == refunded.stdout, "a repeated refund answers the same")
            let unknown = try await kiosk([
                "test", "refund", "--app", app, "--tester", "kid@example.com", "--product", "com.example.coins.500",
            ])
            #expect(unknown.status == 1)
            #expect(
                unknown.stderr.contains("kid@example.com has no transaction of com.example.coins.500")
                    && unknown.stderr.contains("at:  --product"), "\(unknown.stderr)")
            let both = try await kiosk([
                "test", "refund", "--app", app, "2000000000000001", "--tester", "kid@example.com",
            ])
            #expect(both.status == 1 && both.stderr.contains("its id, or --tester and --product"), "\(both.stderr)")
            let outOfRange = try await kiosk([
                "test", "refund", "--app", app, "2000000000000001", "--percentage", "500",
            ])
            #expect(outOfRange.status == 1 && outOfRange.stderr.contains("at:  --percentage"), "\(outOfRange.stderr)")

            let reversed = try await kiosk(["test", "reverse-refund", "--app", app, "2000000000000001"])
            #expect(reversed.status == 0, "\(reversed.stderr)")
            #expect(
                reversed.stdout.hasPrefix(
                    "Reversed the refund of transaction 2000000000000001 (com.example.coins.100): it counts again"),
                "\(reversed.stdout)")
            let reversal = try #require(
                reversed.stdout.split(separator: "(notification ").last?.split(separator: ")").first.map(String.init),
                "\(reversed.stdout)")
            let twice = try await kiosk(["test", "reverse-refund", "--app", app, "2000000000000001", "--json"])
            #expect(twice.status == 0, "reversing twice is idempotent: \(twice.stderr)")
            let twiceJSON = try #require(
                try JSONSerialization.jsonObject(with: Data(twice.stdout.utf8)) as? [String: Any], "\(twice.stdout)")
            #expect(twiceJSON["notificationType"] as? String == "REFUND_REVERSED", "\(twice.stdout)")
            #expect(twiceJSON["notificationUUID"] as? String == reversal, "the first reversal again: \(twice.stdout)")

            let listed = try await kiosk(["test", "notifications", "--app", app])
            #expect(listed.status == 0, "\(listed.stderr)")
            #expect(
                listed.stdout.contains("REFUND_REVERSED") && listed.stdout.contains("unconfigured"), "\(listed.stdout)")
            let uuid = try #require(listed.stdout.split(separator: " ").first.map(String.init))
            let resent = try await kiosk(["test", "resend-notification", "--app", app, uuid])
            #expect(resent.status == 1)
            #expect(
                resent.stderr.hasPrefix("error: ") && resent.stderr.contains("notification URL")
                    && resent.stderr.contains("\n  fix: "), "\(resent.stderr)")

            // A refund request of another purchase: CONSUMPTION_REQUEST is not sent either, and the CLI says so.
            #expect(
                try await kiosk([
                    "test", "buy", "--app", app, "--tester", "kid@example.com", "--product", "com.example.coins.100",
                ]).status == 0)
            let transactions = try await kiosk(["test", "transactions", "--app", app, "--tester", "kid@example.com"])
            #expect(transactions.status == 0, "\(transactions.stderr)")
            #expect(
                transactions.stdout.contains("USD 0.99") && !transactions.stdout.contains("minor units"),
                "prices in the currency: \(transactions.stdout)")
            let requested = try await kiosk([
                "test", "request-refund", "--app", app, "--tester", "kid@example.com", "--product",
                "com.example.coins.100",
            ])
            #expect(requested.status == 0, "\(requested.stderr)")
            Self.expectNotSent("CONSUMPTION_REQUEST", in: requested.stdout, app: app)
        }
    }

    /// Checks that `output` says the notification `type` was not sent for want of a sandbox URL, and how to set
    /// one, instead of claiming the app's server was sent it.
    static func expectNotSent(_ type: String, in output: String, app: String) {
        #expect(!output.contains("was sent"), "nothing was sent: \(output)")
        #expect(
            output.contains("\(type) (notification ")
                && output.contains(
                    ") was not sent: the app has no sandbox notification URL — set one with "
                        + "`kiosk apps update \(app) --sandbox-notification-url URL`"),
            "\(output)")
    }
}
