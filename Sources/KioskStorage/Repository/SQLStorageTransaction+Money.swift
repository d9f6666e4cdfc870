import Foundation
import KioskCore
import KioskSQL
import SQLKit

/// Money events (one row per transaction revision that moved money) and the operator's tax rules.
extension SQLStorageTransaction {
    func insertMoneyEvents(_ events: [MoneyEvent]) async throws {
        try await insert(
            events,
            into: """
                money_events (environment, transaction_id, revision, kind, occurred_at, app_id, account_id,
                    original_transaction_id, product_id, product_type, storefront, currency, units,
                    customer_price_minor_units, tax_minor_units, commission_minor_units, proceeds_minor_units,
                    prices_include_tax, tax_rate_basis_points, commission_basis_points, proceeds_reason,
                    billing_plan)
                """
        ) { event -> SQLQueryString in
            let amounts = event.amounts
            return """
                (\(bind: event.environment.rawValue), \(bind: event.transactionId), \(bind: event.revision),
                    \(bind: event.kind.rawValue), \(bind: event.occurredAt.millisecondsSince1970), \(bind: event.appId),
                    \(bind: Self.text(event.accountId)), \(bind: event.originalTransactionId), \(bind: event.productId),
                    \(bind: event.productType.rawValue), \(bind: event.storefront), \(bind: event.currency),
                    \(bind: event.units), \(bind: amounts.customerPriceMinorUnits), \(bind: amounts.taxMinorUnits),
                    \(bind: amounts.commissionMinorUnits), \(bind: amounts.proceedsMinorUnits),
                    \(bind: amounts.pricesIncludeTax), \(bind: amounts.taxRateBasisPoints),
                    \(bind: amounts.commissionBasisPoints), \(bind: amounts.reason),
                    \(bind: event.billingPlan?.rawValue))
                """
        }
    }

    func moneyEvents(environment: StoreEnvironment, from start: Date, to end: Date) async throws -> [MoneyEvent] {
        try await session.all(
            """
            SELECT * FROM money_events WHERE environment = \(bind: environment.rawValue)
                AND occurred_at >= \(bind: start.millisecondsSince1970)
                AND occurred_at < \(bind: end.millisecondsSince1970)
            ORDER BY occurred_at, transaction_id, revision
            """
        )
        .map(Self.decodeMoneyEvent)
    }

    func moneyEvents(transactionId: Int64, environment: StoreEnvironment) async throws -> [MoneyEvent] {
        try await session.all(
            """
            SELECT * FROM money_events WHERE environment = \(bind: environment.rawValue)
                AND transaction_id = \(bind: transactionId)
            ORDER BY revision
            """
        )
        .map(Self.decodeMoneyEvent)
    }

    func setTaxRule(_ rule: TaxRule) async throws {
        try await changesCachedRows()
        try await session.run(
            """
            INSERT INTO tax_rules (storefront, effective_from, prices_include_tax, rate_basis_points)
            VALUES (\(bind: rule.storefront), \(bind: rule.effectiveFrom.millisecondsSince1970),
                \(bind: rule.pricesIncludeTax), \(bind: rule.rateBasisPoints))
            ON CONFLICT (storefront, effective_from) DO UPDATE SET
                prices_include_tax = excluded.prices_include_tax, rate_basis_points = excluded.rate_basis_points
            """
        )
    }

    /// Read through the ``ReadCache``: every sale reads them.
    func taxRules() async throws -> [TaxRule] {
        try await cached(.taxRules) {
            try await session.all("SELECT * FROM tax_rules").map { row in
                TaxRule(
                    storefront: try row.decode(column: "storefront", as: String.self),
                    effectiveFrom: try row.date("effective_from"),
                    pricesIncludeTax: try row.decode(column: "prices_include_tax", as: Bool.self),
                    rateBasisPoints: try row.decode(column: "rate_basis_points", as: Int.self))
            }
            .sorted { ($0.storefront, $0.effectiveFrom) < ($1.storefront, $1.effectiveFrom) }
        } ?? []
    }

    func setExchangeRate(_ rate: ExchangeRate) async throws {
        try await session.run(
            """
            INSERT INTO exchange_rates (currency, effective_from, usd_micros)
            VALUES (\(bind: rate.currency), \(bind: rate.effectiveFrom.millisecondsSince1970), \(bind: rate.usdMicros))
            ON CONFLICT (currency, effective_from) DO UPDATE SET usd_micros = excluded.usd_micros
            """
        )
    }

    func exchangeRates() async throws -> [ExchangeRate] {
        try await session.all("SELECT * FROM exchange_rates").map { row in
            ExchangeRate(
                currency: try row.decode(column: "currency", as: String.self),
                effectiveFrom: try row.date("effective_from"),
                usdMicros: try row.decode(column: "usd_micros", as: Int.self))
        }
        .sorted { ($0.currency, $0.effectiveFrom) < ($1.currency, $1.effectiveFrom) }
    }

    private static func decodeMoneyEvent(_ row: any SQLRow) throws -> MoneyEvent {
        MoneyEvent(
            environment: try row.enumeration("environment", as: StoreEnvironment.self),
            transactionId: try row.decode(column: "transaction_id", as: Int64.self),
            revision: try row.decode(column: "revision", as: Int64.self),
            kind: try row.enumeration("kind", as: MoneyEvent.Kind.self),
            occurredAt: try row.date("occurred_at"),
            appId: try row.decode(column: "app_id", as: Int64.self),
            accountId: try row.uuid("account_id"),
            originalTransactionId: try row.decode(column: "original_transaction_id", as: Int64.self),
            productId: try row.decode(column: "product_id", as: String.self),
            productType: try row.enumeration("product_type", as: ProductType.self),
            storefront: try row.decode(column: "storefront", as: String.self),
            currency: try row.decode(column: "currency", as: String.self),
            units: try row.decode(column: "units", as: Int.self),
            amounts: Proceeds(
                customerPriceMinorUnits: try row.decode(column: "customer_price_minor_units", as: Int.self),
                taxMinorUnits: try row.decode(column: "tax_minor_units", as: Int.self),
                commissionMinorUnits: try row.decode(column: "commission_minor_units", as: Int.self),
                proceedsMinorUnits: try row.decode(column: "proceeds_minor_units", as: Int.self),
                pricesIncludeTax: try row.decode(column: "prices_include_tax", as: Bool.self),
                taxRateBasisPoints: try row.decode(column: "tax_rate_basis_points", as: Int.self),
                commissionBasisPoints: try row.decode(column: "commission_basis_points", as: Int.self),
                reason: try row.optional("proceeds_reason", as: String.self)),
            billingPlan: try row.decodeNil(column: "billing_plan")
                ? nil : row.enumeration("billing_plan", as: BillingPlanType.self))
    }
}
