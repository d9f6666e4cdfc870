import Foundation
import Hummingbird
import KioskCore

/// The health page: the database, and the same life signs `/metrics` serves, for people.
extension ConsoleController {
    func addHealthRoutes(to pages: RouterGroup<KioskRequestContext>) {
        pages.get("health") { _, context in
            var databaseStatus = "ok"
            do { try await database.ping() } catch { databaseStatus = "unavailable: \(error)" }
            try await metrics.refresh(database: database, clocks: testControls.context.clocks)
            var buffer: [UInt8] = []
            metrics.registry.emit(into: &buffer)
            let series = Self.lifeSigns(inPrometheusText: String(decoding: buffer, as: UTF8.self))
            return renderer.page(
                HealthPage(
                    version: KioskVersion.current, engine: database.engine, database: databaseStatus,
                    databaseOK: databaseStatus == "ok", series: series, empty: series.isEmpty),
                title: "Health", section: "Health", session: context.consoleSession)
        }
    }

    /// The store's own series (not the HTTP ones) of a Prometheus text exposition, one row per series.
    static func lifeSigns(inPrometheusText text: String) -> [HealthPage.Series] {
        text.split(separator: "\n").compactMap { line -> HealthPage.Series? in
            guard line.hasPrefix("kiosk_"), !line.hasPrefix("kiosk_http_"),
                let space = line.lastIndex(of: " ")
            else { return nil }
            let series = line[..<space]
            let name = series.prefix { $0 != "{" }
            let labels = series.dropFirst(name.count).trimmingCharacters(in: CharacterSet(charactersIn: "{}"))
            return HealthPage.Series(
                name: String(name), labels: labels.replacingOccurrences(of: "\"", with: ""),
                value: String(line[line.index(after: space)...]))
        }
    }
}

/// The store's health: its version, its database, and its life signs.
struct HealthPage: ConsoleView {
    static let template = "health"

    /// One series of the metrics, as `/metrics` has it.
    struct Series: Decodable {
        var name: String
        var labels: String
        var value: String
    }

    var version: String
    /// The database engine.
    var engine: String
    /// "ok", or why the database did not answer.
    var database: String
    var databaseOK: Bool
    var series: [Series]
    var empty: Bool
}
