import Foundation
import KioskCore
import KioskTesting
import Testing

/// Who may read `/metrics` (it shows sales and refund volumes), and how guessing the store's bearer tokens is slowed:
/// 20 wrong tokens from one address within 15 minutes lock that address out of every token check (admin API,
/// `/metrics`, the console's admin-token form), right token or wrong; other addresses are unaffected.
@Suite struct TokenAccessTests {
    static let metricsToken = "metrics_token_for_prometheus_0123"

    /// `/metrics` answers only the metrics token or the admin token; `/health` stays open.
    @Test func metricsNeedATokenHealthDoesNot() async throws {
        try await withTestStore(configure: { $0.metricsToken = Self.metricsToken }) { store in
            let anonymous = try await store.request(.GET, "/metrics", token: .some(nil))
            #expect(anonymous.status == 401, "\(anonymous.text)")
            #expect(Self.code(anonymous) == "missing_admin_token", "\(anonymous.text)")
            #expect(!anonymous.text.contains("kiosk_payments"), "no series without a token")
            let wrong = try await store.request(.GET, "/metrics", token: "not_the_metrics_token_at_all")
            #expect(wrong.status == 401, "\(wrong.text)")
            #expect(Self.code(wrong) == "invalid_admin_token", "\(wrong.text)")
            for token in [Self.metricsToken, store.adminToken] {
                let answer = try await store.request(.GET, "/metrics", token: token)
                #expect(answer.status == 200, "\(answer.text)")
                #expect(answer.text.contains("# HELP kiosk_http_requests_total"), "\(answer.text)")
            }
            let metricsTokenOnAdmin = try await store.request(.GET, "/admin/v1/apps", token: Self.metricsToken)
            #expect(metricsTokenOnAdmin.status == 401, "the metrics token is not an admin token")
            let health = try await store.request(.GET, "/health", token: .some(nil))
            #expect(health.status == 200, "\(health.text)")
        }
    }

    /// The 21st check from an address that sent 20 wrong tokens is refused even with the right token, on the admin
    /// API, `/metrics` and the console's admin-token form alike; 19 wrong tokens leave the address free.
    @Test func wrongTokensLockTheirAddressOut() async throws {
        try await withTestStore(clock: ManualClock(Date(timeIntervalSince1970: 1_790_000_000))) { store in
            for attempt in 1...19 {
                let wrong = try await store.request(.GET, "/admin/v1/apps", token: "wrong_admin_token_\(attempt)")
                #expect(wrong.status == 401, "attempt \(attempt): \(wrong.text)")
            }
            let stillFree = try await store.request(.GET, "/admin/v1/apps")
            #expect(stillFree.status == 200, "19 wrong tokens do not lock out: \(stillFree.text)")
            let twentieth = try await store.request(.GET, "/metrics", token: "wrong_metrics_token_20")
            #expect(twentieth.status == 401, "\(twentieth.text)")
            let locked = try await store.request(.GET, "/admin/v1/apps")
            #expect(locked.status == 403, "\(locked.text)")
            #expect(Self.code(locked) == "too_many_attempts", "\(locked.text)")
            #expect(Self.message(locked).contains("refused for 15 more minute(s)"), "\(locked.text)")
            let metrics = try await store.request(.GET, "/metrics")
            #expect(Self.code(metrics) == "too_many_attempts", "\(metrics.text)")

            let visitor = ConsoleTests.Visitor(store)
            let signIn = try await visitor.signIn(as: "Operator")
            #expect(signIn.status == 403, "\(signIn.text.prefix(300))")
            #expect(signIn.text.contains("Too many wrong tokens came from this address"))
            #expect(visitor.cookie == nil, "no session was started")
        }
    }

    static func code(_ answer: TestStore.Answer) -> String? {
        (answer.json["error"] as? [String: Any])?["code"] as? String
    }

    static func message(_ answer: TestStore.Answer) -> String {
        ((answer.json["error"] as? [String: Any])?["message"] as? String) ?? ""
    }
}
