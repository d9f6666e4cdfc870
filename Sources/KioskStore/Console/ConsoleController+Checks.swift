import Foundation
import Hummingbird
import KioskCore
import KioskProtocol

/// The Checks page: the `kiosk check` runs the store was sent, and one run's stories, steps and deliveries.
extension ConsoleController {
    func addCheckRoutes(to pages: RouterGroup<KioskRequestContext>) {
        pages.get("checks") { _, context in
            let runs = try await team.checkRuns()
            return renderer.page(
                "checks", title: "Checks", section: "Checks",
                values: [
                    "runs": runs.map { run -> [String: Any] in
                        [
                            "path": run.consolePath, "app": run.bundleId, "at": Self.time(run.createdAt),
                            "passed": run.passed, "counts": run.counts, "seed": String(run.seed),
                        ]
                    },
                    "empty": runs.isEmpty,
                ], session: context.consoleSession)
        }
        pages.get("checks/:id") { _, context in
            let (run, report) = try await team.checkRun(id: try context.parameters.require("id"))
            return renderer.page(
                "check", title: "Check of \(run.bundleId)", section: "Checks",
                values: [
                    "app": run.bundleId, "at": Self.time(run.createdAt), "passed": run.passed, "counts": run.counts,
                    "seed": String(run.seed), "seconds": StoryResult.seconds(report.seconds),
                    "notificationURL": report.notificationURL, "fault": report.fault ?? "", "probe": report.probe,
                    "stories": report.stories.map(Self.story),
                ], session: context.consoleSession)
        }
    }

    private static func story(_ story: StoryResult) -> [String: Any] {
        [
            "name": story.name, "summary": story.summary, "user": story.user, "result": story.result.rawValue,
            "failed": story.result == .fail, "reason": story.reason ?? "", "notes": story.notes,
            "seconds": StoryResult.seconds(story.seconds),
            "steps": story.steps.enumerated().map { index, step -> [String: Any] in
                [
                    "number": index + 1, "title": step.title, "failure": step.failure ?? "",
                    "deliveries": step.deliveries.map(\.summary), "hasDeliveries": !step.deliveries.isEmpty,
                    "shown": step.probe.map { probe in
                        let balances = probe.balances.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
                        return
                            "entitlements [\(probe.entitlements.joined(separator: ", "))], balances [\(balances.joined(separator: ", "))]"
                    } ?? "",
                ]
            },
        ]
    }
}
