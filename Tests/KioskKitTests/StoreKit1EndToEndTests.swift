import Foundation
import KioskProtocol
import KioskSigning
import KioskTesting
import Testing

@testable import KioskKit

/// KioskKit's StoreKit 1 face against a real store on loopback: the seeds' flows, end to end.
@Suite struct StoreKit1EndToEndTests {
    /// A products request returns the products on sale with exact prices and lists every other identifier as
    /// invalid; a signed-out device's request fails with clientInvalid.
    @Test(arguments: TestDatabaseEngine.available)
    func productsRequest(engine: TestDatabaseEngine) async throws {
        try await ShopStore.with(engine) { shop in
            let device = try await shop.signedInDevice()
            let delegate = RecordingProductsDelegate()
            let request = SKProductsRequest(
                productIdentifiers: [ShopStore.coins, "com.example.shop.unknown"], client: device)
            request.delegate = delegate
            request.start()
            var answers = delegate.response.stream.makeAsyncIterator()
            let response = try #require(try await answers.next()?.get())
            #expect(response.products.map(\.productIdentifier) == [ShopStore.coins])
            #expect(response.invalidProductIdentifiers == ["com.example.shop.unknown"])
            let coins = try #require(response.products.first)
            #expect(coins.price == Decimal(string: "0.99") && coins.localizedPrice == "$0.99")
            #expect(coins.localizedTitle == "Coins" && coins.priceLocale.identifier.hasPrefix("en_US"))

            try await device.signOut()
            let signedOut = SKProductsRequest(productIdentifiers: [ShopStore.coins], client: device)
            signedOut.delegate = delegate
            signedOut.start()
            guard case .failure(let error) = await answers.next() else {
                Issue.record("a signed-out request succeeded")
                return await device.close()
            }
            #expect(error.code == .clientInvalid)
            await device.close()
        }
    }

    /// Purchase → purchasing, purchased (with identifier, date, receipt, signed transaction) → deliver → finish:
    /// the store holds one finished transaction, charged once for the quantity bought.
    @Test(arguments: TestDatabaseEngine.available)
    func purchaseThenFinish(engine: TestDatabaseEngine) async throws {
        try await ShopStore.with(engine) { shop in
            let device = try await shop.signedInDevice()
            let observer = RecordingObserver()
            device.paymentQueue.add(observer)
            let payment = SKMutablePayment()
            payment.productIdentifier = ShopStore.coins
            payment.quantity = 3
            payment.applicationUsername = "user-1-hash"
            device.paymentQueue.add(payment)
            await observer.expectNext(.updated([.init(productId: ShopStore.coins, state: .purchasing)]))
            await observer.expectNext(.updated([.init(productId: ShopStore.coins, state: .purchased)]))
            let transaction = try #require(observer.delivered.withLock { $0.last })
            #expect(transaction.transactionIdentifier != nil && transaction.transactionDate != nil)
            #expect(transaction.signedTransaction?.isEmpty == false)
            #expect(transaction.payment.quantity == 3 && transaction.payment.applicationUsername == "user-1-hash")
            device.paymentQueue.finishTransaction(transaction)
            await observer.expectNext(.removed([.init(productId: ShopStore.coins, state: .purchased)]))
            try await shop.expectAllFinished(count: 1)
            #expect(try await shop.transactions().first?.quantity == 3)
            #expect(device.paymentQueue.transactions.isEmpty)
            await device.close()
        }
    }

    /// `AppStore.sync` (a receipt refresh) writes the app receipt to `appStoreReceiptURL`: PKCS #7 that verifies
    /// against the exported root, made for this device, listing the purchase; the transaction's iOS 6-style
    /// receipt verifies too and names the same transaction.
    @Test(arguments: TestDatabaseEngine.available)
    func receiptsAfterAPurchase(engine: TestDatabaseEngine) async throws {
        try await ShopStore.with(engine) { shop in
            let deviceId = UUID()
            let device = try shop.device(deviceId: deviceId)
            try await device.signIn(email: ShopStore.tester, password: ShopStore.password)
            let observer = RecordingObserver()
            device.paymentQueue.add(observer)
            let payment = SKMutablePayment()
            payment.productIdentifier = ShopStore.removeAds
            device.paymentQueue.add(payment)
            await observer.expectNext(.updated([.init(productId: ShopStore.removeAds, state: .purchasing)]))
            await observer.expectNext(.updated([.init(productId: ShopStore.removeAds, state: .purchased)]))
            let transaction = try #require(observer.delivered.withLock { $0.last })

            let legacy = try #require(transaction.transactionReceipt)
            let legacyResult = await TransactionReceiptVerifier(rootCertificates: [shop.root])
                .verify(legacy.base64EncodedString())
            #expect(legacyResult.receipt?.transactionId == transaction.transactionIdentifier, "\(legacyResult)")

            try await AppStore.sync(client: device)
            let der = try Data(contentsOf: device.appStoreReceiptURL)
            let result = await AppReceiptVerifier(rootCertificates: [shop.root]).verify(Array(der))
            let receipt = try #require(result.receipt, "\(result)")
            #expect(receipt.bundleId == ShopStore.bundleId && receipt.hashMatches(deviceId: deviceId))
            #expect(receipt.inApp.map(\.transactionId) == [transaction.transactionIdentifier])
            await device.close()
        }
    }

    /// A device reopened on the state of one that received a purchase but never finished it shows the transaction
    /// again, once, and finishing it then charges nothing more. (`CrashTests` kills a real app process at this step.)
    @Test(arguments: TestDatabaseEngine.available)
    func reopenedBeforeTheFinishShowsTheTransactionAgain(engine: TestDatabaseEngine) async throws {
        try await ShopStore.with(engine) { shop in
            let directory = Fixtures.temporaryDirectory()
            let first = try await shop.signedInDevice(directory: directory)
            let observer = RecordingObserver()
            first.paymentQueue.add(observer)
            first.paymentQueue.add(SKPayment(productIdentifier: ShopStore.coins))
            _ = await observer.next()
            await observer.expectNext(.updated([.init(productId: ShopStore.coins, state: .purchased)]))
            let charged = observer.delivered.withLock { $0.last?.transactionIdentifier }
            await first.close()  // no finish: what a relaunch finds

            let relaunched = try shop.device(directory: directory)
            #expect(relaunched.isSignedIn)
            let again = RecordingObserver()
            relaunched.paymentQueue.add(again)
            await again.expectNext(.updated([.init(productId: ShopStore.coins, state: .purchased)]))
            let transaction = try #require(again.delivered.withLock { $0.first })
            #expect(transaction.transactionIdentifier == charged)
            relaunched.paymentQueue.finishTransaction(transaction)
            try await shop.expectAllFinished(count: 1)
            #expect(again.events.count == 2, "delivered once though both the stored queue and /queue hold it")
            await relaunched.close()
        }
    }

    /// A device reopened on the state of one whose payment the store charged without the device hearing the answer:
    /// the payment's key was stored first, so the device re-sends it, gets the same transaction, and the store
    /// charged once. (`CrashTests` kills a real app process at this step.)
    @Test(arguments: TestDatabaseEngine.available)
    func reopenedBeforeTheAnswerChargesOnce(engine: TestDatabaseEngine) async throws {
        try await ShopStore.with(engine) { shop in
            let directory = Fixtures.temporaryDirectory()
            let first = try await shop.signedInDevice(directory: directory)
            let session = try #require(first.paymentQueue.locked.withLock { $0.device.session })
            // What the first device managed: the payment stored, then sent and charged by the store, unanswered.
            let payment = PaymentRequest(productId: ShopStore.coins, quantity: 2, idempotencyKey: "tap-before-crash")
            first.paymentQueue.enqueue(payment)
            try await first.paymentQueue.stateFile.flush()
            let charged = try await shop.store.request(
                .POST, "/sandbox/storekit/v1/payments", body: try JSONEncoder().encode(payment),
                token: .some(session.token), headers: ["Content-Type": "application/json"])
            #expect(charged.status == 200, "\(charged.text)")
            await first.close()

            let relaunched = try shop.device(directory: directory)
            #expect(relaunched.paymentQueue.transactions.map(\.transactionState) == [.purchasing])
            let observer = RecordingObserver()
            relaunched.paymentQueue.add(observer)
            await observer.expectNext(.updated([.init(productId: ShopStore.coins, state: .purchasing)]))
            await observer.expectNext(.updated([.init(productId: ShopStore.coins, state: .purchased)]))
            let transaction = try #require(observer.delivered.withLock { $0.last })
            #expect(transaction === observer.delivered.withLock { $0.first }, "the purchasing transaction completed")
            #expect(transaction.payment.quantity == 2)
            relaunched.paymentQueue.finishTransaction(transaction)
            try await shop.expectAllFinished(count: 1)
            await relaunched.close()
        }
    }

    /// A second device of the same account restores remove-ads (never the consumable coins) as a new `restored`
    /// transaction whose original is the first purchase, then hears that the restore finished.
    @Test(arguments: TestDatabaseEngine.available)
    func restoreOnASecondDevice(engine: TestDatabaseEngine) async throws {
        try await ShopStore.with(engine) { shop in
            let phone = try await shop.signedInDevice()
            let observer = RecordingObserver()
            phone.paymentQueue.add(observer)
            for productId in [ShopStore.removeAds, ShopStore.coins] {
                phone.paymentQueue.add(SKPayment(productIdentifier: productId))
                _ = await observer.next()
                _ = await observer.next()
                phone.paymentQueue.finishTransaction(try #require(observer.delivered.withLock { $0.last }))
                _ = await observer.next()
            }
            let bought = try #require(observer.delivered.withLock { $0.first?.transactionIdentifier })
            try await shop.expectAllFinished(count: 2)

            let tablet = try await shop.signedInDevice()
            let restoring = RecordingObserver()
            tablet.paymentQueue.add(restoring)
            tablet.paymentQueue.restoreCompletedTransactions()
            await restoring.expectNext(.updated([.init(productId: ShopStore.removeAds, state: .restored)]))
            await restoring.expectNext(.restoreFinished)
            let restored = try #require(restoring.delivered.withLock { $0.first })
            #expect(restored.original?.transactionIdentifier == bought)
            #expect(restored.transactionIdentifier != bought)
            tablet.paymentQueue.finishTransaction(restored)
            await restoring.expectNext(.removed([.init(productId: ShopStore.removeAds, state: .restored)]))
            await phone.close()
            await tablet.close()
        }
    }

    /// Ask to Buy: both payments show `deferred`; the parent's approval turns the same transaction object
    /// `purchased`, the decline turns the other one `failed` with its error.
    @Test(arguments: TestDatabaseEngine.available)
    func askToBuyApproveAndDecline(engine: TestDatabaseEngine) async throws {
        try await ShopStore.with(engine, testerSettings: ["askToBuy": true]) { shop in
            let device = try await shop.signedInDevice()
            let observer = RecordingObserver()
            device.paymentQueue.add(observer)
            for productId in [ShopStore.coins, ShopStore.removeAds] {
                device.paymentQueue.add(SKPayment(productIdentifier: productId))
                await observer.expectNext(.updated([.init(productId: productId, state: .purchasing)]))
                await observer.expectNext(.updated([.init(productId: productId, state: .deferred)]))
            }
            let (coins, removeAds) = observer.delivered.withLock { ($0[0], $0[2]) }
            device.paymentQueue.finishTransaction(coins)  // ignored: a deferred transaction is not finishable
            let waiting = try await shop.deferredPayments()
            let approve = try #require(waiting.first { $0.productId == ShopStore.coins }?.paymentId)
            let decline = try #require(waiting.first { $0.productId == ShopStore.removeAds }?.paymentId)

            try await shop.decide(approve, approve: true)
            await observer.expectNext(.updated([.init(productId: ShopStore.coins, state: .purchased)]))
            #expect(observer.delivered.withLock { $0.last } === coins)
            try await shop.decide(decline, approve: false)
            await observer.expectNext(.updated([.init(productId: ShopStore.removeAds, state: .failed)]))
            #expect(observer.delivered.withLock { $0.last } === removeAds)
            #expect(removeAds.error is SKError)
            device.paymentQueue.finishTransaction(coins)
            device.paymentQueue.finishTransaction(removeAds)
            _ = await observer.next()
            _ = await observer.next()
            try await shop.expectAllFinished(count: 1)
            #expect(device.paymentQueue.transactions.isEmpty)
            await device.close()
        }
    }

    /// A promoted purchase asks the observer; accepted, it is bought at once and charged once.
    @Test(arguments: TestDatabaseEngine.available)
    func promotedPurchaseAccepted(engine: TestDatabaseEngine) async throws {
        try await ShopStore.with(engine) { shop in
            let device = try await shop.signedInDevice()
            let observer = RecordingObserver(addStorePayments: true)
            device.paymentQueue.add(observer)
            try await shop.purchaseOutsideTheApp(ShopStore.removeAds, promoted: true)
            await observer.expectNext(.shouldAddStorePayment(productId: ShopStore.removeAds, quantity: 1))
            await observer.expectNext(.updated([.init(productId: ShopStore.removeAds, state: .purchasing)]))
            await observer.expectNext(.updated([.init(productId: ShopStore.removeAds, state: .purchased)]))
            device.paymentQueue.finishTransaction(try #require(observer.delivered.withLock { $0.last }))
            try await shop.expectAllFinished(count: 1)
            await device.close()
        }
    }

    /// A promoted purchase the app postpones is not bought (the device finishes the promoted entry, queueing
    /// nothing); the app adds the kept payment later (twice, by mistake) and it is charged once. The promoted entry
    /// does not come back at the next launch.
    @Test(arguments: TestDatabaseEngine.available)
    func promotedPurchasePostponed(engine: TestDatabaseEngine) async throws {
        try await ShopStore.with(engine) { shop in
            let directory = Fixtures.temporaryDirectory()
            let device = try await shop.signedInDevice(directory: directory)
            let observer = RecordingObserver(addStorePayments: false)
            device.paymentQueue.add(observer)
            try await shop.purchaseOutsideTheApp(ShopStore.coins, promoted: true)
            await observer.expectNext(.shouldAddStorePayment(productId: ShopStore.coins, quantity: 1))
            try await device.expectPromotionsFinished()
            #expect(device.paymentQueue.transactions.isEmpty, "a postponed payment is not queued")
            #expect(try await shop.transactions().isEmpty)
            let kept = try #require(observer.postponed.withLock { $0.first })
            device.paymentQueue.add(kept)
            device.paymentQueue.add(kept)
            await observer.expectNext(.updated([.init(productId: ShopStore.coins, state: .purchasing)]))
            await observer.expectNext(.updated([.init(productId: ShopStore.coins, state: .purchased)]))
            device.paymentQueue.finishTransaction(try #require(observer.delivered.withLock { $0.last }))
            try await shop.expectAllFinished(count: 1)
            await device.close()

            let relaunched = try shop.device(directory: directory)
            let later = RecordingObserver(addStorePayments: false)
            relaunched.paymentQueue.add(later)
            // After a sync with the store, a promoted entry still unfinished there would be held, or asked about.
            try await AppStore.sync(client: relaunched)
            #expect(relaunched.paymentQueue.locked.withLock { $0.device.promotions.isEmpty })
            #expect(later.events.isEmpty, "\(later.events)")
            await relaunched.close()
        }
    }
}
