import Foundation
import KioskCore
import KioskStorage

/// Records what each purchase, renewal, refund and refund reversal is worth — customer price, tax, commission,
/// proceeds — as a ``MoneyEvent`` in the database transaction of the event itself, so the amounts are fixed when
/// it happens and a report never recomputes them under rules changed since.
enum SalesLedger {
    /// The event of a new transaction's sale. `chain`: the subscription's transactions so far (for the one-year
    /// rule; ignored for anything but an auto-renewable).
    static func sale(
        _ transaction: StoreTransaction, kind: MoneyEvent.Kind, chain: [StoreTransaction], taxRules: [TaxRule],
        agreement: PaidAppsAgreement
    ) -> MoneyEvent {
        let paidPeriods = transaction.productType == .autoRenewable ? paidPeriods(chain, before: transaction) : nil
        let commission = Commission.rate(
            at: transaction.purchaseDate, smallBusinessSince: agreement.smallBusinessProgramSince,
            paidPeriods: paidPeriods)
        let amounts = Proceeds.of(
            priceMinorUnits: transaction.priceMinorUnits,
            tax: TaxRule.inForce(for: transaction.storefront, at: transaction.purchaseDate, among: taxRules),
            commissionBasisPoints: commission.basisPoints, reason: commission.reason)
        return event(transaction, kind: kind, at: transaction.purchaseDate, units: transaction.quantity, amounts)
    }

    /// The event of `transaction`'s refund (its `refundedMinorUnits` of the price) or of that refund taken back,
    /// from the amounts its sale recorded; nil when no money moves (a family revocation, nothing recorded).
    static func change(_ transaction: StoreTransaction, at date: Date, earlier: [MoneyEvent]) -> MoneyEvent? {
        guard let sale = earlier.first(where: { $0.kind == .purchase || $0.kind == .renewal }) else { return nil }
        if transaction.revocationDate != nil {
            guard transaction.refundedMinorUnits > 0 else { return nil }
            let refunded = sale.amounts.scaled(
                by: transaction.refundedMinorUnits, of: transaction.priceMinorUnits
            ).negated
            return event(transaction, kind: .refund, at: date, units: -transaction.quantity, refunded)
        }
        guard let refund = earlier.last, refund.kind == .refund else { return nil }
        return event(transaction, kind: .refundReversal, at: date, units: transaction.quantity, refund.amounts.negated)
    }

    /// Records the sale of `transaction`, just inserted, reading what it needs.
    static func recordSale(_ transaction: StoreTransaction, kind: MoneyEvent.Kind, in tx: any StorageTransaction)
        async throws
    {
        let chain =
            transaction.productType == .autoRenewable
            ? try await tx.transactions(
                originalTransactionIds: [transaction.originalTransactionId], environment: transaction.environment)
            : []
        try await tx.insertMoneyEvents([
            sale(
                transaction, kind: kind, chain: chain, taxRules: try await tx.taxRules(),
                agreement: try await CatalogService.agreement(in: tx))
        ])
    }

    /// Records a refund or its reversal of `transaction`, just updated, if money moved.
    static func recordChange(_ transaction: StoreTransaction, at date: Date, in tx: any StorageTransaction)
        async throws
    {
        let earlier = try await tx.moneyEvents(transactionId: transaction.id, environment: transaction.environment)
        if let event = change(transaction, at: date, earlier: earlier) { try await tx.insertMoneyEvents([event]) }
    }

    /// The periods of paid service before `transaction` in its subscription: paid, unrevoked, earlier periods.
    static func paidPeriods(_ chain: [StoreTransaction], before transaction: StoreTransaction) -> [DateInterval] {
        chain.compactMap { earlier in
            guard earlier.id != transaction.id, earlier.purchaseDate < transaction.purchaseDate,
                earlier.priceMinorUnits > 0, earlier.revocationDate == nil,
                let end = earlier.expiresDate, end > earlier.purchaseDate
            else { return nil }
            return DateInterval(start: earlier.purchaseDate, end: end)
        }
    }

    private static func event(
        _ transaction: StoreTransaction, kind: MoneyEvent.Kind, at date: Date, units: Int, _ amounts: Proceeds
    ) -> MoneyEvent {
        MoneyEvent(
            environment: transaction.environment, transactionId: transaction.id, revision: transaction.revision,
            kind: kind, occurredAt: date, appId: transaction.appId, accountId: transaction.accountId,
            originalTransactionId: transaction.originalTransactionId, productId: transaction.productId,
            productType: transaction.productType, storefront: transaction.storefront, currency: transaction.currency,
            units: units, amounts: amounts, billingPlan: transaction.billingPlanType)
    }
}
