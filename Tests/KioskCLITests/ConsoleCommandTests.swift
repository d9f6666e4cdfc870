import Foundation
import KioskTestSupport
import KioskTesting
import Testing

@Suite struct ConsoleCommandTests {
    /// The agreement as typed: `accept` alone leaves it pending and says what is missing; the details make it
    /// active and `show` prints them masked with the vendor number; a W-8 form for a company in the United States, a
    /// mistyped IBAN and a bank account without its currency are refused with the reason.
    @Test func agreementDetailsFromTheCommandLine() async throws {
        try await withTestStore { store in
            let terms = try await kiosk(store, "agreements", "accept")
            #expect(terms.status == 0, "\(terms.stderr)")
            #expect(terms.stdout.contains("Paid Apps agreement: pending"), "\(terms.stdout)")
            #expect(terms.stdout.contains("still needs: a legal entity, a bank account and tax information"))
            #expect(terms.stdout.contains("fix: kiosk agreements accept --legal-name NAME"), "\(terms.stdout)")

            let mismatch = try await kiosk(
                store, "agreements", "accept", "--legal-name", "Coin Game Inc.", "--country", "usa", "--tax-form",
                "W-8BEN", "--tax-id", "12-3456789")
            #expect(mismatch.status != 0 && mismatch.stderr.contains("files form W-9"), "\(mismatch.stderr)")
            let typo = try await kiosk(
                store, "agreements", "accept", "--legal-name", "Coin Game Ltd", "--country", "GBR", "--bank-account",
                "GB29 NWBK 6016 1331 9268 91", "--bank-currency", "GBP")
            #expect(typo.status != 0 && typo.stderr.contains("check digits"), "\(typo.stderr)")
            let noCurrency = try await kiosk(store, "agreements", "accept", "--bank-account", "123456789")
            #expect(noCurrency.status == 64 && noCurrency.stderr.contains("--bank-currency"), "\(noCurrency.stderr)")

            let complete = try await kiosk(
                store, "agreements", "accept", "--legal-name", "Coin Game Inc.", "--country", "usa", "--bank-account",
                "000123456789", "--bank-currency", "usd", "--tax-form", "w-9", "--tax-id", "12-3456789")
            #expect(complete.status == 0, "\(complete.stderr)")
            #expect(complete.stdout.contains("Paid Apps agreement: active"), "\(complete.stdout)")
            let show = try await kiosk(store, "agreements", "show")
            #expect(show.stdout.contains("legal entity:  Coin Game Inc. (USA)"), "\(show.stdout)")
            #expect(show.stdout.contains("bank account:  •••• 6789 USD, Coin Game Inc."), "\(show.stdout)")
            #expect(show.stdout.contains("tax:           W-9, taxpayer id •••• 6789"), "\(show.stdout)")
            #expect(show.stdout.contains("vendor number: 8"), "\(show.stdout)")
            #expect(!show.stdout.contains("123456789"), "\(show.stdout)")
        }
    }

    /// The README walkthrough, as typed: an app, a product, the "zero products" explanation, the agreement, review,
    /// prices, a group, a subscription, a tester and a key.
    @Test func readmeWalkthrough() async throws {
        try await withTestStore { store in
            let app = try await kiosk(
                store, "apps", "create", "--bundle-id", "com.example.coins", "--name", "Coin Game")
            #expect(app.status == 0, "\(app.stderr)")
            #expect(app.stdout.contains("1400000001"))
            let product = try await kiosk(
                store, "products", "create", "--app", "com.example.coins", "--id", "com.example.coins.100", "--type",
                "consumable", "--reference-name", "100 coins", "--tier", "1", "--locale", "en_US", "--display-name",
                "100 Coins", "--description", "A small pile of coins")
            #expect(product.status == 0, "\(product.stderr)")
            let show = try await kiosk(
                store, "products", "show", "--app", "com.example.coins", "com.example.coins.100")
            #expect(show.status == 0, "\(show.stderr)")
            #expect(show.stdout.contains("NOT available"), "\(show.stdout)")
            #expect(show.stdout.contains("kiosk agreements accept"))

            #expect(try await kiosk(store, SampleAgreement.commandLine).status == 0)
            let sandbox = try await kiosk(
                store, "products", "availability", "--app", "com.example.coins", "com.example.coins.100")
            #expect(sandbox.status == 0, "\(sandbox.stderr)")
            #expect(sandbox.stdout.contains("sandbox USA: available"), "\(sandbox.stdout)")
            let production = try await kiosk(
                store, "products", "availability", "--app", "com.example.coins", "com.example.coins.100",
                "--environment",
                "production")
            #expect(production.status == 0, "\(production.stderr)")
            #expect(production.stdout.contains("NOT available"), "\(production.stdout)")
            for action in ["submit", "approve"] {
                let review = try await kiosk(
                    store, "products", "review", "--app", "com.example.coins", "com.example.coins.100", "--action",
                    action)
                #expect(review.status == 0, "\(review.stderr)")
            }
            let prices = try await kiosk(
                store, "products", "prices", "--app", "com.example.coins", "com.example.coins.100")
            #expect(prices.status == 0, "\(prices.stderr)")
            #expect(
                prices.stdout.contains("USA") && prices.stdout.contains("0.99") && prices.stdout.contains("6.00"),
                "\(prices.stdout)")

            let group = try await kiosk(
                store, "groups", "create", "--app", "com.example.coins", "--name", "Coin Club", "--localization",
                "en_US=Coin Club")
            #expect(group.status == 0, "\(group.stderr)")
            let subscription = try await kiosk(
                store, "products", "create", "--app", "com.example.coins", "--id", "com.example.coins.club.monthly",
                "--type", "auto_renewable", "--reference-name", "Club monthly", "--tier", "5", "--group", "Coin Club",
                "--level", "1", "--duration", "P1M", "--locale", "en_US", "--display-name", "Coin Club",
                "--description", "Fresh coins every month")
            #expect(subscription.status == 0, "\(subscription.stderr)")
            let tester = try await kiosk(
                store, "testers", "create", "--email", "tester@example.com", "--password", "sandbox-pass",
                "--storefront", "USA")
            #expect(tester.status == 0, "\(tester.stderr)")

            let keyFile = FileManager.default.temporaryDirectory.appendingPathComponent("key-\(UUID().uuidString).p8")
            defer { try? FileManager.default.removeItem(at: keyFile) }
            let key = try await kiosk(
                store, "keys", "create", "--app", "com.example.coins", "--output", keyFile.path)
            #expect(key.status == 0, "\(key.stderr)")
            #expect(key.stdout.contains("Key id:") && key.stdout.contains("Issuer id:"))
            let mode = try FileManager.default.attributesOfItem(atPath: keyFile.path)[.posixPermissions] as? Int
            #expect(mode == 0o600)
            #expect(try String(contentsOf: keyFile, encoding: .utf8).hasPrefix("-----BEGIN PRIVATE KEY-----"))

            // The secret alone on standard output; asking again shows the same one, --regenerate replaces it.
            let secret = try await kiosk(store, "apps", "shared-secret", "com.example.coins")
            #expect(secret.status == 0, "\(secret.stderr)")
            #expect(secret.stdout.range(of: "^[0-9a-f]{32}\n$", options: .regularExpression) != nil, "\(secret.stdout)")
            #expect(secret.stderr.contains("Created a shared secret for com.example.coins."), "\(secret.stderr)")
            let again = try await kiosk(store, "apps", "shared-secret", "com.example.coins")
            #expect(again.stdout == secret.stdout && again.stderr.isEmpty, "\(again.stdout) \(again.stderr)")
            let replaced = try await kiosk(store, "apps", "shared-secret", "com.example.coins", "--regenerate")
            #expect(replaced.status == 0 && replaced.stdout != secret.stdout, "\(replaced.stdout)")
            #expect(replaced.stderr.contains("Replaced the shared secret"), "\(replaced.stderr)")
        }
    }

    /// `--json` prints one JSON document with the HTTP API's field names.
    @Test func jsonOutput() async throws {
        try await withTestStore { store in
            let created = try await kiosk(
                store, "apps", "create", "--bundle-id", "com.example.json", "--name", "JSON", "--json")
            #expect(created.status == 0, "\(created.stderr)")
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(created.stdout.utf8)) as? [String: Any])
            #expect(object["bundleId"] as? String == "com.example.json")
            #expect(object["appAppleId"] as? Int == 1_400_000_001)
            let key = try await kiosk(store, "keys", "create", "--app", "com.example.json", "--json")
            #expect(key.status == 0, "\(key.stderr)")
            let keyObject = try #require(
                try JSONSerialization.jsonObject(with: Data(key.stdout.utf8)) as? [String: Any])
            #expect(
                keyObject["keyId"] is String && keyObject["issuerId"] is String && keyObject["privateKey"] is String)
        }
    }

    /// Errors print what was wrong, where and what to do on standard error, and the exit status is non-zero.
    @Test func errorsAreReadable() async throws {
        try await withTestStore { store in
            let invalid = try await kiosk(store, "apps", "create", "--bundle-id", "coins", "--name", "X")
            #expect(invalid.status == 1)
            #expect(
                invalid.stderr.contains("error:") && invalid.stderr.contains("at:  --bundle-id (bundleId)")
                    && invalid.stderr.contains("fix:"), "the flag typed: \(invalid.stderr)")
            let tester = try await kiosk(
                store, "testers", "create", "--email", "not-an-email", "--password", "sandbox-pass")
            #expect(tester.stderr.contains("\n  at:  --email (email)\n"), "\(tester.stderr)")
            let missing = try await kiosk(store, "apps", "show", "com.example.nothing")
            #expect(missing.status == 1)
            #expect(
                missing.stderr.hasPrefix(
                    "error: No app has bundle id 'com.example.nothing'.\n  at:  <bundle-id> (bundleId)\n  fix: ")
                    && missing.stderr.contains("kiosk apps list"), "\(missing.stderr)")

            let noToken = try await KioskProcess.run(["apps", "list", "--server", store.baseURL])
            #expect(noToken.status == 1)
            #expect(
                noToken.stderr.hasPrefix("error: No admin token.\n  fix: ")
                    && noToken.stderr.contains("KIOSK_ADMIN_TOKEN"), "\(noToken.stderr)")
            let wrongToken = try await KioskProcess.run([
                "apps", "list", "--server", store.baseURL, "--token", "kiosk_wrong_0123456789",
            ])
            #expect(wrongToken.status == 1)
            #expect(
                wrongToken.stderr.hasPrefix("error: The admin token is wrong.\n  at:  Authorization\n  fix: "),
                "\(wrongToken.stderr)")
            let envToken = try await KioskProcess.run(
                ["apps", "list"], environment: ["KIOSK_SERVER": store.baseURL, "KIOSK_ADMIN_TOKEN": store.adminToken])
            #expect(envToken.status == 0, "\(envToken.stderr)")
            #expect(envToken.stdout.hasPrefix("No apps yet."), "the refused create made nothing: \(envToken.stdout)")
        }
        let unreachable = try await KioskProcess.run([
            "apps", "list", "--server", "http://127.0.0.1:1", "--token", "kiosk_x_0123456789abcdef",
        ])
        #expect(unreachable.status == 1)
        #expect(
            unreachable.stderr.hasPrefix("error: Cannot reach the store at http://127.0.0.1:1 ")
                && unreachable.stderr.contains("\n  fix: Start it with `kiosk serve`"), "\(unreachable.stderr)")
    }

    /// `kiosk catalog import` takes an Xcode `.storekit` file; what `kiosk catalog export` writes imports again
    /// without changes.
    @Test func catalogFiles() async throws {
        try await withTestStore { store in
            #expect(
                try await kiosk(store, "apps", "create", "--bundle-id", "com.example.kit", "--name", "Kit").status
                    == 0)
            let sample = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("KioskCoreTests/Resources/Sample.storekit")
            let imported = try await kiosk(store, "catalog", "import", "--app", "com.example.kit", sample.path)
            #expect(imported.status == 0, "\(imported.stderr)")
            // The group and its seven products.
            #expect(imported.stdout.contains(": 8 created, 0 updated, 0 unchanged."), "\(imported.stdout)")
            #expect(imported.stdout.contains("\n  + group:Trails Plus\n"), "\(imported.stdout)")
            for format in ["json", "storekit"] {
                let file = FileManager.default.temporaryDirectory.appendingPathComponent(
                    "export-\(UUID().uuidString).\(format)")
                defer { try? FileManager.default.removeItem(at: file) }
                let exported = try await kiosk(
                    store, "catalog", "export", "--app", "com.example.kit", "--format", format, "--output", file.path)
                #expect(exported.status == 0, "\(exported.stderr)")
                let again = try await kiosk(
                    store, "catalog", "import", "--app", "com.example.kit", "--format", format, file.path)
                #expect(again.status == 0, "\(format): \(again.stderr)")
                #expect(again.stdout.contains("0 created, 0 updated"), "\(format): \(again.stdout) \(again.stderr)")
            }
            let broken = FileManager.default.temporaryDirectory.appendingPathComponent(
                "broken-\(UUID().uuidString).json")
            defer { try? FileManager.default.removeItem(at: broken) }
            try Data("{\n  \"format\": \"kiosk-catalog\",\n  \"version\": 1,\n  \"products\": [\n".utf8).write(
                to: broken)
            let failed = try await kiosk(store, "catalog", "import", "--app", "com.example.kit", broken.path)
            // A `.json` file is read as a Kiosk catalog, broken or not, and the error says where it breaks.
            #expect(failed.status == 1)
            #expect(
                failed.stderr == """
                    error: The catalog file is not valid JSON: the document ends where a value was expected.
                      at:  line 5, column 1
                      fix: Correct the JSON syntax there.

                    """, "\(failed.stderr)")
        }
    }

    /// A `.storekit` file with several problems: the CLI prints every one, with its product, its path in the file
    /// and its fix, and exits 1; `--json` prints the store's answer with all of them; a file with warnings imports
    /// and lists them with their paths.
    @Test func storeKitProblemsAllAtOnce() async throws {
        try await withTestStore { store in
            #expect(
                try await kiosk(store, "apps", "create", "--bundle-id", "com.example.kit", "--name", "Kit").status
                    == 0)
            let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("KioskStoreTests/Resources/StoreKitCorpus")
            let broken = corpus.appendingPathComponent("broken-many-errors.storekit").path
            let failed = try await kiosk(store, "catalog", "import", "--app", "com.example.kit", broken)
            #expect(failed.status == 1)
            #expect(
                failed.stderr.hasPrefix("5 problems:\nerror: com.driftwood.photo.filters.lifetime: "),
                "\(failed.stderr)")
            #expect(
                failed.stderr.contains(
                    """
                    error: com.driftwood.photo.pro.fiveday: 'P5D' is not a renewal period.
                      at:  subscriptionGroups[0].subscriptions[1].recurringSubscriptionPeriod
                      fix: Use one of
                    """), "\(failed.stderr)")
            let json = try await kiosk(store, "catalog", "import", "--app", "com.example.kit", broken, "--json")
            #expect(json.status == 1)
            let answer = try #require(
                try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any], "\(json.stdout)")
            #expect((answer["errors"] as? [[String: Any]])?.count == 5, "\(json.stdout)")

            let future = corpus.appendingPathComponent("v6-future.storekit").path
            let imported = try await kiosk(store, "catalog", "import", "--app", "com.example.kit", future)
            #expect(imported.status == 0, "\(imported.stderr)")
            #expect(
                imported.stdout.contains(
                    """
                      warning: com.inkwell.quillmark.studio.monthly: Kiosk does not use 'retentionMessages' in a \
                    subscription; it is kept and written back on export.
                        at:  subscriptionGroups[0].subscriptions[0].retentionMessages
                    """), "\(imported.stdout)")
        }
    }

    /// A value the store does not know is refused naming the flag the user typed and every valid value.
    @Test func badValuesNameTheFlagAndTheChoices() async throws {
        try await withTestStore { store in
            #expect(
                try await kiosk(store, "apps", "create", "--bundle-id", "com.example.kit", "--name", "Kit").status
                    == 0)
            let type = try await kiosk(
                store, "products", "create", "--app", "com.example.kit", "--id", "com.example.kit.x", "--type", "foo",
                "--tier", "1")
            #expect(type.status == 1)
            #expect(
                type.stderr == """
                    error: The field 'type' has an invalid value: 'foo' is not one of 'consumable', 'non_consumable', \
                    'auto_renewable', 'non_renewing'.
                      at:  --type (type)
                      fix: Send one of the values the message lists.

                    """, "\(type.stderr)")
            let duration = try await kiosk(
                store, "products", "create", "--app", "com.example.kit", "--id", "com.example.kit.y", "--type",
                "auto_renewable", "--tier", "1", "--duration", "P5D")
            #expect(duration.status == 1)
            #expect(duration.stderr.contains("'P5D' is not one of 'P1W', 'P1M', 'P2M', 'P3M', 'P6M', 'P1Y'"))
            #expect(duration.stderr.contains("\n  at:  --duration (duration)\n"), "\(duration.stderr)")
        }
    }

    /// Tax and commission as typed: a product's prices show what a sale earns (£0.99 with 20% VAT inside earns
    /// £0.58 at 30%); a new rate from a date and the Small Business Program change it; bad rates are refused.
    @Test func taxRulesAndProceedsFromTheCommandLine() async throws {
        try await withTestStore { store in
            #expect(
                try await kiosk(store, "apps", "create", "--bundle-id", "com.example.tax", "--name", "Tax").status
                    == 0)
            let created = try await kiosk(
                store, "products", "create", "--app", "com.example.tax", "--id", "com.example.tax.coins", "--type",
                "consumable", "--reference-name", "Coins", "--tier", "1")
            #expect(created.status == 0, "\(created.stderr)")
            func prices() async throws -> String {
                let prices = try await kiosk(
                    store, "products", "prices", "--app", "com.example.tax", "com.example.tax.coins")
                #expect(prices.status == 0, "\(prices.stderr)")
                return prices.stdout
            }
            /// The columns of `storefront`'s row.
            func row(_ storefront: String, in text: String) -> [String] {
                let line = text.split(separator: "\n").first { $0.hasPrefix(storefront + " ") } ?? ""
                return line.split(separator: " ").map(String.init)
            }
            var text = try await prices()
            #expect(row("GBR", in: text) == ["GBR", "GBP", "0.99", "tier", "20%", "0.58"], "\(text)")
            #expect(row("USA", in: text) == ["USA", "USD", "0.99", "tier", "0%", "on", "top", "0.69"], "\(text)")
            #expect(text.contains("a 30% commission"), "\(text)")

            let set = try await kiosk(store, "tax", "set", "GBR", "--rate", "25%", "--from", "2020-01-01")
            #expect(
                set.status == 0 && set.stdout.contains("GBR: 25% included in prices from 2020-01-01"), "\(set.stdout)")
            let enrolled = try await kiosk(store, "agreements", "small-business", "--since", "2020-01-01")
            #expect(enrolled.stdout.contains("15% commission from 2020-01-01"), "\(enrolled.stdout) \(enrolled.stderr)")
            text = try await prices()
            // 99 / 1.25 = 79.2 → 79 net; 15% of 79 = 11.85 → 12; 67 proceeds.
            #expect(row("GBR", in: text) == ["GBR", "GBP", "0.99", "tier", "25%", "0.67"], "\(text)")
            let list = try await kiosk(store, "tax", "list")
            #expect(row("GBR", in: list.stdout) == ["GBR", "in", "price", "25%", "yours"], "\(list.stdout)")
            #expect(row("DEU", in: list.stdout) == ["DEU", "in", "price", "19%", "default"], "\(list.stdout)")

            for rate in ["101", "20.123", "-5", "abc", "1e3"] {
                let refused = try await kiosk(store, "tax", "set", "GBR", "--rate", rate)
                #expect(refused.status != 0 && refused.stderr.contains("--rate"), "\(rate): \(refused.stderr)")
            }
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("sales-\(UUID().uuidString).txt")
            defer { try? FileManager.default.removeItem(at: file) }
            let report = try await kiosk(
                store, "reports", "sales", "--frequency", "daily", "--date", "2026-11-24", "--output", file.path)
            #expect(report.stdout.contains("(0 rows)"), "\(report.stdout) \(report.stderr)")
            #expect(try String(contentsOf: file, encoding: .utf8).hasPrefix("Provider\tProvider Country\tSKU"))
            let badDate = try await kiosk(store, "reports", "sales", "--date", "2026-02-30")
            #expect(badDate.status != 0 && badDate.stderr.contains("--date"), "\(badDate.stderr)")
            let finance = try await kiosk(store, "reports", "finance", "--month", "2026-11", "--region", "us")
            #expect(
                finance.status == 0 && finance.stdout.contains("Total_Rows\t0"), "\(finance.stdout) \(finance.stderr)")
            let badRegion = try await kiosk(store, "reports", "finance", "--month", "2026-11", "--region", "XX")
            #expect(badRegion.status != 0 && badRegion.stderr.contains("--region"), "\(badRegion.stderr)")

            let key = try await kiosk(store, "api-keys", "create", "--role", "finance", "--role", "SALES")
            #expect(key.status == 0 && key.stdout.contains("BEGIN PRIVATE KEY"), "\(key.stdout) \(key.stderr)")
            #expect(key.stdout.contains("Roles:      FINANCE, SALES"), "\(key.stdout)")
            let keyId = try #require(
                key.stdout.split(separator: "\n").first { $0.hasPrefix("Key id:") }?.split(separator: " ").last)
            let keys = try await kiosk(store, "api-keys", "list")
            #expect(keys.stdout.contains("Vendor number: 8") && keys.stdout.contains(String(keyId)), "\(keys.stdout)")
            #expect(try await kiosk(store, "api-keys", "revoke", String(keyId)).status == 0)
            #expect(try await kiosk(store, "api-keys", "list").stdout.contains("revoked"))
            let noRole = try await kiosk(store, "api-keys", "create", "--role", "OWNER")
            #expect(noRole.status != 0 && noRole.stderr.contains("--role"), "\(noRole.stderr)")
            let rate = try await kiosk(store, "exchange-rates", "set", "GBP", "1.27", "--from", "2026-11-01")
            #expect(rate.stdout.contains("1 GBP = 1.27 USD from 2026-11-01"), "\(rate.stdout) \(rate.stderr)")
            #expect(try await kiosk(store, "exchange-rates", "list").stdout.contains("GBP"))
            let badRate = try await kiosk(store, "exchange-rates", "set", "GBP", "1.2.7")
            #expect(badRate.status != 0 && badRate.stderr.contains("not a rate"), "\(badRate.stderr)")
            let unknown = try await kiosk(store, "tax", "set", "XYZ", "--rate", "5")
            #expect(unknown.status != 0 && unknown.stderr.contains("not a storefront"), "\(unknown.stderr)")
        }
    }

    /// `kiosk console-users`: a person added with a temporary password shown once, listed, given roles, disabled
    /// and given a new password; a role that is not one is named with the choices.
    @Test func consoleUsersFromTheCommandLine() async throws {
        try await withTestStore { store in
            let added = try await kiosk(
                store, "console-users", "add", "--email", "Dee@example.com", "--name", "Dee", "--role", "developer",
                "--role", "app-manager")
            #expect(added.status == 0, "\(added.stdout) \(added.stderr)")
            #expect(
                added.stdout.contains("Roles:   APP_MANAGER, DEVELOPER") && added.stdout.contains("Status:  invited"))
            #expect(added.stdout.contains("Temporary password (shown only once"), "\(added.stdout)")
            let listed = try await kiosk(store, "console-users", "list")
            #expect(listed.stdout.contains("dee@example.com") && listed.stdout.contains("APP_MANAGER,DEVELOPER"))
            #expect(!listed.stdout.contains("Temporary password"))
            let disabled = try await kiosk(
                store, "console-users", "update", "dee@example.com", "--role", "SALES", "--disable")
            #expect(
                disabled.stdout.contains("Roles:   SALES") && disabled.stdout.contains("Status:  disabled"),
                "\(disabled.stdout) \(disabled.stderr)")
            let reset = try await kiosk(store, "console-users", "reset-password", "dee@example.com")
            #expect(reset.status == 0 && reset.stdout.contains("Temporary password"), "\(reset.stderr)")
            let noRole = try await kiosk(
                store, "console-users", "add", "--email", "x@example.com", "--name", "X", "--role", "owner")
            #expect(noRole.status != 0 && noRole.stderr.contains("CUSTOMER_SUPPORT"), "\(noRole.stderr)")
            let noInput = try await kiosk(
                store, "console-users", "add", "--email", "x@example.com", "--name", "X", "--role", "sales",
                "--password-stdin")
            #expect(noInput.status != 0 && noInput.stderr.contains("read nothing"), "\(noInput.stderr)")
            let unknown = try await kiosk(store, "console-users", "reset-password", "nobody@example.com")
            #expect(unknown.status != 0 && unknown.stderr.contains("There is no console user"), "\(unknown.stderr)")
        }
    }
}
