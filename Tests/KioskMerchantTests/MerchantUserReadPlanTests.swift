import KioskSQL
import Logging
import Testing

@testable import KioskMerchant

/// What a delivery's answer reads of its user must not grow with the user's consumable grants.
@Suite struct MerchantUserReadPlanTests {
    // Proves the entitlement read searches the index of grants that unlock something, in the order it returns them,
    // and the balance sums read their index alone: before migration 5 both searched every grant of the user and
    // sorted them, which at 2,300 consumables of one user took 0.23 and 0.75 ms a delivery.
    @Test func aDeliverysUserReadsSearchTheirOwnIndexes() async throws {
        let database = try await DatabaseOpener.open(
            url: "sqlite::memory:", migrations: MerchantMigrations.all, logger: Logger(label: "merchant-plan-test"))
        let sqlite = try #require(database as? SQLiteDatabase)
        let plans = try await sqlite.queryPlans {
            try await database.withSession { session in
                let ledger = GrantLedger(session: session)
                _ = try await ledger.entitlementGrants(userId: "player")
                _ = try await ledger.balances(userId: "player")
            }
        }
        try await database.close()
        let grantReads = plans.filter { $0.key.contains("FROM grants") }
        #expect(grantReads.count == 2, "the statements traced: \(plans.keys.sorted())")
        for (sql, plan) in grantReads {
            let index = sql.contains("entitlement IS NOT NULL") ? "grants_user_entitlements" : "grants_user_balances"
            #expect(plan.contains { $0.contains("INDEX \(index) (user_id=?") }, "\(plan) for \(sql)")
            #expect(!plan.contains { $0.contains("TEMP B-TREE") || $0.hasPrefix("SCAN ") }, "\(plan) for \(sql)")
        }
    }
}
