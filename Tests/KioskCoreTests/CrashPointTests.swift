import Testing

@testable import KioskCore

@Suite struct CrashPointTests {
    @Test func namesAndTimesParse() {
        // Proves `KIOSK_CRASH_AT` names a step and optionally which time it is reached; anything else arms nothing.
        func parsed(_ text: String) -> String? { CrashPoint.parse(text).map { "\($0.point) \($0.time)" } }
        #expect(parsed("payment-committed") == "paymentCommitted 1")
        #expect(parsed("renewal-batch-committed#3") == "renewalBatchCommitted 3")
        #expect(parsed("notification-committed#2") == "notificationCommitted 2")
        for unarmed in ["", "payment", "payment-committed#0", "payment-committed#-1", "payment-committed#x", "#2"] {
            #expect(parsed(unarmed) == nil, "\(unarmed)")
        }
    }
}
