import Foundation
import KioskCore
import KioskSigning
import KioskTestSupport
import KioskTesting
import Testing
import X509

/// The client protocol KioskKit speaks, driven over HTTP on both engines.
@Suite struct PurchaseProtocolTests {
    /// A sandbox tester signs in to the sandbox only and a customer account to production only; wrong
    /// passwords and unknown apps get their own errors.
    @Test(arguments: TestDatabase.available)
    func signInKeepsEnvironmentsApart(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.preparePurchaseCatalog()
            let account = try await store.request(
                .POST, "/admin/v1/accounts",
                json: ["email": "buyer@example.com", "password": TestStore.password, "storefront": "JPN"])
            #expect(account.status == 201, "\(account.text)")

            _ = try await store.signIn()
            _ = try await store.signIn("buyer@example.com", sandbox: false)
            for (email, sandbox) in [(TestStore.testerEmail, false), ("buyer@example.com", true)] {
                let refused = try await store.request(
                    .POST, TestStore.clientPath("/sessions", sandbox: sandbox),
                    json: [
                        "email": email, "password": TestStore.password, "bundleId": TestStore.bundleId,
                        "deviceId": UUID().uuidString,
                    ])
                #expect(refused.status == 403)
                #expect(refused.errorCode == "account_wrong_environment")
            }
            let wrongPassword = try await store.request(
                .POST, TestStore.clientPath("/sessions", sandbox: true),
                json: [
                    "email": TestStore.testerEmail, "password": "nope nope nope", "bundleId": TestStore.bundleId,
                    "deviceId": UUID().uuidString,
                ])
            #expect(wrongPassword.status == 401)
            #expect(wrongPassword.errorCode == "invalid_credentials")
            let unknownApp = try await store.request(
                .POST, TestStore.clientPath("/sessions", sandbox: true),
                json: [
                    "email": TestStore.testerEmail, "password": TestStore.password, "bundleId": "com.nope",
                    "deviceId": UUID().uuidString,
                ])
            #expect(unknownApp.status == 404)
            #expect(unknownApp.errorCode == "unknown_app")
            let noSession = try await store.client(.GET, "/queue", token: "forged")
            #expect(noSession.status == 401)
            #expect(noSession.errorCode == "session_invalid")
        }
    }

    /// Valid products come back localized with an exact price for the account's storefront; unknown
    /// and unavailable identifiers are invalid identifiers, not errors.
    @Test(arguments: TestDatabase.available)
    func productsRequestSplitsValidAndInvalid(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.preparePurchaseCatalog()
            _ = try await store.createProduct("com.example.bare", type: "non_consumable", fields: ["localizations": []])
            let token = try await store.signIn()
            let answer = try await store.client(
                .POST, "/products", token: token,
                json: ["identifiers": [TestStore.coins, "com.example.unknown", "com.example.bare", TestStore.coins]])
            #expect(answer.status == 200, "\(answer.text)")
            let products = try #require(answer.json["products"] as? [[String: Any]])
            #expect(products.count == 1)
            let coins = try #require(products.first)
            #expect(coins["productId"] as? String == TestStore.coins)
            #expect(coins["localizedTitle"] as? String == "Coins")
            let price = try #require(coins["price"] as? [String: Any])
            #expect(price["minorUnits"] as? Int == 99)
            #expect(price["decimal"] as? String == "0.99")
            #expect(price["currency"] as? String == "USD")
            #expect(price["locale"] as? String == "en_US@currency=USD")
            #expect(
                answer.json["invalidProductIdentifiers"] as? [String] == ["com.example.unknown", "com.example.bare"])
        }
    }

    /// Invariant 2: one idempotency key charges once however often it is sent; a new key charges again; every
    /// transaction's JWS verifies against the exported sandbox root and carries Apple's fields.
    @Test(arguments: TestDatabase.available)
    func idempotentPaymentsAndSignedTransactions(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.preparePurchaseCatalog()
            let token = try await store.signIn()
            let first = try await store.pay(TestStore.coins, token: token, key: "tap-1", quantity: 3)
            #expect(first.status == 200, "\(first.text)")
            #expect(first.json["state"] as? String == "purchased")
            let firstId = try #require(first.transactionId)
            let again = try await store.pay(TestStore.coins, token: token, key: "tap-1", quantity: 3)
            #expect(again.transactionId == firstId)
            let firstSequence = try #require(first.json["sequence"] as? Int)
            #expect(again.json["sequence"] as? Int == firstSequence)
            let second = try await store.pay(TestStore.coins, token: token, key: "tap-2")
            let secondId = try #require(second.transactionId)
            #expect(secondId != firstId)

            let listed = try await store.request(
                .GET, "/sandbox/test/v1/apps/\(TestStore.bundleId)/transactions?tester=\(TestStore.testerEmail)",
                token: .some(store.adminToken))
            let transactions = try #require(listed.json["transactions"] as? [[String: Any]])
            #expect(transactions.count == 2)
            #expect(transactions.first?["price"] as? Int == 297)

            let rootPEM = try await store.request(.GET, "/admin/v1/certificates/sandbox/root?format=pem").text
            let verifier = JWSVerifier(rootCertificates: [try Certificate(pemEncoded: rootPEM)])
            let signed = try #require((first.json["transaction"] as? [String: Any])?["signedTransaction"] as? String)
            guard case .verified(_, let payloadJSON) = await verifier.verify(signed) else {
                Issue.record("the signed transaction did not verify")
                return
            }
            let payload = try JSONDecoder().decode(JWSTransactionDecodedPayload.self, from: Data(payloadJSON))
            #expect(payload.transactionId == first.transactionId)
            #expect(payload.bundleId == TestStore.bundleId)
            #expect(payload.quantity == 3)
            #expect(payload.price == 2970)
            #expect(payload.currency == "USD")
            #expect(payload.environment == "Sandbox")
            #expect(payload.type == "Consumable")
            #expect(payload.storefront == "USA")
        }
    }

    /// The queue a device syncs at launch answers while a write transaction holds the store's writer (a purchase, a
    /// renewal batch): listing only reads, so on SQLite it runs beside the one writer instead of after it. A minute's
    /// guard fails the test instead of leaving it hanging.
    @Test(arguments: TestDatabase.available)
    func theQueueAnswersWhileAWriteTransactionIsOpen(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.preparePurchaseCatalog()
            let token = try await store.signIn()
            let bought = try await store.pay(TestStore.coins, token: token, key: "listed-1")
            #expect(bought.json["state"] as? String == "purchased", "\(bought.text)")
            let (held, heldSignal) = AsyncStream.makeStream(of: Void.self)
            let (release, releaseSignal) = AsyncStream.makeStream(of: Void.self)
            async let writer: Void = store.built.database.transaction { tx in
                try await tx.setSetting("probe", to: "held")
                heldSignal.yield()
                for await _ in release { break }
            }
            for await _ in held { break }
            let listed = try await withThrowingTaskGroup(of: Int?.self) { group in
                group.addTask {
                    let queue = try await store.client(.GET, "/queue", token: token)
                    return (queue.json["entries"] as? [[String: Any]])?.count
                }
                group.addTask {
                    try await Task.sleep(for: .seconds(60))
                    return nil
                }
                let first = try await group.next() ?? nil
                // Let the write commit either way, so a listing stuck behind it ends and the group can finish.
                releaseSignal.yield()
                group.cancelAll()
                return first
            }
            try await writer
            #expect(listed == 1, "the queue waited a minute for a write transaction held open, or listed another count")
        }
    }

    /// A purchase is answered from the rows it wrote, without reading them back: the answer must be what the database
    /// holds. A repeated key reads the same entry from the database, and the queue lists it; all three agree byte for
    /// byte, for a payment with every optional field and for one approved by a parent (Ask to Buy), but for the
    /// signature of the iOS 6-style receipt, which is signed for each answer once the payment committed.
    @Test(arguments: TestDatabase.available)
    func purchaseAnswersWhatTheDatabaseHolds(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.preparePurchaseCatalog()
            let token = try await store.signIn()
            let body: [String: Any] = [
                "productId": TestStore.coins, "quantity": 2, "idempotencyKey": "answer-1",
                "applicationUsername": "player \u{1F3AE} \"one\"", "appAccountToken": UUID().uuidString,
            ]
            let first = try await store.client(.POST, "/payments", token: token, json: body)
            #expect(first.status == 200, "\(first.text)")
            #expect(first.json["state"] as? String == "purchased")
            #expect((first.json["transaction"] as? [String: Any])?["transactionReceipt"] as? String != nil)
            let again = try await store.client(.POST, "/payments", token: token, json: body)
            let answered = try ReceiptText.unsigned(first.json)
            #expect(try ReceiptText.unsigned(again.json) == answered)
            let queue = try await store.client(.GET, "/queue", token: token)
            let listed = try #require((queue.json["entries"] as? [[String: Any]])?.first)
            #expect(try ReceiptText.unsigned(listed) == answered)
            let receipt = try #require((first.json["transaction"] as? [String: Any])?["transactionReceipt"] as? String)
            let verified = try await store.verifyReceipt(["receipt-data": receipt])
            #expect(verified.json["status"] as? Int == 0, "\(verified.text)")
        }
        try await withStore(database) { store in
            try await store.preparePurchaseCatalog(testerSettings: ["askToBuy": true])
            let token = try await store.signIn()
            let asked = try await store.pay(TestStore.coins, token: token)
            let paymentId = try #require(asked.json["paymentId"] as? String)
            let app = "/sandbox/test/v1/apps/\(TestStore.bundleId)"
            let approved = try await store.request(
                .POST, app + "/payments/\(paymentId)/approve", token: .some(store.adminToken))
            #expect(approved.json["state"] as? String == "purchased", "\(approved.text)")
            let twice = try await store.request(
                .POST, app + "/payments/\(paymentId)/approve", token: .some(store.adminToken))
            #expect(try ReceiptText.unsigned(twice.json) == ReceiptText.unsigned(approved.json))
        }
    }

    /// Bad payments are refused with the SKError code an app sees, and nothing is charged.
    @Test(arguments: TestDatabase.available)
    func badPaymentsNameTheirStoreKitError(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.preparePurchaseCatalog()
            let token = try await store.signIn()
            let tooMany = try await store.pay(TestStore.coins, token: token, quantity: 11)
            #expect(tooMany.status == 400)
            #expect(tooMany.errorCode == "invalid_quantity")
            #expect(tooMany.skErrorCode == 3)
            let twoUnlocks = try await store.pay(TestStore.removeAds, token: token, quantity: 2)
            #expect(twoUnlocks.status == 400)
            #expect(twoUnlocks.errorCode == "quantity_not_allowed")
            let unknown = try await store.pay("com.example.unknown", token: token)
            #expect(unknown.json["state"] as? String == "failed")
            #expect((unknown.json["error"] as? [String: Any])?["skErrorCode"] as? Int == 5)
            let unsigned = try await store.request(
                .POST, TestStore.clientPath("/payments", sandbox: true),
                json: ["productId": TestStore.coins, "quantity": 1, "idempotencyKey": "x"])
            #expect(unsigned.status == 401)
            #expect(unsigned.errorCode == "missing_session", "\(unsigned.text)")
            let misspelt = try await store.client(
                .POST, "/payments", token: token, json: ["productID": TestStore.coins, "idempotencyKey": "x"])
            #expect(misspelt.status == 400)
            #expect(misspelt.errorCode == "unknown_field")
        }
    }

    /// A non-consumable already owned is delivered again without a second charge.
    @Test(arguments: TestDatabase.available)
    func ownedNonConsumableIsNotChargedTwice(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.preparePurchaseCatalog()
            let token = try await store.signIn()
            let first = try await store.pay(TestStore.removeAds, token: token)
            let second = try await store.pay(TestStore.removeAds, token: token)
            #expect(second.json["state"] as? String == "purchased")
            let firstId = try #require(first.transactionId)
            #expect(second.transactionId == firstId)
            #expect((second.json["sequence"] as? Int ?? 0) > (first.json["sequence"] as? Int ?? 0))
            let listed = try await store.request(
                .GET, "/sandbox/test/v1/apps/\(TestStore.bundleId)/transactions?tester=\(TestStore.testerEmail)",
                token: .some(store.adminToken))
            #expect((listed.json["transactions"] as? [[String: Any]])?.count == 1)
        }
    }

    /// Invariant 1: a purchase stays in the queue until finished, on every device of the account; finishing is
    /// idempotent; another account cannot finish it.
    @Test(arguments: TestDatabase.available)
    func unfinishedUntilFinished(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.preparePurchaseCatalog()
            try await store.createTester("other@example.com")
            let token = try await store.signIn()
            let bought = try await store.pay(TestStore.coins, token: token)
            let sequence = try #require(bought.json["sequence"] as? Int)

            let otherDevice = try await store.signIn()
            let queue = try await store.client(.GET, "/queue", token: otherDevice)
            #expect((queue.json["entries"] as? [[String: Any]])?.map { $0["sequence"] as? Int } == [sequence])

            let stranger = try await store.signIn("other@example.com")
            let refused = try await store.client(.POST, "/queue/\(sequence)/finish", token: stranger)
            #expect(refused.status == 404)
            #expect(refused.errorCode == "unknown_queue_entry", "\(refused.text)")

            for _ in 0..<2 {
                let finished = try await store.client(.POST, "/queue/\(sequence)/finish", token: token)
                #expect(finished.status == 200)
                #expect(finished.json["finished"] as? Bool == true)
            }
            let empty = try await store.client(.GET, "/queue", token: otherDevice)
            #expect((empty.json["entries"] as? [[String: Any]])?.isEmpty == true)
        }
    }

    /// Invariant 1 across a store restart: a charged, unfinished purchase and the session survive the store
    /// stopping; the restarted store hands the purchase out again and the same idempotency key still charges once.
    @Test(arguments: TestDatabase.available)
    func unfinishedPurchaseSurvivesStoreRestart(database: TestDatabase) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kiosk-restart-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try await database.withFreshDatabase { url in
            let (token, transactionId) = try await withTestStore(databaseURL: url, dataDirectory: directory) { store in
                try await store.preparePurchaseCatalog()
                let token = try await store.signIn()
                let bought = try await store.pay(TestStore.coins, token: token, key: "tap-before-restart")
                return (token, try #require(bought.transactionId))
            }
            try await withTestStore(databaseURL: url, dataDirectory: directory) { store in
                let queue = try await store.client(.GET, "/queue", token: token)
                #expect(queue.status == 200, "\(queue.text)")
                let entries = try #require(queue.json["entries"] as? [[String: Any]])
                #expect(
                    entries.compactMap { ($0["transaction"] as? [String: Any])?["transactionId"] as? String } == [
                        transactionId
                    ])
                let retried = try await store.pay(TestStore.coins, token: token, key: "tap-before-restart")
                #expect(retried.transactionId == transactionId)
                let listed = try await store.request(
                    .GET, "/sandbox/test/v1/apps/\(TestStore.bundleId)/transactions?tester=\(TestStore.testerEmail)",
                    token: .some(store.adminToken))
                #expect((listed.json["transactions"] as? [[String: Any]])?.count == 1)
            }
        }
    }

    /// Concurrency: ten simultaneous requests with one idempotency key charge once, ten with their own keys charge
    /// ten times, and restores running beside them neither fail nor deadlock.
    @Test(arguments: TestDatabase.available)
    func concurrentPaymentsAndRestores(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.preparePurchaseCatalog()
            let token = try await store.signIn()
            _ = try await store.pay(TestStore.removeAds, token: token)
            let statuses = try await withThrowingTaskGroup(of: (String, Int, String?).self) { group in
                for index in 0..<10 {
                    group.addTask {
                        let answer = try await store.pay(TestStore.coins, token: token, key: "same-tap")
                        return ("same", answer.status, answer.transactionId)
                    }
                    group.addTask {
                        let answer = try await store.pay(TestStore.coins, token: token, key: "tap-\(index)")
                        return ("own", answer.status, answer.transactionId)
                    }
                }
                for _ in 0..<3 {
                    group.addTask {
                        let answer = try await store.client(.POST, "/restore", token: token, json: [:])
                        return ("restore", answer.status, nil)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.allSatisfy { $0.1 == 200 }, "\(statuses)")
            let same = statuses.filter { $0.0 == "same" }.compactMap(\.2)
            let own = statuses.filter { $0.0 == "own" }.compactMap(\.2)
            #expect(same.count == 10 && Set(same).count == 1, "\(statuses)")
            #expect(own.count == 10 && Set(own).count == 10, "\(statuses)")
            let listed = try await store.request(
                .GET, "/sandbox/test/v1/apps/\(TestStore.bundleId)/transactions?tester=\(TestStore.testerEmail)",
                token: .some(store.adminToken))
            #expect((listed.json["transactions"] as? [[String: Any]])?.count == 12)
        }
    }

    /// Ask to Buy: `deferred`, then the parent's approval charges (`purchased`) and a decline fails the payment.
    @Test(arguments: TestDatabase.available)
    func askToBuyApproveAndDecline(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.preparePurchaseCatalog(testerSettings: ["askToBuy": true])
            let token = try await store.signIn()
            let approvedLater = try await store.pay(TestStore.coins, token: token)
            let declinedLater = try await store.pay(TestStore.removeAds, token: token)
            for answer in [approvedLater, declinedLater] {
                #expect(answer.json["state"] as? String == "deferred")
                #expect(answer.json["transaction"] == nil)
            }
            let app = "/sandbox/test/v1/apps/\(TestStore.bundleId)"
            let waiting = try await store.request(
                .GET, app + "/payments?state=deferred", token: .some(store.adminToken))
            #expect((waiting.json["payments"] as? [[String: Any]])?.count == 2)

            let approve = try #require(approvedLater.json["paymentId"] as? String)
            let decline = try #require(declinedLater.json["paymentId"] as? String)
            let approved = try await store.request(
                .POST, app + "/payments/\(approve)/approve", token: .some(store.adminToken))
            #expect(approved.json["state"] as? String == "purchased", "\(approved.text)")
            let declined = try await store.request(
                .POST, app + "/payments/\(decline)/decline", token: .some(store.adminToken))
            #expect(declined.json["state"] as? String == "failed")
            let twice = try await store.request(
                .POST, app + "/payments/\(approve)/approve", token: .some(store.adminToken))
            #expect(twice.status == 200, "a retried approval answers the same")
            let approvedId = try #require(approved.transactionId)
            let approvedSequence = try #require(approved.json["sequence"] as? Int)
            #expect(twice.transactionId == approvedId)
            #expect(twice.json["sequence"] as? Int == approvedSequence)
            let reversed = try await store.request(
                .POST, app + "/payments/\(approve)/decline", token: .some(store.adminToken))
            #expect(reversed.status == 409)
            #expect(reversed.errorCode == "payment_not_waiting")

            let queue = try await store.client(.GET, "/queue", token: token)
            let states = (queue.json["entries"] as? [[String: Any]])?.compactMap { $0["state"] as? String }
            #expect(states == ["purchased", "failed"])
        }
    }

    /// Interrupted purchases fail first and complete once resolved; a declining card fails with its SKError code.
    @Test(arguments: TestDatabase.available)
    func interruptedAndDeclinedPayments(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.preparePurchaseCatalog(testerSettings: ["interruptPurchases": true])
            let token = try await store.signIn()
            let interrupted = try await store.pay(TestStore.coins, token: token)
            #expect(interrupted.json["state"] as? String == "failed")
            let paymentId = try #require(interrupted.json["paymentId"] as? String)
            let resolved = try await store.request(
                .POST, "/sandbox/test/v1/apps/\(TestStore.bundleId)/payments/\(paymentId)/resolve",
                token: .some(store.adminToken))
            #expect(resolved.json["state"] as? String == "purchased", "\(resolved.text)")
            #expect(resolved.json["paymentId"] as? String == paymentId)

            let changed = try await store.request(
                .PATCH, "/admin/v1/testers/\(TestStore.testerEmail)",
                json: ["interruptPurchases": false, "paymentOutcome": "decline"])
            #expect(changed.status == 200, "\(changed.text)")
            let declined = try await store.pay(TestStore.coins, token: token)
            #expect(declined.json["state"] as? String == "failed")
            #expect((declined.json["error"] as? [String: Any])?["skErrorCode"] as? Int == 4)
        }
    }

    /// A client request reads its account through the store's cache: a tester deleted after their session was used
    /// is refused at once, and one created again under the same email is a new account with no purchases.
    @Test(arguments: TestDatabase.available)
    func aDeletedTestersSessionIsRefusedAtOnce(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.preparePurchaseCatalog()
            let token = try await store.signIn()
            #expect(try await store.pay(TestStore.coins, token: token).json["state"] as? String == "purchased")
            #expect(try await store.client(.GET, "/queue", token: token).status == 200)
            let deleted = try await store.request(.DELETE, "/admin/v1/testers/\(TestStore.testerEmail)")
            #expect(deleted.status == 204, "\(deleted.text)")
            let refused = try await store.client(.GET, "/queue", token: token)
            #expect(refused.status == 401)
            #expect(refused.errorCode == "session_invalid")
            let again = try await store.request(
                .POST, "/admin/v1/testers", json: ["email": TestStore.testerEmail, "password": TestStore.password])
            #expect(again.status == 201, "\(again.text)")
            let fresh = try await store.signIn()
            let queue = try await store.client(.GET, "/queue", token: fresh)
            #expect((queue.json["entries"] as? [[String: Any]])?.isEmpty == true, "\(queue.text)")
        }
    }

    /// Restore brings back non-consumables as new `restored` transactions whose original is the first
    /// purchase, never consumables. A restored transaction carries the original's iOS 6-style receipt.
    @Test(arguments: TestDatabase.available)
    func restoreReturnsOnlyRestorablePurchases(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.preparePurchaseCatalog()
            let token = try await store.signIn()
            let unlock = try await store.pay(TestStore.removeAds, token: token)
            _ = try await store.pay(TestStore.coins, token: token)
            let secondDevice = try await store.signIn()
            let restored = try await store.client(.POST, "/restore", token: secondDevice, json: [:])
            #expect(restored.status == 200, "\(restored.text)")
            let entries = try #require(restored.json["entries"] as? [[String: Any]])
            #expect(entries.map { $0["productId"] as? String } == [TestStore.removeAds])
            #expect(entries.first?["state"] as? String == "restored")
            let transaction = try #require(entries.first?["transaction"] as? [String: Any])
            let unlockId = try #require(unlock.transactionId)
            #expect(transaction["originalTransactionId"] as? String == unlockId)
            let restoredId = try #require(transaction["transactionId"] as? String)
            #expect(restoredId != unlockId)
            let restoredReceipt = try #require(transaction["transactionReceipt"] as? String)
            let unlockReceipt = try #require(
                (unlock.json["transaction"] as? [String: Any])?["transactionReceipt"] as? String)
            #expect(ReceiptText.purchaseInfo(of: restoredReceipt) != nil)
            #expect(ReceiptText.purchaseInfo(of: restoredReceipt) == ReceiptText.purchaseInfo(of: unlockReceipt))
        }
    }

    /// The test controls make the next calls of an API fail with a chosen SKError, then the API works again.
    /// Whether a failure is armed is read through the store's cache of rows that rarely change: one armed after
    /// calls found none must fail the next call at once, and the test controls' listing must count down as calls use
    /// it up (each use changes the cached rows).
    @Test(arguments: TestDatabase.available)
    func failuresArmedAfterCallsFoundNoneFailTheNextCalls(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.preparePurchaseCatalog()
            let token = try await store.signIn()
            let failures = "/sandbox/test/v1/apps/\(TestStore.bundleId)/failures"
            func products() async throws -> TestStore.Answer {
                try await store.client(.POST, "/products", token: token, json: ["identifiers": [TestStore.coins]])
            }
            func listed() async throws -> [[String: Any]] {
                try #require(
                    try await store.request(.GET, failures, token: .some(store.adminToken)).json["failures"]
                        as? [[String: Any]])
            }
            #expect(try await products().status == 200)
            #expect(try await store.pay(TestStore.coins, token: token).json["state"] as? String == "purchased")
            #expect(try await store.client(.POST, "/restore", token: token, json: [:]).status == 200)

            for (api, error) in [("products", "cloudServiceNetworkConnectionFailed"), ("purchase", "paymentCancelled")]
            {
                let armed = try await store.request(
                    .PUT, failures, json: ["api": api, "count": 2, "error": error], token: .some(store.adminToken))
                #expect(armed.status == 200, "\(armed.text)")
            }
            #expect(try await listed().map { $0["count"] as? Int } == [2, 2])
            #expect(try await products().skErrorCode == 7)
            #expect(try await listed().first { $0["api"] as? String == "products" }?["count"] as? Int == 1)
            #expect(try await products().skErrorCode == 7)
            #expect(try await products().status == 200)
            for _ in 0..<2 {
                let cancelled = try await store.pay(TestStore.coins, token: token)
                #expect((cancelled.json["error"] as? [String: Any])?["skErrorCode"] as? Int == 2, "\(cancelled.text)")
            }
            #expect(try await listed().isEmpty)
            #expect(try await store.pay(TestStore.coins, token: token).json["state"] as? String == "purchased")

            let restoreArmed = try await store.request(
                .PUT, failures, json: ["api": "restore", "count": 1, "error": "cloudServiceNetworkConnectionFailed"],
                token: .some(store.adminToken))
            #expect(restoreArmed.status == 200, "\(restoreArmed.text)")
            #expect(try await store.client(.POST, "/restore", token: token, json: [:]).skErrorCode == 7)
            #expect(try await store.client(.POST, "/restore", token: token, json: [:]).status == 200)
        }
    }

    @Test(arguments: TestDatabase.available)
    func armedFailuresFailTheNextCalls(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.preparePurchaseCatalog()
            let token = try await store.signIn()
            let armed = try await store.request(
                .PUT, "/sandbox/test/v1/apps/\(TestStore.bundleId)/failures",
                json: ["api": "products", "count": 1, "error": "cloudServiceNetworkConnectionFailed"],
                token: .some(store.adminToken))
            #expect(armed.status == 200, "\(armed.text)")
            let failed = try await store.client(
                .POST, "/products", token: token, json: ["identifiers": [TestStore.coins]])
            #expect(failed.status == 503)
            #expect(failed.skErrorCode == 7)
            let works = try await store.client(
                .POST, "/products", token: token, json: ["identifiers": [TestStore.coins]])
            #expect(works.status == 200)

            _ = try await store.request(
                .PUT, "/sandbox/test/v1/apps/\(TestStore.bundleId)/failures",
                json: ["api": "purchase", "count": 1, "error": "paymentCancelled"], token: .some(store.adminToken))
            let cancelled = try await store.pay(TestStore.coins, token: token)
            #expect(cancelled.json["state"] as? String == "failed")
            #expect((cancelled.json["error"] as? [String: Any])?["skErrorCode"] as? Int == 2)
            let bad = try await store.request(
                .PUT, "/sandbox/test/v1/apps/\(TestStore.bundleId)/failures",
                json: ["api": "purchase", "count": 1, "error": "nope"], token: .some(store.adminToken))
            #expect(bad.status == 400)
            #expect(bad.errorCode == "unknown_error")
        }
    }

    /// A purchase the test controls make goes the app's payment path: the same errors for the same mistakes, the
    /// same idempotency, and an owned non-consumable is delivered again, never charged twice.
    @Test(arguments: TestDatabase.available)
    func testPurchasesFollowTheAppsPaymentRules(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.preparePurchaseCatalog()
            let token = try await store.signIn()
            func buy(_ body: [String: Any]) async throws -> TestStore.Answer {
                var json = body
                json["tester"] = TestStore.testerEmail
                return try await store.request(
                    .POST, "/sandbox/test/v1/apps/\(TestStore.bundleId)/purchases", json: json,
                    token: .some(store.adminToken))
            }
            let twoUnlocks = try await buy(["productId": TestStore.removeAds, "quantity": 2])
            let appTwoUnlocks = try await store.pay(TestStore.removeAds, token: token, quantity: 2)
            #expect(twoUnlocks.status == 400 && appTwoUnlocks.status == 400, "\(twoUnlocks.text)")
            #expect(twoUnlocks.errorCode == "quantity_not_allowed" && appTwoUnlocks.errorCode == "quantity_not_allowed")
            let tooMany = try await buy(["productId": TestStore.coins, "quantity": 11])
            #expect(tooMany.status == 400 && tooMany.errorCode == "invalid_quantity", "\(tooMany.text)")
            let badKey = try await buy(["productId": TestStore.coins, "idempotencyKey": ""])
            #expect(badKey.status == 400 && badKey.errorCode == "invalid_idempotency_key", "\(badKey.text)")

            let first = try await buy(["productId": TestStore.removeAds, "idempotencyKey": "gift-1"])
            #expect(first.status == 201, "\(first.text)")
            let owned = try #require(first.transactionId)
            let repeated = try await buy(["productId": TestStore.removeAds, "idempotencyKey": "gift-1"])
            #expect(
                repeated.transactionId == owned && repeated.json["sequence"] as? Int == first.json["sequence"] as? Int)
            let again = try await buy(["productId": TestStore.removeAds])
            #expect(again.transactionId == owned, "an owned non-consumable is delivered again: \(again.text)")
            let fromApp = try await store.pay(TestStore.removeAds, token: token)
            #expect(fromApp.transactionId == owned)
            let transactions = try await store.request(
                .GET, "/sandbox/test/v1/apps/\(TestStore.bundleId)/transactions?tester=\(TestStore.testerEmail)",
                token: .some(store.adminToken))
            let unlocks = (transactions.json["transactions"] as? [[String: Any]] ?? []).filter {
                $0["productId"] as? String == TestStore.removeAds
            }
            #expect(unlocks.count == 1, "one charge for the unlock: \(transactions.text)")
        }
    }

    /// Live updates: a purchase made outside the app reaches an open stream; reconnecting after a cursor resumes;
    /// a syncing client learns where the stream caught up.
    @Test(arguments: TestDatabase.available)
    func updatesStreamDeliversAndResumes(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.preparePurchaseCatalog()
            let token = try await store.signIn()
            let first = try await store.pay(TestStore.coins, token: token)
            let firstSequence = try #require(first.json["sequence"] as? Int)
            // The purchase is made once the stream is open, so it can only arrive live.
            let events = try await store.readUpdates(token: token, after: Int64(firstSequence), count: 1) {
                let bought = try await store.request(
                    .POST, "/sandbox/test/v1/apps/\(TestStore.bundleId)/purchases",
                    json: ["tester": TestStore.testerEmail, "productId": TestStore.removeAds],
                    token: .some(store.adminToken))
                #expect(bought.status == 201, "\(bought.text)")
            }
            #expect(events.count == 1)
            #expect(events.first?["productId"] as? String == TestStore.removeAds)
            #expect(events.first?["state"] as? String == "purchased")

            let replay = try await store.readUpdates(token: token, after: 0, count: 2)
            #expect(replay.compactMap { $0["sequence"] as? Int }.first == firstSequence)

            // A client that syncs reads what there is and stops at `caught-up`, which names the last sequence.
            let synced = try await store.readUpdatesUntilCaughtUp(token: token, after: Int64(firstSequence))
            #expect(synced.entries.count == 1 && synced.entries.first?["productId"] as? String == TestStore.removeAds)
            #expect(synced.cursor == synced.entries.last?["sequence"] as? Int)
            let nothingNew = try await store.readUpdatesUntilCaughtUp(token: token, after: Int64(synced.cursor ?? 0))
            #expect(nothingNew.entries.isEmpty && nothingNew.cursor == synced.cursor)
        }
    }

    /// The app receipt is PKCS #7 signed by the environment's chain (OpenSSL agrees), made for the session's
    /// device (its hash checks), and lists non-consumables always but consumables only until finished.
    @Test(arguments: TestDatabase.available)
    func appReceiptListsPurchasesForThisDevice(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.preparePurchaseCatalog()
            let device = UUID()
            let token = try await store.signIn(deviceId: device)
            let unlock = try await store.pay(TestStore.removeAds, token: token)
            let coins = try await store.pay(TestStore.coins, token: token, quantity: 2)

            let rootPEM = try await store.request(.GET, "/admin/v1/certificates/sandbox/root?format=pem").text
            let verifier = AppReceiptVerifier(rootCertificates: [try Certificate(pemEncoded: rootPEM)])
            let answer = try await store.client(.GET, "/receipt", token: token)
            #expect(answer.status == 200, "\(answer.text)")
            let base64 = try #require(answer.json["receipt"] as? String)
            guard case .verified(let receipt) = await verifier.verify(base64: base64) else {
                Issue.record("the app receipt did not verify")
                return
            }
            #expect(receipt.bundleId == TestStore.bundleId)
            #expect(receipt.receiptType == .productionSandbox)
            #expect(receipt.hashMatches(deviceId: device))
            #expect(!receipt.hashMatches(deviceId: UUID()))
            #expect(Set(receipt.inApp.map(\.transactionId)) == [unlock.transactionId, coins.transactionId])
            #expect(receipt.inApp.first { $0.productId == TestStore.coins }?.quantity == 2)

            let der = try #require(Data(base64Encoded: base64))
            let file = store.dataDirectory.appendingPathComponent("receipt.der")
            let rootFile = store.dataDirectory.appendingPathComponent("root.pem")
            try der.write(to: file)
            try rootPEM.write(to: rootFile, atomically: true, encoding: .ascii)
            if TestEnvironment.runs(.openssl) {
                let (status, output) = try await runProcess(
                    try TestEnvironment.require(.openssl),
                    [
                        "cms", "-verify", "-inform", "DER", "-in", file.path, "-CAfile", rootFile.path, "-purpose",
                        "any",
                        "-out", "/dev/null",
                    ])
                #expect(status == 0, "openssl cms -verify: \(output)")
            }

            let sequence = try #require(coins.json["sequence"] as? Int)
            _ = try await store.client(.POST, "/queue/\(sequence)/finish", token: token)
            let refreshed = try await store.client(.GET, "/receipt", token: token)
            guard case .verified(let later) = await verifier.verify(base64: refreshed.json["receipt"] as? String ?? "")
            else {
                Issue.record("the refreshed receipt did not verify")
                return
            }
            #expect(later.inApp.map(\.productId) == [TestStore.removeAds])
        }
    }
}

/// Apple's own `SignedDataVerifier` (PyPI app-store-server-library) on transactions the purchase flow signed.
@Suite(
    .enabled(
        if: TestEnvironment.runs(.python),
        "set KIOSK_TEST_PYTHON (.ci/run does) to a python with PyPI app-store-server-library"))
struct PurchaseAppleInteropTests {
    /// Apple's verifier accepts a purchase's JWS against the root `GET …/certificates/{environment}/root` exports,
    /// in production (customer account, approved product) and in the sandbox (tester).
    @Test(arguments: ["sandbox", "production"])
    func appleVerifiesPurchasedTransactions(environment: String) async throws {
        let sandbox = environment == "sandbox"
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kiosk-interop-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let (transactionId, appAppleId) = try await withStore(.sqlite) { store in
            try await store.preparePurchaseCatalog()
            let app = try await store.request(.GET, "/admin/v1/apps/\(TestStore.bundleId)")
            for action in ["submit", "approve"] {
                _ = try await store.request(
                    .POST, "/admin/v1/apps/\(TestStore.bundleId)/products/\(TestStore.removeAds)/review",
                    json: ["action": action])
            }
            _ = try await store.request(
                .POST, "/admin/v1/accounts", json: ["email": "buyer@example.com", "password": TestStore.password])
            let token = try await store.signIn(sandbox ? TestStore.testerEmail : "buyer@example.com", sandbox: sandbox)
            let bought = try await store.pay(TestStore.removeAds, token: token, sandbox: sandbox)
            let signed = try #require((bought.json["transaction"] as? [String: Any])?["signedTransaction"] as? String)
            try signed.write(
                to: directory.appendingPathComponent("transaction.jws"), atomically: true, encoding: .ascii)
            let root = try await store.request(.GET, "/admin/v1/certificates/\(environment)/root?format=der")
            try root.body.write(to: directory.appendingPathComponent("root.der"))
            return (try #require(bought.transactionId), try #require(app.json["appAppleId"] as? Int))
        }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Interop/verify_signed_data.py").path
        let (status, output) = try await runProcess(
            try TestEnvironment.require(.python),
            [
                script, "--root-der", directory.appendingPathComponent("root.der").path, "--environment",
                sandbox ? "Sandbox" : "Production", "--bundle-id", TestStore.bundleId, "--app-apple-id",
                String(appAppleId), "--kind", "transaction", "--jws-file",
                directory.appendingPathComponent("transaction.jws").path,
            ])
        #expect(status == 0, "\(output)")
        #expect(output.contains(#""transactionId": "\#(transactionId)""#), "\(output)")
        #expect(output.contains(#""type": "Non-Consumable""#), "\(output)")
    }
}
