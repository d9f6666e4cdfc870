import Foundation
import KioskTestSupport
import KioskTesting
import Testing

@Suite struct CoinShopExampleTests {
    /// The example as the README types it: buy 3 × 100 coins and remove-ads on one device, then restore on a
    /// second device brings remove-ads (not the coins) back; each purchase is delivered into the shop's ledger.
    @Test func buyThenRestoreOnASecondDevice() async throws {
        try await withTestStore { store in
            try await CoinShop.createShop(on: store)
            let phone1 = CoinShop.temporaryDevice()
            let phone2 = CoinShop.temporaryDevice()
            defer {
                try? FileManager.default.removeItem(at: phone1)
                try? FileManager.default.removeItem(at: phone2)
            }
            let shop = { (arguments: [String], device: URL) in
                try await CoinShop.run(arguments, store: store, device: device)
            }
            let coins = try await shop(["buy", "coins", "--quantity", "3"], phone1)
            #expect(coins.status == 0, "\(coins.stderr)")
            #expect(coins.stdout.contains("Balance: 300 coins"), "\(coins.stdout)")
            let ads = try await shop(["buy", "remove-ads"], phone1)
            #expect(ads.status == 0, "\(ads.stderr)")
            #expect(ads.stdout.contains("ads removed"), "\(ads.stdout)")

            let restored = try await shop(["restore"], phone2)
            #expect(restored.status == 0, "\(restored.stderr)")
            #expect(restored.stdout.contains("Balance: 0 coins, ads removed"), "\(restored.stdout)")

            let transactions = try await CoinShop.testerTransactions(on: store)
            #expect(transactions.count == 2, "two purchases: \(transactions)")
            #expect(transactions.allSatisfy { $0.finished }, "everything delivered was finished: \(transactions)")
        }
    }

    /// The shop honours the whole life cycle as typed: a refund of remove-ads made while the shop was closed
    /// shows the ads again at its next launch (StoreKit 1's revoked entitlements), a refund of coins takes those
    /// coins back (`Transaction.updates` with the revocation date), a reversed refund gives them back, and an Ask to
    /// Buy purchase approved by the parent is delivered at the next launch.
    @Test func refundsRevokeAndApprovalsDeliverAtTheNextLaunch() async throws {
        try await withTestStore { store in
            try await CoinShop.createShop(on: store)
            let phone = CoinShop.temporaryDevice()
            defer { try? FileManager.default.removeItem(at: phone) }
            let shop = { (arguments: [String]) in try await CoinShop.run(arguments, store: store, device: phone) }
            let kiosk = { (arguments: [String]) in
                try await KioskProcess.run(
                    ["test"] + arguments + [
                        "--app", CoinShop.app, "--server", store.baseURL, "--token", store.adminToken,
                    ])
            }
            #expect(try await shop(["buy", "coins", "--quantity", "2"]).status == 0)
            let ads = try await shop(["buy", "remove-ads"])
            #expect(ads.stdout.contains("Balance: 200 coins, ads removed."), "\(ads.stdout) \(ads.stderr)")

            for product in ["remove_ads", "coins"] {
                let refund = try await kiosk([
                    "refund", "--tester", CoinShop.tester, "--product", "\(CoinShop.app).\(product)",
                ])
                #expect(refund.status == 0, "\(refund.stderr)")
            }
            let refunded = try await shop(["balance"])
            #expect(refunded.status == 0, "\(refunded.stderr)")
            #expect(
                refunded.stdout.contains("✗ remove-ads was refunded or revoked: ads are shown again"),
                "\(refunded.stdout)")
            #expect(
                refunded.stdout.contains("✗ -200 coins: transaction 2000000000000001 was refunded"),
                "\(refunded.stdout)")
            #expect(refunded.stdout.hasSuffix("Balance: 0 coins, ads shown.\n"), "\(refunded.stdout)")
            let again = try await shop(["balance"])
            #expect(again.stdout == "Balance: 0 coins, ads shown.\n", "each refund is taken back once: \(again.stdout)")

            let reversed = try await kiosk(["reverse-refund", "2000000000000001"])
            #expect(reversed.status == 0, "\(reversed.stderr)")
            let back = try await shop(["balance"])
            #expect(back.stdout.contains("✓ +200 coins (transaction 2000000000000001)"), "\(back.stdout)")
            #expect(back.stdout.hasSuffix("Balance: 200 coins, ads shown.\n"), "\(back.stdout)")

            let asked = try await shop(["buy", "coins", "--ask-to-buy"])
            #expect(asked.status == 0, "\(asked.stderr)")
            #expect(asked.stdout.contains("is waiting for approval (Ask to Buy)"), "\(asked.stdout)")
            #expect(asked.stdout.hasSuffix("Balance: 200 coins, ads shown.\n"), "nothing yet: \(asked.stdout)")
            let approved = try await kiosk(["approve", "--tester", CoinShop.tester])
            #expect(approved.status == 0, "\(approved.stderr)")
            #expect(approved.stdout.contains("is now purchased: transaction"), "\(approved.stdout)")
            let delivered = try await shop(["balance"])
            #expect(delivered.stdout.hasSuffix("Balance: 300 coins, ads shown.\n"), "\(delivered.stdout)")
        }
    }
}
