import Foundation
import KioskProtocol

extension CheckReport {
    /// The table a person reads, then each failure's steps and deliveries, then what could not be checked.
    public var text: String {
        var lines: [String] = []
        let width = max(5, stories.map(\.name.count).max() ?? 5)
        lines.append("STORY".padding(toLength: width, withPad: " ", startingAt: 0) + "  RESULT    WHY")
        for story in stories {
            let result = story.result == .fail ? "FAIL" : story.result.rawValue
            lines.append(
                story.name.padding(toLength: width, withPad: " ", startingAt: 0) + "  "
                    + result.padding(toLength: 8, withPad: " ", startingAt: 0) + "  " + (story.reason ?? story.summary))
        }
        for story in stories where story.result == .fail {
            lines.append("")
            lines.append("\(story.name) (user \(story.user)) — \(story.summary):")
            for (index, step) in story.steps.enumerated() {
                let mark = step.failure == nil ? " " : "✗"
                lines.append("  \(mark) \(index + 1). \(step.title)")
                for delivery in step.deliveries { lines.append("       \(delivery.summary)") }
                if let probe = step.probe {
                    let balances = probe.balances.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
                    lines.append(
                        "       probe: entitlements [\(probe.entitlements.joined(separator: ", "))], balances [\(balances.joined(separator: ", "))]"
                    )
                }
                if let failure = step.failure { lines.append("       \(failure)") }
            }
        }
        let kinds = Set(
            stories.flatMap(\.steps).flatMap(\.deliveries).filter { !$0.forged }.map {
                $0.type.rawValue + ($0.subtype.map { " (\($0))" } ?? "")
            })
        if !kinds.isEmpty {
            lines.append("")
            lines.append(
                "Notifications your server was sent (\(kinds.count) kinds): \(kinds.sorted().joined(separator: ", "))")
        }
        let noted = stories.filter { !$0.notes.isEmpty }
        if !noted.isEmpty {
            lines.append("")
            lines.append("Notes (not failures):")
            for story in noted { for note in story.notes { lines.append("  \(story.name): \(note)") } }
        }
        lines.append("")
        if !probe {
            lines.append(
                "No probe in the check file: what the server grants was not checked, only its answers (status and time)."
            )
        }
        lines.append(
            "\(counts), in \(StoryResult.seconds(seconds)) s (seed \(seed); replay with --seed \(seed))"
        )
        return lines.joined(separator: "\n")
    }

    /// JUnit XML, as CI systems read it: one test case per story; not made is skipped.
    public var junit: String {
        func escaped(_ text: String) -> String {
            var out = ""
            for character in text {
                switch character {
                case "&": out += "&amp;"
                case "<": out += "&lt;"
                case ">": out += "&gt;"
                case "\"": out += "&quot;"
                default:
                    if let ascii = character.asciiValue, ascii < 0x20, ascii != 0x0A, ascii != 0x09 { continue }
                    out.append(character)
                }
            }
            return out
        }
        var xml = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
        xml +=
            #"<testsuites><testsuite name="kiosk check \#(escaped(bundleId))" tests="\#(stories.count)" failures="\#(count(.fail))" skipped="\#(count(.notMade))" time="\#(String(format: "%.3f", seconds))">"#
            + "\n"
        for story in stories {
            xml +=
                #"  <testcase classname="kiosk.check.\#(story.kind)" name="\#(escaped(story.name))" time="\#(String(format: "%.3f", story.seconds))">"#
            switch story.result {
            case .pass: break
            case .notMade: xml += #"<skipped message="\#(escaped(story.reason ?? ""))"/>"#
            case .fail:
                let steps = story.steps.enumerated().map { index, step in
                    "\(index + 1). \(step.title)" + step.deliveries.map { "\n   \($0.summary)" }.joined()
                        + (step.failure.map { "\n   ✗ \($0)" } ?? "")
                }.joined(separator: "\n")
                xml += #"<failure message="\#(escaped(story.reason ?? ""))">\#(escaped(steps))</failure>"#
            }
            xml += "</testcase>\n"
        }
        xml += "</testsuite></testsuites>\n"
        return xml
    }
}
