import Foundation
import KioskProtocol

@testable import KioskKit

/// Small builders for queue entries and sessions, so tests read as scenarios.
enum Fixtures {
    static let accountId = UUID(uuidString: "00000000-0000-0000-0000-0000000000A1")!

    static func session(account: UUID = accountId, storefront: String = "143441") -> StoredSession {
        StoredSession(
            token: "session-token", environment: "Sandbox", account: AccountInfo(id: account, email: "t@example.com"),
            storefront: StorefrontInfo(
                countryCode: "USA", identifier: storefront, currency: "USD", locale: "en_US@currency=USD"))
    }

    static func entry(
        _ sequence: Int64, _ state: QueueEntryState, key: String? = nil, paymentId: UUID? = nil,
        product: String = "com.example.coins", quantity: Int = 1, finished: Bool = false
    ) -> QueueEntry {
        let charged = state == .purchased || state == .restored || state == .revoked
        return QueueEntry(
            sequence: sequence, state: state, paymentId: paymentId, idempotencyKey: key, productId: product,
            quantity: quantity, applicationUsername: nil, appAccountToken: nil,
            transaction: charged
                ? TransactionInfo(
                    transactionId: "\(1000 + sequence)", originalTransactionId: "\(1000 + sequence)",
                    purchaseDate: 1_700_000_000_000, originalPurchaseDate: 1_700_000_000_000, signedTransaction: "jws",
                    transactionReceipt: Data("receipt".utf8).base64EncodedString())
                : nil,
            error: state == .failed
                ? StoreKitErrorInfo(skErrorCode: 2, code: "payment_cancelled", message: "Cancelled.") : nil,
            date: 1_700_000_000_000, finished: finished)
    }

    static func payment(key: String, product: String = "com.example.coins", quantity: Int = 1) -> PaymentRequest {
        PaymentRequest(productId: product, quantity: quantity, idempotencyKey: key)
    }

    /// A configuration for a device whose store is unreachable (nothing listens on port 9 of loopback).
    static func offlineConfiguration(stateDirectory: URL) -> KioskStoreClient.Configuration {
        KioskStoreClient.Configuration(
            serverURL: URL(string: "http://127.0.0.1:9")!, environment: .sandbox, bundleId: "com.example.shop",
            deviceId: UUID(), stateDirectory: stateDirectory, trustedRoots: [], retryDelayMaximum: .milliseconds(200))
    }

    static func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("kioskkit-test-\(UUID().uuidString)")
    }
}
