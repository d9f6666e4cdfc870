import Foundation
import KioskCore
import KioskStorage

extension KioskDatabase {
    /// Copies the sandbox subscription `originalTransactionId` (bought through the store) `count` times, each for an
    /// account of its own, 2,000 per database transaction: many subscriptions falling due at once, for the renewal
    /// benchmark and tests, without buying each one over HTTP.
    public func seedSubscriptions(_ count: Int, copying originalTransactionId: StoreTransaction.ID) async throws {
        let template = try await transaction { tx -> (StoreTransaction, StoreSubscription)? in
            guard let transaction = try await tx.transaction(id: originalTransactionId, environment: .sandbox),
                let subscription = try await tx.subscription(
                    originalTransactionId: originalTransactionId, environment: .sandbox)
            else { return nil }
            return (transaction, subscription)
        }
        guard let (transaction, subscription) = template else {
            throw KioskError(.subscriptionNotFound, "The sandbox has no subscription \(originalTransactionId) to copy.")
        }
        var remaining = count
        while remaining > 0 {
            let batch = min(remaining, 2_000)
            remaining -= batch
            try await self.transaction { tx in
                for _ in 0..<batch {
                    let accountId = UUID()
                    try await tx.insertAccount(
                        Account(
                            id: accountId, environment: .sandbox,
                            email: "seeded-\(accountId.uuidString.lowercased())@example.com", passwordHash: "-",
                            firstName: "Seeded", lastName: "Tester", storefront: transaction.storefront,
                            createdAt: transaction.purchaseDate, updatedAt: transaction.purchaseDate))
                    var copy = transaction
                    copy.id = try await tx.nextIdentifier(.sandboxTransactionId)
                    copy.originalTransactionId = copy.id
                    copy.accountId = accountId
                    copy.webOrderLineItemId = try await tx.nextIdentifier(.webOrderLineItemId)
                    try await tx.insertTransaction(copy)
                    var row = subscription
                    row.originalTransactionId = copy.id
                    row.latestTransactionId = copy.id
                    row.accountId = accountId
                    try await tx.insertSubscription(row)
                }
            }
        }
    }
}
