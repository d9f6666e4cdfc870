import Foundation
import KioskCore
import KioskSQL
import SQLKit

/// One recorded `kiosk check` run: its summary columns and the whole report as JSON text.
public struct CheckRunRecord: Sendable, Hashable {
    public var id: String
    public var bundleId: String
    public var createdAt: Date
    public var passed: Bool
    public var counts: String
    public var seed: UInt64
    public var report: String

    public init(
        id: String, bundleId: String, createdAt: Date, passed: Bool, counts: String, seed: UInt64, report: String
    ) {
        self.id = id
        self.bundleId = bundleId
        self.createdAt = createdAt
        self.passed = passed
        self.counts = counts
        self.seed = seed
        self.report = report
    }
}

extension SQLStorageTransaction {
    func insertCheckRun(_ run: CheckRunRecord, keepingNewest limit: Int) async throws {
        try await session.run(
            """
            INSERT INTO check_runs (id, bundle_id, created_at, passed, counts, seed, report)
            VALUES (\(bind: run.id), \(bind: run.bundleId), \(bind: run.createdAt.millisecondsSince1970),
                    \(bind: run.passed), \(bind: run.counts), \(bind: String(run.seed)), \(bind: run.report))
            """
        )
        try await session.run(
            """
            DELETE FROM check_runs WHERE id NOT IN (
                SELECT id FROM check_runs ORDER BY created_at DESC, id DESC LIMIT \(bind: limit))
            """
        )
    }

    func checkRuns(limit: Int) async throws -> [CheckRunRecord] {
        try await session.all(
            "SELECT id, bundle_id, created_at, passed, counts, seed, '' AS report FROM check_runs ORDER BY created_at DESC, id DESC LIMIT \(bind: limit)"
        ).map(Self.checkRun)
    }

    func checkRun(id: String) async throws -> CheckRunRecord? {
        try await session.first("SELECT * FROM check_runs WHERE id = \(bind: id)").map(Self.checkRun)
    }

    private static func checkRun(_ row: any SQLRow) throws -> CheckRunRecord {
        CheckRunRecord(
            id: try row.decode(column: "id", as: String.self),
            bundleId: try row.decode(column: "bundle_id", as: String.self), createdAt: try row.date("created_at"),
            passed: try row.decode(column: "passed", as: Bool.self),
            counts: try row.decode(column: "counts", as: String.self),
            seed: UInt64(try row.decode(column: "seed", as: String.self)) ?? 0,
            report: try row.decode(column: "report", as: String.self))
    }
}
