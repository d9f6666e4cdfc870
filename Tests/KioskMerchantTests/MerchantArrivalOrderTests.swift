import Foundation
import KioskProtocol
import KioskTesting
import Testing

/// A refunded purchase reaches the merchant three ways — the app's delivery of its (older) signed transaction, the
/// purchase notification, the refund notification — in any order. Every order, bound to an order's token and
/// unbound, with the sandbox clock frozen (the purchase and the refund share their `signedDate`) and running, on
/// both databases: the coins always end taken back, and reconciliation finds nothing.
@Suite struct MerchantArrivalOrderTests {
    enum Arrival: String, CaseIterable, CustomStringConvertible {
        case app, purchaseNotification, refundNotification
        var description: String { rawValue }
    }

    /// The six orders of the three arrivals.
    static let orders: [[Arrival]] = {
        let all = Arrival.allCases
        return all.flatMap { first in
            all.filter { $0 != first }.flatMap { second in
                all.filter { $0 != first && $0 != second }.map { [first, second, $0] }
            }
        }
    }()

    @Test(arguments: TestDatabaseEngine.available, [true, false])
    func aRefundLandsInEveryOrder(engine: TestDatabaseEngine, frozenClock: Bool) async throws {
        try await MerchantShop.with(engine) { shop in
            if frozenClock { try await shop.changeSandboxClock(["action": "freeze"]) }
            try await shop.withMerchant(receivesNotifications: false) { merchant in
                let device = try await shop.device()
                var scenario = 0
                for bound in [true, false] {
                    for order in Self.orders {
                        scenario += 1
                        let user = "user-\(scenario)"
                        let described =
                            "\(bound ? "bound" : "unbound"), \(order), clock \(frozenClock ? "frozen" : "running")"
                        let token =
                            bound ? try await merchant.order(MerchantShop.coins, for: user).appAccountToken : nil
                        let transaction = try await shop.buy(MerchantShop.coins, token: token, on: device)
                        try await shop.control(transaction.id, "refund")
                        let payloads = try await shop.signedNotifications(merchant: merchant, about: transaction.id)
                        let charge = try #require(payloads["ONE_TIME_CHARGE"], "\(described): \(payloads.keys)")
                        let refund = try #require(payloads["REFUND"], "\(described): \(payloads.keys)")
                        let purchaseDate = try Self.transactionSignedDate(in: charge)
                        let refundDate = try Self.transactionSignedDate(in: refund)
                        #expect(
                            (purchaseDate == refundDate) == frozenClock,
                            "\(described): the purchase and refund were signed at \(purchaseDate), \(refundDate)")

                        for arrival in order {
                            let answer: TestStore.Answer
                            switch arrival {
                            case .app: answer = try await merchant.deliver(transaction.jwsRepresentation, for: user)
                            case .purchaseNotification, .refundNotification:
                                answer = try await merchant.request(
                                    .POST, MerchantPaths.notifications,
                                    json: ["signedPayload": arrival == .purchaseNotification ? charge : refund])
                            }
                            #expect(answer.status == 200, "\(described), \(arrival): \(answer.text)")
                        }
                        let entitlements = try await merchant.entitlements(of: user)
                        #expect(entitlements.balance("coins") == 0, "\(described): \(entitlements)")
                        let history = try await merchant.explain(user).history
                        #expect(history.last?.kind == "revoked", "\(described): \(history)")
                        #expect(history.filter { $0.kind == "granted" }.count <= 1, "\(described): \(history)")
                    }
                }
                await device.close()
                let report = try await merchant.reconcile(repair: false)
                #expect(report.findings.isEmpty, "\(report.findings)")
                #expect(report.storeTransactions == scenario)
            }
        }
    }

    /// A refund the merchant never heard of, with the clock frozen (the refund signed at the purchase's very
    /// millisecond): reconciliation compares states, finds it, and `repair` takes the coins back, once.
    @Test(arguments: TestDatabaseEngine.available)
    func reconciliationFindsAMissedRefundSignedAtThePurchasesMillisecond(engine: TestDatabaseEngine) async throws {
        try await MerchantShop.with(engine) { shop in
            try await shop.changeSandboxClock(["action": "freeze"])
            try await shop.withMerchant(receivesNotifications: false) { merchant in
                let device = try await shop.device()
                let order = try await merchant.order(MerchantShop.coins, for: "alice")
                let transaction = try await shop.buy(MerchantShop.coins, token: order.appAccountToken, on: device)
                await device.close()
                try MerchantShop.expect(200, try await merchant.deliver(transaction.jwsRepresentation, for: "alice"))
                try await shop.control(transaction.id, "refund")
                #expect(try await merchant.entitlements(of: "alice").balance("coins") == 100)

                let found = try await merchant.reconcile(repair: false)
                #expect(
                    found.findings.map { "\($0.kind) \($0.transactionId)" }
                        == ["revocation_not_applied \(transaction.id)"], "\(found.findings)")
                let repaired = try await merchant.reconcile(repair: true)
                #expect(repaired.findings.map { $0.repair ?? "-" } == ["revoked"], "\(repaired.findings)")
                #expect(try await merchant.entitlements(of: "alice").balance("coins") == 0)
                let after = try await merchant.reconcile(repair: true)
                #expect(after.findings.isEmpty, "\(after.findings)")
            }
        }
    }

    /// The `signedDate` of the transaction a notification carries.
    static func transactionSignedDate(in signedPayload: String) throws -> Int64 {
        let data = try #require(MerchantShop.claims(of: signedPayload)?["data"] as? [String: Any])
        let transaction = try #require((data["signedTransactionInfo"] as? String).flatMap(MerchantShop.claims(of:)))
        return try #require((transaction["signedDate"] as? NSNumber)?.int64Value)
    }
}
