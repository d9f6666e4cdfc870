import Foundation

/// The timing rules of a subscription's life: how long a period lasts, when billing retries happen and when
/// grace and retry windows close, in production and in the sandbox (where time runs at the tester's
/// ``RenewalRate``).
public struct RenewalRules: Sendable, Hashable {
    public var environment: StoreEnvironment
    /// The sandbox tester's renewal rate; ignored in production.
    public var rate: RenewalRate

    public init(environment: StoreEnvironment, rate: RenewalRate = .monthlyEvery5Minutes) {
        self.environment = environment
        self.rate = rate
    }

    /// Apple's sandbox renews at most this many times after a (re)subscription, then the subscription expires.
    public static let sandboxRenewalLimit = 12
    /// How long Apple keeps retrying a failed renewal before the subscription expires.
    public static let billingRetryDays = 60
    /// Days after the first failure on which billing is retried (Apple does not publish its schedule), up to the
    /// longest retry window; a window retries on the days before it closes.
    public static let retryDays = [1, 3, 7, 14, 21, 30, 45, 60, 75]

    /// When a period of `duration` that starts at `start` ends.
    public func periodEnd(_ duration: SubscriptionDuration, from start: Date) -> Date {
        switch environment {
        case .production: duration.end(from: start, environment: .production)
        case .sandbox: start + duration.sandboxSeconds * scale
        }
    }

    /// `days` of calendar time as they pass in this environment: real days in production; in the sandbox a
    /// 30-day month lasts as long as a one-month period (5 minutes at Apple's rate).
    public func span(days: Int) -> TimeInterval {
        switch environment {
        case .production: TimeInterval(days) * 86_400
        case .sandbox: TimeInterval(days) * SubscriptionDuration.oneMonth.sandboxSeconds * scale / 30
        }
    }

    /// How long Apple retries a failed payment of the monthly plan before the commitment ends (Apple's "Managing the
    /// life cycle of monthly subscriptions with a 12-month commitment").
    public static let commitmentBillingRetryDays = 90

    /// How many days the billing retry of a payment under `billingPlan` lasts: 60, 90 for the monthly plan.
    public static func retryWindowDays(_ billingPlan: BillingPlanType) -> Int {
        billingPlan == .monthly ? commitmentBillingRetryDays : billingRetryDays
    }

    /// When the billing retry that began at `start` gives up: 60 days, 90 for a payment of the monthly plan.
    public func retryEnd(from start: Date, billingPlan: BillingPlanType = .billedUpFront) -> Date {
        start + span(days: Self.retryWindowDays(billingPlan))
    }

    /// When the grace period of a renewal under `billingPlan` that failed at `start` ends, for an app whose grace
    /// period lasts `days`; nil when there is none: the app has none, or the payment is the monthly plan's, which
    /// never has one (Apple's "Managing the life cycle of monthly subscriptions with a 12-month commitment").
    public func gracePeriodEnd(from start: Date, days: Int?, billingPlan: BillingPlanType) -> Date? {
        guard let days, billingPlan == .billedUpFront else { return nil }
        return start + span(days: days)
    }

    /// When billing period `number` of a commitment that ends at `commitmentEnd` ends: counted back from the
    /// commitment's end, so the periods meet it exactly (the last period ends with the commitment) and a moved end (a
    /// late billing recovery) moves the periods after it.
    public func commitmentPeriodEnd(_ number: Int, of total: Int, commitmentEnd: Date) -> Date {
        let later = max(0, total - number)
        switch environment {
        case .production:
            return Calendar.utc.date(byAdding: DateComponents(month: -later), to: commitmentEnd) ?? commitmentEnd
        case .sandbox:
            return commitmentEnd - Double(later) * MonthlyPlan.billingPeriod.sandboxSeconds * scale
        }
    }

    /// The next billing retry after `now` for a retry of a payment under `billingPlan` that began at `start`; nil
    /// when none is left before the retry window closes.
    public func nextRetry(after now: Date, startedAt start: Date, billingPlan: BillingPlanType = .billedUpFront)
        -> Date?
    {
        let window = Self.retryWindowDays(billingPlan)
        return Self.retryDays.lazy.filter { $0 < window }.map { start + self.span(days: $0) }.first { $0 > now }
    }

    /// A new 12-month commitment to `product`'s monthly plan that starts at `start` in `storefront`, as its first
    /// billing period; nil when the plan is not offered there (``Product/monthlyPlanPrice(in:)``). Purchases and
    /// renewals both start commitments here, so the commitment lasts 12 of this environment's months (the tester's
    /// rate in the sandbox) and its periods, ended by ``periodEnd(of:)``, follow one another.
    public func newCommitment(to product: Product, in storefront: Storefront, from start: Date)
        -> TransactionCommitment?
    {
        guard let monthly = product.monthlyPlanPrice(in: storefront) else { return nil }
        let (total, overflow) = monthly.multipliedReportingOverflow(by: MonthlyPlan.billingPeriods)
        guard !overflow else { return nil }
        return TransactionCommitment(
            billingPeriodNumber: 1, totalBillingPeriods: MonthlyPlan.billingPeriods,
            expiresDate: periodEnd(MonthlyPlan.commitmentDuration, from: start), priceMinorUnits: total)
    }

    /// When the billing period `commitment` is at ends: counted back from the commitment's end (see
    /// ``commitmentPeriodEnd(_:of:commitmentEnd:)``).
    public func periodEnd(of commitment: TransactionCommitment) -> Date {
        commitmentPeriodEnd(
            commitment.billingPeriodNumber, of: commitment.totalBillingPeriods, commitmentEnd: commitment.expiresDate)
    }

    /// How much longer (or shorter) sandbox periods are than Apple's table (which is the 5-minute rate).
    private var scale: Double {
        let minutes: Double =
            switch rate {
            case .monthlyEvery3Minutes: 3
            case .monthlyEvery5Minutes: 5
            case .monthlyEvery15Minutes: 15
            case .monthlyEvery30Minutes: 30
            case .monthlyEvery1Hour: 60
            }
        return minutes / 5
    }
}
