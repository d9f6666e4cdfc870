import Foundation
import KioskTestSupport
import KioskTesting
import Testing

@Suite struct OfferCodesCommandTests {
    /// Offer codes as typed: create three free-month codes for an auto-renewable (`--json` gives them), redeem one
    /// with `kiosk test buy --offer-code`, then `list` shows it redeemed with the transaction; a consumable is refused.
    @Test func offerCodesFromTheCommandLine() async throws {
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
            #expect(
                try await kiosk(
                    store, "products", "create", "--app", app, "--id", "com.example.news.tip", "--type", "consumable",
                    "--reference-name", "Tip", "--tier", "1", "--locale", "en_US", "--display-name", "Tip",
                    "--description", "A tip"
                ).status == 0)
            #expect(try await kiosk(store, SampleAgreement.commandLine).status == 0)
            #expect(
                try await kiosk(
                    store, "testers", "create", "--email", "reader@example.com", "--password", "sandbox-pass"
                ).status == 0)

            let made = try await kiosk(
                store, "offer-codes", "create", "--app", app, "--product", product, "--name", "Free month",
                "--count", "3", "--json")
            #expect(made.status == 0, "\(made.stderr)")
            let json = try #require(
                try JSONSerialization.jsonObject(with: Data(made.stdout.utf8)) as? [String: Any], "\(made.stdout)")
            let codes = (json["offerCodes"] as? [[String: Any]] ?? []).compactMap { $0["code"] as? String }
            #expect(codes.count == 3, "\(made.stdout)")
            let code = try #require(codes.first)

            let bought = try await kiosk(
                store, "test", "buy", "--app", app, "--tester", "reader@example.com", "--product", product,
                "--offer-code", code)
            #expect(bought.status == 0, "\(bought.stderr)")
            let transaction = try #require(
                bought.stdout.split(separator: "\n").first { $0.hasPrefix("Transaction:") }?.split(separator: " ").last)

            let listed = try await kiosk(store, "offer-codes", "list", "--app", app, "--product", product)
            #expect(listed.status == 0, "\(listed.stderr)")
            let row = try #require(listed.stdout.split(separator: "\n").first { $0.contains(code) }, "\(listed.stdout)")
            #expect(row.contains("redeemed") && row.contains(transaction), "\(row)")
            #expect(listed.stdout.components(separatedBy: "available").count - 1 == 2, "\(listed.stdout)")

            let refused = try await kiosk(
                store, "offer-codes", "create", "--app", app, "--product", "com.example.news.tip", "--name", "Nope",
                "--count", "1")
            #expect(refused.status == 1)
            #expect(
                refused.stderr == """
                    error: com.example.news.tip is Consumable; offer codes are for auto-renewable subscriptions only.
                      at:  --product (productId)
                      fix: Choose an auto-renewable product.

                    """, "\(refused.stderr)")
        }
    }
}
