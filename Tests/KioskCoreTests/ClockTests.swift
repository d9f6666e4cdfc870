import Foundation
import KioskCore
import Testing

@Suite struct ClockTests {
    /// The real clock answers whole milliseconds, so a date survives the millisecond round trip of storage
    /// unchanged (a revoked key's `revokedAt` once read back one second later when it rounded across a second).
    @Test func systemClockHasMillisecondPrecision() {
        for _ in 0..<1000 {
            let now = SystemClock().now()
            #expect(Date(millisecondsSince1970: now.millisecondsSince1970) == now)
        }
    }
}
