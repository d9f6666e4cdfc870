import Foundation
import KioskCore
import Testing

@testable import KioskMerchant

/// The order of a transaction's states for data without the store's revision (Apple's, receipts), where dates
/// alone would be wrong: the arrival-order tests cover Kiosk's revisions end to end.
@Suite struct TransactionStateOrderTests {
    static let purchase = Date(timeIntervalSince1970: 1_800_000_000)

    static func facts(
        revoked: Bool, signed: Date = purchase, revision: Int64? = nil, provenance: StateProvenance = .copy
    ) -> PurchaseFacts {
        PurchaseFacts(
            environment: .sandbox, bundleId: "com.example.shop", transactionId: "1", originalTransactionId: "1",
            productId: "com.example.shop.coins", quantity: 1, purchaseDate: purchase, expiresDate: nil,
            revocationDate: revoked ? signed : nil, revocationReason: revoked ? "other" : nil, appAccountToken: nil,
            signedDate: signed, revision: revision, provenance: provenance)
    }

    static func held(revoked: Bool, signed: Date = purchase, revision: Int64? = nil, reinstated: Bool = false)
        -> LedgerState
    {
        LedgerState(revision: revision, signedDate: signed, isRevoked: revoked, reinstated: reinstated)
    }

    @Test func aRefundWinsOverItsPurchaseWhateverTheDates() {
        for offset in [-60.0, 0, 60] {
            let refund = Self.facts(revoked: true, signed: Self.purchase.addingTimeInterval(offset))
            #expect(refund.supersedes(Self.held(revoked: false)), "refund signed \(offset) s from the purchase")
        }
    }

    @Test func anOlderCopyOfThePurchaseNeverUndoesARefund() {
        for offset in [-60.0, 0, 60] {
            let copy = Self.facts(revoked: false, signed: Self.purchase.addingTimeInterval(offset))
            #expect(!copy.supersedes(Self.held(revoked: true)), "copy signed \(offset) s from the refund")
        }
    }

    @Test func aReversalUndoesTheRefundItFollowsAndOnlyThat() {
        let refunded = Self.held(revoked: true)
        #expect(Self.facts(revoked: false, provenance: .reversal).supersedes(refunded), "same millisecond")
        #expect(!Self.facts(revoked: false, signed: Self.purchase - 1, provenance: .reversal).supersedes(refunded))
        #expect(Self.facts(revoked: false, signed: Self.purchase + 1, provenance: .present).supersedes(refunded))
        #expect(!Self.facts(revoked: false, provenance: .present).supersedes(refunded), "present, same millisecond")
        // Once reinstated, the original refund arriving late does not revoke again; a later refund does.
        let reinstated = Self.held(revoked: false, signed: Self.purchase + 10, reinstated: true)
        #expect(!Self.facts(revoked: true).supersedes(reinstated))
        #expect(Self.facts(revoked: true, signed: Self.purchase + 20).supersedes(reinstated))
    }

    @Test func revisionsDecideWhenBothSidesHaveOne() {
        #expect(Self.facts(revoked: false, revision: 3).supersedes(Self.held(revoked: true, revision: 2)))
        #expect(!Self.facts(revoked: true, revision: 1).supersedes(Self.held(revoked: false, revision: 2)))
        #expect(!Self.facts(revoked: true, revision: 2).supersedes(Self.held(revoked: true, revision: 2)))
    }

    @Test func statesThatAgreeGoByDate() {
        #expect(Self.facts(revoked: false, signed: Self.purchase + 1).supersedes(Self.held(revoked: false)))
        #expect(!Self.facts(revoked: false).supersedes(Self.held(revoked: false)), "the same state again")
    }

    @Test func aReplacedStateRemembersAReinstatement() {
        let reversal = Self.facts(revoked: false, signed: Self.purchase + 1, provenance: .reversal)
        #expect(reversal.replacing(Self.held(revoked: true)).reinstated)
        #expect(!Self.facts(revoked: false).replacing(nil).reinstated)
        #expect(!Self.facts(revoked: true, revision: 2).replacing(Self.held(revoked: false, revision: 1)).reinstated)
        #expect(Self.facts(revoked: true).replacing(Self.held(revoked: false, revision: 4)).revision == 4)
    }
}
