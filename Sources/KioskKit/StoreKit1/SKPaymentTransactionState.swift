/// Where a transaction stands, with StoreKit's raw values.
public enum SKPaymentTransactionState: Int, Sendable, CustomStringConvertible {
    /// Added to the queue; the store has not answered yet.
    case purchasing = 0
    /// Charged: deliver the content, then finish the transaction.
    case purchased = 1
    /// Not charged; ``SKPaymentTransaction/error`` says why. Finish it too.
    case failed = 2
    /// A previous purchase replayed by a restore; ``SKPaymentTransaction/original`` is the first purchase.
    case restored = 3
    /// Waiting for a parent's approval (Ask to Buy); do not finish it, its outcome arrives later.
    case deferred = 4

    public var description: String {
        switch self {
        case .purchasing: "purchasing"
        case .purchased: "purchased"
        case .failed: "failed"
        case .restored: "restored"
        case .deferred: "deferred"
        }
    }
}
