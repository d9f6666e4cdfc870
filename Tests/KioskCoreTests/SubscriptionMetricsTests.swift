import Foundation
import KioskCore
import Testing

/// The subscriptions dashboard's rules on hand-made ledgers: who is active at an instant, MRR normalized to a month
/// and converted, churn, trial conversion, renewal rate and refunds in a span, by product and storefront and by day.
@Suite struct SubscriptionMetricsTests {
    static let start = Date(timeIntervalSince1970: 1_795_478_400)  // 2026-11-24T00:00:00Z
    static let day: TimeInterval = 86_400
    static let month: TimeInterval = 30 * day

    /// One period of subscription `original`, `startDay` days after `start`, lasting `days`.
    static func period(
        _ id: Int64, of original: Int64, product: String = "monthly", startDay: Double, days: Double = 30,
        price: Int = 999, currency: String = "USD", storefront: String = "USA", reason: TransactionReason = .renewal,
        offer: AppliedOffer? = nil, revokedDay: Double? = nil, refunded: Int = 0, upgraded: Bool = false
    ) -> StoreTransaction {
        let purchased = start + startDay * day
        return StoreTransaction(
            id: id, environment: .production, appId: 1, accountId: UUID(), productId: product,
            productType: .autoRenewable, originalTransactionId: original, purchaseDate: purchased,
            originalPurchaseDate: purchased, quantity: 1, priceMinorUnits: price, currency: currency,
            storefront: storefront, storefrontId: 1, applicationUsername: nil, appAccountToken: nil, orderId: "O\(id)",
            expiresDate: purchased + days * day, revocationDate: revokedDay.map { start + $0 * day },
            revocationType: revokedDay == nil ? nil : .refundFull, transactionReason: reason, isUpgraded: upgraded,
            offer: offer, refundedMinorUnits: refunded, signedTransaction: "")
    }

    static let trial = AppliedOffer(type: .introductory, paymentMode: .freeTrial, period: "P1W")
    static let durations: [String: SubscriptionDuration] = [
        "1/monthly": .oneMonth, "1/yearly": .oneYear, "1/weekly": .oneWeek, "1/quarterly": .threeMonths,
    ]

    static func metrics(_ ledger: [StoreTransaction], rates: [ExchangeRate] = [], fromDay: Double, toDay: Double)
        -> SubscriptionMetrics
    {
        SubscriptionMetrics.make(
            ledger, durations: durations, rates: rates, from: start + fromDay * day, to: start + toDay * day,
            now: start + toDay * day)
    }

    // Proves each period length normalizes to a month as written: a week × 52 / 12, a year / 12, a quarter / 3, an
    // offer over its own period, a commitment's payment as one month.
    @Test func pricesNormalizeToAMonth() {
        func monthly(_ product: String, price: Int, offer: AppliedOffer? = nil, days: Double = 30) -> Int? {
            SubscriptionMetrics.monthlyTenThousandths(
                of: Self.period(1, of: 1, product: product, startDay: 0, days: days, price: price, offer: offer),
                duration: Self.durations["1/\(product)"])
        }
        #expect(monthly("monthly", price: 999) == 9_990_000)
        #expect(monthly("weekly", price: 300) == 13_000_000, "300 × 52 / 12 = 1300")
        #expect(monthly("yearly", price: 11_988) == 9_990_000)
        #expect(monthly("quarterly", price: 1_000) == 3_333_333, "a third, kept to ten-thousandths")
        #expect(monthly("unknown", price: 999) == nil, "a product without a period has no monthly price")
        let payAsYouGo = AppliedOffer(type: .introductory, paymentMode: .payAsYouGo, period: "P1W")
        #expect(monthly("yearly", price: 100, offer: payAsYouGo) == 4_333_333, "100 a week")
        // Paid up front for three months (90 days in production's calendar from the 24th of November).
        let upFront = AppliedOffer(type: .introductory, paymentMode: .payUpFront, period: "P1M")
        #expect(monthly("yearly", price: 900, offer: upFront, days: 89) == 3_000_000)
        #expect(monthly("monthly", price: 0, offer: Self.trial) == 0)
        // A period no calendar holds is a vanishing monthly price, never an overflow that stops the page.
        let endless = AppliedOffer(type: .introductory, paymentMode: .payAsYouGo, period: "P\(Int.max)D")
        #expect(monthly("yearly", price: 100, offer: endless) == 0)
    }

    // Proves the instant rules: the latest period bought counts, until it expires or is refunded; an upgraded
    // period gives way to the one that replaced it; trials are counted apart and add no MRR.
    @Test func activeAndMRRAtTheSpansEnd() {
        let ledger = [
            Self.period(1, of: 1, startDay: -10, reason: .purchase),  // active, USD 9.99
            Self.period(
                2, of: 2, product: "yearly", startDay: -100, days: 365, price: 9_588, currency: "GBP",
                storefront: "GBR", reason: .purchase),  // active, GBP 7.99
            Self.period(3, of: 3, startDay: -40, reason: .purchase),  // expired on day -10
            Self.period(4, of: 4, startDay: -5, reason: .purchase, revokedDay: -1, refunded: 999),  // refunded
            Self.period(5, of: 5, startDay: -3, days: 7, price: 0, reason: .purchase, offer: Self.trial),  // trial
            Self.period(
                6, of: 6, product: "yearly", startDay: -20, days: 365, price: 11_988, reason: .purchase,
                upgraded: true),
            Self.period(7, of: 6, product: "monthly", startDay: -2, price: 1_999, reason: .purchase),  // upgrade
        ]
        let rates = [ExchangeRate(currency: "GBP", effectiveFrom: .distantPast, usdMicros: 1_250_000)]
        let metrics = Self.metrics(ledger, rates: rates, fromDay: -30, toDay: 0)
        #expect(metrics.total.active == 3)
        #expect(metrics.total.activeTrials == 1)
        #expect(metrics.total.mrrByCurrency == ["USD": 999 + 1_999, "GBP": 799])
        #expect(metrics.total.mrrUSCents == 999 + 1_999 + 999, "GBP 7.99 × 1.25 = USD 9.9875 → 9.99")
        #expect(metrics.unconverted == [])
        #expect(metrics.byStorefront.map(\.key) == ["GBR", "USA"])
        #expect(metrics.byProduct.first { $0.key == "monthly" }?.figures.active == 2)
        #expect(metrics.byProduct.first { $0.key == "monthly" }?.figures.activeTrials == 1)
        #expect(metrics.byProduct.first { $0.key == "yearly" }?.figures.mrrByCurrency == ["GBP": 799])
        #expect(metrics.days.count == 30 && metrics.days.last?.active == 3)

        let noRates = Self.metrics(ledger, fromDay: -30, toDay: 0)
        #expect(noRates.total.mrrUSCents == 999 + 1_999 && noRates.unconverted == ["GBP"])
    }

    // Proves the span's events: a renewal, an expiry (churn), a refund (churn and a refund), trials converted and
    // not, each counted under its product and storefront, and the days they fall on.
    @Test func churnConversionRenewalsAndRefundsInTheSpan() {
        let ledger = [
            // Renewed on day 5, then expired on day 35 unrenewed (after the span).
            Self.period(1, of: 1, startDay: -25, reason: .purchase), Self.period(2, of: 1, startDay: 5),
            // Expired on day 10 without renewing: churned.
            Self.period(3, of: 3, startDay: -20, storefront: "GBR", reason: .purchase),
            // Refunded on day 3: churned, a refund; its period was not due to renew.
            Self.period(4, of: 4, startDay: 1, reason: .purchase, revokedDay: 3, refunded: 999),
            // A trial converted on day 7, a trial that lapsed on day 9.
            Self.period(5, of: 5, startDay: 0, days: 7, price: 0, reason: .purchase, offer: Self.trial),
            Self.period(6, of: 5, startDay: 7),
            Self.period(7, of: 7, startDay: 2, days: 7, price: 0, reason: .purchase, offer: Self.trial),
        ]
        let metrics = Self.metrics(ledger, fromDay: 0, toDay: 30)
        let total = metrics.total
        #expect(total.subscribers == 4, "1, 3, 4 and 5's paid period")
        #expect(total.churned == 2)
        #expect(total.renewalsDue == 2 && total.renewed == 1, "1 renewed on day 5, 3 did not on day 10")
        #expect(total.trialsEnded == 2 && total.trialsConverted == 1)
        #expect(total.refunds == 1 && total.refundedByCurrency == ["USD": 999] && total.refundedUSCents == 999)
        #expect(total.active == 2, "1 and 5 in paid periods at the end")
        let british = metrics.byStorefront.first { $0.key == "GBR" }?.figures
        #expect(british?.churned == 1 && british?.subscribers == 1 && british?.renewalsDue == 1)
        let churnedByDay: [Int] = metrics.days.map { $0.churned }
        #expect(churnedByDay.reduce(0, +) == 2)
        #expect(metrics.days[3].refunds == 1 && metrics.days[3].churned == 1, "the refund on day 3")
        #expect(metrics.days[10].churned == 1, "the expiry on day 10")
    }

    // Proves the sums saturate: prices at the catalog's bound, many of them, do not trap.
    @Test func largeSumsHoldAtTheirBounds() {
        let ledger = (1...40).map {
            Self.period(Int64($0), of: Int64($0), startDay: -1, price: Int.max / 4, reason: .purchase)
        }
        let metrics = Self.metrics(ledger, fromDay: -2, toDay: 0)
        #expect(metrics.total.active == 40)
        #expect(metrics.total.mrrUSCents > 0)
    }
}
