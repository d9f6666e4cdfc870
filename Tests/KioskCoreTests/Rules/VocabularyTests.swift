import Foundation
import KioskCore
import Testing

/// The vocabularies the wire shares with Apple and with Kiosk's clients.
@Suite struct VocabularyTests {
    // Proves every error code is a snake_case wire name and prints as one, so clients and logs can match on it.
    @Test func errorCodesAreSnakeCase() {
        for code in ErrorCode.allCases.map(\.rawValue) {
            #expect(code.allSatisfy { $0.isLowercase || $0.isNumber || $0 == "_" }, "\(code)")
            #expect("\(ErrorCode(rawValue: code)!)" == code, "an error code prints as its wire name")
        }
    }

    // Proves notification types and subtypes decode from Apple's names and refuse others, and print as on the wire.
    @Test func notificationNamesAreApples() throws {
        let decoded = try JSONDecoder().decode(
            [NotificationType].self, from: Data(#"["DID_RENEW", "RESCIND_CONSENT", "ONE_TIME_CHARGE"]"#.utf8))
        #expect(decoded == [.didRenew, .rescindConsent, .oneTimeCharge])
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([NotificationType].self, from: Data(#"["DID_RENEWED"]"#.utf8))
        }
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([NotificationSubtype].self, from: Data(#"["initial_buy"]"#.utf8))
        }
        #expect("\(NotificationSubtype.billingRecovery)" == "BILLING_RECOVERY")
        #expect(NotificationType.allCases.count == 23)
        #expect(NotificationSubtype.allCases.count == 19)
    }
}
