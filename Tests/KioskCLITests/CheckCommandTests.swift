import Foundation
import KioskCheck
import KioskProtocol
import KioskTestSupport
import KioskTesting
import Testing

/// `kiosk check` as a developer types it, against servers written the way real ones are: Kiosk's own merchant
/// passes every story, and the sample server in Examples/CheckSamples fails exactly the stories of its one bug.
@Suite(.runsServers) struct CheckCommandTests {
    static let app = "com.example.coins"
    static let adventure = "com.example.coins.adventure_pass"
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Every story Kiosk can play against a server with a probe, a purchase call and no reconcile call.
    static let everyStory = Set(CheckRunner.catalogue.map(\.name))

    /// The app of Examples/CoinGame.storekit (a file Xcode wrote: coins, stickers, a subscription group of two
    /// levels, one with a free trial), plus a non-renewing pass, sold in the sandbox.
    static func createShop(on store: TestStore) async throws {
        let created = try await store.request(.POST, "/admin/v1/apps", json: ["bundleId": app, "name": "Coin Game"])
        #expect(created.status == 201, "\(created.text)")
        let imported = try await KioskProcess.run(
            ["catalog", "import", "--app", app, repository.appendingPathComponent("Examples/CoinGame.storekit").path]
                + options(store))
        #expect(imported.status == 0, "\(imported.stderr)")
        let pass = try await store.request(
            .POST, "/admin/v1/apps/\(app)/products",
            json: [
                "productId": adventure, "type": "non_renewing", "referenceName": "Adventure Pass",
                "pricing": ["tier": 3],
                "localizations": [["locale": "en_US", "displayName": "Adventure Pass", "description": "A season."]],
            ])
        #expect(pass.status == 201, "\(pass.text)")
        let agreement = try await store.request(
            .POST, "/admin/v1/agreements/paid-apps/accept", json: SampleAgreement.json)
        #expect((200..<300).contains(agreement.status), "\(agreement.text)")
        let codes = try await KioskProcess.run(
            [
                "offer-codes", "create", "--app", app, "--product", "com.example.coins.club.yearly", "--name",
                "Welcome back", "--count", "10",
            ] + options(store))
        #expect(codes.status == 0, "\(codes.stderr)")
        let winBack = try await KioskProcess.run(
            [
                "offers", "add-win-back", "--app", app, "--product", "com.example.coins.club.monthly", "--id",
                "come_back", "--payment-mode", "free_trial", "--period", "P1M",
            ] + options(store))
        #expect(winBack.status == 0, "\(winBack.stderr)")
        let promotional = try await KioskProcess.run(
            [
                "offers", "add-promotional", "--app", app, "--product", "com.example.coins.club.yearly", "--id",
                "loyal_customer", "--payment-mode", "free_trial", "--period", "P1M",
            ] + options(store))
        #expect(promotional.status == 0, "\(promotional.stderr)")
    }

    static func options(_ store: TestStore) -> [String] { ["--server", store.baseURL, "--token", store.adminToken] }

    /// `kiosk check init`'s file as a developer finishes it: comments kept, `extra` lines (a purchase call, a
    /// reconcile call) added.
    static func checkFile(from initialized: String, extra: String) -> String {
        initialized.replacingOccurrences(of: #"  "answerWithin": 5,"#, with: extra + #"  "answerWithin": 5,"#)
    }

    /// A check file with a misspelt key, and one whose probe header names a variable that is not set, are refused
    /// with the field at fault before anything in the store changes: the app's notification URL and the sandbox
    /// clock stay as they were.
    @Test func badCheckFilesAreRefusedBeforeTheStoreChanges() async throws {
        try await withTestStore { store in
            try await Self.createShop(on: store)
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
                "kiosk-check-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let clockBefore = try await store.request(.GET, TestControlRoutes.clock.path()).json["frozen"] as? Bool

            let misspelt = folder.appendingPathComponent("misspelt.json")
            try #"{"bundleId": "\#(Self.app)", "notificationURL": "http://127.0.0.1:1/n", "prodcts": []}"#
                .write(to: misspelt, atomically: true, encoding: .utf8)
            let refused = try await KioskProcess.run(["check", "--config", misspelt.path] + Self.options(store))
            #expect(refused.status == 1)
            #expect(refused.stderr.hasPrefix("error: "), "\(refused.stderr)")
            #expect(refused.stderr.contains("prodcts"), "the unknown key is named: \(refused.stderr)")

            let secret = folder.appendingPathComponent("secret.json")
            try """
            // a probe whose token comes from the environment
            {"bundleId": "\(Self.app)", "notificationURL": "http://127.0.0.1:1/n",
             "probe": {"url": "http://127.0.0.1:1/probe", "headers": {"Authorization": "Bearer ${NOT_SET_TOKEN}"}},
             "products": [{"productId": "com.example.coins.500", "balance": "coins", "amount": 500}]}
            """.write(to: secret, atomically: true, encoding: .utf8)
            let unset = try await KioskProcess.run(["check", "--config", secret.path] + Self.options(store))
            #expect(unset.status == 1)
            #expect(unset.stderr.contains("${NOT_SET_TOKEN}, which is not set"), "\(unset.stderr)")
            #expect(unset.stderr.contains("at:  headers.Authorization"), "\(unset.stderr)")
            #expect(!unset.stderr.contains("[1/"), "no story ran")

            let app = try await store.request(.GET, "/admin/v1/apps/\(Self.app)")
            #expect((app.json["sandboxNotificationURLs"] as? [String]) == [], "\(app.text)")
            #expect(
                try await store.request(.GET, TestControlRoutes.clock.path()).json["frozen"] as? Bool == clockBefore)
            #expect(
                try await store.request(.GET, AdminRoutes.checkRuns.path()).decode(CheckRunList.self).checkRuns.isEmpty)
        }
    }

    /// Kiosk's merchant (`kiosk merchant init`, users by app account token) passes every story it can be put
    /// through; the JUnit file says the same; the probe's token never appears in the output.
    @Test func kiosksMerchantPassesEveryStory() async throws {
        try await withTestStore { store in
            try await Self.createShop(on: store)
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
                "kiosk-check-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: folder) }
            let config = folder.appendingPathComponent("merchant.json")
            let initialized = try await KioskProcess.run(
                [
                    "merchant", "init", "--app", Self.app, "--output", config.path, "--users-by-app-account-token",
                    "--json",
                ]
                    + Self.options(store))
            #expect(initialized.status == 0, "\(initialized.stderr)")
            let adminToken = try #require(
                (try JSONSerialization.jsonObject(with: Data(initialized.stdout.utf8)) as? [String: Any])?["adminToken"]
                    as? String)
            // The merchant answers consumption requests: a setting of its own, needing the customers' consent.
            var configuration = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: config)) as? [String: Any])
            var apps = try #require(configuration["apps"] as? [[String: Any]])
            #expect(apps.first?["usersByAppAccountToken"] as? Bool == true, "init --users-by-app-account-token")
            apps[0]["sendConsumptionInformation"] = true
            configuration["apps"] = apps
            try JSONSerialization.data(withJSONObject: configuration).write(to: config)
            let merchant = try await ServeProcess.listening(
                command: ["merchant", "serve"], ["--config", config.path, "--port", "0", "--log-level", "warning"])
            defer { merchant.kill() }
            let merchantURL = try await merchant.baseURL()

            let written = try await KioskProcess.run(
                [
                    "check", "init", "--app", Self.app, "--notification-url",
                    "\(merchantURL)/merchant/v1/notifications",
                    "--probe", "\(merchantURL)/merchant/v1/admin/probe", "--probe-header",
                    "Authorization: Bearer ${MERCHANT_ADMIN_TOKEN}",
                ] + Self.options(store))
            #expect(written.status == 0, "\(written.stderr)")
            #expect(
                written.stdout.contains(#"{"productId": "com.example.coins.500", "balance": "coins", "amount": 500}"#),
                "\(written.stdout)")
            #expect(
                written.stdout.contains(
                    #"{"productId": "com.example.coins.club.monthly", "entitlement": "coin-club"}"#),
                "\(written.stdout)")
            let checkFile = folder.appendingPathComponent("check.json")
            let reconcile =
                #"  "reconcileCall": {"url": "\#(merchantURL)/merchant/v1/admin/reconcile", "headers": {"Authorization": "Bearer ${MERCHANT_ADMIN_TOKEN}"}, "body": "{\"environment\": \"Sandbox\", \"repair\": true, \"until\": \"{{now}}\"}"},"#
            try Self.checkFile(from: written.stdout, extra: reconcile + "\n")
                .write(to: checkFile, atomically: true, encoding: .utf8)
            let junit = folder.appendingPathComponent("check.xml")

            let checked = try await KioskProcess.run(
                ["check", "--config", checkFile.path, "--seed", "7", "--junit", junit.path] + Self.options(store),
                environment: ["MERCHANT_ADMIN_TOKEN": adminToken])
            #expect(checked.status == 0, "\(checked.stdout)\n\(checked.stderr)")
            #expect(
                !checked.stdout.contains(adminToken) && !checked.stderr.contains(adminToken),
                "the probe's token is never printed")
            let notMade: Set = ["app-report-first", "app-report-late"]
            for story in Self.everyStory.subtracting(notMade) {
                #expect(
                    checked.stdout.split(separator: "\n").contains {
                        $0.hasPrefix(story + " ") && $0.contains(" pass ")
                    }, "\(story): \(checked.stdout)")
            }
            for story in notMade {
                #expect(
                    checked.stdout.split(separator: "\n").contains {
                        $0.hasPrefix(story + " ") && $0.contains("not made")
                    }, "\(story)")
            }
            #expect(checked.stderr.contains("[1/\(Self.everyStory.count)] consumable"), "a progress line per story")
            #expect(!checked.stdout.contains("Notes (not failures)"), "the merchant sent consumption information")
            let runs = try await store.request(.GET, AdminRoutes.checkRuns.path()).decode(CheckRunList.self)
            let run = try #require(runs.checkRuns.first, "the run is recorded for the console")
            #expect(run.passed && run.seed == 7 && run.bundleId == Self.app)
            #expect(checked.stderr.contains("The console shows this run at \(store.baseURL)/console/checks/\(run.id)"))
            let xml = try String(contentsOf: junit, encoding: .utf8)
            #expect(xml.contains(#"tests="\#(Self.everyStory.count)" failures="0" skipped="2""#), "\(xml)")

            // The app's sandbox notification URL is put back as it was.
            let app = try await store.request(.GET, "/admin/v1/apps/\(Self.app)")
            #expect((app.json["sandboxNotificationURLs"] as? [String]) == [], "\(app.text)")
        }
    }

    /// The sample server (Python, Apple's app-store-server-library) passes every story it can be put through, and
    /// each of its classic bugs fails exactly the stories it should.
    @Test(.enabled(if: TestEnvironment.runs(.python), "set KIOSK_TEST_PYTHON (.ci/run does)"))
    func sampleServerFailsExactlyTheStoriesOfItsBug() async throws {
        let python = try TestEnvironment.require(.python)
        try await withTestStore { store in
            try await Self.createShop(on: store)
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
                "kiosk-check-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let root = folder.appendingPathComponent("kiosk-sandbox-root.pem")
            let exported = try await KioskProcess.run(
                ["certs", "export", "--environment", "sandbox", "--format", "pem", "--output", root.path]
                    + Self.options(store))
            #expect(exported.status == 0, "\(exported.stderr)")
            let written = try await KioskProcess.run(
                [
                    "check", "init", "--app", Self.app, "--notification-url", "http://127.0.0.1:1/notifications",
                    "--probe", "http://127.0.0.1:1/probe",
                ] + Self.options(store))
            #expect(written.status == 0, "\(written.stderr)")
            let file = try CheckFile.load(Data(written.stdout.utf8))
            let products = folder.appendingPathComponent("products.json")
            try JSONEncoder().encode(file.products).write(to: products)

            let expected: [String?: Set<String>] = [
                nil: [],
                "grants-twice": ["duplicate", "concurrent-duplicate", "app-report-first", "app-report-late"],
                "ignores-refund": [
                    "refund-consumable", "refund-subscription", "prorated-refund", "refund-reversed",
                    "refund-before-purchase",
                ],
                "no-verify": ["forged-notification", "other-app-notification"],
                "drops-early-refund": ["refund-before-purchase"],
            ]
            for (bug, failures) in expected.sorted(by: { ($0.key ?? "") < ($1.key ?? "") }) {
                let server = try ServeProcess(
                    command: [Self.repository.appendingPathComponent("Examples/CheckSamples/shop_server.py").path],
                    [
                        "--port", "0", "--bundle-id", Self.app, "--root", root.path, "--products", products.path,
                    ] + (bug.map { ["--bug", $0] } ?? []), executable: URL(fileURLWithPath: python))
                defer { server.kill() }
                let listening = try await server.waitForLine(containing: "listening on http")
                let url = try #require(listening.split(separator: " ").last.map(String.init))
                let checkFile = folder.appendingPathComponent("check-\(bug ?? "none").json")
                let text = written.stdout.replacingOccurrences(of: "http://127.0.0.1:1", with: url)
                try Self.checkFile(
                    from: text,
                    extra:
                        #"  "purchaseCall": {"url": "\#(url)/purchases", "body": "{\"signedTransaction\": \"{{signedTransaction}}\", \"appAccountToken\": \"{{appAccountToken}}\"}"},"#
                        + "\n"
                ).write(to: checkFile, atomically: true, encoding: .utf8)
                let checked = try await KioskProcess.run(
                    ["check", "--config", checkFile.path, "--seed", "11", "--json"] + Self.options(store))
                let report = try JSONDecoder().decode(CheckReport.self, from: Data(checked.stdout.utf8))
                let failed = Set(report.stories.filter { $0.result == .fail }.map(\.name))
                #expect(failed == failures, "bug \(bug ?? "none"): \(report.text)")
                #expect(checked.status == (failures.isEmpty ? 0 : 1), "bug \(bug ?? "none")")
                let consumption = try #require(report.stories.first { $0.name == "consumption-request" })
                #expect(
                    consumption.notes.first?.hasPrefix("the server sent no consumption information") == true,
                    "the sample does not answer consumption requests: a note, not a failure")
                let notMade = Set(report.stories.filter { $0.result == .notMade }.map(\.name))
                #expect(notMade == ["lost-notification"], "bug \(bug ?? "none"): \(report.text)")
            }
        }
    }
}
