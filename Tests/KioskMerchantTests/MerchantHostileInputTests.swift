import Foundation
import KioskProtocol
import KioskTestSupport
import KioskTesting
import NIOHTTP1
import Testing

/// The campaign's extremes in every number and text field of the merchant's JSON routes, on both engines (see the
/// store's `HostileInputTests`): each value gets its exact refusal, and `/health` still answers after each route.
/// Signed data with hostile dates and forged signatures have their own suites (`MerchantHostileNumbersTests`,
/// `MerchantForgeryTests`).
@Suite struct MerchantHostileInputTests {
    struct Field {
        var name: String
        var path: String
        var template: String
        var bearer: String
        var expected: (String) -> HostileOutcome
    }

    @Test(arguments: TestDatabaseEngine.available)
    func everyFieldRefusesHostileValues(engine: TestDatabaseEngine) async throws {
        try await MerchantShop.with(engine) { shop in
            try await shop.withMerchant(receivesNotifications: false) { merchant in
                let user = merchant.userToken("alice")
                let admin = merchant.adminToken
                func number(_ value: String) -> HostileNumber { HostileNumber(rawValue: value)! }
                func text(_ value: String) -> HostileText { HostileText.allCases.first { $0.json == value }! }
                func integer(_ field: String, _ outOfRange: String, null: HostileOutcome) -> (String) -> HostileOutcome
                {
                    { number($0).integerField(field, outOfRange: .refused(400, outOfRange, field: field), null: null) }
                }
                let numbers = [
                    Field(
                        name: "order quantity", path: MerchantPaths.orders,
                        template: #"{"productId":"\#(MerchantShop.coins)","quantity":$}"#, bearer: user,
                        expected: integer("quantity", "invalid_quantity", null: .accepted(201))),
                    Field(
                        name: "spend amount", path: MerchantPaths.spend(balance: "coins"),
                        template: #"{"amount":$,"idempotencyKey":"k"}"#, bearer: user,
                        expected: { value in
                            // A whole number a balance could hold is refused for the balance, not as a number.
                            [.int64Max, .year10000].contains(number(value))
                                ? .refused(409, "insufficient_balance", field: "amount")
                                : integer(
                                    "amount", "invalid_amount", null: .refused(400, "invalid_type", field: "amount"))(
                                        value)
                        }),
                    Field(
                        name: "token lifetime", path: MerchantPaths.adminTokens,
                        template: #"{"userId":"bob","expiresIn":$}"#, bearer: admin,
                        expected: integer("expiresIn", "invalid_lifetime", null: .accepted(200))),
                ]
                let texts = [
                    Field(
                        name: "order product", path: MerchantPaths.orders, template: #"{"productId":$,"quantity":1}"#,
                        bearer: user, expected: { text($0).kioskField("productId", bodyLimit: 1 << 16) }),
                    Field(
                        name: "spend key", path: MerchantPaths.spend(balance: "coins"),
                        template: #"{"amount":1,"idempotencyKey":$}"#, bearer: user,
                        expected: { text($0).kioskField("idempotencyKey", bodyLimit: 1 << 16) }),
                    Field(
                        name: "token user", path: MerchantPaths.adminTokens, template: #"{"userId":$,"expiresIn":60}"#,
                        bearer: admin, expected: { text($0).kioskField("userId", bodyLimit: 1 << 16) }),
                    Field(
                        name: "reconcile since", path: MerchantPaths.adminReconcile,
                        template: #"{"environment":"Sandbox","since":$}"#, bearer: admin,
                        expected: { text($0).kioskField("since", bodyLimit: 1 << 16) }),
                ]
                var sent = 0
                for (fields, values) in [
                    (numbers, HostileNumber.allCases.map(\.rawValue)), (texts, HostileText.allCases.map(\.json)),
                ] {
                    for field in fields {
                        for value in values {
                            let answer = try await merchant.request(
                                .POST, field.path,
                                body: Data(field.template.replacingOccurrences(of: "$", with: value).utf8),
                                token: field.bearer)
                            let outcome = HostileOutcome.of(status: answer.status, json: answer.json)
                            #expect(
                                outcome == field.expected(value),
                                "\(field.name) with \(value.prefix(40)): \(answer.status) \(answer.text.prefix(300))")
                            sent += 1
                        }
                        try await merchant.expectHealthy()
                    }
                }
                print(
                    "MerchantHostileInputTests[\(engine)]: \(sent) hostile requests, each refused exactly, the merchant up"
                )
            }
        }
    }
}
