import Foundation

/// The subscriptions dashboard's figures, worked out from the ledger (the stored transactions of auto-renewable
/// subscriptions, one per period) rather than from counters, so they always agree with it. The rules, each
/// written once here:
///
/// - A subscription is its chain of transactions (one original transaction id), in purchase order. At an instant it
///   is in the latest period bought by then, if that period has not expired and was not refunded or revoked by then.
///   It is *active* when that period is paid, *in trial* when it is a free trial.
/// - *MRR* at an instant: the price of every active subscription's period normalized to a month (a week × 52 / 12, a
///   year / 12, two, three and six months divided; an offer's price over the offer's period), per currency, and in
///   US dollars through the exchange rate in force then.
/// - *Churned*: subscriptions whose paid period ended in the span (expired, or refunded) without the next period
///   renewing it, out of the subscriptions with a paid period in the span.
/// - *Trial conversion*: free trials that ended in the span and renewed into a paid period, out of those that ended.
/// - *Renewal rate*: paid periods due to renew in the span (expired unrefunded, not upgraded) that renewed.
/// - *Refunds*: periods refunded in the span (not Family Sharing revocations), and the amounts refunded.
public struct SubscriptionMetrics: Codable, Sendable, Hashable {
    /// The figures of the whole store, a product or a storefront.
    public struct Figures: Codable, Sendable, Hashable {
        /// Subscriptions in a paid period at the span's end.
        public var active = 0
        /// Subscriptions in a free trial at the span's end.
        public var activeTrials = 0
        /// MRR at the span's end in US cents, of the currencies with an exchange rate.
        public var mrrUSCents = 0
        /// MRR at the span's end per currency, in its minor units.
        public var mrrByCurrency: [String: Int] = [:]
        /// Subscriptions with a paid period during the span: what churn is a share of.
        public var subscribers = 0
        public var churned = 0
        public var trialsEnded = 0
        public var trialsConverted = 0
        public var renewalsDue = 0
        public var renewed = 0
        public var refunds = 0
        public var refundedUSCents = 0
        /// Refunded per currency, in its minor units.
        public var refundedByCurrency: [String: Int] = [:]

        public init() {}
    }

    /// One UTC day of the span.
    public struct Day: Codable, Sendable, Hashable {
        /// `2026-11-24`.
        public var key: String
        /// At the day's end (or now, for today).
        public var active: Int
        public var mrrUSCents: Int
        public var churned: Int
        public var refunds: Int
    }

    public struct Row: Codable, Sendable, Hashable {
        /// The product id or the storefront.
        public var key: String
        public var figures: Figures
    }

    public var total: Figures
    public var byProduct: [Row]
    public var byStorefront: [Row]
    public var days: [Day]
    /// Currencies with MRR or refunds and no exchange rate in force: left out of the US-dollar figures.
    public var unconverted: [String]

    /// The figures of `from..<to` (cut at `now`: nothing after it has happened) from `transactions`, the chains of one
    /// environment's subscriptions (``KioskStorage``'s `subscriptionChains`); `durations` gives each product's
    /// period by `"appId/productId"`, `rates` the exchange rates.
    public static func make(
        _ transactions: [StoreTransaction], durations: [String: SubscriptionDuration], rates: [ExchangeRate],
        from: Date, to: Date, now: Date
    ) -> SubscriptionMetrics {
        let end = min(to, now)
        var chains: [Int64: [StoreTransaction]] = [:]
        for transaction in transactions where transaction.productType == .autoRenewable {
            chains[transaction.originalTransactionId, default: []].append(transaction)
        }
        let sorted = chains.values.map { $0.sorted { ($0.purchaseDate, $0.id) < ($1.purchaseDate, $1.id) } }
            .sorted { ($0.first?.id ?? 0) < ($1.first?.id ?? 0) }
        var tally = Tally(rates: rates, durations: durations)
        for chain in sorted {
            tally.countEvents(of: chain, from: from, end: end)
            if end >= from { tally.countActive(chain, at: end) }
        }
        tally.settleMRR()
        var days: [Day] = []
        var start = Calendar.utc.startOfDay(for: from)
        let formatter = ISO8601DateFormatter()
        while start < end, days.count < 400 {
            let next = Calendar.utc.date(byAdding: .day, value: 1, to: start) ?? end
            let instant = min(next, end)
            var day = Tally(rates: rates, durations: durations)
            for chain in sorted {
                day.countActive(chain, at: instant)
                day.countEvents(of: chain, from: max(start, from), end: instant)
            }
            day.settleMRR()
            days.append(
                Day(
                    key: String(formatter.string(from: start).prefix(10)), active: day.total.active,
                    mrrUSCents: day.total.mrrUSCents, churned: day.total.churned, refunds: day.total.refunds))
            start = next
        }
        return SubscriptionMetrics(
            total: tally.total, byProduct: tally.byProduct.map(Row.init).sorted { $0.key < $1.key },
            byStorefront: tally.byStorefront.map(Row.init).sorted { $0.key < $1.key }, days: days,
            unconverted: tally.unconverted.sorted())
    }

    /// Whether a period is a free trial.
    public static func isTrial(_ transaction: StoreTransaction) -> Bool {
        transaction.offer?.paymentMode == .freeTrial
    }

    /// The period `chain` is in at `instant`: the latest bought by then, unless it expired or was refunded by then.
    public static func period(of chain: [StoreTransaction], at instant: Date) -> StoreTransaction? {
        guard let latest = chain.last(where: { $0.purchaseDate <= instant }),
            (latest.expiresDate ?? .distantPast) > instant, (latest.revocationDate ?? .distantFuture) > instant
        else { return nil }
        return latest
    }

    /// A period's price over a month, in ten-thousandths of the currency's minor units; nil for a period whose
    /// length is unknown (a product without a duration).
    public static func monthlyTenThousandths(of transaction: StoreTransaction, duration: SubscriptionDuration?) -> Int?
    {
        guard let (months, per) = monthsCovered(by: transaction, duration: duration) else { return nil }
        // price × 10⁴ × per / months, rounded half up; a 128-bit product cannot overflow.
        let numerator = Int128(transaction.priceMinorUnits) * 10_000 * Int128(per)
        return Int(clamping: (numerator * 2 + Int128(months)) / (2 * Int128(months)))
    }

    /// How many months the price of `transaction` pays for, as a fraction `months / per`: a 12-month commitment's
    /// payment one; an offer's price its offer period (all of them when paid up front); else the product's period.
    static func monthsCovered(by transaction: StoreTransaction, duration: SubscriptionDuration?) -> (Int, Int)? {
        if transaction.commitment != nil { return (1, 1) }
        if let offer = transaction.offer, let text = offer.period, let period = OfferPeriod(iso8601: text) {
            var count = max(1, period.count)
            if offer.paymentMode == .payUpFront, let expires = transaction.expiresDate {
                // Paid up front, the price covers every offer period: as many as fit between purchase and expiry.
                let one = period.end(from: transaction.purchaseDate, environment: transaction.environment)
                    .timeIntervalSince(transaction.purchaseDate)
                let covered = (expires.timeIntervalSince(transaction.purchaseDate) / max(1, one)).rounded()
                // A stored period is the store's own, but a count no calendar holds must not trap the page.
                let periods = covered.isFinite ? Int(max(1, min(covered, 1_000_000))) : 1
                count = count.saturatingMultiplied(by: periods)
            }
            let twelfths = count.saturatingMultiplied(by: 12)
            return switch period.unit {
            case .day: (twelfths, 365)
            case .week: (twelfths, 52)
            case .month: (count, 1)
            case .year: (twelfths, 1)
            }
        }
        return switch duration {
        case .oneWeek: (12, 52)
        case .oneMonth: (1, 1)
        case .twoMonths: (2, 1)
        case .threeMonths: (3, 1)
        case .sixMonths: (6, 1)
        case .oneYear: (12, 1)
        case nil: nil
        }
    }
}

extension SubscriptionMetrics.Row {
    init(_ entry: (key: String, value: SubscriptionMetrics.Figures)) {
        self.init(key: entry.key, figures: entry.value)
    }
}

/// Adds the figures up: for the store, and by product and storefront.
private struct Tally {
    let rates: [ExchangeRate]
    let durations: [String: SubscriptionDuration]
    var total = SubscriptionMetrics.Figures()
    var byProduct: [String: SubscriptionMetrics.Figures] = [:]
    var byStorefront: [String: SubscriptionMetrics.Figures] = [:]
    var unconverted: Set<String> = []
    /// MRR in ten-thousandths of minor units, by currency: converted once the whole sum is known.
    private var mrr: [String: [String: Int]] = [:]
    private var mrrInstant = Date.distantPast

    init(rates: [ExchangeRate], durations: [String: SubscriptionDuration]) {
        self.rates = rates
        self.durations = durations
    }

    /// Adds `change` to the store's figures and to those of `transaction`'s product and storefront.
    mutating func add(_ transaction: StoreTransaction, _ change: (inout SubscriptionMetrics.Figures) -> Void) {
        change(&total)
        change(&byProduct[transaction.productId, default: .init()])
        change(&byStorefront[transaction.storefront, default: .init()])
    }

    /// Counts the subscription at `instant`: active or in trial, and its MRR.
    mutating func countActive(_ chain: [StoreTransaction], at instant: Date) {
        guard let period = SubscriptionMetrics.period(of: chain, at: instant) else { return }
        if SubscriptionMetrics.isTrial(period) {
            add(period) { $0.activeTrials += 1 }
            return
        }
        add(period) { $0.active += 1 }
        let duration = durations["\(period.appId)/\(period.productId)"]
        guard let monthly = SubscriptionMetrics.monthlyTenThousandths(of: period, duration: duration) else { return }
        for key in ["", "p:" + period.productId, "s:" + period.storefront] {
            mrr[key, default: [:]][period.currency, default: 0] =
                mrr[key, default: [:]][period.currency, default: 0].saturatingAdding(monthly)
        }
        mrrInstant = instant
    }

    /// Sets the MRR figures from the sums (each currency's sum rounded once, then converted once); last.
    mutating func settleMRR() {
        func figures(_ sums: [String: Int]) -> (usCents: Int, byCurrency: [String: Int], unconverted: [String]) {
            var usCents = 0
            var byCurrency: [String: Int] = [:]
            var missing: [String] = []
            for (currency, sum) in sums {
                byCurrency[currency] = Self.rounded(sum, by: 10_000)
                guard let rate = ExchangeRate.inForce(for: currency, at: mrrInstant, among: rates) else {
                    missing.append(currency)
                    continue
                }
                let exponent = Self.exponent(of: currency)
                usCents = usCents.saturatingAdding(Self.rounded(rate.usCents(sum, exponent: exponent), by: 10_000))
            }
            return (usCents, byCurrency, missing)
        }
        for (key, sums) in mrr {
            let (usCents, byCurrency, missing) = figures(sums)
            unconverted.formUnion(missing)
            let name = String(key.dropFirst(2))
            switch key.prefix(2) {
            case "p:":
                byProduct[name, default: .init()].mrrUSCents = usCents
                byProduct[name, default: .init()].mrrByCurrency = byCurrency
            case "s:":
                byStorefront[name, default: .init()].mrrUSCents = usCents
                byStorefront[name, default: .init()].mrrByCurrency = byCurrency
            default:
                total.mrrUSCents = usCents
                total.mrrByCurrency = byCurrency
            }
        }
    }

    /// Counts what happened to the subscription in `from..<end`: paid periods that churned or renewed, trials that
    /// ended, refunds.
    mutating func countEvents(of chain: [StoreTransaction], from: Date, end: Date) {
        var churnedIn: Set<String> = []
        var subscribedIn: Set<String> = []
        for (index, period) in chain.enumerated() {
            let next = chain.indices.contains(index + 1) ? chain[index + 1] : nil
            let renewed = next.map { $0.transactionReason == .renewal && $0.purchaseDate < end } ?? false
            let expires = period.expiresDate ?? period.purchaseDate
            let revoked = period.revocationDate.map { $0 < expires } ?? false
            let ended =
                period.isUpgraded ? (next?.purchaseDate ?? expires) : min(expires, period.revocationDate ?? expires)
            let endedInSpan = ended >= from && ended < end
            if let refunded = period.revocationDate, refunded >= from, refunded < end,
                period.revocationType != .familyRevoke
            {
                let usCents = ExchangeRate.inForce(for: period.currency, at: refunded, among: rates).map {
                    $0.usCents(period.refundedMinorUnits, exponent: Self.exponent(of: period.currency))
                }
                if usCents == nil { unconverted.insert(period.currency) }
                add(period) {
                    $0.refunds += 1
                    $0.refundedByCurrency[period.currency, default: 0] =
                        $0.refundedByCurrency[period.currency, default: 0].saturatingAdding(period.refundedMinorUnits)
                    $0.refundedUSCents = $0.refundedUSCents.saturatingAdding(usCents ?? 0)
                }
            }
            if SubscriptionMetrics.isTrial(period) {
                guard endedInSpan, !revoked else { continue }
                let paidNext = next.map { !SubscriptionMetrics.isTrial($0) && $0.purchaseDate < end } ?? false
                let converted = paidNext && (renewed || period.isUpgraded)
                add(period) {
                    $0.trialsEnded += 1
                    if converted { $0.trialsConverted += 1 }
                }
                continue
            }
            // A paid period in the span makes the subscription one that could churn, under its product and
            // storefront.
            if period.purchaseDate < end, ended >= from {
                for key in ["", "p:" + period.productId, "s:" + period.storefront] where !subscribedIn.contains(key) {
                    subscribedIn.insert(key)
                    add(key, period) { $0.subscribers += 1 }
                }
            }
            guard endedInSpan, !period.isUpgraded else { continue }
            if !revoked {
                add(period) {
                    $0.renewalsDue += 1
                    if renewed { $0.renewed += 1 }
                }
            }
            if !renewed {
                for key in ["", "p:" + period.productId, "s:" + period.storefront] where !churnedIn.contains(key) {
                    churnedIn.insert(key)
                    add(key, period) { $0.churned += 1 }
                }
            }
        }
    }

    /// Adds `change` to one of the figures `add(_:_:)` adds to: `""` the store's, `p:` the product's, `s:` the
    /// storefront's (each subscription counted once in each, though its periods differ in product).
    private mutating func add(
        _ key: String, _ transaction: StoreTransaction, _ change: (inout SubscriptionMetrics.Figures) -> Void
    ) {
        switch key.prefix(2) {
        case "p:": change(&byProduct[transaction.productId, default: .init()])
        case "s:": change(&byStorefront[transaction.storefront, default: .init()])
        default: change(&total)
        }
    }

    static func exponent(of currency: String) -> Int {
        Storefront.all.first { $0.currency.code == currency }?.currency.minorUnitExponent ?? 2
    }

    /// `value / divisor`, rounded half away from zero.
    static func rounded(_ value: Int, by divisor: Int) -> Int {
        Int(clamping: Proceeds.rounded(Int128(value), dividedBy: Int128(divisor)))
    }
}
