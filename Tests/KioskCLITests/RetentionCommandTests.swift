import Foundation
import KioskTestSupport
import KioskTesting
import Testing

@Suite struct RetentionCommandTests {
    /// `kiosk retention` as typed: an app with nothing configured says so; a retention offer is added, listed and
    /// removed; the subscriber taps Cancel (`kiosk test auto-renew off --retention accept`) with no real-time URL and
    /// no default message, so nothing is shown and the cancellation proceeds, which both the test command and
    /// `kiosk retention show` say; reviewing an image that does not exist names what to do.
    @Test func retentionFromTheCommandLine() async throws {
        try await withTestStore { store in
            let app = "com.example.news"
            let product = "com.example.news.monthly"
            #expect(try await kiosk(store, "apps", "create", "--bundle-id", app, "--name", "News").status == 0)
            #expect(try await kiosk(store, "groups", "create", "--app", app, "--name", "News").status == 0)
            let created = try await kiosk(
                store, "products", "create", "--app", app, "--id", product, "--type", "auto_renewable",
                "--reference-name", "Monthly", "--tier", "3", "--group", "News", "--level", "1", "--duration", "P1M",
                "--locale", "en_US", "--display-name", "Monthly", "--description", "All the news")
            #expect(created.status == 0, "\(created.stderr)")
            #expect(try await kiosk(store, SampleAgreement.commandLine).status == 0)
            #expect(
                try await kiosk(
                    store, "testers", "create", "--email", "reader@example.com", "--password", "sandbox-pass"
                ).status == 0)

            let empty = try await kiosk(store, "retention", "show", "--app", app)
            #expect(empty.status == 0, "\(empty.stderr)")
            #expect(empty.stdout.contains("Real-time URL:    none"), "\(empty.stdout)")
            #expect(empty.stdout.contains("No subscriber has tapped Cancel in sandbox yet."), "\(empty.stdout)")

            let added = try await kiosk(
                store, "retention", "offers", "add", "--app", app, "--product", product, "--identifier", "stay",
                "--name", "Stay a month", "--payment-mode", "pay_up_front", "--period", "P1M", "--tier", "1")
            #expect(added.status == 0, "\(added.stderr)")
            #expect(added.stdout.contains("Saved the retention offer stay of \(product)"), "\(added.stdout)")
            let listed = try await kiosk(store, "retention", "offers", "list", "--app", app)
            #expect(listed.status == 0, "\(listed.stderr)")
            #expect(listed.stdout.contains("pay_up_front, 1 × P1M, tier 1"), "\(listed.stdout)")
            let removed = try await kiosk(
                store, "retention", "offers", "remove", "--app", app, "--product", product, "--identifier", "stay")
            #expect(removed.status == 0, "\(removed.stderr)")
            // `offers` alone lists them: now only the table's header, no offer.
            let none = try await kiosk(store, "retention", "offers", "--app", app)
            #expect(none.status == 0, "\(none.stderr)")
            let lines = none.stdout.split(separator: "\n")
            #expect(lines.count == 1 && lines.first?.hasPrefix("PRODUCT") == true, "\(none.stdout)")

            let bought = try await kiosk(
                store, "test", "buy", "--app", app, "--tester", "reader@example.com", "--product", product)
            #expect(bought.status == 0, "\(bought.stderr)")
            let transaction = try #require(
                bought.stdout.split(separator: "\n").first { $0.hasPrefix("Transaction:") }?.split(separator: " ").last)
            let cancelled = try await kiosk(
                store, "test", "auto-renew", "off", "--app", app, "--transaction", String(transaction),
                "--retention", "accept")
            #expect(cancelled.status == 0, "\(cancelled.stderr)")
            #expect(
                cancelled.stdout.contains(
                    "Retention:    The app has no real-time URL; the subscriber saw no retention message; and cancelled"
                ),
                "\(cancelled.stdout)")
            #expect(cancelled.stdout.contains("auto-renew off"), "\(cancelled.stdout)")
            let shown = try await kiosk(store, "retention", "show", "--app", app)
            #expect(shown.stdout.contains("Cancellations, newest first:"), "\(shown.stdout)")
            #expect(shown.stdout.contains("saw no retention message"), "\(shown.stdout)")

            let wrongChoice = try await kiosk(
                store, "test", "auto-renew", "off", "--app", app, "--transaction", String(transaction),
                "--retention", "maybe")
            #expect(wrongChoice.status == 1)
            #expect(wrongChoice.stderr.contains("at:  --retention (retentionChoice)"), "\(wrongChoice.stderr)")
            #expect(wrongChoice.stderr.contains("Use cancel or accept."), "\(wrongChoice.stderr)")

            let unknown = try await kiosk(
                store, "retention", "approve", "--app", app, "--environment", "production", "--image",
                "6f8d0f32-8b1b-4f0e-9a53-0b6a2f6f0a01")
            #expect(unknown.status == 1)
            #expect(
                unknown.stderr.contains("has no production image 6f8d0f32-8b1b-4f0e-9a53-0b6a2f6f0a01"),
                "\(unknown.stderr)")
            #expect(unknown.stderr.contains("--image"), "\(unknown.stderr)")
        }
    }
}
