import Foundation
import Hummingbird
import KioskCore
import NIOCore

/// Money: units and proceeds by day as a server-drawn SVG chart, by product and storefront as tables, and Apple's
/// report files to download. Production by default; the sandbox's test purchases can be charted on their own, and
/// never appear in reports.
extension ConsoleController {
    /// How many days the page charts when the query names no span.
    static let chartedDays = 30

    func addMoneyRoutes(to pages: RouterGroup<KioskRequestContext>) {
        pages.get("money") { request, context in
            let query = request.uri.queryParameters
            let environment = StoreEnvironment(rawValue: query.get("environment") ?? "") ?? .production
            let today = Calendar.utc.startOfDay(for: clock.now())
            let to = Calendar.utc.date(byAdding: .day, value: 1, to: today) ?? today
            let from = Calendar.utc.date(byAdding: .day, value: -Self.chartedDays, to: to) ?? today
            let byDay = try await money.moneySeries(environment: environment, from: from, to: to, by: .day)
            let byProduct = try await money.moneySeries(environment: environment, from: from, to: to, by: .product)
            let byStorefront = try await money.moneySeries(
                environment: environment, from: from, to: to, by: .storefront)
            let unitsByDay = Dictionary(uniqueKeysWithValues: byDay.points.map { ($0.key, $0.units) })
            let proceedsByDay = Dictionary(uniqueKeysWithValues: byDay.points.map { ($0.key, $0.proceedsUSCents) })
            let days = (0..<Self.chartedDays).compactMap { Calendar.utc.date(byAdding: .day, value: $0, to: from) }
                .map { String(ISO8601DateFormatter().string(from: $0).prefix(10)) }
            let chart = ConsoleChart.bars(
                days.map { (label: String($0.suffix(5)), value: unitsByDay[$0] ?? 0) },
                title: "Units sold per day, \(days.first ?? "") to \(days.last ?? "") (UTC)", id: "units-chart")
            // Proceeds add up across currencies only through exchange rates (`kiosk exchange-rates set`).
            let proceedsChart =
                proceedsByDay.values.contains { $0 != 0 }
                ? ConsoleChart.bars(
                    days.map { (label: String($0.suffix(5)), value: proceedsByDay[$0] ?? 0) },
                    title: "Proceeds per day, US cents at the configured exchange rates", id: "proceeds-chart") : nil
            let totalUnits = byDay.points.reduce(0) { $0.saturatingAdding($1.units) }
            // An empty production page after a sandbox walkthrough says where the test purchases are.
            var sandboxUnits: Int?
            if environment == .production, totalUnits == 0 {
                let sandbox = try await money.moneySeries(environment: .sandbox, from: from, to: to, by: .day)
                let units = sandbox.points.reduce(0) { $0.saturatingAdding($1.units) }
                sandboxUnits = units > 0 ? units : nil
            }
            return renderer.page(
                MoneyPage(
                    chart: chart, proceedsChart: proceedsChart, sandbox: environment == .sandbox,
                    environments: StoreEnvironment.allCases.map {
                        ConsoleOption(value: $0.rawValue, selected: $0 == environment)
                    },
                    totalUnits: totalUnits, sandboxUnits: sandboxUnits,
                    byProduct: byProduct.points.map(MoneyPage.Row.init),
                    byStorefront: byStorefront.points.map(MoneyPage.Row.init),
                    unconverted: byDay.unconverted.joined(separator: ", ").nonEmpty,
                    reportDate: String(ISO8601DateFormatter().string(from: today).prefix(10))),
                title: "Money", section: "Money", session: context.consoleSession)
        }
        pages.get("money/sales.tsv") { request, _ in
            let date = request.uri.queryParameters.get("date") ?? ""
            return Self.tabSeparated(
                try await money.salesReport(frequency: .daily, date: date), filename: "S_D_\(date.filter(\.isNumber))"
            )
        }
        pages.get("money/subscription-events.tsv") { request, _ in
            let date = request.uri.queryParameters.get("date") ?? ""
            return Self.tabSeparated(
                try await money.subscriptionEventReport(date: date),
                filename: "Subscription_Event_\(date.filter(\.isNumber))")
        }
    }

    /// A report to download, named as App Store Connect names its files.
    static func tabSeparated(_ report: String, filename: String) -> Response {
        var response = Response(status: .ok, body: .init(byteBuffer: ByteBuffer(string: report)))
        response.headers[.contentType] = "text/tab-separated-values; charset=utf-8"
        response.headers[.contentDisposition] = "attachment; filename=\"\(filename).txt\""
        return response
    }

}

/// Units, revenue and proceeds: a chart by day, tables by product and storefront, and the report files.
struct MoneyPage: ConsoleView {
    static let template = "money"

    /// A product's or a storefront's units, revenue and proceeds, each currency's amounts in a line.
    struct Row: Decodable {
        /// The product id or the storefront.
        var key: String
        var units: Int
        var revenue: String
        var proceeds: String
    }

    /// The units chart, as SVG markup.
    var chart: String
    /// The proceeds chart, as SVG markup; nil when there are no proceeds to draw.
    var proceedsChart: String?
    var sandbox: Bool
    var environments: [ConsoleOption]
    var totalUnits: Int
    /// The sandbox's units in the same days, when production has none and the sandbox has some.
    var sandboxUnits: Int?
    var byProduct: [Row]
    var byStorefront: [Row]
    /// The currencies that have no exchange rate, in a line.
    var unconverted: String?
    /// Today, for the report links.
    var reportDate: String
}

extension MoneyPage.Row {
    init(_ point: MoneySeries.Point) {
        let amounts = point.byCurrency.sorted { $0.key < $1.key }
        self.init(
            key: point.key, units: point.units,
            revenue: amounts.map { ConsoleController.amount($0.value["customerPrice"] ?? 0, $0.key) }.joined(
                separator: ", "),
            proceeds: amounts.map { ConsoleController.amount($0.value["proceeds"] ?? 0, $0.key) }.joined(
                separator: ", "))
    }
}

/// Charts drawn on the server as SVG, readable without JavaScript and by screen readers (a title and a table-like
/// text alternative per bar).
enum ConsoleChart {
    /// A bar chart of `points`, scaled to the largest value.
    static func bars(_ points: [(label: String, value: Int)], title: String, id: String) -> String {
        let width = 720
        let height = 220
        let plotTop = 24
        let plotHeight = 160
        let largest = max(1, points.map(\.value).max() ?? 1)
        let slot = Double(width - 40) / Double(max(1, points.count))
        var svg =
            "<svg id=\"\(id)\" class=\"chart\" viewBox=\"0 0 \(width) \(height)\" role=\"img\" aria-label=\"\(escaped(title))\" "
            + "xmlns=\"http://www.w3.org/2000/svg\"><title>\(escaped(title))</title>"
            + "<text x=\"0\" y=\"14\" class=\"chart-title\">\(escaped(title)) · max \(largest)</text>"
            + "<line x1=\"30\" y1=\"\(plotTop + plotHeight)\" x2=\"\(width)\" y2=\"\(plotTop + plotHeight)\" "
            + "class=\"axis\"/>"
        for (index, point) in points.enumerated() {
            let barHeight = Int((Double(max(0, point.value)) / Double(largest) * Double(plotHeight)).rounded())
            let x = 30 + Double(index) * slot
            svg +=
                "<g><title>\(escaped(point.label)): \(point.value)</title>"
                + "<rect x=\"\(format(x + 1))\" y=\"\(plotTop + plotHeight - barHeight)\" width=\"\(format(slot - 2))\" "
                + "height=\"\(barHeight)\" class=\"bar\" data-value=\"\(point.value)\"/></g>"
            if index % 5 == 0 {
                svg +=
                    "<text x=\"\(format(x))\" y=\"\(plotTop + plotHeight + 16)\" class=\"tick\">"
                    + "\(escaped(point.label))</text>"
            }
        }
        return svg + "</svg>"
    }

    private static func format(_ value: Double) -> String { String(format: "%.1f", value) }

    /// Text made safe inside SVG markup.
    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
