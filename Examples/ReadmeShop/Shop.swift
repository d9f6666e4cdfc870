import Foundation
import KioskKit
import X509

/// A shop's StoreKit code against a Kiosk store, as the README shows it (`ReadmeTests` checks the two are the same).
final class Shop: SKPaymentTransactionObserver, SKProductsRequestDelegate, Sendable {
    /// At launch: configure KioskKit, sign the tester in, observe the queue, ask for the products.
    func start(rootPEM: String, deviceId: UUID, appSupport: URL) async throws {
        let root = try Certificate(pemEncoded: rootPEM)  // `kiosk certs export --environment sandbox`
        let client = try KioskKit.configure(
            .init(
                serverURL: URL(string: "http://127.0.0.1:8080")!, environment: .sandbox, bundleId: "com.example.shop",
                deviceId: deviceId, stateDirectory: appSupport.appendingPathComponent("kiosk"), trustedRoots: [root]))
        _ = try await client.signIn(email: "tester@example.com", password: "sandbox-pass")
        SKPaymentQueue.default().add(self)  // unfinished transactions arrive in paymentQueue(_:updatedTransactions:)
        let request = SKProductsRequest(productIdentifiers: ["com.example.shop.coins", "com.example.shop.remove_ads"])
        request.delegate = self
        request.start()  // products and invalidProductIdentifiers arrive in productsRequest(_:didReceive:)
    }

    func productsRequest(_ request: SKProductsRequest, didReceive response: SKProductsResponse) {
        guard let coins = response.products.first(where: { $0.productIdentifier == "com.example.shop.coins" }) else {
            return
        }
        // The payment goes purchasing, then purchased, failed or deferred.
        SKPaymentQueue.default().add(SKMutablePayment(product: coins))
    }

    func paymentQueue(_ queue: SKPaymentQueue, updatedTransactions transactions: [SKPaymentTransaction]) {
        for transaction in transactions {
            switch transaction.transactionState {
            case .purchased, .restored:
                deliver(transaction.payment.productIdentifier)
                queue.finishTransaction(transaction)  // only once delivered
            case .failed: queue.finishTransaction(transaction)
            default: break
            }
        }
    }

    /// Or StoreKit 2's face.
    func buyRemoveAds() async throws {
        guard let product = try await Product.products(for: ["com.example.shop.remove_ads"]).first else { return }
        if case .success(.verified(let transaction)) = try await product.purchase() {
            deliver(transaction.productID)
            await transaction.finish()
        }
    }

    func deliver(_ productId: String) { print("delivered \(productId)") }
}
