import Foundation
import KioskTesting
import Testing

@Suite struct ConsoleAppsTests {
    /// An app gets a numeric app id from the store, is listed and shown, and its bundle id is unique.
    @Test(arguments: TestDatabase.available)
    func createListShowAndDuplicate(database: TestDatabase) async throws {
        try await withStore(database) { store in
            let created = try await store.createApp("com.example.coins", name: "Coin Game")
            #expect(created.json["appAppleId"] as? Int == 1_400_000_001)
            #expect(created.json["bundleId"] as? String == "com.example.coins")
            #expect(created.json["sharedSecret"] == nil)
            try await store.createApp("com.example.second", name: "Second")

            let list = try await store.request(.GET, "/admin/v1/apps")
            let bundleIds = (list.json["apps"] as? [[String: Any]])?.compactMap { $0["bundleId"] as? String }
            #expect(bundleIds == ["com.example.coins", "com.example.second"])

            let shown = try await store.request(.GET, "/admin/v1/apps/com.example.second")
            #expect(shown.json["appAppleId"] as? Int == 1_400_000_002)

            let duplicate = try await store.request(
                .POST, "/admin/v1/apps", json: ["bundleId": "com.example.coins", "name": "Again"])
            #expect(duplicate.status == 409)
            #expect(duplicate.errorCode == "duplicate_bundle_id")
            #expect(duplicate.errorField == "bundleId")
            #expect(duplicate.header("Content-Type") == "application/json")
        }
    }

    /// Bad bundle ids, missing or misspelt fields and non-JSON bodies each get a 400 naming the field.
    @Test(arguments: TestDatabase.available)
    func badInputIsNamed(database: TestDatabase) async throws {
        try await withStore(database) { store in
            let cases: [(body: Data, code: String, field: String?)] = [
                (Data(#"{"bundleId": "coins", "name": "X"}"#.utf8), "invalid_bundle_id", "bundleId"),
                (Data(#"{"bundleId": "com.example.*", "name": "X"}"#.utf8), "invalid_bundle_id", "bundleId"),
                (Data(#"{"bundleId": "com.example.x"}"#.utf8), "missing_field", "name"),
                (Data(#"{"bundleId": "com.example.x", "name": "X", "nmae": "Y"}"#.utf8), "unknown_field", "nmae"),
                (Data(#"{"bundleId": 12, "name": "X"}"#.utf8), "invalid_type", "bundleId"),
                (Data("not json".utf8), "invalid_json", "line 1, column 2"),
                (Data("[1, 2]".utf8), "invalid_json", nil),
            ]
            for (body, code, field) in cases {
                let answer = try await store.request(.POST, "/admin/v1/apps", body: body)
                #expect(answer.status == 400, "\(String(decoding: body, as: UTF8.self)) → \(answer.text)")
                #expect(answer.errorCode == code, "\(answer.text)")
                #expect(answer.errorField == field)
                #expect(answer.errorFix != nil, "every error says what to do: \(answer.text)")
            }
            let apps = try await store.request(.GET, "/admin/v1/apps")
            #expect((apps.json["apps"] as? [Any])?.isEmpty == true, "nothing was half-written")
        }
    }

    /// The shared secret is generated on request, 32 hex characters, and regenerating replaces it.
    @Test(arguments: TestDatabase.available)
    func sharedSecretAndNotificationURLs(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.createApp()
            let first = try await store.request(.POST, "/admin/v1/apps/com.example.app/shared-secret")
            let secret = try #require(first.json["sharedSecret"] as? String)
            #expect(secret.count == 32 && secret.allSatisfy(\.isHexDigit))
            let second = try await store.request(.POST, "/admin/v1/apps/com.example.app/shared-secret")
            #expect(second.json["sharedSecret"] as? String != secret)

            let updated = try await store.request(
                .PATCH, "/admin/v1/apps/com.example.app",
                json: ["sandboxNotificationURLs": ["http://127.0.0.1:9000/apple", "https://merchant.example/apple"]])
            #expect(updated.status == 200)
            #expect(
                updated.json["sandboxNotificationURLs"] as? [String] == [
                    "http://127.0.0.1:9000/apple", "https://merchant.example/apple",
                ])

            let bad = try await store.request(
                .PATCH, "/admin/v1/apps/com.example.app", json: ["productionNotificationURLs": ["ftp://x"]])
            #expect(bad.status == 400)
            #expect(bad.errorCode == "invalid_notification_url")
            #expect(bad.errorField == "productionNotificationURLs[0]")

            let missing = try await store.request(.GET, "/admin/v1/apps/com.example.nothing")
            #expect(missing.status == 404)
            #expect(missing.errorCode == "app_not_found")
        }
    }

    /// Without the admin token, or with a wrong one, the console answers 401 and says how to authenticate.
    @Test func adminTokenIsRequired() async throws {
        try await withTestStore { store in
            let none = try await store.request(.GET, "/admin/v1/apps", token: .some(nil))
            #expect(none.status == 401)
            #expect(none.errorCode == "missing_admin_token")
            let wrong = try await store.request(.GET, "/admin/v1/apps", token: "kiosk_wrong_token_123456")
            #expect(wrong.status == 401)
            #expect(wrong.errorCode == "invalid_admin_token")
            #expect(wrong.header("WWW-Authenticate")?.hasPrefix("Bearer") == true)
            let health = try await store.request(.GET, "/health")
            #expect(health.status == 200)
        }
    }

    /// Unknown routes and unparsable path parameters answer JSON errors that say what to do, like every other error.
    @Test func unknownRoutesAndBadParameters() async throws {
        try await withTestStore { store in
            let unknown = try await store.request(.GET, "/admin/v1/nothing")
            #expect(unknown.status == 404)
            #expect(unknown.errorCode == "not_found")
            #expect(unknown.errorFix?.contains("openapi.yaml") == true)
            try await store.createApp()
            let badGroupId = try await store.request(.GET, "/admin/v1/apps/com.example.app/subscription-groups/abc")
            #expect(badGroupId.status == 400)
            #expect(badGroupId.errorCode == "bad_request")
            #expect(badGroupId.header("Content-Type") == "application/json")
        }
    }

    /// `/health` names the database engine and `/metrics` counts requests by route in Prometheus' text format.
    @Test(arguments: TestDatabase.available)
    func healthAndMetrics(database: TestDatabase) async throws {
        try await withStore(database) { store in
            let health = try await store.request(.GET, "/health")
            #expect(health.json["status"] as? String == "ok")
            let engine = (health.json["database"] as? [String: Any])?["engine"] as? String
            #expect(engine == (database == .sqlite ? "sqlite" : "postgresql"))
            for _ in 0..<3 { _ = try await store.request(.GET, "/admin/v1/apps") }
            let metrics = try await store.request(.GET, "/metrics")
            #expect(metrics.status == 200)
            #expect(metrics.text.contains("# HELP kiosk_http_requests_total"))
            // Each series is counted across requests (the middleware keeps the registry's metrics it was given).
            let lines = metrics.text.split(separator: "\n")
            let counted = lines.filter {
                $0.hasPrefix("kiosk_http_requests_total{") && $0.contains(#"route="/admin/v1/apps""#)
                    && $0.contains(#"status="200""#)
            }
            #expect(counted.map { $0.split(separator: " ").last } == ["3"], "\(metrics.text)")
            let timed = lines.filter {
                $0.hasPrefix("kiosk_http_request_duration_seconds_count{") && $0.contains(#"route="/admin/v1/apps""#)
            }
            #expect(timed.map { $0.split(separator: " ").last } == ["3"], "\(metrics.text)")
            #expect(metrics.text.contains("kiosk_http_request_duration_seconds_bucket"))
            for gauge in [
                "notifications_undelivered", "oldest_undelivered_notification_age_seconds", "scheduler_lag_seconds",
            ] {
                #expect(metrics.text.contains(#"kiosk_\#(gauge){environment="production"} 0"#), "\(gauge)")
            }
        }
    }

    /// `/metrics` counts what committed: a payment by outcome, the notifications it and a refund caused by type, and
    /// a repeated payment request (same idempotency key) not at all.
    @Test(arguments: TestDatabase.available)
    func metricsCountPaymentsAndWhatTheyCaused(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.preparePurchaseCatalog()
            let token = try await store.signIn()
            let paid = try await store.pay(TestStore.coins, token: token, key: "tap-1")
            _ = try await store.pay(TestStore.coins, token: token, key: "tap-1")
            let transactionId = try #require(paid.transactionId)
            #expect(try await RefundTests.control(store, transactionId, "refund", [:]).status == 200)
            let metrics = try await store.request(.GET, "/metrics").text
            for series in [
                #"kiosk_payments_total{environment="sandbox",outcome="purchased"} 1"#,
                #"kiosk_store_events_total{environment="sandbox",type="ONE_TIME_CHARGE"} 1"#,
                #"kiosk_store_events_total{environment="sandbox",type="REFUND"} 1"#,
                "kiosk_database_pool_size ", #"kiosk_database_sessions{state="in_use"}"#,
            ] {
                #expect(
                    metrics.contains(series),
                    "\(series) in \(metrics.split(separator: "\n").filter { $0.hasPrefix("kiosk_") && !$0.hasPrefix("kiosk_http") })"
                )
            }
        }
    }

    /// On SQLite `/metrics` counts the pages commits wrote to the write-ahead log, adds up the time the one writer
    /// spent in transactions and counts the log's syncs, and a purchase adds to each; on PostgreSQL, whose server
    /// counts its own WAL for every client and which has no one writer, the series are absent.
    @Test(arguments: TestDatabase.available)
    func metricsCountWhatSQLitesWriterDid(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.preparePurchaseCatalog()
            let token = try await store.signIn()
            let series = [
                "kiosk_database_log_pages_total", "kiosk_database_writer_busy_seconds_total",
                "kiosk_database_log_syncs_total",
            ]
            var before: [Double?] = []
            for name in series { before.append(try await store.metric(name)) }
            let bought = try await store.pay(TestStore.coins, token: token, key: "tap-1")
            #expect(bought.json["state"] as? String == "purchased", "\(bought.text)")
            for (name, earlier) in zip(series, before) {
                let later = try await store.metric(name)
                switch database {
                case .sqlite: #expect(try #require(later) > #require(earlier), "\(name)")
                case .postgres: #expect(earlier == nil && later == nil, "\(name)")
                }
            }
        }
    }

    /// `/metrics` counts the statements the store ran on both engines, a purchase's among them: at least the dozen its
    /// durable transaction runs (the count also holds whatever else ran meanwhile, such as the scrape's own reads).
    @Test(arguments: TestDatabase.available)
    func metricsCountTheStatementsAPurchaseRan(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.preparePurchaseCatalog()
            let token = try await store.signIn()
            let before = try #require(try await store.metric("kiosk_database_statements_total"))
            let bought = try await store.pay(TestStore.coins, token: token, key: "tap-1")
            #expect(bought.json["state"] as? String == "purchased", "\(bought.text)")
            let after = try #require(try await store.metric("kiosk_database_statements_total"))
            #expect(after - before >= 12, "\(after - before) statements counted for a purchase")
        }
    }
}
