import Foundation
import Hummingbird
import KioskCore

/// Subscriptions: the dashboard a subscription business runs on (active subscriptions, MRR, churn, trial conversion,
/// renewal rate, refunds), by day as server-drawn charts and by product and storefront as tables, worked out from the
/// ledger by ``SubscriptionMetrics``. Production by default; the sandbox's on its own clock.
extension ConsoleController {
    func addSubscriptionRoutes(to pages: RouterGroup<KioskRequestContext>) {
        pages.get("subscriptions") { request, context in
            let environment =
                StoreEnvironment(rawValue: request.uri.queryParameters.get("environment") ?? "") ?? .production
            // The sandbox's time is its own clock's (tests move it on by days in seconds).
            let now =
                environment == .sandbox ? Date(millisecondsSince1970: sandboxClock.current().now) : clock.now()
            let today = Calendar.utc.startOfDay(for: now)
            let to = Calendar.utc.date(byAdding: .day, value: 1, to: today) ?? today
            let from = Calendar.utc.date(byAdding: .day, value: -Self.chartedDays, to: to) ?? today
            let metrics = try await money.subscriptionMetrics(environment: environment, from: from, to: to, now: now)
            return renderer.page(
                SubscriptionsPage(metrics, environment: environment, from: from, now: now),
                title: "Subscriptions", section: "Subscriptions", session: context.consoleSession)
        }
    }
}

/// The subscriptions dashboard: the span's figures, charts by day, tables by product and storefront.
struct SubscriptionsPage: ConsoleView {
    static let template = "subscriptions"

    /// A product's or a storefront's figures, as the page writes them.
    struct Row: Decodable {
        /// The product id or the storefront.
        var key: String
        var active: Int
        var activeTrials: Int
        /// In US dollars at the configured rates.
        var mrr: String
        /// Per currency as sold, in a line.
        var mrrAsSold: String
        var churn: String
        var trialConversion: String
        var renewalRate: String
        var refunds: Int
        var refunded: String
    }

    var sandbox: Bool
    var environments: [ConsoleOption]
    /// The span, `2026-10-25 to 2026-11-24 10:00:00 UTC`.
    var span: String
    var total: Row
    var activeChart: String
    var mrrChart: String
    var churnChart: String
    var refundsChart: String
    var byProduct: [Row]
    var byStorefront: [Row]
    /// The currencies that have no exchange rate, in a line.
    var unconverted: String?
}

extension SubscriptionsPage {
    init(_ metrics: SubscriptionMetrics, environment: StoreEnvironment, from: Date, now: Date) {
        let days = metrics.days
        let first = days.first?.key ?? ""
        func chart(_ title: String, id: String, _ value: (SubscriptionMetrics.Day) -> Int) -> String {
            ConsoleChart.bars(
                days.map { (label: String($0.key.suffix(5)), value: value($0)) },
                title: "\(title), \(first) to \(days.last?.key ?? "") (UTC)", id: id)
        }
        self.init(
            sandbox: environment == .sandbox,
            environments: StoreEnvironment.allCases.map {
                ConsoleOption(value: $0.rawValue, selected: $0 == environment)
            },
            span: "\(String(ISO8601DateFormatter().string(from: from).prefix(10))) to \(ConsoleController.time(now))",
            total: Row(key: "All", metrics.total),
            activeChart: chart("Active subscriptions at each day's end", id: "active-chart") { $0.active },
            mrrChart: chart("MRR at each day's end, US cents", id: "mrr-chart") { $0.mrrUSCents },
            churnChart: chart("Churned subscriptions per day", id: "churn-chart") { $0.churned },
            refundsChart: chart("Refunds per day", id: "refunds-chart") { $0.refunds },
            byProduct: metrics.byProduct.map { Row(key: $0.key, $0.figures) },
            byStorefront: metrics.byStorefront.map { Row(key: $0.key, $0.figures) },
            unconverted: metrics.unconverted.joined(separator: ", ").nonEmpty)
    }
}

extension SubscriptionsPage.Row {
    init(key: String, _ figures: SubscriptionMetrics.Figures) {
        func asSold(_ amounts: [String: Int]) -> String {
            amounts.sorted { $0.key < $1.key }.map { ConsoleController.amount($0.value, $0.key) }.joined(
                separator: ", ")
        }
        self.init(
            key: key, active: figures.active, activeTrials: figures.activeTrials,
            mrr: ConsoleController.amount(figures.mrrUSCents, ExchangeRate.reportingCurrency),
            mrrAsSold: asSold(figures.mrrByCurrency),
            churn: Self.share(figures.churned, of: figures.subscribers),
            trialConversion: Self.share(figures.trialsConverted, of: figures.trialsEnded),
            renewalRate: Self.share(figures.renewed, of: figures.renewalsDue), refunds: figures.refunds,
            refunded: "\(ConsoleController.amount(figures.refundedUSCents, ExchangeRate.reportingCurrency))"
                + (figures.refundedByCurrency.isEmpty ? "" : " (\(asSold(figures.refundedByCurrency)))"))
    }

    /// "2 of 3 (66.7%)", or "0 of 0" when there is nothing to share.
    static func share(_ part: Int, of whole: Int) -> String {
        guard whole > 0 else { return "\(part) of 0" }
        let tenths = Int(clamping: Proceeds.rounded(Int128(part) * 1_000, dividedBy: Int128(whole)))
        return "\(part) of \(whole) (\(tenths / 10).\(tenths % 10)%)"
    }
}
