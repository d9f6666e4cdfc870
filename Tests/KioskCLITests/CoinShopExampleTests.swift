import Foundation
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
}
