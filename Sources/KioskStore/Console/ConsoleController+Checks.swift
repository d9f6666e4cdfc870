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
                ChecksPage(
                    runs: runs.map { run in
                        ChecksPage.Run(
                            path: run.consolePath, app: run.bundleId, at: Self.time(run.createdAt), passed: run.passed,
                            counts: run.counts, seed: String(run.seed))
                    }, empty: runs.isEmpty),
                title: "Checks", section: "Checks", session: context.consoleSession)
        }
        pages.get("checks/:id") { _, context in
            let (run, report) = try await team.checkRun(id: try context.parameters.require("id"))
            return renderer.page(
                CheckPage(
                    at: Self.time(run.createdAt), passed: run.passed, counts: run.counts, seed: String(run.seed),
                    seconds: StoryResult.seconds(report.seconds), notificationURL: report.notificationURL,
                    fault: report.fault?.nonEmpty, probe: report.probe,
                    stories: report.stories.map(CheckPage.Story.init)),
                title: "Check of \(run.bundleId)", section: "Checks", session: context.consoleSession)
        }
    }
}

/// The `kiosk check` runs, newest first.
struct ChecksPage: ConsoleView {
    static let template = "checks"

    struct Run: Decodable {
        /// The run's own page.
        var path: String
        /// The bundle id checked.
        var app: String
        var at: String
        var passed: Bool
        var counts: String
        var seed: String
    }

    var runs: [Run]
    var empty: Bool
}

/// One `kiosk check` run: its verdict, and each life story's steps, deliveries and probes.
struct CheckPage: ConsoleView {
    static let template = "check"

    struct Story: Decodable {
        var name: String
        var summary: String
        /// The app account token the story bought with.
        var user: String
        var result: String
        var failed: Bool
        var reason: String?
        var notes: [String]
        var seconds: String
        var steps: [Step]
    }

    struct Step: Decodable {
        var title: String
        var failure: String?
        /// The notifications delivered during the step, a line each.
        var deliveries: [String]
        var hasDeliveries: Bool
        /// What the probe showed after the step, when it ran.
        var shown: String?
    }

    var at: String
    var passed: Bool
    var counts: String
    var seed: String
    var seconds: String
    var notificationURL: String
    /// The notification fault put on every story, if any.
    var fault: String?
    /// Whether the check file had a probe.
    var probe: Bool
    var stories: [Story]
}

extension CheckPage.Story {
    init(_ story: StoryResult) {
        self.init(
            name: story.name, summary: story.summary, user: story.user, result: story.result.rawValue,
            failed: story.result == .fail, reason: story.reason?.nonEmpty, notes: story.notes,
            seconds: StoryResult.seconds(story.seconds),
            steps: story.steps.map { step in
                CheckPage.Step(
                    title: step.title, failure: step.failure?.nonEmpty, deliveries: step.deliveries.map(\.summary),
                    hasDeliveries: !step.deliveries.isEmpty,
                    shown: step.probe.map { probe in
                        let balances = probe.balances.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
                        return
                            "entitlements [\(probe.entitlements.joined(separator: ", "))], balances [\(balances.joined(separator: ", "))]"
                    })
            })
    }
}
