import Foundation
import KioskCore
import KioskTestSupport
import KioskTesting
import Testing

/// `kiosk test clock`, `kiosk test grace-period` and the subscription commands as typed.
@Suite struct TestClockCommandTests {
    @Test func sandboxClockFromTheCommandLine() async throws {
        try await withTestStore(clock: ManualClock(Date(timeIntervalSince1970: 1_790_000_000))) { store in
            let shown = try await kiosk(store, "test", "clock")
            #expect(shown.status == 0, "\(shown.stderr)")
            #expect(shown.stdout.contains("Sandbox time: 2026-09-21T"), "\(shown.stdout)")

            let advanced = try await kiosk(store, "test", "clock", "advance", "1h30m", "--json")
            #expect(advanced.status == 0, "\(advanced.stderr)")
            let json = try #require(
                try JSONSerialization.jsonObject(with: Data(advanced.stdout.utf8)) as? [String: Any],
                "\(advanced.stdout)")
            let expected: Int64 = 1_790_000_000_000 + 90 * 60_000
            #expect((json["now"] as? NSNumber)?.int64Value == expected)
            #expect(json["renewed"] as? Int == 0)

            let frozen = try await kiosk(store, "test", "clock", "freeze")
            #expect(frozen.status == 0, "\(frozen.stderr)")
            #expect(frozen.stdout.contains("(frozen)"), "\(frozen.stdout)")
            let set = try await kiosk(store, "test", "clock", "set", "2026-12-01T00:00:00Z")
            #expect(set.status == 0, "\(set.stderr)")
            #expect(set.stdout.contains("Sandbox time: 2026-12-01T00:00:00.000Z"), "\(set.stdout)")
            let back = try await kiosk(store, "test", "clock", "set", "2026-01-01T00:00:00Z")
            #expect(back.status == 1)
            #expect(
                back.stderr.hasPrefix("error: The sandbox clock only moves forward: set would take it from 2026-12-01")
                    && back.stderr.contains("\n  fix: Choose a time after 2026-12-01T00:00:00.000Z."), "\(back.stderr)")

            #expect(
                try await kiosk(store, "apps", "create", "--bundle-id", "com.example.a", "--name", "A").status == 0
            )
            let grace = try await kiosk(store, "test", "grace-period", "--app", "com.example.a", "16")
            #expect(grace.status == 0, "\(grace.stderr)")
            #expect(
                grace.stdout.hasPrefix(
                    "Billing grace period: 16 days\nA renewal that fails from now on keeps the subscriber entitled for "
                        + "16 days"), "\(grace.stdout)")
            let off = try await kiosk(store, "test", "grace-period", "--app", "com.example.a", "off")
            #expect(off.status == 0, "\(off.stderr)")
            #expect(
                off.stdout.hasPrefix(
                    "Billing grace period: off\nA renewal that fails from now on ends the entitlement"),
                "\(off.stdout)")
            let missing = try await kiosk(
                store, "test", "renew", "--app", "com.example.a", "--transaction", "2000000000000001")
            #expect(missing.status == 1)
            #expect(
                missing.stderr.hasPrefix(
                    "error: The app com.example.a has no sandbox subscription with original transaction id "
                        + "2000000000000001.\n  at:  --transaction (originalTransactionId)\n  fix: "),
                "\(missing.stderr)")
        }
    }
}
