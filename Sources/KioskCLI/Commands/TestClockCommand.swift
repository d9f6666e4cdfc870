import ArgumentParser
import Foundation
import KioskProtocol

extension TestCommand {
    /// `kiosk test clock [freeze|resume|reset|advance DURATION|set DATE]`: the sandbox clock.
    struct Clock: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show or move the sandbox clock; advance and set run every subscription event due by then.",
            discussion: """
                kiosk test clock                        show it
                kiosk test clock freeze | resume        stop it, or let it run again from where it stands
                kiosk test clock advance 1h30m          move it forward (d, h, m, s, or seconds)
                kiosk test clock set 2026-12-01T00:00:00Z
                kiosk test clock reset                  back to the real time (only if that is not earlier)
                """)
        @Argument(help: "freeze, resume, reset, advance or set; nothing to show the clock.") var action: String?
        @Argument(help: "How far to advance (90m, 3d, 1h30m) or the date to set (ISO 8601).") var value: String?
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors {
                let client = connection.client
                let answer: AdminClient.Answer
                if let action {
                    let body = TestClockRequest(
                        action: action, by: action == "advance" ? value.map(TestClockAmount.text) : nil,
                        to: action == "set" ? value.map(TestClockAmount.text) : nil)
                    answer = try await client.post(TestControlRoutes.clock.path(), raw: try JSONEncoder().encode(body))
                } else {
                    answer = try await client.get(TestControlRoutes.clock.path())
                }
                try connection.print(answer) { answer in
                    let clock = try answer.decode(TestClockResponse.self)
                    var lines = ["Sandbox time: \(clock.date)" + (clock.frozen ? " (frozen)" : "")]
                    if let renewed = clock.renewed {
                        lines.append(
                            "Meanwhile: \(renewed) renewed, \(clock.recovered ?? 0) recovered, \(clock.expired ?? 0) "
                                + "expired, \(clock.billingRetries ?? 0) billing retries, "
                                + "\(clock.gracePeriodsExpired ?? 0) grace periods ended.")
                    }
                    return lines
                }
            }
        }
    }
}
