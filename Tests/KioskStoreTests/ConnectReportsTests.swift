import Foundation
import KioskCore
import KioskSigning
import KioskTestSupport
import KioskTesting
import Testing

/// The App Store Connect API's report endpoints against a client nobody here wrote: PyPI's `appstoreconnect`,
/// pointed at a running Kiosk, downloads and parses the Sales Summary and the Financial Report with a team key,
/// and is refused with a key whose roles do not read reports; Apple's JSON:API errors for everything else.
@Suite struct ConnectReportsTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Interop/connect_reports.py").path

    /// Buys coins in production 35 days before now (twice in the United States, once in the United Kingdom), then
    /// sets the store's clock to now, so that day and its month are over: their reports exist.
    static func storeWithLastMonthsSales(_ body: @Sendable (TestStore, Date) async throws -> Void) async throws {
        let saleDate = Date().addingTimeInterval(-35 * 86_400)
        let clock = ManualClock(saleDate)
        try await withTestStore(clock: clock) { store in
            try await store.preparePurchaseCatalog()
            try await store.buyCoinsInProduction()
            clock.set(Date())
            try await body(store, saleDate)
        }
    }

    /// `yyyy-MM-dd` or `yyyy-MM` of `date` in UTC.
    static func utc(_ date: Date, month: Bool = false) -> String {
        let text = ISO8601DateFormatter().string(from: date)
        return String(text.prefix(month ? 7 : 10))
    }

    /// Creates a team key with `role`, writes its private key to a file in `directory`; answers the arguments the
    /// script needs to sign with it.
    static func teamKey(_ role: String, store: TestStore, directory: URL) async throws -> [String] {
        let created = try await store.request(.POST, "/admin/v1/api-keys", json: ["roles": [role], "name": role])
        #expect(created.status == 201, "\(created.text)")
        let keyFile = directory.appendingPathComponent("\(role).p8")
        try #require(created.json["privateKey"] as? String).write(to: keyFile, atomically: true, encoding: .utf8)
        let listed = try await store.request(.GET, "/admin/v1/api-keys")
        return [
            "--base-url", store.baseURL, "--key-id", try #require(created.json["keyId"] as? String), "--key-file",
            keyFile.path, "--issuer-id", try #require(created.json["issuerId"] as? String), "--vendor-number",
            try #require(listed.json["vendorNumber"] as? String),
        ]
    }

    @Test(.enabled(if: TestEnvironment.runs(.connectPython), "set KIOSK_TEST_CONNECT_PYTHON (.ci/run does)"))
    func appStoreConnectClientDownloadsBothReports() async throws {
        let python = try TestEnvironment.require(.connectPython)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-asc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try await Self.storeWithLastMonthsSales { store, saleDate in
            let period = [
                "--sales-date", Self.utc(saleDate), "--finance-month", Self.utc(saleDate, month: true), "--region",
                "US",
            ]
            let finance = try await Self.teamKey("FINANCE", store: store, directory: directory)
            let (status, output) = try await runProcess(python, [Self.script] + finance + period)
            #expect(status == 0, "\(output)")
            let result = try #require(
                try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], "\(output)")
            let sales = try #require(result["sales"] as? [String: Any], "\(output)")
            #expect(sales["columns"] as? [String] == SalesSummaryReport.columns)
            #expect(sales["rows"] as? Int == 2 && sales["units"] as? Int == 3, "\(output)")
            #expect(sales["countries"] as? [String] == ["GB", "US"], "\(output)")
            let report = try #require(result["finance"] as? [String: Any], "\(output)")
            #expect(report["columns"] as? [String] == FinancialReport.columns)
            #expect(report["rows"] as? Int == 1 && report["extendedPartnerShare"] as? String == "1.38", "\(output)")
            #expect(
                report["trailer"] as? [String: String]
                    == ["Total_Rows": "1", "Total_Amount": "1.38", "Total_Units": "2"], "\(output)")
            let noSales = try #require(result["noSales"] as? [String: Any], "\(output)")
            #expect(noSales["status"] as? Int == 404, "\(output)")
            let noEvents = try #require(result["noSubscriptionEvents"] as? [String: Any], "\(output)")
            #expect(noEvents["status"] as? Int == 404, "\(output)")
            #expect((noEvents["detail"] as? String)?.contains("no subscription events") == true, "\(output)")

            let developer = try await Self.teamKey("DEVELOPER", store: store, directory: directory)
            let (refusedStatus, refusedOutput) = try await runProcess(
                python, [Self.script] + developer + period + ["--refused"])
            #expect(refusedStatus == 0, "\(refusedOutput)")
            #expect(refusedOutput.contains("\"status\": 403"), "\(refusedOutput)")

            // An In-App Purchase key is no team key: the App Store Connect API does not know it.
            let inAppPurchase = try await store.request(.POST, "/admin/v1/apps/\(TestStore.bundleId)/keys", json: [:])
            let keyFile = directory.appendingPathComponent("iap.p8")
            try #require(inAppPurchase.json["privateKey"] as? String).write(
                to: keyFile, atomically: true, encoding: .utf8)
            var withoutTeamKey = finance
            withoutTeamKey[withoutTeamKey.firstIndex(of: "--key-id")! + 1] = try #require(
                inAppPurchase.json["keyId"] as? String)
            withoutTeamKey[withoutTeamKey.firstIndex(of: "--key-file")! + 1] = keyFile.path
            let (_, unknownOutput) = try await runProcess(
                python, [Self.script] + withoutTeamKey + period + ["--refused"])
            #expect(unknownOutput.contains("\"status\": 401"), "\(unknownOutput)")
        }
    }

    /// Without a valid token the API answers Apple's 401 envelope; with one, bad filters answer 400 with Apple's
    /// codes, a period not over 404; the body of a report is gzip as `application/a-gzip`.
    @Test func reportEndpointsAnswerApplesErrors() async throws {
        try await Self.storeWithLastMonthsSales { store, saleDate in
            let unauthorized = try await store.request(.GET, "/v1/salesReports", token: .some(nil))
            #expect(unauthorized.status == 401 && unauthorized.header("Content-Type") == "application/json")
            let errors = try #require(unauthorized.json["errors"] as? [[String: Any]], "\(unauthorized.text)")
            #expect(errors.first?["code"] as? String == "NOT_AUTHORIZED" && errors.first?["status"] as? String == "401")
            let garbage = try await store.request(.GET, "/v1/financeReports", token: .some("not.a.token"))
            #expect(garbage.status == 401, "\(garbage.text)")

            let created = try await store.request(.POST, "/admin/v1/api-keys", json: ["roles": ["SALES"]])
            let key = ConnectKey(
                id: try #require(created.json["keyId"] as? String),
                privateKeyPEM: try #require(created.json["privateKey"] as? String),
                issuer: try #require(created.json["issuerId"] as? String))
            let vendor = try #require(
                try await store.request(.GET, "/admin/v1/api-keys").json["vendorNumber"] as? String)
            func get(_ path: String, lifetime: TimeInterval = 600) async throws -> TestStore.Answer {
                try await store.request(.GET, path, token: .some(try key.token(now: Date(), lifetime: lifetime)))
            }
            let day = Self.utc(saleDate)
            let base =
                "/v1/salesReports?filter[vendorNumber]=\(vendor)&filter[reportType]=SALES"
                + "&filter[reportSubType]=SUMMARY"
            let report = try await get(base + "&filter[frequency]=DAILY&filter[reportDate]=\(day)")
            #expect(report.status == 200 && report.header("Content-Type") == "application/a-gzip", "\(report.text)")
            #expect(report.header("Content-Encoding") == nil)
            #expect(report.body.starts(with: [0x1F, 0x8B]), "a gzip member")
            let tooLong = try await get(base + "&filter[frequency]=DAILY&filter[reportDate]=\(day)", lifetime: 3_600)
            #expect(tooLong.status == 401, "a token good for an hour is refused: \(tooLong.text)")
            for (query, code) in [
                ("&filter[frequency]=HOURLY&filter[reportDate]=\(day)", "PARAMETER_ERROR.INVALID"),
                ("&filter[reportDate]=\(day)", "PARAMETER_ERROR.REQUIRED"),
                ("&filter[frequency]=DAILY&filter[reportDate]=2026-02-30", "PARAMETER_ERROR.INVALID"),
                (
                    "&filter[frequency]=DAILY&filter[reportDate]=\(Self.utc(Date().addingTimeInterval(86_400)))",
                    "NOT_FOUND"
                ),
            ] {
                let refused = try await get(base + query)
                let first = (refused.json["errors"] as? [[String: Any]])?.first
                #expect(first?["code"] as? String == code, "\(query): \(refused.text)")
            }
            // The Subscription Event report is daily, version 1_3; a day without subscription events is Apple's 404.
            let events =
                "/v1/salesReports?filter[vendorNumber]=\(vendor)&filter[reportType]=SUBSCRIPTION_EVENT"
                + "&filter[reportSubType]=SUMMARY&filter[reportDate]=\(day)"
            for (query, code) in [
                ("&filter[frequency]=DAILY&filter[version]=1_3", "NOT_FOUND"),
                ("&filter[frequency]=WEEKLY", "PARAMETER_ERROR.INVALID"),
                ("&filter[frequency]=DAILY&filter[version]=1_0", "PARAMETER_ERROR.INVALID"),
            ] {
                let answer = try await get(events + query)
                let first = (answer.json["errors"] as? [[String: Any]])?.first
                #expect(first?["code"] as? String == code, "\(query): \(answer.text)")
            }
            let wrongVendor = try await get(
                "/v1/salesReports?filter[vendorNumber]=1&filter[reportType]=SALES&filter[reportSubType]=SUMMARY"
                    + "&filter[frequency]=DAILY&filter[reportDate]=\(day)")
            #expect(wrongVendor.status == 400, "\(wrongVendor.text)")
            let finance = try await get(
                "/v1/financeReports?filter[vendorNumber]=\(vendor)&filter[reportType]=FINANCIAL&filter[regionCode]=ZZ"
                    + "&filter[reportDate]=\(Self.utc(saleDate, month: true))")
            #expect(finance.status == 403, "a SALES key reads no finance report: \(finance.text)")
        }
    }
}

/// A team key as `kiosk api-keys create` hands it out, signing tokens as App Store Connect clients do: no `bid`.
struct ConnectKey {
    var id: String
    var privateKeyPEM: String
    var issuer: String

    func token(now: Date, lifetime: TimeInterval) throws -> String {
        try ServerAPIToken.sign(
            keyId: id, issuerId: issuer, bundleId: nil, privateKeyPEM: privateKeyPEM, expiresAt: now + lifetime)
    }
}
