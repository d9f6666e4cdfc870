import Foundation
import KioskKit
import Synchronization

/// The shop's StoreKit observer, as the seeds write it: deliver a purchased or restored transaction, record it,
/// and only then finish it; finish failed ones; leave deferred ones alone.
///
/// With a merchant (the seeds' server model) delivering means sending the signed transaction to the merchant,
/// which keeps the coins and remove-ads for the user; the transaction is finished only after its answer.
final class ShopObserver: SKPaymentTransactionObserver, SKProductsRequestDelegate, Sendable {
    /// Something the running command may be waiting for.
    enum Event: Sendable {
        case products(SKProductsResponse)
        case requestFailed(any Error)
        case delivered(productId: String)
        case failed(productId: String, any Error)
        /// Purchased, but the merchant did not take it: it stays unfinished, for the next launch.
        case notDelivered(productId: String, any Error)
        case deferred(productId: String)
        case restoreFinished
        case restoreFailed(any Error)
    }

    let events: AsyncStream<Event>
    private let continuation: AsyncStream<Event>.Continuation
    private let directory: URL
    private let catalog: Catalog
    private let ledger: Mutex<ShopLedger>
    /// With `--merchant`: where purchases are delivered.
    let merchant: MerchantClient?
    /// The orders this run pays for, by app account token (the payment's `applicationUsername`).
    private let openOrders = Mutex<[String: String]>([:])
    /// The deliveries to the merchant under way.
    private let merchantDeliveries = Mutex<[Task<Void, Never>]>([])

    init(directory: URL, catalog: Catalog, ledger: ShopLedger, merchant: MerchantClient? = nil) {
        (events, continuation) = AsyncStream.makeStream(of: Event.self)
        self.directory = directory
        self.catalog = catalog
        self.ledger = Mutex(ledger)
        self.merchant = merchant
    }

    var balance: ShopLedger { ledger.withLock { $0 } }

    /// Remembers the order a payment about to be added pays for (the payment's `applicationUsername` is the
    /// order's app account token).
    func expect(orderId: String, appAccountToken: UUID) {
        openOrders.withLock { $0[appAccountToken.uuidString] = orderId }
    }

    /// Waits for the deliveries to the merchant started so far.
    func settle() async {
        while let delivery = merchantDeliveries.withLock({ $0.popLast() }) {
            await delivery.value
        }
    }

    func paymentQueue(_ queue: SKPaymentQueue, updatedTransactions transactions: [SKPaymentTransaction]) {
        for transaction in transactions {
            let productId = transaction.payment.productIdentifier
            switch transaction.transactionState {
            case .purchasing:
                print("… paying for \(productId)")
            case .purchased, .restored:
                if let merchant {
                    deliver(transaction, through: merchant, queue: queue)
                    continue
                }
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
                print(
                    "… \(productId) is waiting for approval (Ask to Buy): once approved, it is delivered at this "
                        + "device's next launch (any command, e.g. balance)")
                continuation.yield(.deferred(productId: productId))
            }
        }
    }

    /// StoreKit 1 names the products whose purchases were refunded or revoked, not the transactions: enough for
    /// remove-ads, an entitlement. (Coins are taken back per transaction, in ``take(back:)``.)
    func paymentQueue(_ queue: SKPaymentQueue, didRevokeEntitlementsForProductIdentifiers productIdentifiers: [String])
    {
        guard productIdentifiers.contains(catalog.removeAds), merchant == nil else { return }
        updateLedger { ledger in
            guard ledger.adsRemoved else { return }
            ledger.adsRemoved = false
            print("✗ remove-ads was refunded or revoked: ads are shown again")
        }
    }

    /// StoreKit 2's `Transaction.updates` carries a refunded or revoked transaction itself, with its revocation
    /// date: the coins it credited here are taken back, and its id leaves the delivered ones, so a reversed refund
    /// (the transaction comes back purchased) credits them again. The shop has no root certificate to verify with;
    /// it acts only on transactions it delivered itself, so a forged revocation can only take back what it gave.
    func take(back update: VerificationResult<Transaction>) {
        let transaction: Transaction
        switch update {
        case .verified(let value), .unverified(let value, _): transaction = value
        }
        guard transaction.revocationDate != nil, merchant == nil else { return }
        let id = String(transaction.id)
        updateLedger { ledger in
            guard let index = ledger.deliveredTransactionIds.firstIndex(of: id) else { return }
            ledger.deliveredTransactionIds.remove(at: index)
            if transaction.productID == catalog.coins {
                let coins = Catalog.coinsPerUnit * transaction.purchasedQuantity
                ledger.coins -= coins
                print("✗ -\(coins) coins: transaction \(id) was refunded")
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

    /// Changes the ledger and writes it; a change that cannot be written is not kept (and said).
    private func updateLedger(_ change: (inout ShopLedger) -> Void) {
        ledger.withLock { ledger in
            var updated = ledger
            change(&updated)
            do {
                try updated.save(to: directory)
                ledger = updated
            } catch {
                print("! could not write the shop's ledger: \(error)")
            }
        }
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

extension ShopObserver {
    /// The server model: writes the transaction's order beside its id, sends the signed transaction to the
    /// merchant, and finishes it only once the merchant answered. If the merchant cannot take it, it stays
    /// unfinished and is sent again at the next launch.
    private func deliver(_ transaction: SKPaymentTransaction, through merchant: MerchantClient, queue: SKPaymentQueue) {
        let productId = transaction.payment.productIdentifier
        guard let id = transaction.transactionIdentifier, let signedTransaction = transaction.signedTransaction else {
            print("? \(productId) came without a signed transaction; it stays unfinished")
            return
        }
        let orderId: String?
        do {
            orderId = try recordOrder(of: transaction, id: id)
        } catch {
            print("! could not record the order of \(productId) (\(error)); it will be delivered at the next launch")
            continuation.yield(.notDelivered(productId: productId, error))
            return
        }
        let delivery = Task {
            do {
                let answer = try await merchant.deliver(signedTransaction: signedTransaction, orderId: orderId)
                for delivered in answer.deliveries {
                    print(
                        "✓ merchant: \(delivered.productId) \(delivered.outcome) (transaction \(delivered.transactionId))"
                    )
                }
                queue.finishTransaction(transaction)
                forgetOrder(of: id)
                continuation.yield(.delivered(productId: productId))
            } catch {
                print("! the merchant did not take \(productId) (\(error)); it stays unfinished until the next launch")
                continuation.yield(.notDelivered(productId: productId, error))
            }
        }
        merchantDeliveries.withLock { $0.append(delivery) }
    }

    /// The order the transaction pays for: kept in the ledger since an earlier launch, or one this run paid for,
    /// which is written to the ledger now. Nil for a purchase whose order is unknown here (the merchant still
    /// finds it by the transaction's app account token).
    private func recordOrder(of transaction: SKPaymentTransaction, id: String) throws -> String? {
        try ledger.withLock { ledger in
            if let known = ledger.merchantOrders?[id] { return known }
            guard let token = transaction.payment.applicationUsername,
                let orderId = openOrders.withLock({ $0[token] })
            else { return nil }
            var updated = ledger
            updated.merchantOrders = (ledger.merchantOrders ?? [:]).merging([id: orderId]) { $1 }
            try updated.save(to: directory)
            ledger = updated
            return orderId
        }
    }

    /// The merchant has the transaction: its order need not be kept any more.
    private func forgetOrder(of id: String) {
        ledger.withLock { ledger in
            guard ledger.merchantOrders?[id] != nil else { return }
            var updated = ledger
            updated.merchantOrders?[id] = nil
            if (try? updated.save(to: directory)) != nil { ledger = updated }
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
