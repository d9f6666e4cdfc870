import Foundation
import KioskCore
import KioskProtocol
import KioskStorage

extension TeamService {
    /// How many `kiosk check` runs the store keeps (the oldest go first).
    static let checkRunsKept = 100

    /// Keeps a `kiosk check` verdict for the console's Checks page.
    public func recordCheckRun(bundleId: String, _ report: CheckReport) async throws -> CheckRunSummary {
        guard report.bundleId == bundleId else {
            throw KioskError(
                .bundleIdMismatch, "The report is for \(report.bundleId), not \(bundleId).", field: "bundleId",
                fix: "Send it to /admin/v1/apps/\(report.bundleId)/check-runs.")
        }
        guard report.stories.count <= 500 else {
            throw KioskError(.tooManyStories, "A report holds at most 500 stories.", field: "stories")
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let record = CheckRunRecord(
            id: UUID().uuidString.lowercased(), bundleId: bundleId, createdAt: clock.now(), passed: report.passed,
            counts: report.counts, seed: report.seed,
            report: String(decoding: try encoder.encode(report), as: UTF8.self))
        try await database.transaction { tx in
            _ = try await CatalogService.requireApp(bundleId, in: tx)
            try await tx.insertCheckRun(record, keepingNewest: Self.checkRunsKept)
        }
        return Self.summary(record)
    }

    /// The newest runs, newest first.
    public func checkRuns() async throws -> [CheckRunSummary] {
        try await database.transaction { tx in try await tx.checkRuns(limit: Self.checkRunsKept) }.map(Self.summary)
    }

    /// One run's summary and whole report.
    public func checkRun(id: String) async throws -> (CheckRunSummary, CheckReport) {
        guard id.utf8.count <= 64, let record = try await database.transaction({ tx in try await tx.checkRun(id: id) })
        else {
            throw KioskError(
                .checkRunNotFound, "There is no check run \(id).", field: "id",
                fix: "The store keeps the newest \(Self.checkRunsKept) runs; list them at /admin/v1/check-runs.")
        }
        return (Self.summary(record), try JSONDecoder().decode(CheckReport.self, from: Data(record.report.utf8)))
    }

    private static func summary(_ record: CheckRunRecord) -> CheckRunSummary {
        CheckRunSummary(
            id: record.id, bundleId: record.bundleId, createdAt: record.createdAt, passed: record.passed,
            counts: record.counts, seed: record.seed, consolePath: "/console/checks/\(record.id)")
    }
}
