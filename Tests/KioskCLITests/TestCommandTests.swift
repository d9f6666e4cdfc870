import Foundation
import KioskTestSupport
import KioskTesting
import Testing

@Suite struct TestCommandTests {
    /// The sandbox test controls as typed: buy for a tester (prints the signed transaction), Ask to Buy through
    /// `payments` and `approve`, arm a failure, print the receipt, list and clear transactions; a customer account.
    @Test func sandboxSessionFromTheCommandLine() async throws {
        try await withTestStore { store in
            let app = "com.example.coins"
            #expect(try await kiosk(store, "apps", "create", "--bundle-id", app, "--name", "Coins").status == 0)
            let product = try await kiosk(
                store, "products", "create", "--app", app, "--id", "com.example.coins.100", "--type", "consumable",
                "--reference-name", "100 coins", "--tier", "1", "--locale", "en_US", "--display-name", "100 Coins",
                "--description", "A small pile of coins")
            #expect(product.status == 0, "\(product.stderr)")
            #expect(try await kiosk(store, SampleAgreement.commandLine).status == 0)
            let tester = try await kiosk(
                store, "testers", "create", "--email", "kid@example.com", "--password", "sandbox-pass", "--ask-to-buy",
                "false", "--payment-outcome", "approve")
            #expect(tester.status == 0, "\(tester.stderr)")

            let bought = try await kiosk(
                store, "test", "buy", "--app", app, "--tester", "kid@example.com", "--product", "com.example.coins.100",
                "--quantity", "3")
            #expect(bought.status == 0, "\(bought.stderr)")
            #expect(bought.stdout.contains("Transaction: 2000000000000001"), "\(bought.stdout)")
            #expect(bought.stdout.split(separator: "\n").last?.split(separator: ".").count == 3, "a compact JWS")

            let json = try await kiosk(
                store, "test", "buy", "--app", app, "--tester", "kid@example.com", "--product", "com.example.coins.100",
                "--json")
            #expect(json.status == 0, "\(json.stderr)")
            let entry = try #require(
                try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any], "\(json.stdout)")
            #expect((entry["transaction"] as? [String: Any])?["transactionId"] as? String == "2000000000000002")

            let failing = try await kiosk(
                store, "test", "fail-next", "--app", app, "--api", "receipt", "--count", "2", "--error",
                "cloudServiceNetworkConnectionFailed")
            #expect(failing.status == 0, "\(failing.stderr)")
            let failures = try await kiosk(store, "test", "failures", "--app", app)
            #expect(failures.status == 0, "\(failures.stderr)")
            #expect(
                failures.stdout.contains("receipt") && failures.stdout.contains("cloudServiceNetworkConnectionFailed"),
                "\(failures.stdout)")
            let wrongError = try await kiosk(
                store, "test", "fail-next", "--app", app, "--api", "receipt", "--error", "oops")
            #expect(wrongError.status == 1)
            #expect(
                wrongError.stderr.hasPrefix(
                    "error: 'oops' is not an SKError code name.\n  at:  --error (error)\n  fix: "),
                "\(wrongError.stderr)")

            let receipt = try await kiosk(store, "test", "receipt", "--app", app, "--tester", "kid@example.com")
            #expect(receipt.status == 0, "\(receipt.stderr)")
            #expect(Data(base64Encoded: receipt.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) != nil)

            let listed = try await kiosk(
                store, "test", "transactions", "--app", app, "--tester", "kid@example.com")
            #expect(listed.status == 0, "\(listed.stderr)")
            #expect(
                listed.stdout.contains("2000000000000001") && listed.stdout.contains("USD 2.97"), "\(listed.stdout)")
            let cleared = try await kiosk(store, "test", "clear", "--app", app, "--tester", "kid@example.com")
            #expect(cleared.status == 0, "\(cleared.stderr)")
            #expect(cleared.stdout.contains("Deleted 2 transaction(s)"), "\(cleared.stdout)")

            let account = try await kiosk(
                store, "accounts", "create", "--email", "buyer@example.com", "--password", "buyer-pass",
                "--storefront", "CHN", "--payment-outcome", "insufficient_funds")
            #expect(account.status == 0, "\(account.stderr)")
            let accounts = try await kiosk(store, "accounts", "list")
            #expect(accounts.status == 0, "\(accounts.stderr)")
            #expect(
                accounts.stdout.contains("buyer@example.com") && accounts.stdout.contains("insufficient_funds"),
                "\(accounts.stdout)")
        }
    }

    /// Approving a payment that is not waiting says why and exits 1.
    @Test func approvingAnUnknownPaymentExplains() async throws {
        try await withTestStore { store in
            #expect(
                try await kiosk(store, "apps", "create", "--bundle-id", "com.example.a", "--name", "A").status == 0
            )
            let payment = UUID().uuidString
            let answer = try await kiosk(store, "test", "approve", "--app", "com.example.a", payment)
            #expect(answer.status == 1)
            #expect(
                answer.stderr == """
                    error: The app com.example.a has no sandbox payment \(payment).
                      at:  <payment-id> (paymentId)
                      fix: List waiting payments with `kiosk test payments --app com.example.a`.

                    """, "\(answer.stderr)")
        }
    }

    /// Subscription controls say what they changed and when it takes effect, and an expiry's reason shows in the
    /// text: a renewal armed to fail fails, billing recovers, then a price increase asked and declined expires the
    /// subscription at the period's end for that reason.
    @Test func subscriptionControlsSayWhatTheyDid() async throws {
        try await withTestStore { store in
            let app = "com.example.club"
            #expect(try await kiosk(store, "apps", "create", "--bundle-id", app, "--name", "Club").status == 0)
            let group = try await kiosk(
                store, "groups", "create", "--app", app, "--name", "Club", "--localization", "en_US=Club")
            #expect(group.status == 0, "\(group.stderr)")
            let product = try await kiosk(
                store, "products", "create", "--app", app, "--id", "com.example.club.monthly", "--type",
                "auto_renewable", "--reference-name", "Club monthly", "--tier", "3", "--group", "Club", "--level", "1",
                "--duration", "P1M", "--locale", "en_US", "--display-name", "Club", "--description", "Monthly club")
            #expect(product.status == 0, "\(product.stderr)")
            #expect(try await kiosk(store, SampleAgreement.commandLine).status == 0)
            let tester = try await kiosk(
                store, "testers", "create", "--email", "member@example.com", "--password", "sandbox-pass")
            #expect(tester.status == 0, "\(tester.stderr)")
            let bought = try await kiosk(
                store, "test", "buy", "--app", app, "--tester", "member@example.com", "--product",
                "com.example.club.monthly")
            #expect(bought.status == 0, "\(bought.stderr)")
            let transaction = try #require(
                bought.stdout.split(separator: "\n").first { $0.hasPrefix("Transaction: ") }?.split(separator: " ").last
                    .map(String.init), "\(bought.stdout)")

            let armed = try await kiosk(store, "test", "fail-renewal", "--app", app, "--transaction", transaction)
            #expect(armed.status == 0, "\(armed.stderr)")
            #expect(armed.stdout.hasPrefix("Armed: the next renewal, at 20"), "\(armed.stdout)")
            #expect(armed.stdout.contains("fails with a billing error"), "\(armed.stdout)")
            let failed = try await kiosk(store, "test", "renew", "--app", app, "--transaction", transaction)
            #expect(
                failed.stdout.hasPrefix("Ended the period now: the renewal failed; billing retry began"),
                "\(failed.stdout)")
            let recovered = try await kiosk(store, "test", "recover", "--app", app, "--transaction", transaction)
            #expect(recovered.stdout.hasPrefix("Retried billing now: it renewed, until 20"), "\(recovered.stdout)")

            let asked = try await kiosk(
                store, "test", "price-increase", "--app", app, "--transaction", transaction)
            #expect(asked.status == 0, "\(asked.stderr)")
            #expect(asked.stdout.hasPrefix("Asked the subscriber to consent"), "\(asked.stdout)")
            #expect(asked.stdout.contains("\nPrice increase: waiting for the subscriber's consent"), "\(asked.stdout)")
            let declined = try await kiosk(
                store, "test", "consent", "decline", "--app", app, "--transaction", transaction)
            #expect(declined.status == 0, "\(declined.stderr)")
            #expect(declined.stdout.hasPrefix("Declined the price increase: the subscription expires at 20"))
            let ended = try await kiosk(store, "test", "renew", "--app", app, "--transaction", transaction)
            #expect(ended.status == 0, "\(ended.stderr)")
            #expect(
                ended.stdout.contains(
                    "\nExpiry reason: the subscriber did not consent to a price increase (expiration intent 3)"),
                "\(ended.stdout)")
        }
    }
}
