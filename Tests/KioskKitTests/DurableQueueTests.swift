import Foundation
import KioskProtocol
import Testing

@testable import KioskKit

/// The device queue on disk, with no store reachable: what one client leaves on disk is what the next one
/// starts from.
@Suite struct DurableQueueTests {
    /// A payment is on disk with its idempotency key before it is sent: a second client on the same directory,
    /// opened while the first is still open (nothing closed, as after a crash), sees the same payment, pending, with
    /// the same key and session. (`CrashTests` kills a real app process after the send.)
    @Test func pendingPaymentIsOnDiskBeforeItIsSent() async throws {
        let directory = Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try KioskStoreClient(configuration: Fixtures.offlineConfiguration(stateDirectory: directory))
        try await first.paymentQueue.signIn(Fixtures.session())
        let payment = SKMutablePayment()
        payment.productIdentifier = "com.example.coins"
        payment.quantity = 3
        payment.applicationUsername = "user-hash"
        first.paymentQueue.add(payment)
        let key = try #require(first.paymentQueue.transactions.first?.stored.payment.idempotencyKey)
        try await first.paymentQueue.stateFile.flush()

        let second = try KioskStoreClient(configuration: Fixtures.offlineConfiguration(stateDirectory: directory))
        #expect(second.isSignedIn && second.account?.id == Fixtures.accountId)
        let survivor = try #require(second.paymentQueue.transactions.first)
        #expect(survivor.transactionState == .purchasing)
        #expect(survivor.stored.payment.idempotencyKey == key)
        #expect(survivor.payment.quantity == 3 && survivor.payment.applicationUsername == "user-hash")
        #expect(second.paymentQueue.storefront?.countryCode == "USA")
        await first.close()
        await second.close()
    }

    /// Unfinished transactions stored by an earlier run reach the first observer, and every observer added later,
    /// each exactly once; a finish is stored until acknowledged, so the next run re-sends it and no longer shows
    /// the transaction.
    @Test func unfinishedTransactionsAndPendingFinishes() async throws {
        let directory = Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stateFile = try DeviceStateFile(directory: directory)
        var stored = DeviceState()
        _ = stored.signIn(Fixtures.session())
        _ = stored.apply(Fixtures.entry(11, .purchased, key: "k1"))
        _ = stored.apply(Fixtures.entry(12, .failed, key: "k2", product: "com.example.remove_ads"))
        stateFile.save(stored)
        try await stateFile.flush()

        let client = try KioskStoreClient(configuration: Fixtures.offlineConfiguration(stateDirectory: directory))
        let early = RecordingObserver()
        client.paymentQueue.add(early)
        let expected = RecordingObserver.Event.updated([
            .init(productId: "com.example.coins", state: .purchased),
            .init(productId: "com.example.remove_ads", state: .failed),
        ])
        await early.expectNext(expected)
        let late = RecordingObserver()
        client.paymentQueue.add(late)
        await late.expectNext(expected)
        client.paymentQueue.add(late)

        let purchased = try #require(client.paymentQueue.transactions.first)
        #expect(purchased.transactionIdentifier == "1011")
        #expect(purchased.transactionReceipt == Data("receipt".utf8))
        #expect((purchased.error as? SKError) == nil)
        let failed = client.paymentQueue.transactions[1]
        #expect((failed.error as? SKError)?.code == .paymentCancelled)
        client.paymentQueue.finishTransaction(purchased)
        let removed = RecordingObserver.Event.removed([.init(productId: "com.example.coins", state: .purchased)])
        await early.expectNext(removed)
        await late.expectNext(removed)
        await client.close()
        #expect(early.events.count == 2 && late.events.count == 2, "each change is delivered once per observer")

        let relaunched = try KioskStoreClient(configuration: Fixtures.offlineConfiguration(stateDirectory: directory))
        #expect(relaunched.paymentQueue.transactions.map(\.transactionState) == [.failed])
        #expect(relaunched.paymentQueue.locked.withLock { $0.device.pendingFinishes } == [11])
        await relaunched.close()
    }

    /// An unreadable state file is reported with what to do, not silently replaced.
    @Test func corruptStateIsReported() throws {
        let directory = Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data("{not json".utf8).write(to: directory.appendingPathComponent("device-state.json"))
        #expect {
            _ = try KioskStoreClient(configuration: Fixtures.offlineConfiguration(stateDirectory: directory))
        } throws: { error in
            (error as? KioskKitError)?.code == .stateDirectory
        }
    }

    /// Adding a payment while signed out fails it at once with clientInvalid; nothing stays pending.
    @Test func paymentWithoutSession() async throws {
        let directory = Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let client = try KioskStoreClient(configuration: Fixtures.offlineConfiguration(stateDirectory: directory))
        let observer = RecordingObserver()
        client.paymentQueue.add(observer)
        client.paymentQueue.add(SKMutablePayment())
        await observer.expectNext(.updated([.init(productId: "", state: .purchasing)]))
        await observer.expectNext(.updated([.init(productId: "", state: .failed)]))
        let failed = try #require(client.paymentQueue.transactions.first)
        #expect((failed.error as? SKError)?.code == .clientInvalid)
        client.paymentQueue.finishTransaction(failed)
        await observer.expectNext(.removed([.init(productId: "", state: .failed)]))
        #expect(client.paymentQueue.locked.withLock { $0.device.transactions.isEmpty })
        await client.close()
    }
}
