import Foundation
import KioskCore
import KioskStorage

extension MoneyService {
    /// The subscriptions dashboard of `environment` over `from..<to`, cut at `now` (the environment's clock):
    /// worked out by ``SubscriptionMetrics`` from the ledger's transactions, in one database transaction.
    public func subscriptionMetrics(environment: StoreEnvironment, from: Date, to: Date, now: Date) async throws
        -> SubscriptionMetrics
    {
        let (transactions, durations, rates) = try await database.transaction { tx in
            let transactions = try await tx.subscriptionChains(environment: environment, from: from, to: min(to, now))
            var durations: [String: SubscriptionDuration] = [:]
            for appId in Set(transactions.map(\.appId)) {
                for product in try await tx.products(appId: appId) where product.duration != nil {
                    durations["\(appId)/\(product.productId)"] = product.duration
                }
            }
            return (transactions, durations, try await tx.exchangeRates())
        }
        return SubscriptionMetrics.make(
            transactions, durations: durations, rates: rates, from: from, to: to, now: now)
    }
}
