import Foundation
import KioskKit
import Synchronization

/// The shop's StoreKit observer, as the seeds write it: deliver a purchased or restored transaction, record it,
/// and only then finish it; finish failed ones; leave deferred ones alone.
final class ShopObserver: SKPaymentTransactionObserver, SKProductsRequestDelegate, Sendable {
    /// Something the running command may be waiting for.
    enum Event: Sendable {
        case products(SKProductsResponse)
        case requestFailed(any Error)
        case delivered(productId: String)
        case failed(productId: String, any Error)
        case deferred(productId: String)
        case restoreFinished
        case restoreFailed(any Error)
    }

    let events: AsyncStream<Event>
    private let continuation: AsyncStream<Event>.Continuation
    private let directory: URL
    private let catalog: Catalog
    private let ledger: Mutex<ShopLedger>

    init(directory: URL, catalog: Catalog, ledger: ShopLedger) {
        (events, continuation) = AsyncStream.makeStream(of: Event.self)
        self.directory = directory
        self.catalog = catalog
        self.ledger = Mutex(ledger)
    }

    var balance: ShopLedger { ledger.withLock { $0 } }

    func paymentQueue(_ queue: SKPaymentQueue, updatedTransactions transactions: [SKPaymentTransaction]) {
        for transaction in transactions {
            let productId = transaction.payment.productIdentifier
            switch transaction.transactionState {
            case .purchasing:
                print("… paying for \(productId)")
            case .purchased, .restored:
                do {
                    try deliver(transaction)
                    queue.finishTransaction(transaction)
                    continuation.yield(.delivered(productId: productId))
                } catch {
                    // Not finished: the transaction comes back at the next launch and is delivered then.
                    print("! could not record \(productId) (\(error)); it will be delivered at the next launch")
                }
            case .failed:
                let error = transaction.error ?? SKError(.unknown)
                print("✗ \(productId) failed: \(error.localizedDescription)")
                queue.finishTransaction(transaction)
                continuation.yield(.failed(productId: productId, error))
            case .deferred:
                print("… \(productId) is waiting for approval (Ask to Buy); it is delivered when approved")
                continuation.yield(.deferred(productId: productId))
            }
        }
    }

    func paymentQueueRestoreCompletedTransactionsFinished(_ queue: SKPaymentQueue) {
        continuation.yield(.restoreFinished)
    }

    func paymentQueue(_ queue: SKPaymentQueue, restoreCompletedTransactionsFailedWithError error: any Error) {
        continuation.yield(.restoreFailed(error))
    }

    func paymentQueue(_ queue: SKPaymentQueue, shouldAddStorePayment payment: SKPayment, for product: SKProduct) -> Bool
    {
        print("… buying \(product.localizedTitle), started on the store's page")
        return true
    }

    func productsRequest(_ request: SKProductsRequest, didReceive response: SKProductsResponse) {
        continuation.yield(.products(response))
    }

    func request(_ request: SKRequest, didFailWithError error: any Error) {
        continuation.yield(.requestFailed(error))
    }

    /// Credits the ledger once per transaction and writes it before the transaction may be finished.
    private func deliver(_ transaction: SKPaymentTransaction) throws {
        guard let id = transaction.transactionIdentifier else { return }
        try ledger.withLock { ledger in
            guard !ledger.deliveredTransactionIds.contains(id) else { return }
            var updated = ledger
            switch transaction.payment.productIdentifier {
            case catalog.coins:
                updated.coins += Catalog.coinsPerUnit * transaction.payment.quantity
                print("✓ +\(Catalog.coinsPerUnit * transaction.payment.quantity) coins (transaction \(id))")
            case catalog.removeAds:
                updated.adsRemoved = true
                print(
                    "✓ ads removed (transaction \(id)\(transaction.transactionState == .restored ? ", restored" : ""))")
            default:
                print("? \(transaction.payment.productIdentifier) is not sold by this shop; finishing it")
            }
            updated.deliveredTransactionIds.append(id)
            try updated.save(to: directory)
            ledger = updated
        }
    }
}

/// The shop's two products.
struct Catalog: Sendable {
    static let coinsPerUnit = 100
    /// A consumable bought by quantity.
    var coins: String
    /// A non-consumable, restorable on other devices.
    var removeAds: String
}
