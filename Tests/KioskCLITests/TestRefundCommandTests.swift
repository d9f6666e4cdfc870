import Foundation
import KioskTesting
import Testing

/// Refunds, notification retries and replays as typed at the command line.
@Suite struct TestRefundCommandTests {
    /// `kiosk apps update --sandbox-notification-retries off`, `kiosk test refund` (prorated), a repeat that
    /// changes nothing, `reverse-refund`, `notifications` listing what was sent and `resend-notification`.
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
            #expect(try await kiosk(["agreements", "accept"]).status == 0)
            #expect(
                try await kiosk(["testers", "create", "--email", "kid@example.com", "--password", "sandbox-pass"])
                    .status == 0)
            let retries = try await kiosk(["apps", "update", app, "--sandbox-notification-retries", "off"])
            #expect(retries.stdout.contains("sandbox retries off"), "\(retries.stdout)\(retries.stderr)")
            let bought = try await kiosk([
                "test", "buy", "--app", app, "--tester", "kid@example.com", "--product", "com.example.coins.100",
            ])
            #expect(bought.status == 0, "\(bought.stderr)")

            let refunded = try await kiosk(["test", "refund", "--app", app, "2000000000000001", "--percentage", "50"])
            #expect(refunded.status == 0, "\(refunded.stderr)")
            #expect(
                refunded.stdout.contains("REFUND sent") && refunded.stdout.contains("REFUND_PRORATED"),
                "\(refunded.stdout)")
            let again = try await kiosk(["test", "refund", "--app", app, "2000000000000001", "--percentage", "50"])
            #expect(again.stdout == refunded.stdout, "a repeated refund answers the same")
            let reversed = try await kiosk(["test", "reverse-refund", "--app", app, "2000000000000001"])
            #expect(reversed.stdout.contains("REFUND_REVERSED sent"), "\(reversed.stdout)\(reversed.stderr)")
            let wrong = try await kiosk(["test", "reverse-refund", "--app", app, "2000000000000001", "--json"])
            #expect(wrong.status == 0, "reversing twice is idempotent: \(wrong.stderr)")

            let listed = try await kiosk(["test", "notifications", "--app", app])
            #expect(
                listed.stdout.contains("REFUND_REVERSED") && listed.stdout.contains("unconfigured"), "\(listed.stdout)")
            let uuid = try #require(listed.stdout.split(separator: " ").first.map(String.init))
            let resent = try await kiosk(["test", "resend-notification", "--app", app, uuid])
            #expect(
                resent.status == 1 && resent.stderr.contains("notification URL"), "\(resent.stdout)\(resent.stderr)")
        }
    }
}
