import Foundation
import KioskTestSupport
import KioskTesting
import NIOHTTP1
import Testing

/// The campaign's extremes in every number and text field of each route family of the store, on both engines:
/// years 0 and 10000 in milliseconds, ±2⁶³ and beyond, 1e300 and 1e400, fractions, NaN and digits as text, wrong
/// types, NUL and escape characters, text over its limit and bodies over theirs, deep nesting. Each value gets its
/// exact refusal (Apple's where Apple defines one), and `/health` still answers after each family.
@Suite struct HostileInputTests {
    /// One field of one route: the body template (`$` is the value), who sends it and what each value gets.
    struct Field {
        var name: String
        var method: HTTPMethod
        var path: String
        var template: String
        var bearer: String?
        var expected: (String) -> HostileOutcome
    }

    @Test(arguments: TestDatabase.available)
    func everyFieldRefusesHostileValues(database: TestDatabase) async throws {
        try await withTestStore(engine: database) { store in
            try await store.preparePurchaseCatalog()
            let token = try await store.signIn()
            let transactionId = try #require(try await store.pay(TestStore.coins, token: token).transactionId)
            let serverAPI = try await store.createServerAPIKey().token()
            let admin = store.adminToken
            let bundle = TestStore.bundleId
            let tester = TestStore.testerEmail
            func number(_ value: String) -> HostileNumber { HostileNumber(rawValue: value)! }
            func text(_ value: String) -> HostileText { HostileText.allCases.first { $0.json == value }! }
            func integer(_ field: String, _ outOfRange: String, null: HostileOutcome, accepts: [HostileNumber] = [])
                -> (String) -> HostileOutcome
            {
                { value in
                    let hostile = number(value)
                    if accepts.contains(hostile) { return .accepted(200) }
                    return hostile.integerField(
                        field, outOfRange: .refused(400, outOfRange, field: field), null: null)
                }
            }
            let numbers: [Field] = [
                Field(
                    name: "sandbox clock", method: .POST, path: "/sandbox/test/v1/clock",
                    template: #"{"action":"set","to":$}"#, bearer: admin,
                    expected: { value in
                        switch number(value) {
                        case .zero, .fraction, .digitText: .refused(409, "clock_moves_back", field: nil)
                        case .nanText: .refused(400, "invalid_date", field: "to")
                        case .null: .refused(400, "missing_date", field: "to")
                        case .overDouble, .underDouble: .refused(400, "invalid_json", field: nil)
                        case .array, .object, .bool: .refused(400, "invalid_type", field: "to")
                        default: .refused(400, "clock_out_of_range", field: "to")
                        }
                    }),
                Field(
                    name: "client payment", method: .POST, path: "/sandbox/storekit/v1/payments",
                    template: #"{"productId":"\#(TestStore.coins)","quantity":$,"idempotencyKey":"k-\#(UUID())"}"#,
                    bearer: token,
                    expected: integer(
                        "quantity", "invalid_quantity", null: .refused(400, "invalid_type", field: "quantity"))),
                Field(
                    name: "test purchase", method: .POST, path: "/sandbox/test/v1/apps/\(bundle)/purchases",
                    template: #"{"tester":"\#(tester)","productId":"\#(TestStore.coins)","quantity":$}"#, bearer: admin,
                    expected: integer("quantity", "invalid_quantity", null: .accepted(201))),
                Field(
                    name: "refund percentage", method: .POST,
                    path: "/sandbox/test/v1/apps/\(bundle)/transactions/\(transactionId)/refund",
                    template: #"{"percentage":$}"#, bearer: admin,
                    expected: integer("percentage", "invalid_percentage", null: .accepted(200))),
                Field(
                    name: "refund reason", method: .POST,
                    path: "/sandbox/test/v1/apps/\(bundle)/transactions/\(transactionId)/refund",
                    template: #"{"reason":$}"#, bearer: admin,
                    expected: integer("reason", "invalid_reason", null: .accepted(200), accepts: [.zero])),
                Field(
                    name: "grace period", method: .PUT, path: "/sandbox/test/v1/apps/\(bundle)/grace-period",
                    template: #"{"days":$}"#, bearer: admin,
                    expected: integer("days", "invalid_grace_period", null: .accepted(200))),
                Field(
                    name: "price tier", method: .POST, path: "/admin/v1/apps/\(bundle)/products",
                    template:
                        #"{"productId":"com.example.tier.$$","type":"consumable","referenceName":"T","pricing":{"tier":$},"localizations":[{"locale":"en_US","displayName":"T","description":"T"}]}"#,
                    bearer: admin,
                    expected: { value in
                        number(value) == .null
                            ? .accepted(201)
                            : number(value).integerField(
                                "pricing.tier", outOfRange: .refused(400, "invalid_price_tier", field: "pricing.tier"),
                                null: .accepted(201))
                    }),
                Field(
                    name: "notification history", method: .POST, path: "/sandbox/inApps/v1/notifications/history",
                    template: #"{"startDate":$,"endDate":1}"#, bearer: serverAPI,
                    expected: { value in number(value) == .zero ? .apple(400, 4_000_012) : .apple(400, 4_000_015) }),
                Field(
                    name: "renewal extension", method: .PUT,
                    path: "/sandbox/inApps/v1/subscriptions/extend/\(transactionId)",
                    template: #"{"extendByDays":$,"extendReasonCode":1,"requestIdentifier":"r"}"#, bearer: serverAPI,
                    expected: { _ in .apple(400, 4_000_009) }),
                Field(
                    name: "verifyReceipt", method: .POST, path: "/sandbox/verifyReceipt",
                    template: #"{"receipt-data":"AAAA","exclude-old-transactions":$}"#, bearer: nil,
                    // Every number, 1e400 included, is the wrong type for the field (21002), not a body that is not
                    // JSON (21000): only the three fields verifyReceipt reads are decoded.
                    expected: { _ in .receiptStatus(21_002) }),
            ]
            let texts: [Field] = [
                Field(
                    name: "app name", method: .POST, path: "/admin/v1/apps",
                    template: #"{"bundleId":"com.example.text.$$","name":$}"#, bearer: admin,
                    expected: { text($0).kioskField("name", bodyLimit: 1 << 20) }),
                Field(
                    name: "bundle id", method: .POST, path: "/admin/v1/apps", template: #"{"bundleId":$,"name":"T"}"#,
                    bearer: admin, expected: { text($0).kioskField("bundleId", bodyLimit: 1 << 20) }),
                Field(
                    name: "tester password", method: .POST, path: "/admin/v1/testers",
                    template: #"{"email":"t$$@example.com","password":$,"storefront":"USA"}"#, bearer: admin,
                    expected: { text($0).kioskField("password", bodyLimit: 1 << 20) }),
                Field(
                    name: "payment product", method: .POST, path: "/sandbox/storekit/v1/payments",
                    template: #"{"productId":$,"quantity":1,"idempotencyKey":"k-$$"}"#, bearer: token,
                    expected: { text($0).kioskField("productId", bodyLimit: 1 << 16) }),
                Field(
                    name: "payment key", method: .POST, path: "/sandbox/storekit/v1/payments",
                    template: #"{"productId":"\#(TestStore.coins)","quantity":1,"idempotencyKey":$}"#, bearer: token,
                    expected: { text($0).kioskField("idempotencyKey", bodyLimit: 1 << 16) }),
                Field(
                    name: "extension request id", method: .PUT,
                    path: "/sandbox/inApps/v1/subscriptions/extend/\(transactionId)",
                    template: #"{"extendByDays":1,"extendReasonCode":1,"requestIdentifier":$}"#, bearer: serverAPI,
                    expected: { value in
                        switch text(value) {
                        case .nul, .escape, .newline, .tooLong: .apple(400, 4_000_011)
                        default: .apple(400, 4_000_000)
                        }
                    }),
                Field(
                    name: "receipt data", method: .POST, path: "/sandbox/verifyReceipt",
                    template: #"{"receipt-data":$}"#,
                    bearer: nil,
                    expected: { text($0) == .deep ? .receiptStatus(21_000) : .receiptStatus(21_002) }),
            ]
            var sent = 0
            for (fields, values) in [
                (numbers, HostileNumber.allCases.map(\.rawValue)), (texts, HostileText.allCases.map(\.json)),
            ] {
                for field in fields {
                    for value in values {
                        let body = field.template.replacingOccurrences(of: "$$", with: UUID().uuidString.prefix(8))
                            .replacingOccurrences(of: "$", with: value)
                        let answer = try await store.request(
                            field.method, field.path, body: Data(body.utf8), token: .some(field.bearer))
                        let outcome = HostileOutcome.of(status: answer.status, json: answer.json)
                        #expect(
                            outcome == field.expected(value),
                            "\(field.name) with \(value.prefix(40)): \(answer.status) \(answer.text.prefix(300))")
                        sent += 1
                    }
                    let health = try await store.request(.GET, "/health")
                    #expect(health.status == 200, "after \(field.name): \(health.text)")
                }
            }
            print("HostileInputTests[\(database)]: \(sent) hostile requests, each refused exactly, the store up")
        }
    }

    /// The live updates stream's cursor (`?after=` or `Last-Event-ID`), which schemathesis leaves out because a
    /// stream it opens never ends: every value that is not a non-negative Int64 is refused before the stream opens.
    @Test func theUpdatesCursorRefusesHostileValues() async throws {
        try await withTestStore { store in
            try await store.preparePurchaseCatalog()
            let token = try await store.signIn()
            // Control characters and over-long text are refused by the rule every query parameter follows.
            let refused: [(value: String, code: String)] =
                [
                    "-1", "9223372036854775808", "-9223372036854775809", "1e300", "1e400", "0.5", "NaN", "12abc",
                    "0x10",
                    "+", "99999999999999999999999999",
                ].map { ($0, "invalid_cursor") } + [
                    ("%00", "invalid_character"), ("%1B", "invalid_character"),
                    (String(repeating: "9", count: 5_000), "text_too_long"),
                ]
            for (value, code) in refused {
                let query = try await store.request(.GET, "/sandbox/storekit/v1/updates?after=\(value)", token: token)
                #expect(
                    HostileOutcome.of(status: query.status, json: query.json) == .refused(400, code, field: "after"),
                    "after=\(value.prefix(40)): \(query.status) \(query.text.prefix(200))")
                guard code == "invalid_cursor" else { continue }
                let header = try await store.request(
                    .GET, "/sandbox/storekit/v1/updates", token: token, headers: ["Last-Event-ID": value])
                #expect(
                    HostileOutcome.of(status: header.status, json: header.json) == .refused(400, code, field: "after"),
                    "Last-Event-ID \(value): \(header.status) \(header.text.prefix(200))")
            }
            #expect(try await store.request(.GET, "/health").status == 200)
        }
    }
}
