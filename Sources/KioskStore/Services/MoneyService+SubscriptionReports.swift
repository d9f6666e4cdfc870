import Foundation
import KioskCore
import KioskStorage

extension MoneyService {
    /// App Store Connect's Subscription Event report of the day `date` (`2026-11-24`): production only.
    public func subscriptionEventReport(date: String) async throws -> String {
        guard let span = ReportFrequency.daily.span(named: date) else {
            throw KioskError(
                .invalidReportDate, "'\(date.prefix(20))' is not a day.", field: "date",
                fix: "Give it as \(ReportFrequency.daily.example).")
        }
        return try await subscriptionEventReport(span: span).text
    }

    /// The Subscription Event report of `span`, and how many rows it has: every production notification about an
    /// auto-renewable subscription created in `span`, with the subscription, offer and chain it concerns.
    func subscriptionEventReport(span: DateInterval) async throws -> (text: String, rows: Int) {
        let occurrences = try await database.transaction { tx in
            var occurrences: [SubscriptionEventReport.Occurrence] = []
            // "Rate After One Year" where the charge the event concerns earned the 15% rate.
            let reasons = Dictionary(
                try await tx.moneyEvents(environment: .production, from: span.start, to: span.end)
                    .map { ($0.transactionId, $0.amounts.reason) }, uniquingKeysWith: { first, _ in first })
            for app in try await tx.apps() {
                let products = Dictionary(
                    try await tx.products(appId: app.id).map { ($0.productId, $0) },
                    uniquingKeysWith: { first, _ in first })
                var chains: [Int64: [StoreTransaction]] = [:]
                for notification in try await Self.notifications(of: app, in: span, tx) {
                    guard let transactionId = notification.transactionId,
                        let originalId = notification.originalTransactionId,
                        let transaction = try await tx.transaction(id: transactionId, environment: .production),
                        let product = products[transaction.productId], product.type == .autoRenewable,
                        let membership = product.subscription
                    else { continue }
                    if chains[originalId] == nil {
                        chains[originalId] = try await tx.transactions(
                            originalTransactionId: originalId, appId: app.id, environment: .production
                        ).sorted { ($0.purchaseDate, $0.id) < ($1.purchaseDate, $1.id) }
                    }
                    let chain = chains[originalId] ?? []
                    let earlier = chain.filter { $0.purchaseDate < transaction.purchaseDate }
                    let paid = chain.filter {
                        $0.purchaseDate <= transaction.purchaseDate && $0.revocationDate == nil
                            && $0.offer?.paymentMode != .freeTrial
                    }
                    occurrences.append(
                        SubscriptionEventReport.Occurrence(
                            date: notification.createdAt, notificationType: notification.notificationType,
                            subtype: notification.subtype, appName: app.name, appAppleId: app.id,
                            subscriptionName: product.referenceName,
                            subscriptionAppleId: StoreLedger.itemId(appId: app.id, productId: product.productId),
                            groupId: membership.groupId, duration: product.duration, offer: transaction.offer,
                            previousOffer: earlier.last?.offer,
                            offerName: Self.offerName(transaction.offer, of: product),
                            proceedsReason: reasons[transactionId] ?? nil, consecutivePaidPeriods: paid.count,
                            originalStartDate: chain.first?.purchaseDate ?? transaction.purchaseDate,
                            storefront: transaction.storefront))
                }
            }
            return occurrences
        }
        return SubscriptionEventReport.make(occurrences)
    }

    /// Every production notification of `app` created in `span`, oldest first, read a page at a time.
    private static func notifications(of app: App, in span: DateInterval, _ tx: any StorageTransaction) async throws
        -> [ServerNotification]
    {
        var all: [ServerNotification] = []
        var after: NotificationHistoryQuery.Cursor?
        while true {
            let page = try await tx.notifications(
                NotificationHistoryQuery(
                    environment: .production, appId: app.id, start: span.start, end: span.end, notificationType: nil,
                    subtype: nil, originalTransactionId: nil, onlyFailures: false, after: after, limit: 1000))
            all += page
            guard page.count == 1000, let last = page.last else { return all }
            after = NotificationHistoryQuery.Cursor(createdAt: last.createdAt, uuid: last.uuid)
        }
    }

    /// The reference name of a promotional offer, or the offer code reference a transaction carries.
    private static func offerName(_ offer: AppliedOffer?, of product: Product) -> String? {
        switch offer?.type {
        case .promotional: product.promotionalOffers.first { $0.identifier == offer?.identifier }?.referenceName
        case .offerCode, .winBack, .retention: offer?.identifier
        case .introductory, nil: nil
        }
    }
}
