import Foundation
import KioskTesting
import Testing

@Suite struct CoinShopExampleTests {
    /// The example as the README types it: buy 3 × 100 coins and remove-ads on one device, then restore on a
    /// second device brings remove-ads (not the coins) back; each purchase is delivered into the shop's ledger.
    @Test func buyThenRestoreOnASecondDevice() async throws {
        try await withTestStore { store in
            let kiosk = { (arguments: [String]) in
                try await KioskProcess.run(arguments + ["--server", store.baseURL, "--token", store.adminToken])
            }
            let app = "com.example.shop"
            #expect(try await kiosk(["apps", "create", "--bundle-id", app, "--name", "Shop"]).status == 0)
            for (id, type, name) in [
                ("coins", "consumable", "100 Coins"), ("remove_ads", "non_consumable", "Remove Ads"),
            ] {
                let created = try await kiosk([
                    "products", "create", "--app", app, "--id", "\(app).\(id)", "--type", type, "--reference-name",
                    name,
                    "--tier", "1", "--locale", "en_US", "--display-name", name, "--description", "\(name) for the shop",
                ])
                #expect(created.status == 0, "\(created.stderr)")
            }
            #expect(try await kiosk(["agreements", "accept"]).status == 0)
            #expect(
                try await kiosk(["testers", "create", "--email", "t@example.com", "--password", "sandbox-pass"]).status
                    == 0)

            let phone1 = FileManager.default.temporaryDirectory.appendingPathComponent("phone-\(UUID().uuidString)")
            let phone2 = FileManager.default.temporaryDirectory.appendingPathComponent("phone-\(UUID().uuidString)")
            defer {
                try? FileManager.default.removeItem(at: phone1)
                try? FileManager.default.removeItem(at: phone2)
            }
            let shop = { (arguments: [String], device: URL) in
                try await KioskProcess.run(
                    arguments + [
                        "--server", store.baseURL, "--bundle-id", app, "--email", "t@example.com", "--password",
                        "sandbox-pass", "--state-dir", device.path,
                        // A full test run keeps two cores busy; a slow answer then is load, not the shop's behaviour.
                        "--timeout", "120",
                    ], executable: Self.coinShop)
            }
            let coins = try await shop(["buy", "coins", "--quantity", "3"], phone1)
            #expect(coins.status == 0, "\(coins.stderr)")
            #expect(coins.stdout.contains("Balance: 300 coins"), "\(coins.stdout)")
            let ads = try await shop(["buy", "remove-ads"], phone1)
            #expect(ads.stdout.contains("ads removed"), "\(ads.stdout)")

            let restored = try await shop(["restore"], phone2)
            #expect(restored.status == 0, "\(restored.stderr)")
            #expect(restored.stdout.contains("Balance: 0 coins, ads removed"), "\(restored.stdout)")

            let transactions = try await kiosk(["test", "transactions", "--app", app, "--tester", "t@example.com"])
            #expect(transactions.stdout.split(separator: "\n").count == 3, "two purchases: \(transactions.stdout)")
            #expect(!transactions.stdout.contains(" no"), "everything delivered was finished: \(transactions.stdout)")
        }
    }

    /// The `coin-shop` binary SwiftPM built beside `kiosk`.
    static var coinShop: URL {
        KioskProcess.executable.deletingLastPathComponent().appendingPathComponent("coin-shop")
    }
}
