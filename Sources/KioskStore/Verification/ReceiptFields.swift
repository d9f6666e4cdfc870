import Foundation
import KioskCore
import KioskSigning

/// The objects of a `verifyReceipt` answer, in Apple's field names and JSON types
/// (`reference/apple-protocols.md` §1.4–§1.7): numbers where Apple writes numbers, every transaction value a
/// string, every date the `…_date` / `…_date_ms` / `…_date_pst` triple.
enum ReceiptFields {
    /// The decoded app receipt (`receipt`), its purchases enriched with what the store knows of them now
    /// (refunds, subscription group, app account token).
    static func receipt(_ receipt: AppReceipt, byId: [String: StoreTransaction], requestDate: Date) -> [String:
        JSONValue]
    {
        var fields: [String: JSONValue] = [
            "receipt_type": .string(receipt.receiptType.rawValue),
            "adam_id": .integer(Int(receipt.appItemId)),
            "app_item_id": .integer(Int(receipt.appItemId)),
            "bundle_id": .string(receipt.bundleId),
            "application_version": .string(receipt.applicationVersion),
            "download_id": .integer(Int(receipt.downloadId ?? 0)),
            "version_external_identifier": .integer(Int(receipt.versionExternalIdentifier ?? 0)),
            "original_application_version": .string(receipt.originalApplicationVersion),
            "in_app": .array(receipt.inApp.map { .object(purchase($0, stored: byId[$0.transactionId])) }),
        ]
        addDate("receipt_creation_date", receipt.receiptCreationDate, to: &fields)
        addDate("request_date", requestDate, to: &fields)
        addDate("original_purchase_date", receipt.originalPurchaseDate ?? receipt.receiptCreationDate, to: &fields)
        if let expiration = receipt.expirationDate { addDate("expiration_date", expiration, to: &fields) }
        return fields
    }

    /// One `in_app` entry: what the receipt says, plus the stored transaction's current state when the store
    /// still has it.
    static func purchase(_ purchase: AppReceipt.InAppPurchase, stored: StoreTransaction?) -> [String: JSONValue] {
        if let stored { return transaction(stored) }
        var fields: [String: JSONValue] = [
            "quantity": .string(String(purchase.quantity)),
            "product_id": .string(purchase.productId),
            "transaction_id": .string(purchase.transactionId),
            "original_transaction_id": .string(purchase.originalTransactionId),
            "is_trial_period": .string(purchase.isTrialPeriod == true ? "true" : "false"),
            "in_app_ownership_type": .string("PURCHASED"),
        ]
        addDate("purchase_date", purchase.purchaseDate, to: &fields)
        addDate("original_purchase_date", purchase.originalPurchaseDate, to: &fields)
        if let expires = purchase.expiresDate {
            addDate("expires_date", expires, to: &fields)
            fields["is_in_intro_offer_period"] = .string(purchase.isInIntroOfferPeriod == true ? "true" : "false")
        }
        if let line = purchase.webOrderLineItemId { fields["web_order_line_item_id"] = .string(String(line)) }
        if let cancelled = purchase.cancellationDate { addDate("cancellation_date", cancelled, to: &fields) }
        return fields
    }

    /// A transaction object of `in_app` and `latest_receipt_info` (§1.5): every value a string.
    static func transaction(_ transaction: StoreTransaction) -> [String: JSONValue] {
        var fields: [String: JSONValue] = [
            "quantity": .string(String(transaction.quantity)),
            "product_id": .string(transaction.productId),
            "transaction_id": .string(String(transaction.id)),
            "original_transaction_id": .string(String(transaction.originalTransactionId)),
            "is_trial_period": .string("false"),
            "in_app_ownership_type": .string("PURCHASED"),
        ]
        addDate("purchase_date", transaction.purchaseDate, to: &fields)
        addDate("original_purchase_date", transaction.originalPurchaseDate, to: &fields)
        if let expires = transaction.expiresDate {
            addDate("expires_date", expires, to: &fields)
            fields["is_in_intro_offer_period"] = .string("false")
        }
        if let line = transaction.webOrderLineItemId { fields["web_order_line_item_id"] = .string(String(line)) }
        if let group = transaction.subscriptionGroupId {
            fields["subscription_group_identifier"] = .string(String(group))
        }
        if let token = transaction.appAccountToken {
            fields["app_account_token"] = .string(token.uuidString.lowercased())
        }
        if let revoked = transaction.revocationDate {
            addDate("cancellation_date", revoked, to: &fields)
            fields["cancellation_reason"] = .string(String(transaction.revocationReason ?? 0))
        }
        return fields
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
    static func pendingRenewalInfo(_ subscriptions: [StoreSubscription]) -> [[String: JSONValue]] {
        subscriptions.map { subscription in
            let ended = subscription.state == .expired || subscription.state == .revoked
            let retrying = subscription.state == .billingRetry || subscription.state == .gracePeriod
            var fields: [String: JSONValue] = [
                "auto_renew_product_id": .string(subscription.autoRenewProductId),
                "product_id": .string(subscription.productId),
                "original_transaction_id": .string(String(subscription.originalTransactionId)),
                "auto_renew_status": .string(subscription.autoRenewEnabled && !ended ? "1" : "0"),
                "is_in_billing_retry_period": .string(retrying ? "1" : "0"),
            ]
            if let intent = subscription.expirationIntent { fields["expiration_intent"] = .string(String(intent)) }
            if let status = subscription.priceIncreaseStatus {
                fields["price_consent_status"] = .string(String(status))
            }
            if let graceEnd = subscription.gracePeriodExpiresAt, subscription.state == .gracePeriod {
                addDate("grace_period_expires_date", graceEnd, to: &fields)
            }
            return fields
        }
    }

    /// An iOS 6-style receipt decoded in the old shape (`receipt`, `latest_receipt_info`): hyphens become
    /// underscores, `expires_date` is milliseconds, the other dates the usual triples.
    static func legacyReceipt(_ receipt: TransactionReceipt, transaction: StoreTransaction) -> [String: JSONValue] {
        var fields: [String: JSONValue] = [
            "quantity": .string(String(receipt.quantity)),
            "product_id": .string(receipt.productId),
            "transaction_id": .string(receipt.transactionId),
            "original_transaction_id": .string(receipt.originalTransactionId),
            "item_id": .string(receipt.itemId),
            "bid": .string(receipt.bundleId),
            "bvrs": .string(receipt.bundleVersion),
            "unique_identifier": .string(receipt.uniqueIdentifier),
            "app_item_id": .string(transaction.environment == .production ? String(transaction.appId) : "0"),
            "version_external_identifier": .string("0"),
            "is_trial_period": .string("false"),
            "is_in_intro_offer_period": .string("false"),
        ]
        if let vendor = receipt.uniqueVendorIdentifier { fields["unique_vendor_identifier"] = .string(vendor) }
        addDate("purchase_date", receipt.purchaseDate, to: &fields)
        addDate("original_purchase_date", receipt.originalPurchaseDate, to: &fields)
        if let line = receipt.webOrderLineItemId { fields["web_order_line_item_id"] = .string(line) }
        if let expires = receipt.expiresDate {
            fields["expires_date"] = .string(AppleDateText.milliseconds(expires))
            fields["expires_date_formatted"] = .string(AppleDateText.gmt(expires))
            fields["expires_date_formatted_pst"] = .string(AppleDateText.pacific(expires))
        }
        if let revoked = transaction.revocationDate {
            addDate("cancellation_date", revoked, to: &fields)
            fields["cancellation_reason"] = .string(String(transaction.revocationReason ?? 0))
        }
        return fields
    }

    /// Adds `name`, `name_ms` and `name_pst`.
    static func addDate(_ name: String, _ date: Date, to fields: inout [String: JSONValue]) {
        fields[name] = .string(AppleDateText.gmt(date))
        fields[name + "_ms"] = .string(AppleDateText.milliseconds(date))
        fields[name + "_pst"] = .string(AppleDateText.pacific(date))
    }
}
