import Foundation
import KioskProtocol
import Testing

@testable import KioskKit

/// The device queue's pure transitions, without I/O.
@Suite struct DeviceStateTests {
    /// A stored payment is pending until the store's entry for its key arrives; the same key is never queued twice.
    @Test func paymentAnsweredByKey() {
        var state = DeviceState()
        let id = UUID()
        #expect(state.addPayment(Fixtures.payment(key: "k1"), id: id, storefrontId: nil).count == 1)
        #expect(state.addPayment(Fixtures.payment(key: "k1"), id: UUID(), storefrontId: nil).isEmpty)
        #expect(state.pendingPayments.map(\.payment.idempotencyKey) == ["k1"])
        let changes = state.apply(Fixtures.entry(5, .purchased, key: "k1"))
        guard case .updated(let record) = changes.first else { Issue.record("no update"); return }
        #expect(record.id == id && record.entry?.sequence == 5)
        #expect(state.pendingPayments.isEmpty)
        #expect(state.apply(Fixtures.entry(5, .purchased, key: "k1")).isEmpty, "the same entry twice is one change")
    }

    /// Ask to Buy: the deferred entry and the later outcome of the same payment update one transaction.
    @Test func deferredThenApproved() {
        var state = DeviceState()
        let paymentId = UUID()
        _ = state.addPayment(Fixtures.payment(key: "k"), id: UUID(), storefrontId: nil)
        _ = state.apply(Fixtures.entry(3, .deferred, key: "k", paymentId: paymentId, finished: true))
        #expect(state.transactions[0].entry?.state == .deferred, "the store marks deferred entries finished")
        #expect(state.finish(id: state.transactions[0].id).isEmpty, "a deferred transaction cannot be finished")
        _ = state.apply(Fixtures.entry(9, .purchased, key: "k", paymentId: paymentId))
        #expect(state.transactions.count == 1)
        #expect(state.transactions[0].entry?.state == .purchased)
        #expect(
            state.apply(Fixtures.entry(3, .deferred, key: "k", paymentId: paymentId)).isEmpty, "older entry ignored")
    }

    /// Finishing moves the sequence to pending finishes; once acknowledged, a late copy is not shown again.
    @Test func finishAndAcknowledge() {
        var state = DeviceState()
        _ = state.apply(Fixtures.entry(4, .purchased, key: "other-device"))
        let id = state.transactions[0].id
        #expect(state.finish(id: id).count == 1)
        #expect(state.pendingFinishes == [4])
        #expect(state.apply(Fixtures.entry(4, .purchased)).isEmpty)
        state.acknowledgeFinish(sequence: 4)
        #expect(state.pendingFinishes.isEmpty && state.recentlyFinished == [4])
        #expect(state.apply(Fixtures.entry(4, .purchased)).isEmpty)
    }

    /// A revocation read from the updates stream is told once, though the background sync and `AppStore.sync` may
    /// both read it; the cursor moves past every entry read.
    @Test func revocationToldOnce() {
        var state = DeviceState()
        _ = state.reconcile(with: QueueSnapshot(entries: [], cursor: 3))
        let revoked = Fixtures.entry(7, .revoked, finished: true)
        #expect(state.applyUpdate(revoked, settledThrough: 3) == [.revoked(revoked)])
        #expect(state.cursor == 7)
        #expect(state.applyUpdate(revoked, settledThrough: 3).isEmpty, "the second reader's copy")
        #expect(state.applyUpdate(Fixtures.entry(5, .revoked, finished: true), settledThrough: 3).isEmpty)
        #expect(state.cursor == 7, "an older entry does not move the cursor back")
    }

    /// A snapshot drops transactions another device finished, keeps deferred and unsent ones, and a replay of a
    /// settled entry older than the snapshot is ignored.
    @Test func reconcile() {
        var state = DeviceState()
        _ = state.apply(Fixtures.entry(1, .purchased))
        _ = state.apply(Fixtures.entry(2, .deferred, paymentId: UUID()))
        _ = state.addPayment(Fixtures.payment(key: "unsent"), id: UUID(), storefrontId: nil)
        let changes = state.reconcile(with: QueueSnapshot(entries: [Fixtures.entry(6, .restored)], cursor: 8))
        #expect(changes.count == 2)
        #expect(state.transactions.compactMap(\.entry?.sequence) == [2, 6])
        #expect(state.pendingPayments.count == 1)
        #expect(state.cursor == 8)
        #expect(state.apply(Fixtures.entry(7, .purchased), settledThrough: 8).isEmpty)
        #expect(state.apply(Fixtures.entry(9, .purchased), settledThrough: 8).count == 1)
    }

    /// Promoted entries wait apart from transactions until answered, then their finish is pending.
    @Test func promotions() {
        var state = DeviceState()
        #expect(state.apply(Fixtures.entry(3, .promoted)) == [.promoted(Fixtures.entry(3, .promoted))])
        #expect(state.apply(Fixtures.entry(3, .promoted)).isEmpty)
        #expect(state.transactions.isEmpty)
        state.finishPromotion(sequence: 3)
        #expect(state.promotions.isEmpty && state.pendingFinishes == [3])
    }

    /// A payment refused without an entry becomes a failed transaction the app finishes locally.
    @Test func refusedPayment() {
        var state = DeviceState()
        _ = state.addPayment(Fixtures.payment(key: "k", quantity: 99), id: UUID(), storefrontId: nil)
        _ = state.failPayment(
            idempotencyKey: "k", error: StoreKitErrorInfo(skErrorCode: 3, code: "quantity_out_of_range", message: "m"))
        #expect(state.pendingPayments.isEmpty)
        #expect(state.finish(id: state.transactions[0].id).count == 1)
        #expect(state.pendingFinishes.isEmpty)
    }

    /// Signing in to another account starts an empty queue; signing in again to the same one keeps it.
    @Test func accountSwitch() {
        var state = DeviceState()
        _ = state.signIn(Fixtures.session())
        _ = state.apply(Fixtures.entry(1, .purchased))
        state.session = nil
        #expect(state.signIn(Fixtures.session()).isEmpty)
        #expect(state.transactions.count == 1)
        #expect(state.signIn(Fixtures.session(account: UUID())).count == 1)
        #expect(state.transactions.isEmpty && state.cursor == nil)
    }
}
