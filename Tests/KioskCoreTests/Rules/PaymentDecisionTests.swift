import Foundation
import KioskCore
import Testing

/// The store's payment rules, without a store: what a new payment comes to for each account setting.
@Suite struct PaymentDecisionTests {
    static func account(
        _ outcome: PaymentOutcome = .approve, askToBuy: Bool = false, interrupts: Bool = false,
        environment: StoreEnvironment = .sandbox
    ) -> StoreAccount {
        StoreAccount(
            environment: environment, id: UUID(), email: "t@example.com", storefront: "USA", paymentOutcome: outcome,
            askToBuy: askToBuy, interruptPurchases: interrupts)
    }

    static func decide(
        _ account: StoreAccount, inApp: Bool = true, askToBuy: Bool = false, owned: Int64? = nil
    ) -> PaymentDecision {
        PaymentDecision.decide(
            account: account, environment: account.environment, inApp: inApp, askToBuy: askToBuy,
            ownedTransactionId: owned)
    }

    // Proves an owned non-consumable is delivered again before any other rule, even to a tester whose card fails.
    @Test func anOwnedPurchaseIsDeliveredAgainWhateverTheAccount() {
        #expect(Self.decide(Self.account(.decline, askToBuy: true), owned: 7) == .deliverOwned(transactionId: 7))
        #expect(Self.decide(Self.account(), inApp: false, owned: 7) == .deliverOwned(transactionId: 7))
    }

    // Proves Ask to Buy (the tester's or the payment's) comes before interrupted purchases and the card.
    @Test func askToBuyWaitsForAParent() {
        #expect(Self.decide(Self.account(askToBuy: true, interrupts: true)) == .askParent)
        #expect(Self.decide(Self.account(.decline), askToBuy: true) == .askParent)
        #expect(Self.decide(Self.account(interrupts: true)) == .interrupt)
    }

    // Proves the account's card decides the charge, in production too, and refusals name their reason.
    @Test func theCardDecides() {
        #expect(Self.decide(Self.account()) == .charge)
        #expect(Self.decide(Self.account(.decline)) == .refuse(.paymentDeclined))
        #expect(Self.decide(Self.account(.insufficientFunds)) == .refuse(.insufficientFunds))
        #expect(Self.decide(Self.account(.decline, environment: .production)) == .refuse(.paymentDeclined))
    }

    // Proves sandbox-only settings do nothing in production.
    @Test func productionIgnoresSandboxSettings() {
        #expect(Self.decide(Self.account(askToBuy: true, interrupts: true, environment: .production)) == .charge)
        #expect(Self.decide(Self.account(environment: .production), askToBuy: true) == .charge)
    }

    // Proves a purchase the test controls make outside the app is charged at once, whatever the tester's settings.
    @Test func outsideTheAppChargesAtOnce() {
        #expect(Self.decide(Self.account(.decline, askToBuy: true, interrupts: true), inApp: false) == .charge)
    }
}
