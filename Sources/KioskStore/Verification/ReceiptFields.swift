import Foundation
import KioskCore
import KioskProtocol
import KioskSigning

/// The objects of a `verifyReceipt` answer, in Apple's field names and JSON types
/// (Apple's verifyReceipt documentation, `responseBody`): numbers where Apple writes numbers, every transaction value a
/// string, every date the `…_date` / `…_date_ms` / `…_date_pst` triple.
enum ReceiptFields {
    /// The decoded app receipt (`receipt`), its purchases enriched with what the store knows of them now
    /// (refunds, subscription group, app account token).
    static func receipt(_ receipt: AppReceipt, byId: [String: StoreTransaction], requestDate: Date) -> AppReceiptInfo {
        AppReceiptInfo(
            receiptType: receipt.receiptType.rawValue, adamId: Int64(receipt.appItemId),
            appItemId: Int64(receipt.appItemId), bundleId: receipt.bundleId,
            applicationVersion: receipt.applicationVersion, downloadId: Int64(receipt.downloadId ?? 0),
            versionExternalIdentifier: Int64(receipt.versionExternalIdentifier ?? 0),
            originalApplicationVersion: receipt.originalApplicationVersion,
            receiptCreationDate: receipt.receiptCreationDate, requestDate: requestDate,
            originalPurchaseDate: receipt.originalPurchaseDate ?? receipt.receiptCreationDate,
            expirationDate: receipt.expirationDate,
            inApp: receipt.inApp.map { purchase($0, stored: byId[$0.transactionId]) })
    }

    /// One `in_app` entry: what the receipt says, plus the stored transaction's current state when the store
    /// still has it.
    static func purchase(_ purchase: AppReceipt.InAppPurchase, stored: StoreTransaction?) -> ReceiptTransactionInfo {
        if let stored { return transaction(stored) }
        return ReceiptTransactionInfo(
            quantity: String(purchase.quantity), productId: purchase.productId, transactionId: purchase.transactionId,
            originalTransactionId: purchase.originalTransactionId,
            isTrialPeriod: purchase.isTrialPeriod == true ? "true" : "false", inAppOwnershipType: "PURCHASED",
            purchaseDate: purchase.purchaseDate, originalPurchaseDate: purchase.originalPurchaseDate,
            expiresDate: purchase.expiresDate,
            isInIntroOfferPeriod: purchase.expiresDate.map { _ in
                purchase.isInIntroOfferPeriod == true ? "true" : "false"
            },
            webOrderLineItemId: purchase.webOrderLineItemId.map { String($0) },
            cancellationDate: purchase.cancellationDate)
    }

    /// A transaction object of `in_app` and `latest_receipt_info`: every value a string.
    static func transaction(_ transaction: StoreTransaction) -> ReceiptTransactionInfo {
        ReceiptTransactionInfo(
            quantity: String(transaction.quantity), productId: transaction.productId,
            transactionId: String(transaction.id), originalTransactionId: String(transaction.originalTransactionId),
            isTrialPeriod: "false", inAppOwnershipType: "PURCHASED", purchaseDate: transaction.purchaseDate,
            originalPurchaseDate: transaction.originalPurchaseDate, expiresDate: transaction.expiresDate,
            isInIntroOfferPeriod: transaction.expiresDate.map { _ in "false" },
            webOrderLineItemId: transaction.webOrderLineItemId.map { String($0) },
            subscriptionGroupIdentifier: transaction.subscriptionGroupId.map { String($0) },
            appAccountToken: transaction.appAccountToken?.uuidString.lowercased(),
            cancellationDate: transaction.revocationDate,
            cancellationReason: transaction.revocationDate.map { _ in String(transaction.revocationReason ?? 0) })
    }

    /// `latest_receipt_info`: newest purchase first; with `exclude-old-transactions`, only the latest transaction of
    /// each auto-renewable subscription (other purchases stay).
    static func latestReceiptInfo(_ transactions: [StoreTransaction], excludeOld: Bool) -> [StoreTransaction] {
        var listed = transactions
        if excludeOld {
            var latest: [Int64: StoreTransaction] = [:]
            for transaction in transactions where transaction.productType == .autoRenewable {
                if let known = latest[transaction.originalTransactionId], known.purchaseDate >= transaction.purchaseDate
                {
                    continue
                }
                latest[transaction.originalTransactionId] = transaction
            }
            let kept = Set(latest.values.map(\.id))
            listed = transactions.filter { $0.productType != .autoRenewable || kept.contains($0.id) }
        }
        return listed.sorted { ($0.purchaseDate, $0.id) > ($1.purchaseDate, $1.id) }
    }

    /// `pending_renewal_info`: one entry per auto-renewable subscription, from its row, in Apple's field names.
    static func pendingRenewalInfo(_ subscriptions: [StoreSubscription]) -> [PendingRenewalInfo] {
        subscriptions.map { subscription in
            let ended = subscription.state == .expired || subscription.state == .revoked
            let retrying = subscription.state == .billingRetry || subscription.state == .gracePeriod
            return PendingRenewalInfo(
                autoRenewProductId: subscription.autoRenewProductId, productId: subscription.productId,
                originalTransactionId: String(subscription.originalTransactionId),
                autoRenewStatus: subscription.autoRenewEnabled && !ended ? "1" : "0",
                isInBillingRetryPeriod: retrying ? "1" : "0",
                expirationIntent: subscription.expirationIntent.map { String($0) },
                priceConsentStatus: subscription.priceIncreaseStatus.map { String($0) },
                gracePeriodExpiresDate: subscription.state == .gracePeriod ? subscription.gracePeriodExpiresAt : nil)
        }
    }

    /// An iOS 6-style receipt decoded in the old shape (`receipt`, `latest_receipt_info`).
    static func legacyReceipt(_ receipt: TransactionReceipt, transaction: StoreTransaction) -> LegacyReceiptInfo {
        LegacyReceiptInfo(
            quantity: String(receipt.quantity), productId: receipt.productId, transactionId: receipt.transactionId,
            originalTransactionId: receipt.originalTransactionId, itemId: receipt.itemId, bid: receipt.bundleId,
            bvrs: receipt.bundleVersion, uniqueIdentifier: receipt.uniqueIdentifier,
            uniqueVendorIdentifier: receipt.uniqueVendorIdentifier,
            appItemId: transaction.environment == .production ? String(transaction.appId) : "0",
            versionExternalIdentifier: "0", isTrialPeriod: "false", isInIntroOfferPeriod: "false",
            purchaseDate: receipt.purchaseDate, originalPurchaseDate: receipt.originalPurchaseDate,
            webOrderLineItemId: receipt.webOrderLineItemId, expiresDate: receipt.expiresDate,
            cancellationDate: transaction.revocationDate,
            cancellationReason: transaction.revocationDate.map { _ in String(transaction.revocationReason ?? 0) })
    }
}
