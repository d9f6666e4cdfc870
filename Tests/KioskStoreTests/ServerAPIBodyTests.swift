import Foundation
import KioskTesting
import NIOHTTP1
import Testing

/// App Store Server API request bodies are read as Apple reads them: unknown fields are ignored (a client newer than
/// the store keeps working), and a known field of the wrong type answers that field's own error code, as a wrong
/// value of it does — never a silent default.
@Suite struct ServerAPIBodyTests {
    @Test func unknownFieldsAreIgnoredAndWrongTypesAnswerTheFieldsCode() async throws {
        try await withTestStore { store in
            try await store.preparePurchaseCatalog()
            let key = try await store.createServerAPIKey()
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let dates: [String: Any] = ["startDate": now - 86_400_000, "endDate": now]

            let history = try await store.serverAPI(
                .POST, "/inApps/v1/notifications/history", key: key,
                json: dates.merging(["addedInAFutureVersion": ["nested": true]]) { $1 })
            #expect(history.status == 200, "\(history.text)")
            #expect((history.json["notificationHistory"] as? [Any])?.isEmpty == true, "\(history.text)")

            let extend: [String: Any] = ["extendByDays": 3, "extendReasonCode": 1, "requestIdentifier": "r1"]
            let mass = extend.merging(["productId": TestStore.coins]) { $1 }
            for (method, path, base, change, code) in [
                (.POST, "/inApps/v1/notifications/history", dates, ["notificationType": 5], 4_000_018),
                (.POST, "/inApps/v1/notifications/history", dates, ["notificationSubtype": ["INITIAL_BUY"]], 4_000_018),
                (.POST, "/inApps/v1/notifications/history", dates, ["transactionId": 2_000_000_000_000_001], 4_000_006),
                (.PUT, "/inApps/v1/subscriptions/extend/1", extend, ["extendByDays": "3"], 4_000_009),
                (.PUT, "/inApps/v1/subscriptions/extend/1", extend, ["extendByDays": 3.5], 4_000_009),
                (.PUT, "/inApps/v1/subscriptions/extend/1", extend, ["extendReasonCode": true], 4_000_010),
                (.PUT, "/inApps/v1/subscriptions/extend/1", extend, ["requestIdentifier": 7], 4_000_011),
                (.PUT, "/inApps/v1/subscriptions/extend/1", extend, ["requestIdentifier": "r\u{0}"], 4_000_011),
                (.PUT, "/inApps/v1/subscriptions/extend/1", extend, ["extendByDays": 91, "unknown": 1], 4_000_009),
                (.POST, "/inApps/v1/subscriptions/extend/mass", mass, ["productId": 5], 4_000_023),
                (.POST, "/inApps/v1/subscriptions/extend/mass", mass, ["productId": "com.example\u{0}"], 4_000_023),
                (.POST, "/inApps/v1/subscriptions/extend/mass", mass, ["storefrontCountryCodes": "USA"], 4_000_028),
            ] as [(HTTPMethod, String, [String: Any], [String: Any], Int)] {
                let answer = try await store.serverAPI(
                    method, path, key: key, json: base.merging(change) { $1 })
                #expect(answer.appleErrorCode == code, "\(path) \(change): \(answer.text)")
                #expect(answer.status == code / 10_000, "\(path) \(change)")
            }
            try await expectHealthy(store)
        }
    }
}
