import Foundation
import Hummingbird
import KioskCore
import KioskHTTP
import KioskProtocol

/// `/admin/v1/tax-rules`, `/admin/v1/agreements/small-business` and `/admin/v1/money/events`: the terms sales are
/// priced under, and what each sale was worth.
struct MoneyController {
    let money: MoneyService

    /// The longest span one `money/events` request may ask for.
    static let longestSpan: TimeInterval = 366 * 86_400

    func addRoutes(to group: RouterGroup<KioskRequestContext>) {
        group.get(AdminRoutes.taxRules.routerPath) { _, _ in
            let rules = try await money.taxRules()
            return TaxRuleList(inForce: rules.inForce, configured: rules.configured)
        }
        group.put(AdminRoutes.taxRule.routerPath) { request, context in
            let body = try await request.decodeJSON(as: TaxRuleBody.self, context: context)
            return try await money.setTaxRule(
                storefront: try context.parameters.require("storefront").uppercased(),
                pricesIncludeTax: body.pricesIncludeTax, rateBasisPoints: body.rateBasisPoints,
                effectiveFrom: body.effectiveFrom)
        }
        group.put(AdminRoutes.smallBusinessProgram.routerPath) { request, context in
            let body = try await request.decodeJSON(as: SmallBusinessBody.self, context: context)
            return AgreementsController.resource(try await money.setSmallBusinessProgram(since: body.since))
        }
        group.get(AdminRoutes.salesReport.routerPath) { request, _ in
            let query = request.uri.queryParameters
            let frequencyText = query.get("frequency") ?? ReportFrequency.daily.rawValue
            guard let frequency = ReportFrequency(rawValue: frequencyText.uppercased()) else {
                throw KioskError(
                    .invalidFrequency, "'\(frequencyText.prefix(20))' is not a report frequency.", field: "frequency",
                    fix: "Use daily, weekly, monthly or yearly.")
            }
            return Self.tabSeparated(
                try await money.salesReport(frequency: frequency, date: query.get("date") ?? ""))
        }
        group.get(AdminRoutes.subscriptionEventReport.routerPath) { request, _ in
            Self.tabSeparated(
                try await money.subscriptionEventReport(date: request.uri.queryParameters.get("date") ?? ""))
        }
        group.get(AdminRoutes.financeReport.routerPath) { request, _ in
            let query = request.uri.queryParameters
            let report = try await money.financialReport(
                month: query.get("month") ?? "",
                region: (query.get("region") ?? FinancialReport.allRegions).uppercased())
            return Self.tabSeparated(report)
        }
        group.get(AdminRoutes.exchangeRates.routerPath) { _, _ in
            ExchangeRateList(
                reportingCurrency: ExchangeRate.reportingCurrency,
                rates: try await money.exchangeRates().map(ExchangeRateResource.init))
        }
        group.put(AdminRoutes.exchangeRate.routerPath) { request, context in
            let body = try await request.decodeJSON(as: ExchangeRateBody.self, context: context)
            return ExchangeRateResource(
                try await money.setExchangeRate(
                    currency: try context.parameters.require("currency"), usdPerUnit: body.usdPerUnit,
                    effectiveFrom: body.effectiveFrom))
        }
        group.get(AdminRoutes.moneySeries.routerPath) { request, _ in
            let query = request.uri.queryParameters
            let (environment, from, to) = try Self.span(of: request)
            let byText = query.get("by") ?? MoneySeries.Grouping.day.rawValue
            guard let grouping = MoneySeries.Grouping(rawValue: byText) else {
                throw KioskError(
                    .invalidGrouping, "'\(byText.prefix(20))' is not a grouping.", field: "by",
                    fix: "Use day, product or storefront.")
            }
            return try await money.moneySeries(environment: environment, from: from, to: to, by: grouping)
        }
        group.get(AdminRoutes.moneyEvents.routerPath) { request, _ in
            let (environment, from, to) = try Self.span(of: request)
            return MoneyEventList(
                environment: environment, from: from, to: to,
                events: try await money.moneyEvents(environment: environment, from: from, to: to))
        }
    }

    /// The environment (production unless asked: money is the production store's; the sandbox's never mixes into
    /// it) and the span `from..<to` a money query names, at most ``longestSpan`` long.
    static func span(of request: Request) throws -> (StoreEnvironment, Date, Date) {
        let query = request.uri.queryParameters
        let environment = try request.environment(query.get("environment") ?? StoreEnvironment.production.rawValue)
        let from = try instant(query.get("from"), field: "from")
        let to = try instant(query.get("to"), field: "to")
        guard from < to, to.timeIntervalSince(from) <= longestSpan else {
            throw KioskError(
                .invalidSpan, "'from' must come before 'to', at most 366 days earlier.", field: "to",
                fix: "Ask for a day, a month or a year at a time.")
        }
        return (environment, from, to)
    }

    /// A report as the body, `text/tab-separated-values`.
    static func tabSeparated(_ report: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/tab-separated-values; charset=utf-8"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: report)))
    }

    /// A query's instant: an ISO 8601 date-time, or a day (`2026-11-24`, its start in UTC).
    static func instant(_ text: String?, field: String) throws -> Date {
        let invalid = KioskError(
            .invalidDate, "'\(field)' must be a day such as 2026-11-24 or a date-time such as 2026-11-24T00:00:00Z.",
            field: field, fix: "Give '\(field)' as a day or an ISO 8601 date-time.")
        guard let text, text.count <= 40 else { throw invalid }
        let dateTime = text.count == 10 ? text + "T00:00:00Z" : text
        guard let date = ISO8601DateFormatter().date(from: dateTime), Date.kioskRange.contains(date) else {
            throw invalid
        }
        return date
    }
}

extension TaxRule: ResponseEncodable {}
extension TaxRuleList: ResponseEncodable {}
extension MoneyEventList: ResponseEncodable {}
extension MoneySeries: ResponseEncodable {}
extension ExchangeRateResource: ResponseEncodable {}
extension ExchangeRateList: ResponseEncodable {}
