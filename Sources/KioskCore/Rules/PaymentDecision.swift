import Foundation

/// What happens to a new payment once its product is known to be sellable: the store's rules, with no I/O. The
/// store's one payment path asks this and carries it out.
public enum PaymentDecision: Sendable, Hashable {
    /// A non-consumable bought again: nothing is charged, the purchase it already owns is delivered again.
    case deliverOwned(transactionId: Int64)
    /// Ask to Buy: the payment waits for a parent (`deferred`).
    case askParent
    /// The sandbox tester has interrupted purchases on: the payment fails until resolved.
    case interrupt
    /// The account's payment method refuses the charge.
    case refuse(ErrorCode)
    /// Charge it.
    case charge

    /// The rules, in order: an owned non-consumable is delivered again; in the sandbox and only for a payment made
    /// in the app, Ask to Buy (the tester's or the payment's), then interrupted purchases, then the tester's card
    /// decide; a purchase the test controls make outside the app is charged at once.
    public static func decide(
        account: StoreAccount, environment: StoreEnvironment, inApp: Bool, askToBuy: Bool,
        ownedTransactionId: Int64?
    ) -> PaymentDecision {
        if let ownedTransactionId { return .deliverOwned(transactionId: ownedTransactionId) }
        guard inApp else { return .charge }
        if environment == .sandbox, account.askToBuy || askToBuy { return .askParent }
        if environment == .sandbox, account.interruptPurchases { return .interrupt }
        switch account.paymentOutcome {
        case .approve: return .charge
        case .decline: return .refuse(.paymentDeclined)
        case .insufficientFunds: return .refuse(.insufficientFunds)
        }
    }
}
