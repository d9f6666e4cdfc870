import Foundation
import KioskProtocol
import KioskTesting
import Testing

/// The Checks page: the runs `kiosk check` sends, listed and opened, with every step, delivery and probe escaped.
@Suite struct ConsoleChecksTests {
    static let app = "com.example.checked"

    static func report(bundleId: String = app) -> CheckReport {
        var passed = StoryResult(
            name: "consumable", kind: "life", summary: "3 consumables credit 3 × the amount", user: "u1")
        passed.result = .pass
        passed.steps = [StepRecord(title: "buy com.example.checked.coins ×3")]
        var failed = StoryResult(
            name: "refund-consumable", kind: "life", summary: "REFUND takes the credit back", user: "u2")
        failed.result = .fail
        failed.reason = "after REFUND: coins 100 expected 0 <script>alert(1)</script>"
        failed.failedStep = 2
        failed.steps = [
            StepRecord(
                title: "refund transaction 2000000000000001",
                deliveries: [
                    Delivery(
                        notificationUUID: "n1", type: .refund, subtype: nil, appAccountToken: "u2", status: 200,
                        milliseconds: 12, error: nil, forged: false, handling: "forward")
                ]),
            StepRecord(
                title: "after REFUND: coins back to 0",
                probe: CheckProbe(entitlements: [], balances: ["coins": 100]),
                failure: "coins 0 expected, the probe showed 100"),
        ]
        return CheckReport(
            seed: 42, server: "http://127.0.0.1:8080", bundleId: bundleId, notificationURL: "http://127.0.0.1:9000/n",
            fault: nil, seconds: 1.5, probe: true, stories: [passed, failed])
    }

    @Test func recordedRunsAreListedAndOpened() async throws {
        try await withTestStore { store in
            let created = try await store.request(
                .POST, "/admin/v1/apps", json: ["bundleId": Self.app, "name": "Checked"])
            #expect(created.status == 201, "\(created.text)")
            let body = try JSONEncoder().encode(Self.report())
            let recorded = try await store.request(.POST, AdminRoutes.recordCheckRun.path(Self.app), body: body)
            #expect(recorded.status == 201, "\(recorded.text)")
            let summary = try recorded.decode(CheckRunSummary.self)
            #expect(summary.passed == false && summary.counts == "1 passed, 1 failed, 0 not made" && summary.seed == 42)

            // The report of another app, and for an app the store does not have, are refused and not kept.
            let mismatched = try await store.request(
                .POST, AdminRoutes.recordCheckRun.path(Self.app),
                body: try JSONEncoder().encode(Self.report(bundleId: "com.example.other")))
            #expect(mismatched.status == 400 && mismatched.text.contains("bundle_id_mismatch"), "\(mismatched.text)")
            let unknownApp = try await store.request(
                .POST, AdminRoutes.recordCheckRun.path("com.example.other"),
                body: try JSONEncoder().encode(Self.report(bundleId: "com.example.other")))
            #expect(unknownApp.status == 404, "\(unknownApp.text)")
            let list = try await store.request(.GET, AdminRoutes.checkRuns.path()).decode(CheckRunList.self)
            #expect(list.checkRuns.map(\.id) == [summary.id])
            let whole = try await store.request(.GET, AdminRoutes.checkRun.path(summary.id)).decode(CheckReport.self)
            #expect(whole.stories.map(\.name) == ["consumable", "refund-consumable"])
            #expect(try await store.request(.GET, AdminRoutes.checkRun.path("nope")).status == 404)

            let visitor = ConsoleTests.Visitor(store)
            _ = try await visitor.signIn()
            let checks = try await visitor.get("/console/checks")
            #expect(checks.status == 200)
            #expect(checks.text.contains(#"<a href="/console/checks/\#(summary.id)">"#), "\(checks.text)")
            #expect(checks.text.contains("1 passed, 1 failed, 0 not made"))
            #expect(checks.text.contains(#"aria-current="page">Checks</a>"#), "the navigation names the page")
            let run = try await visitor.get("/console/checks/\(summary.id)")
            #expect(run.status == 200)
            #expect(run.text.contains("<strong>Failed</strong>: 1 passed, 1 failed, 0 not made"), "\(run.text)")
            #expect(run.text.contains(#"<details id="story-refund-consumable" open>"#), "a failed story is open")
            #expect(run.text.contains(#"<details id="story-consumable">"#), "a passed one is closed")
            #expect(run.text.contains("<code>REFUND → 200 in 12 ms</code>"), "\(run.text)")
            #expect(run.text.contains("Probe: entitlements [], balances [coins 100]"))
            #expect(run.text.contains("✗ coins 0 expected, the probe showed 100"))
            #expect(!run.text.contains("<script>alert(1)</script>") && run.text.contains("&lt;script&gt;"))
            #expect(try await visitor.get("/console/checks/nope").status == 404)
        }
    }
}
