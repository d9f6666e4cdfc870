import CompressNIO
import Foundation
import Hummingbird
import KioskCore
import KioskHTTP
import KioskStorage

/// The App Store Connect API's report endpoints, as Apple defines them: `GET /v1/salesReports` and
/// `GET /v1/financeReports` with Apple's `filter[…]` parameters, answering the report gzipped as the body
/// (`Content-Type: application/a-gzip`, not a content encoding), or Apple's JSON:API error envelope.
struct ConnectAPIController {
    let money: MoneyService
    let catalog: CatalogService
    let team: TeamService
    let database: any KioskDatabase
    let clock: any KioskClock
    /// `http` or `https`: how clients reach the store, for the links in answers.
    let scheme: String

    func addRoutes(to router: Router<KioskRequestContext>) {
        let (v1, v2) = (group("v1", of: router), group("v2", of: router))
        ConnectCatalogController(catalog: catalog, money: money, clock: clock).addRoutes(
            to: ConnectRouter(v1: v1, v2: v2, team: team, clock: clock, scheme: scheme))
        v1.get("salesReports") { request, context in
            guard try context.requireTeamKey().readsSalesReports else {
                throw ConnectAPIError.forbidden("The API key in use does not allow this request")
            }
            let filters = Filters(request)
            try await checkVendorNumber(filters)
            let reportType = try filters.require("reportType", in: ["SALES", "SUBSCRIPTION_EVENT"])
            try filters.require("reportSubType", in: ["SUMMARY"])
            if reportType == "SUBSCRIPTION_EVENT" {
                // Apple makes this report daily only, in version 1_3.
                try filters.require("frequency", in: [ReportFrequency.daily.rawValue])
                try filters.optional("version", in: ["1_3"])
                let day = try span(of: .daily, filters.value("reportDate"))
                let report = try await money.subscriptionEventReport(span: day)
                guard report.rows > 0 else {
                    throw ConnectAPIError.noReport("There were no subscription events for the date specified.")
                }
                return try gzipped(report.text)
            }
            try filters.optional("version", in: ["1_0", "1_1"])
            let frequencyName = try filters.require("frequency", in: ReportFrequency.allCases.map(\.rawValue))
            let frequency = ReportFrequency(rawValue: frequencyName) ?? .daily
            let span = try span(of: frequency, filters.value("reportDate"))
            let report = try await money.salesReport(span: span)
            guard report.rows > 0 else {
                throw ConnectAPIError.noReport("There were no sales for the date specified.")
            }
            return try gzipped(report.text)
        }
        v1.get("financeReports") { request, context in
            guard try context.requireTeamKey().readsFinanceReports else {
                throw ConnectAPIError.forbidden("The API key in use does not allow this request")
            }
            let filters = Filters(request)
            try await checkVendorNumber(filters)
            try filters.require("reportType", in: ["FINANCIAL"])
            let region = try filters.require("regionCode", in: FinancialReport.regionCodes.sorted())
            guard let date = filters.value("reportDate") else { throw ConnectAPIError.missing("filter[reportDate]") }
            let month = try span(of: .monthly, date)
            return try gzipped(try await money.financialReport(span: month, region: region).text)
        }
    }

    private func group(_ version: String, of router: Router<KioskRequestContext>) -> RouterGroup<KioskRequestContext> {
        router.group(RouterPath(version))
            .add(middleware: ConnectAPIErrorMiddleware())
            .add(middleware: ConnectAPIAuthMiddleware(database: database, clock: clock))
            .add(middleware: QueryTextMiddleware())
    }

    /// `filter[vendorNumber]` must be the store's.
    private func checkVendorNumber(_ filters: Filters) async throws {
        guard let vendorNumber = filters.value("vendorNumber") else {
            throw ConnectAPIError.missing("filter[vendorNumber]")
        }
        let ours = try await database.transaction { tx in try await TeamService.vendorNumber(in: tx) }
        guard vendorNumber == ours else {
            throw ConnectAPIError.invalid("filter[vendorNumber]", vendorNumber)
        }
    }

    /// The period `date` names (the latest one over when absent), which must be over.
    private func span(of frequency: ReportFrequency, _ date: String?) throws -> DateInterval {
        let now = clock.now()
        let span: DateInterval
        if let date {
            guard let named = frequency.span(named: date) else {
                throw ConnectAPIError(
                    status: .badRequest, code: "PARAMETER_ERROR.INVALID", title: "A parameter has an invalid value",
                    detail: "'\(date.prefix(20))' is not a valid value for the parameter 'filter[reportDate]'; "
                        + "\(frequency.rawValue) reports are named like \(frequency.example).")
            }
            span = named
        } else {
            guard let latest = frequency.latestSpan(endingBy: now) else { throw ConnectAPIError.noReport("No report.") }
            span = latest
        }
        guard span.end <= now else {
            throw ConnectAPIError.noReport(
                "Report is not available yet. Kiosk makes a report once its period is over (UTC).")
        }
        return span
    }

    private func gzipped(_ text: String) throws -> Response {
        var buffer = ByteBuffer(string: text)
        let compressed = try buffer.compress(with: .gzip())
        var headers = HTTPFields()
        headers[.contentType] = "application/a-gzip"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: compressed))
    }
}

/// A request's `filter[name]` query parameters. Names are percent-decoded too (Hummingbird decodes only values), so
/// `filter%5BreportDate%5D`, as some clients send it, is `filter[reportDate]`; the first of a repeated name counts.
private struct Filters {
    private var values: [String: String] = [:]

    init(_ request: Request) {
        for (key, value) in request.uri.queryParameters {
            let name = String(key).removingPercentEncoding ?? String(key)
            if values[name] == nil { values[name] = String(value) }
        }
    }

    func value(_ name: String) -> String? {
        values["filter[\(name)]"]
    }

    /// The parameter's value, which must be one of `allowed`.
    @discardableResult
    func require(_ name: String, in allowed: [String]) throws -> String {
        guard let value = value(name) else { throw ConnectAPIError.missing("filter[\(name)]") }
        guard allowed.contains(value) else { throw ConnectAPIError.invalid("filter[\(name)]", value, allowed: allowed) }
        return value
    }

    /// Like ``require(_:in:)`` for a parameter that may be absent.
    func optional(_ name: String, in allowed: [String]) throws {
        if value(name) != nil { try require(name, in: allowed) }
    }
}
