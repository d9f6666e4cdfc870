import Foundation
import KioskCore
import KioskStorage

extension PurchaseService {
    /// Starts the renewal schedule of a first auto-renewable purchase: its subscription row, active until the
    /// transaction expires, when the renewal scheduler acts next. Other purchases (and a group the account
    /// already subscribes to) change nothing here.
    func insertSubscriptionRow(
        for transaction: StoreTransaction, product: Product, now: Date, in tx: any StorageTransaction
    ) async throws {
        guard product.type == .autoRenewable, let groupId = product.subscription?.groupId,
            let expiresAt = transaction.expiresDate
        else { return }
        let existing = try await tx.subscriptions(
            accountId: transaction.accountId, appId: transaction.appId, environment: transaction.environment)
        guard !existing.contains(where: { $0.groupId == groupId }) else { return }
        try await tx.insertSubscription(
            StoreSubscription(
                environment: transaction.environment, originalTransactionId: transaction.originalTransactionId,
                appId: transaction.appId, accountId: transaction.accountId, groupId: groupId,
                productId: transaction.productId, latestTransactionId: transaction.id,
                autoRenewProductId: transaction.productId, expiresAt: expiresAt, nextEventAt: expiresAt,
                createdAt: now, updatedAt: now))
    }
}
