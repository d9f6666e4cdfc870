import Foundation
import KioskProtocol
import KioskTesting
import Testing

/// Reconciliation compares the store's history (App Store Server API) with the grant ledger, and repairs it.
@Suite struct MerchantReconciliationTests {
    /// A grant deleted by mistake is found as a purchase not granted and granted again on repair; a grant with no
    /// purchase behind it is found and taken back; afterwards there is nothing left to find.
    @Test(arguments: TestDatabaseEngine.available)
    func findsAndRepairsADeletedGrantAndAGrantWithoutPurchase(engine: TestDatabaseEngine) async throws {
        try await MerchantShop.with(engine) { shop in
            try await shop.withMerchant { merchant in
                let device = try await shop.device()
                let order = try await merchant.order(MerchantShop.coins, for: "alice")
                let coins = try await shop.buy(MerchantShop.coins, token: order.appAccountToken, on: device)
                try MerchantShop.expect(200, try await merchant.deliver(coins.jwsRepresentation, for: "alice"))
                await coins.finish()
                let bobsOrder = try await merchant.order(MerchantShop.removeAds, for: "bob")
                let removeAds = try await shop.buy(MerchantShop.removeAds, token: bobsOrder.appAccountToken, on: device)
                try MerchantShop.expect(200, try await merchant.deliver(removeAds.jwsRepresentation, for: "bob"))
                await device.close()
                // The store's notifications of both purchases have arrived too (nothing more will change).
                try await shop.waitUntilEveryNotificationIsDelivered()

                try await merchant.execute("DELETE FROM grants WHERE transaction_id = '\(coins.id)'")
                try await merchant.execute(
                    """
                    INSERT INTO grants (environment, transaction_id, original_transaction_id, bundle_id, user_id,
                        product_id, product_kind, quantity, entitlement, balance_amount, purchase_date,
                        state_signed_date, source, granted_at)
                    VALUES ('sandbox', '2999999999999999', '2999999999999999', '\(MerchantShop.bundleId)', 'carol',
                        '\(MerchantShop.supporter)', 'non_consumable', 1, 'no_ads', 0, 1, 1, 'app', 1)
                    """)
                #expect(try await merchant.entitlements(of: "alice").balance("coins") == 0)
                #expect(try await merchant.entitlements(of: "carol").entitlement("no_ads")?.active == true)

                let report = try await merchant.reconcile(repair: false)
                #expect(!report.repaired && report.grants == 2)
                #expect(
                    Set(report.findings.map { "\($0.kind) \($0.transactionId) \($0.userId ?? "-")" }) == [
                        "not_granted \(coins.id) alice", "grant_without_purchase 2999999999999999 carol",
                    ], "\(report.findings)")
                #expect(report.findings.allSatisfy { $0.repair == nil })
                #expect(try await merchant.entitlements(of: "alice").balance("coins") == 0, "a dry run changes nothing")

                let repaired = try await merchant.reconcile(repair: true)
                #expect(
                    Set(repaired.findings.map { "\($0.kind) \($0.repair ?? "-")" }) == [
                        "not_granted granted", "grant_without_purchase revoked",
                    ], "\(repaired.findings)")
                #expect(try await merchant.entitlements(of: "alice").balance("coins") == 100)
                #expect(try await merchant.entitlements(of: "carol").entitlement("no_ads")?.active == false)
                #expect(try await merchant.entitlements(of: "bob").entitlement("no_ads")?.active == true)
                let history = try await merchant.explain("alice").history
                #expect(history.last?.source == "reconciliation" && history.last?.kind == "granted", "\(history)")

                let after = try await merchant.reconcile(repair: true)
                #expect(after.findings.isEmpty, "\(after.findings)")
                #expect(after.storeTransactions == 2)
            }
        }
    }

    /// Reconciliation refuses an unknown environment and a `since` the store's notification history does not reach
    /// (found by schemathesis: it answered 503 `store_unavailable`, relaying the store's 400), and needs the admin
    /// token.
    @Test func refusesBadRequests() async throws {
        try await MerchantShop.with(.sqlite) { shop in
            try await shop.withMerchant(receivesNotifications: false) { merchant in
                let wrong = try await merchant.request(
                    .POST, MerchantPaths.adminReconcile, json: ["environment": "Staging"])
                expectRefused(wrong, 400, "invalid_environment", field: "environment")
                for since in ["2000-01-01T00:00:00Z", "2999-01-01T00:00:00Z"] {
                    let unreachable = try await merchant.request(
                        .POST, MerchantPaths.adminReconcile, json: ["environment": "Sandbox", "since": since])
                    expectRefused(unreachable, 400, "invalid_since", field: "since")
                }
                let anonymous = try await merchant.request(
                    .POST, MerchantPaths.adminReconcile, json: ["environment": "Sandbox"], token: "not-the-admin-token")
                expectRefused(anonymous, 401, "invalid_admin_token", field: "Authorization")
            }
        }
    }
}
