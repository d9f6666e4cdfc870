import Foundation
import KioskTestSupport
import KioskTesting
import Testing

@Suite struct OffersCommandTests {
    static let app = "com.example.news"
    static let monthly = "com.example.news.monthly"

    /// The lines of a command's output with each run of spaces made one, so tables compare without their padding.
    static func lines(_ output: String) -> [String] {
        output.split(separator: "\n").map { $0.split(separator: " ").joined(separator: " ") }
    }

    /// An app with the auto-renewable `monthly` (tier 5), a consumable tip, the agreement and a USA tester.
    static func newsApp(_ store: TestStore) async throws {
        #expect(try await kiosk(store, "apps", "create", "--bundle-id", app, "--name", "News").status == 0)
        #expect(try await kiosk(store, "groups", "create", "--app", app, "--name", "News").status == 0)
        let created = try await kiosk(
            store, "products", "create", "--app", app, "--id", monthly, "--type", "auto_renewable",
            "--reference-name", "Monthly", "--tier", "5", "--group", "News", "--level", "1", "--duration", "P1M",
            "--locale", "en_US", "--display-name", "Monthly", "--description", "All the news")
        #expect(created.status == 0, "\(created.stderr)")
        let tip = try await kiosk(
            store, "products", "create", "--app", app, "--id", "com.example.news.tip", "--type", "consumable",
            "--reference-name", "Tip", "--tier", "1", "--locale", "en_US", "--display-name", "Tip", "--description",
            "A tip")
        #expect(tip.status == 0, "\(tip.stderr)")
        #expect(try await kiosk(store, SampleAgreement.commandLine).status == 0)
        let tester = try await kiosk(
            store, "testers", "create", "--email", "reader@example.com", "--password", "sandbox-pass", "--storefront",
            "USA")
        #expect(tester.status == 0, "\(tester.stderr)")
    }

    /// Offers as typed: set a free trial and add a promotional offer, see them in `offers list` and in `products
    /// show` (text and `--json`), update the promotional offer, then remove both.
    @Test func offersFromTheCommandLine() async throws {
        try await withTestStore { store in
            try await Self.newsApp(store)
            let empty = try await kiosk(store, "offers", "list", "--app", Self.app, "--product", Self.monthly)
            #expect(empty.status == 0, "\(empty.stderr)")
            #expect(empty.stdout.hasPrefix("\(Self.monthly) has no offers."), "\(empty.stdout)")

            let trial = try await kiosk(
                store, "offers", "set-introductory", "--app", Self.app, "--product", Self.monthly, "--payment-mode",
                "free-trial", "--period", "P1W")
            #expect(trial.status == 0, "\(trial.stderr)")
            #expect(
                trial.stdout.hasPrefix("Set the introductory offer of \(Self.monthly) for every storefront.\n"),
                "\(trial.stdout)")
            let promotional = try await kiosk(
                store, "offers", "add-promotional", "--app", Self.app, "--product", Self.monthly, "--id", "winback",
                "--reference-name", "Come back", "--payment-mode", "pay_as_you_go", "--period", "P1M", "--periods", "3",
                "--price", "USA=0.49")
            #expect(promotional.status == 0, "\(promotional.stderr)")

            let listed = try await kiosk(store, "offers", "list", "--app", Self.app, "--product", Self.monthly)
            #expect(listed.status == 0, "\(listed.stderr)")
            #expect(
                Self.lines(listed.stdout) == [
                    "KIND ID STOREFRONT MODE PERIOD PRICE NAME",
                    "introductory - all free_trial 1 × P1W free -",
                    "promotional winback all pay_as_you_go 3 × P1M USD 0.49 in USA Come back",
                ], "\(listed.stdout)")

            let shown = try await kiosk(store, "products", "show", "--app", Self.app, Self.monthly)
            #expect(shown.status == 0, "\(shown.stderr)")
            #expect(
                shown.stdout.contains(
                    """
                    Introductory:    every storefront: free_trial, 1 × P1W, free
                    Promotional:     winback (Come back): pay_as_you_go, 3 × P1M, USD 0.49 in USA
                    """), "\(shown.stdout)")
            let json = try await kiosk(store, "products", "show", "--app", Self.app, Self.monthly, "--json")
            #expect(json.status == 0, "\(json.stderr)")
            let product = try #require(
                try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any], "\(json.stdout)")
            let introductory = try #require((product["introductoryOffers"] as? [[String: Any]])?.first)
            #expect(
                introductory["paymentMode"] as? String == "free_trial" && introductory["period"] as? String == "P1W")
            let offer = try #require((product["promotionalOffers"] as? [[String: Any]])?.first)
            #expect(offer["identifier"] as? String == "winback" && offer["numberOfPeriods"] as? Int == 3)
            #expect((offer["pricing"] as? [String: Any])?["customPrices"] as? [String: Int] == ["USA": 49])

            let updated = try await kiosk(
                store, "offers", "update-promotional", "--app", Self.app, "--product", Self.monthly, "--id", "winback",
                "--payment-mode", "pay_up_front", "--period", "P3M", "--periods", "1", "--tier", "2")
            #expect(updated.status == 0, "\(updated.stderr)")
            #expect(
                Self.lines(updated.stdout).contains(
                    "promotional winback all pay_up_front 1 × P3M tier 2, USD 0.49 in USA Come back"),
                "the tier joins the custom price, as `products update` does: \(updated.stdout)")

            let removed = try await kiosk(
                store, "offers", "remove-promotional", "--app", Self.app, "--product", Self.monthly, "--id", "winback")
            #expect(removed.status == 0, "\(removed.stderr)")
            #expect(!removed.stdout.contains("winback  all"), "\(removed.stdout)")
            let cleared = try await kiosk(
                store, "offers", "remove-introductory", "--app", Self.app, "--product", Self.monthly)
            #expect(cleared.status == 0, "\(cleared.stderr)")
            #expect(
                cleared.stdout.hasSuffix(
                    "\(Self.monthly) has no offers. Add one with `kiosk offers "
                        + "set-introductory`, `kiosk offers add-promotional` or `kiosk offers add-win-back`.\n"),
                "\(cleared.stdout)")
        }
    }

    /// Win-back offers as typed: added with their eligibility, listed as `win-back` rows with their rules, shown
    /// by `products show`, updated (a rule cleared with `none`), refused with the flag or the store's field, removed.
    @Test func winBackOffersFromTheCommandLine() async throws {
        try await withTestStore { store in
            try await Self.newsApp(store)
            let offers = ["--app", Self.app, "--product", Self.monthly]
            let added = try await KioskProcess.run(
                ["offers", "add-win-back"] + offers + [
                    "--id", "back_half", "--reference-name", "Half price", "--payment-mode", "pay_as_you_go",
                    "--period", "P1M", "--periods", "2", "--price", "USA=0.49", "--paid-months", "2",
                    "--max-months-since", "6", "--wait-months", "3", "--end-date", "2027-01-01",
                    "--server", store.baseURL, "--token", store.adminToken,
                ])
            #expect(added.status == 0, "\(added.stderr)")
            #expect(added.stdout.hasPrefix("Added the win-back offer 'back_half' to \(Self.monthly).\n"))
            let rules = "paid ≥ 2 mo, ended 1–6 mo ago, wait 3 mo, until 2027-01-01T00:00:00Z, normal priority"
            let listed = try await kiosk(store, "offers", "list", "--app", Self.app, "--product", Self.monthly)
            #expect(
                Self.lines(listed.stdout) == [
                    "KIND ID STOREFRONT MODE PERIOD PRICE NAME",
                    "win-back back_half all pay_as_you_go 2 × P1M USD 0.49 in USA Half price (\(rules))",
                ], "\(listed.stdout)")
            let shown = try await kiosk(store, "products", "show", "--app", Self.app, Self.monthly)
            #expect(
                shown.stdout.contains(
                    "Win-back:        back_half (Half price): pay_as_you_go, 2 × P1M, USD 0.49 in USA; \(rules)"),
                "\(shown.stdout)")

            let updated = try await KioskProcess.run(
                ["offers", "update-win-back"] + offers + [
                    "--id", "back_half", "--max-months-since", "none", "--priority", "HIGH", "--payment-mode",
                    "free_trial", "--periods", "1", "--server", store.baseURL, "--token", store.adminToken,
                ])
            #expect(updated.status == 0, "\(updated.stderr)")
            let json = try await kiosk(store, "products", "show", "--app", Self.app, Self.monthly, "--json")
            let product = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
            let offer = try #require((product["winBackOffers"] as? [[String: Any]])?.first)
            #expect(offer["paymentMode"] as? String == "free_trial")
            #expect(offer["priority"] as? String == "high")
            #expect(offer["timeSinceLastSubscribedInMonths"] as? [String: Int] == ["minimum": 1])
            #expect(offer["paidSubscriptionDurationInMonths"] as? Int == 2)
            #expect(offer["endDate"] as? String == "2027-01-01T00:00:00Z")

            func refusal(_ arguments: [String]) async throws -> String {
                let result = try await KioskProcess.run(
                    ["offers"] + arguments + offers + ["--server", store.baseURL, "--token", store.adminToken])
                #expect(result.status == 1, "\(arguments): \(result.stdout)")
                return result.stderr
            }
            var stderr = try await refusal(["update-win-back", "--id", "back_half", "--start-date", "soon"])
            #expect(stderr.hasPrefix("error: 'soon' is not a date.\n  at:  --start-date\n"), "\(stderr)")
            stderr = try await refusal(["update-win-back", "--id", "back_half", "--wait-months", "121"])
            #expect(stderr.hasPrefix("error: 121 is not a number of months"), "\(stderr)")
            #expect(stderr.contains("at:  --wait-months (winBackOffers[0].waitBetweenOffersInMonths)"), "\(stderr)")
            stderr = try await refusal(["remove-win-back", "--id", "nope"])
            #expect(stderr.hasPrefix("error: \(Self.monthly) has no win-back offer 'nope'."), "\(stderr)")
            stderr = try await refusal([
                "add-win-back", "--id", "back_half", "--payment-mode", "free_trial", "--period", "P1M",
            ])
            #expect(stderr.hasPrefix("error: \(Self.monthly) already has a win-back offer 'back_half'."))

            let removed = try await KioskProcess.run(
                ["offers", "remove-win-back"] + offers + [
                    "--id", "back_half", "--server", store.baseURL, "--token", store.adminToken,
                ])
            #expect(removed.status == 0, "\(removed.stderr)")
            #expect(removed.stdout.contains("has no offers"), "\(removed.stdout)")
        }
    }

    /// Mistakes the CLI sees itself name the flag; those the store sees come back with its field; either way the
    /// exit status is 1 and nothing changed.
    @Test func refusedOffers() async throws {
        try await withTestStore { store in
            try await Self.newsApp(store)
            /// Runs `kiosk offers <arguments>` on `product`, expects exit status 1 and returns standard error.
            func refusal(_ arguments: [String], product: String = Self.monthly) async throws -> String {
                let result = try await KioskProcess.run(
                    ["offers"] + arguments + [
                        "--app", Self.app, "--product", product, "--server", store.baseURL, "--token",
                        store.adminToken,
                    ])
                #expect(result.status == 1, "\(arguments): \(result.stdout)")
                return result.stderr
            }
            let trial = ["--payment-mode", "free_trial", "--period", "P1W"]

            // The CLI's own checks.
            var stderr = try await refusal(["set-introductory", "--price", "USA=0.99"] + trial)
            #expect(
                stderr == """
                    error: A free_trial offer has no price.
                      at:  --price
                      fix: Remove --tier and --price, or choose --payment-mode pay_as_you_go or pay_up_front.

                    """)
            stderr = try await refusal(["set-introductory", "--payment-mode", "sometimes", "--period", "P1W"])
            #expect(
                stderr == """
                    error: 'sometimes' is not a payment mode.
                      at:  --payment-mode
                      fix: Use free_trial, pay_as_you_go or pay_up_front.

                    """)
            stderr = try await refusal([
                "add-promotional", "--id", "x", "--payment-mode", "free_trial", "--period", "1M",
            ])
            #expect(stderr.hasPrefix("error: '1M' is not an offer period.\n  at:  --period\n"), "\(stderr)")
            stderr = try await refusal([
                "add-promotional", "--id", "x", "--payment-mode", "pay_up_front", "--period", "P1M", "--price", "XYZ=1",
            ])
            #expect(
                stderr.hasPrefix("error: 'XYZ=1' is not STOREFRONT=AMOUNT with a known storefront.\n  at:  --price\n"),
                "\(stderr)")
            stderr = try await refusal(["set-introductory", "--storefront", "Narnia"] + trial)
            #expect(stderr.hasPrefix("error: 'Narnia' is not a storefront Kiosk knows.\n  at:  --storefront\n"))
            stderr = try await refusal(["remove-promotional", "--id", "nope"])
            #expect(
                stderr == """
                    error: \(Self.monthly) has no promotional offer 'nope'.
                      at:  --id
                      fix: It has none; add one with `kiosk offers add-promotional`.

                    """)

            // The store's rules (CatalogValidator), at the field of the product they concern.
            stderr = try await refusal(["set-introductory", "--periods", "2"] + trial)
            #expect(
                stderr == """
                    error: A free_trial offer has exactly 1 period(s), not 2.
                      at:  --periods (introductoryOffers[0].numberOfPeriods)
                      fix: Give 1 period and put the whole offer length in the period (e.g. P3M).

                    """)
            stderr = try await refusal([
                "add-promotional", "--id", "half off", "--payment-mode", "pay_up_front", "--period", "P1M", "--tier",
                "1",
            ])
            #expect(stderr.contains("\n  at:  --id (promotionalOffers[0].identifier)\n"), "\(stderr)")
            stderr = try await refusal([
                "add-promotional", "--id", "soon", "--payment-mode", "pay_up_front", "--period", "P1M",
            ])
            #expect(
                stderr == """
                    error: A pay_up_front offer needs a price.
                      at:  --tier/--price (promotionalOffers[0].pricing)
                      fix: Give the offer a tier or custom prices, or make it a free trial.

                    """)
            stderr = try await refusal(["set-introductory"] + trial, product: "com.example.news.tip")
            #expect(
                stderr.hasPrefix(
                    "error: Introductory, promotional and win-back offers exist only on auto-renewable subscriptions, "
                        + "not on Consumable products.\n  at:  introductoryOffers\n"), "\(stderr)")
            stderr = try await refusal(["list"], product: "com.example.news.nothing")
            #expect(
                stderr.hasPrefix(
                    "error: App '\(Self.app)' has no product 'com.example.news.nothing'.\n  at:  --product (productId)\n"
                ),
                "\(stderr)")

            // One introductory offer per storefront: one for every storefront leaves no room for USA's own.
            let set = try await kiosk(
                store, "offers", "set-introductory", "--app", Self.app, "--product", Self.monthly, "--payment-mode",
                "free_trial", "--period", "P1W")
            #expect(set.status == 0, "\(set.stderr)")
            stderr = try await refusal([
                "set-introductory", "--storefront", "usa", "--payment-mode", "free_trial", "--period", "P2W",
            ])
            #expect(stderr.contains("\n  at:  --storefront (introductoryOffers[1].storefront)\n"), "\(stderr)")
            let listed = try await kiosk(store, "offers", "list", "--app", Self.app, "--product", Self.monthly)
            #expect(
                Self.lines(listed.stdout).last == "introductory - all free_trial 1 × P1W free -"
                    && Self.lines(listed.stdout).count == 2, "only the accepted trial: \(listed.stdout)")
        }
    }

    /// An introductory offer set from the CLI is what a purchase gets: the first purchase pays the offer price
    /// and its signed transaction names the offer.
    @Test func purchaseGetsTheOfferSetFromTheCommandLine() async throws {
        try await withTestStore { store in
            try await Self.newsApp(store)
            let set = try await kiosk(
                store, "offers", "set-introductory", "--app", Self.app, "--product", Self.monthly, "--storefront",
                "USA", "--payment-mode", "pay_as_you_go", "--period", "P1M", "--periods", "3", "--price", "USA=0.49")
            #expect(set.status == 0, "\(set.stderr)")
            let bought = try await kiosk(
                store, "test", "buy", "--app", Self.app, "--tester", "reader@example.com", "--product", Self.monthly,
                "--json")
            #expect(bought.status == 0, "\(bought.stderr)")
            let entry = try #require(
                try JSONSerialization.jsonObject(with: Data(bought.stdout.utf8)) as? [String: Any], "\(bought.stdout)")
            let jws = try #require((entry["transaction"] as? [String: Any])?["signedTransaction"] as? String)
            let transaction = try RenewalCrashTests.payload(of: jws)
            #expect(transaction["offerType"] as? Int == 1, "introductory: \(transaction)")
            #expect(transaction["offerDiscountType"] as? String == "PAY_AS_YOU_GO")
            #expect(transaction["offerPeriod"] as? String == "P1M")
            #expect(transaction["price"] as? Int == 490, "USD 0.49 in milliunits: \(transaction)")
        }
    }
}
