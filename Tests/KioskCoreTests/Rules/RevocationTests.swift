import Foundation
import KioskCore
import Testing

/// The refund and revocation rules, without a store: what each action does to a transaction, what it may touch,
/// and when doing it again changes nothing.
@Suite struct RevocationTests {
    static let now = Date(timeIntervalSince1970: 1_795_000_000)

    static func transaction(_ type: ProductType = .consumable, price: Int = 299) -> StoreTransaction {
        StoreTransaction(
            id: 2_000_000_000_000_001, environment: .sandbox, appId: 1, accountId: UUID(), productId: "coins",
            productType: type, originalTransactionId: 2_000_000_000_000_001, purchaseDate: now - 3_600,
            originalPurchaseDate: now - 3_600, quantity: 1, priceMinorUnits: price, currency: "USD",
            storefront: "USA", storefrontId: 143_441, applicationUsername: nil, appAccountToken: nil,
            orderId: "MK5TTTVWJH", signedTransaction: "")
    }

    static func notification(_ type: NotificationType) -> ServerNotification {
        ServerNotification(
            uuid: UUID().uuidString.lowercased(), environment: .sandbox, appId: 1, notificationType: type,
            subtype: nil, transactionId: 2_000_000_000_000_001, originalTransactionId: nil, payload: "{}",
            testToken: nil, state: .delivered, nextAttemptAt: nil, attemptCount: 1, createdAt: now)
    }

    // Proves a refund takes the whole price, a prorated one its share rounded down, and a reversal gives all back.
    @Test func refundsProrateAndReverse() {
        var full = Self.transaction()
        #expect(Revocation.refund(reason: 1, percentage: nil).apply(to: &full, now: Self.now))
        #expect(full.refundedMinorUnits == 299 && full.revocationType == .refundFull && full.revocationReason == 1)
        var half = Self.transaction()
        #expect(Revocation.refund(reason: 0, percentage: 50).apply(to: &half, now: Self.now))
        #expect(half.refundedMinorUnits == 149 && half.revocationType == .refundProrated)
        #expect(half.revocationDate == Self.now)
        #expect(Revocation.reverseRefund.apply(to: &half, now: Self.now))
        #expect(half.revocationDate == nil && half.revocationType == nil && half.refundedMinorUnits == 0)
        var shared = Self.transaction(.nonConsumable)
        #expect(Revocation.revoke.apply(to: &shared, now: Self.now))
        #expect(shared.revocationType == .familyRevoke && shared.refundedMinorUnits == 0)
        let untouched = Self.transaction()
        var asked = untouched
        #expect(!Revocation.requestRefund(reason: "OTHER").apply(to: &asked, now: Self.now))
        #expect(!Revocation.declineRefund.apply(to: &asked, now: Self.now))
        #expect(asked == untouched, "a request or a declined refund changes no transaction")
    }

    // Proves what each action may not touch.
    @Test func whatIsRefused() throws {
        func code(_ action: Revocation, _ transaction: StoreTransaction) -> ErrorCode? {
            do {
                try action.checkAllowed(on: transaction)
                return nil
            } catch { return (error as? KioskError)?.code }
        }
        #expect(code(.reverseRefund, Self.transaction()) == .notRefunded)
        #expect(code(.revoke, Self.transaction(.consumable)) == .notShareable)
        #expect(code(.requestRefund(reason: "OTHER"), Self.transaction(.nonConsumable)) == .noConsumptionRequest)
        var refunded = Self.transaction()
        _ = Revocation.refund(reason: 0, percentage: nil).apply(to: &refunded, now: Self.now)
        #expect(code(.refund(reason: 0, percentage: nil), refunded) == .alreadyRevoked)
        #expect(code(.reverseRefund, refunded) == nil)
        #expect(code(.requestRefund(reason: "OTHER"), Self.transaction(.autoRenewable)) == nil)
    }

    // Proves a repeat is told by state and counts, never by time: a refund after a reversal is a new refund.
    @Test func repeatsAreToldByState() {
        var transaction = Self.transaction()
        let refund = Revocation.refund(reason: 0, percentage: nil)
        #expect(refund.earlierNotification(about: transaction, among: []) == nil)
        _ = refund.apply(to: &transaction, now: Self.now)
        let refunded = [Self.notification(.refund)]
        #expect(refund.earlierNotification(about: transaction, among: refunded) == refunded[0])
        _ = Revocation.reverseRefund.apply(to: &transaction, now: Self.now)
        let reversed = refunded + [Self.notification(.refundReversed)]
        #expect(Revocation.reverseRefund.earlierNotification(about: transaction, among: reversed) == reversed[1])
        #expect(refund.earlierNotification(about: transaction, among: reversed) == nil, "refunding again is new")
        let declined = [Self.notification(.refundDeclined)]
        #expect(Revocation.declineRefund.earlierNotification(about: Self.transaction(), among: declined) == declined[0])
        #expect(Set(Revocation.kinds.map(\.notificationType)).count == Revocation.kinds.count)
    }
}
