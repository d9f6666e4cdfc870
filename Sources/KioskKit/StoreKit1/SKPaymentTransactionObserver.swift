/// Receives the payment queue's transactions. Add one at launch, before anything else, so transactions left
/// unfinished by an earlier run are delivered (they wait in the queue until an observer is added).
///
/// Every method is called on the client's callback queue. Only `updatedTransactions` is required.
public protocol SKPaymentTransactionObserver: AnyObject {
    /// Transactions appeared or changed state: deliver `purchased` and `restored` ones, then finish them; finish
    /// `failed` ones.
    func paymentQueue(_ queue: SKPaymentQueue, updatedTransactions transactions: [SKPaymentTransaction])
    /// Transactions left the queue after being finished.
    func paymentQueue(_ queue: SKPaymentQueue, removedTransactions transactions: [SKPaymentTransaction])
    /// A restore failed; no transactions were restored by it.
    func paymentQueue(_ queue: SKPaymentQueue, restoreCompletedTransactionsFailedWithError error: any Error)
    /// A restore ended; its `restored` transactions were delivered before this call.
    func paymentQueueRestoreCompletedTransactionsFinished(_ queue: SKPaymentQueue)
    /// A purchase of a promoted product started outside the app. Return `true` to buy it now, `false` to keep
    /// the payment and add it later (adding it charges once however often it is added). The default is `true`.
    func paymentQueue(_ queue: SKPaymentQueue, shouldAddStorePayment payment: SKPayment, for product: SKProduct)
        -> Bool
    /// The signed-in account's storefront changed.
    func paymentQueueDidChangeStorefront(_ queue: SKPaymentQueue)
    /// Purchases of these products were refunded or revoked (Family Sharing stopped): withdraw their content.
    func paymentQueue(_ queue: SKPaymentQueue, didRevokeEntitlementsForProductIdentifiers productIdentifiers: [String])
}

extension SKPaymentTransactionObserver {
    public func paymentQueue(_ queue: SKPaymentQueue, removedTransactions transactions: [SKPaymentTransaction]) {}
    public func paymentQueue(_ queue: SKPaymentQueue, restoreCompletedTransactionsFailedWithError error: any Error) {}
    public func paymentQueueRestoreCompletedTransactionsFinished(_ queue: SKPaymentQueue) {}
    public func paymentQueue(
        _ queue: SKPaymentQueue, shouldAddStorePayment payment: SKPayment, for product: SKProduct
    ) -> Bool {
        true
    }
    public func paymentQueueDidChangeStorefront(_ queue: SKPaymentQueue) {}
    public func paymentQueue(
        _ queue: SKPaymentQueue, didRevokeEntitlementsForProductIdentifiers productIdentifiers: [String]
    ) {}
}

/// Decides what happens to payments when the storefront changes.
public protocol SKPaymentQueueDelegate: AnyObject {
    /// A payment added in another storefront is about to be sent: `true` sends it, `false` fails it with
    /// `SKError.storeProductNotAvailable`. The default is `true`.
    func paymentQueue(
        _ paymentQueue: SKPaymentQueue, shouldContinue transaction: SKPaymentTransaction,
        in newStorefront: SKStorefront
    ) -> Bool
}

extension SKPaymentQueueDelegate {
    public func paymentQueue(
        _ paymentQueue: SKPaymentQueue, shouldContinue transaction: SKPaymentTransaction,
        in newStorefront: SKStorefront
    ) -> Bool {
        true
    }
}

/// A weak reference to an observer, called only on the callback queue.
struct ObserverReference: @unchecked Sendable {
    weak var observer: (any SKPaymentTransactionObserver)?
    let id: ObjectIdentifier

    init(_ observer: any SKPaymentTransactionObserver) {
        self.observer = observer
        self.id = ObjectIdentifier(observer)
    }
}

/// A weak reference to the queue's delegate, called only on the callback queue.
struct DelegateReference: @unchecked Sendable {
    weak var delegate: (any SKPaymentQueueDelegate)?
}
