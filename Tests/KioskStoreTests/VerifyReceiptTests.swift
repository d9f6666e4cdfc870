import Foundation
import KioskCore
import KioskProtocol
import KioskTesting
import Testing

/// `verifyReceipt` as Apple defines it: every status code from the condition that produces it, both receipt
/// kinds, both environments, Apple's JSON types.
struct VerifyReceiptTests {
    /// A sandbox app receipt verifies in the sandbox with Apple's shape: numbers where Apple writes numbers,
    /// strings elsewhere, every date as a triple; the consumable is listed while unfinished.
    @Test(arguments: TestDatabase.available)
    func sandboxAppReceiptVerifies(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.preparePurchaseCatalog()
            let token = try await store.signIn()
            let ads = try await store.pay(TestStore.removeAds, token: token)
            let coins = try await store.pay(TestStore.coins, token: token, quantity: 3)
            let receipt = try await store.appReceipt(token: token)

            let answer = try await store.verifyReceipt(["receipt-data": receipt])
            #expect(answer.status == 200)
            #expect(answer.header("Content-Type") == "application/json")
            #expect(answer.json["status"] as? Int == 0, "\(answer.text)")
            #expect(answer.json["environment"] as? String == "Sandbox")
            let body = try #require(answer.json["receipt"] as? [String: Any])
            #expect(body["receipt_type"] as? String == "ProductionSandbox")
            #expect(body["bundle_id"] as? String == TestStore.bundleId)
            #expect(body["adam_id"] as? Int == 0)
            #expect(body["app_item_id"] as? Int == 0)
            #expect(body["download_id"] as? Int == 0)
            #expect(body["application_version"] as? String == "1.0")
            #expect(body["original_application_version"] as? String == "1.0")
            try expectDateTriple(body, "receipt_creation_date")
            try expectDateTriple(body, "request_date")
            try expectDateTriple(body, "original_purchase_date")

            let inApp = try #require(body["in_app"] as? [[String: Any]])
            let ids = Set(inApp.compactMap { $0["transaction_id"] as? String })
            let bought: Set = [try #require(ads.transactionId), try #require(coins.transactionId)]
            #expect(ids == bought)
            let coinEntry = try #require(inApp.first { $0["product_id"] as? String == TestStore.coins })
            #expect(coinEntry["quantity"] as? String == "3")
            #expect(coinEntry["is_trial_period"] as? String == "false")
            #expect(coinEntry["in_app_ownership_type"] as? String == "PURCHASED")
            #expect(coinEntry["original_transaction_id"] as? String == coins.transactionId)
            try expectDateTriple(coinEntry, "purchase_date")
            try expectDateTriple(coinEntry, "original_purchase_date")
            // No auto-renewable subscription: Apple sends none of these.
            #expect(answer.json["latest_receipt_info"] == nil)
            #expect(answer.json["pending_renewal_info"] == nil)
            #expect(answer.json["latest_receipt"] == nil)
        }
    }

    /// As Apple's verifyReceipt documentation says: production first, then the sandbox on 21007; the reverse
    /// answers 21008.
    @Test(arguments: TestDatabase.available)
    func environmentsNeverMix(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.preparePurchaseCatalog()
            try await store.approve(TestStore.removeAds)
            _ = try await store.request(
                .POST, "/admin/v1/accounts", json: ["email": "buyer@example.com", "password": TestStore.password])

            let testerToken = try await store.signIn()
            _ = try await store.pay(TestStore.removeAds, token: testerToken)
            let sandboxReceipt = try await store.appReceipt(token: testerToken)
            let customerToken = try await store.signIn("buyer@example.com", sandbox: false)
            let bought = try await store.pay(TestStore.removeAds, token: customerToken, sandbox: false)
            #expect(bought.json["state"] as? String == "purchased", "\(bought.text)")
            let productionReceipt = try await store.appReceipt(token: customerToken, sandbox: false)

            #expect(
                try await store.verifyReceipt(["receipt-data": sandboxReceipt], sandbox: false).json["status"] as? Int
                    == 21007)
            #expect(try await store.verifyReceipt(["receipt-data": productionReceipt]).json["status"] as? Int == 21008)
            let production = try await store.verifyReceipt(["receipt-data": productionReceipt], sandbox: false)
            #expect(production.json["status"] as? Int == 0, "\(production.text)")
            #expect(production.json["environment"] as? String == "Production")
            let receipt = try #require(production.json["receipt"] as? [String: Any])
            #expect(receipt["receipt_type"] as? String == "Production")
            let appAppleId = try #require(
                try await store.request(.GET, "/admin/v1/apps/\(TestStore.bundleId)").json["appAppleId"] as? Int)
            #expect(receipt["app_item_id"] as? Int == appAppleId)

            let transactionReceipt = try #require(
                (bought.json["transaction"] as? [String: Any])?["transactionReceipt"] as? String)
            #expect(try await store.verifyReceipt(["receipt-data": transactionReceipt]).json["status"] as? Int == 21008)
        }
    }

    /// 21000, 21002 and 21003 each from the input that produces it, always with HTTP 200 and a reason.
    @Test(arguments: TestDatabase.available)
    func badInputAnswersItsStatus(database: TestDatabase) async throws {
        try await withStore(database) { store in
            let receipt = try await store.removeAdsReceipt()

            let notJSON = try await store.request(.POST, "/sandbox/verifyReceipt", body: Data("receipt".utf8))
            #expect(notJSON.status == 200)
            #expect(notJSON.json["status"] as? Int == 21000)
            let get = try await store.request(.GET, "/sandbox/verifyReceipt")
            #expect(get.json["status"] as? Int == 21000)
            #expect((get.json["message"] as? String)?.contains("POST") == true)

            #expect(try await store.verifyReceipt(["password": "x"]).json["status"] as? Int == 21002)
            #expect(try await store.verifyReceipt(["receipt-data": 42]).json["status"] as? Int == 21002)
            #expect(try await store.verifyReceipt(["receipt-data": "%%%not base64%%%"]).json["status"] as? Int == 21002)
            let notAReceipt = Data("hello, world".utf8).base64EncodedString()
            #expect(try await store.verifyReceipt(["receipt-data": notAReceipt]).json["status"] as? Int == 21002)
            #expect(
                try await store.verifyReceipt(["receipt-data": receipt, "exclude-old-transactions": "maybe"])
                    .json["status"] as? Int == 21002)

            // A flipped bit in the signature: still a receipt, no longer authentic.
            var bytes = try #require(Data(base64Encoded: receipt))
            bytes[bytes.count - 2] ^= 0x01
            let forged = try await store.verifyReceipt(["receipt-data": bytes.base64EncodedString()])
            #expect(forged.json["status"] as? Int == 21003, "\(forged.text)")
        }
    }

    /// 21004: a wrong shared secret is refused whenever given; a receipt with an auto-renewable subscription
    /// needs the right one, and then answers `latest_receipt_info`, `pending_renewal_info` and a `latest_receipt`
    /// that verifies too.
    @Test(arguments: TestDatabase.available)
    func sharedSecretGuardsSubscriptions(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.prepareSubscriptionCatalog()
            let token = try await store.signIn()
            _ = try await store.pay(TestStore.removeAds, token: token)
            let plain = try await store.appReceipt(token: token)
            #expect(
                try await store.verifyReceipt(["receipt-data": plain, "password": "wrong"]).json["status"] as? Int
                    == 21004)
            #expect(try await store.verifyReceipt(["receipt-data": plain]).json["status"] as? Int == 0)

            let subscribed = try await store.pay(TestStore.monthly, token: token)
            #expect(subscribed.json["state"] as? String == "purchased", "\(subscribed.text)")
            let receipt = try await store.appReceipt(token: token)
            let missing = try await store.verifyReceipt(["receipt-data": receipt])
            #expect(missing.json["status"] as? Int == 21004)
            #expect((missing.json["message"] as? String)?.contains("shared-secret") == true)

            let secret = try #require(
                try await store.request(.POST, "/admin/v1/apps/\(TestStore.bundleId)/shared-secret").json[
                    "sharedSecret"]
                    as? String)
            #expect(
                try await store.verifyReceipt(["receipt-data": receipt, "password": "wrong"]).json["status"] as? Int
                    == 21004)
            let answer = try await store.verifyReceipt(["receipt-data": receipt, "password": secret])
            #expect(answer.json["status"] as? Int == 0, "\(answer.text)")
            let latest = try #require(answer.json["latest_receipt_info"] as? [[String: Any]])
            #expect(Set(latest.compactMap { $0["product_id"] as? String }) == [TestStore.removeAds, TestStore.monthly])
            let subscription = try #require(latest.first { $0["product_id"] as? String == TestStore.monthly })
            #expect(subscription["subscription_group_identifier"] as? String == "21000001")
            let subscribedId = try #require(subscribed.transactionId)
            #expect(subscription["transaction_id"] as? String == subscribedId)
            try expectDateTriple(subscription, "expires_date")
            #expect(subscription["is_in_intro_offer_period"] as? String == "false")
            let webOrderLineItemId = try #require(subscription["web_order_line_item_id"] as? String)
            #expect(Int64(webOrderLineItemId) != nil)
            let pending = try #require(answer.json["pending_renewal_info"] as? [[String: Any]])
            #expect(pending.count == 1)
            #expect(pending.first?["auto_renew_product_id"] as? String == TestStore.monthly)
            #expect(pending.first?["original_transaction_id"] as? String == subscribedId)
            #expect(pending.first?["auto_renew_status"] as? String == "1")
            let latestReceipt = try #require(answer.json["latest_receipt"] as? String)
            // The answer's bytes are those JSONEncoder writes for what they decode to.
            let decoded = try JSONDecoder().decode(VerifyReceiptResponse.self, from: answer.body)
            #expect(try ServerAPIJSON.encoder.encode(decoded) == answer.body)
            let again = try await store.verifyReceipt(
                ["receipt-data": latestReceipt, "password": secret, "exclude-old-transactions": true])
            #expect(again.json["status"] as? Int == 0, "\(again.text)")
        }
    }

    /// iOS 6-style transaction receipts verify in the old shape; sent to production they answer 21007.
    @Test(arguments: TestDatabase.available)
    func transactionReceiptsAnswerTheOldShape(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.preparePurchaseCatalog()
            let token = try await store.signIn()
            let bought = try await store.pay(TestStore.removeAds, token: token)
            let transactionReceipt = try #require(
                (bought.json["transaction"] as? [String: Any])?["transactionReceipt"] as? String)

            let answer = try await store.verifyReceipt(["receipt-data": transactionReceipt])
            #expect(answer.json["status"] as? Int == 0, "\(answer.text)")
            let receipt = try #require(answer.json["receipt"] as? [String: Any])
            #expect(receipt["transaction_id"] as? String == bought.transactionId)
            #expect(receipt["original_transaction_id"] as? String == bought.transactionId)
            #expect(receipt["product_id"] as? String == TestStore.removeAds)
            #expect(receipt["bid"] as? String == TestStore.bundleId)
            #expect(receipt["bvrs"] as? String == "1.0")
            #expect(receipt["quantity"] as? String == "1")
            try expectDateTriple(receipt, "purchase_date")
            #expect(answer.json["latest_receipt_info"] == nil)

            let production = try await store.verifyReceipt(["receipt-data": transactionReceipt], sandbox: false)
            #expect(production.json["status"] as? Int == 21007)
        }
    }

    /// A renewal is stored without an iOS 6-style receipt (signing one took a sixth of a renewal's CPU): one is
    /// signed when asked for, and says the same as a stored one would: through the updates stream a device reads, and
    /// as `verifyReceipt`'s `latest_receipt`, each verifies as the renewal.
    @Test(arguments: TestDatabase.available)
    func aRenewalsReceiptIsSignedWhenAskedFor(database: TestDatabase) async throws {
        let clock = ManualClock(Date(timeIntervalSince1970: 1_790_000_000))
        try await withTestStore(engine: database, clock: clock) { store in
            let (secret, token, bought, transactionReceipt) = try await store.buyMonthlyWithSharedSecret()
            let boughtId = try #require(bought.transactionId)
            #expect(try await store.advanceSandboxClock("301").json["renewed"] as? Int == 1)

            let renewed = try await store.verifyReceipt(["receipt-data": transactionReceipt, "password": secret])
            #expect(renewed.json["status"] as? Int == 0, "\(renewed.text)")
            let renewalId = try #require(
                (renewed.json["latest_receipt_info"] as? [String: Any])?["transaction_id"] as? String)
            #expect(renewalId != boughtId)
            let latestReceipt = try #require(renewed.json["latest_receipt"] as? String)
            let latest = try await store.verifyReceipt(["receipt-data": latestReceipt, "password": secret])
            #expect(latest.json["status"] as? Int == 0, "\(latest.text)")
            #expect((latest.json["receipt"] as? [String: Any])?["transaction_id"] as? String == renewalId)
            #expect((latest.json["receipt"] as? [String: Any])?["original_transaction_id"] as? String == boughtId)

            let (entries, _) = try await store.readUpdatesUntilCaughtUp(token: token, after: 0)
            let renewal = try #require(
                entries.compactMap { $0["transaction"] as? [String: Any] }.first {
                    $0["transactionId"] as? String == renewalId
                }, "\(entries)")
            let deviceReceipt = try #require(renewal["transactionReceipt"] as? String)
            let verified = try await store.verifyReceipt(["receipt-data": deviceReceipt, "password": secret])
            #expect((verified.json["receipt"] as? [String: Any])?["transaction_id"] as? String == renewalId)
        }
    }

    /// A subscription that ended: the app receipt still answers 0 (its renewal info says it will not renew),
    /// the iOS 6-style receipt answers 21006 with the receipt decoded and `latest_expired_receipt_info`.
    @Test(arguments: TestDatabase.available)
    func expiredSubscriptions(database: TestDatabase) async throws {
        let clock = ManualClock(Date(timeIntervalSince1970: 1_790_000_000))
        try await withTestStore(engine: database, clock: clock) { store in
            let (secret, token, bought, transactionReceipt) = try await store.buyMonthlyWithSharedSecret()
            let receipt = try await store.appReceipt(token: token)

            let active = try await store.verifyReceipt(["receipt-data": transactionReceipt, "password": secret])
            #expect(active.json["status"] as? Int == 0, "\(active.text)")
            #expect(active.json["auto_renew_status"] as? Int == 1)
            #expect(active.json["auto_renew_product_id"] as? String == TestStore.monthly)
            let latest = try #require(active.json["latest_receipt_info"] as? [String: Any])
            #expect(latest["transaction_id"] as? String == bought.transactionId)
            let expiresDate = try #require(latest["expires_date"] as? String)
            #expect(Int64(expiresDate) != nil)
            #expect((latest["expires_date_formatted"] as? String)?.hasSuffix(" Etc/GMT") == true)
            let latestReceipt = try #require(active.json["latest_receipt"] as? String)
            #expect(ReceiptText.purchaseInfo(of: latestReceipt) == ReceiptText.purchaseInfo(of: transactionReceipt))

            // A sandbox month with auto-renew off: the subscription expires instead of renewing.
            let boughtId = try #require(bought.transactionId)
            #expect(try await store.subscriptionControl(boughtId, "auto-renew-off").status == 200)
            #expect(try await store.advanceSandboxClock("301").json["expired"] as? Int == 1)
            let expired = try await store.verifyReceipt(["receipt-data": transactionReceipt, "password": secret])
            #expect(expired.json["status"] as? Int == 21006, "\(expired.text)")
            #expect((expired.json["receipt"] as? [String: Any])?["transaction_id"] as? String == boughtId)
            #expect(expired.json["latest_expired_receipt_info"] is [String: Any])
            #expect(expired.json["latest_receipt_info"] == nil)
            #expect(expired.json["auto_renew_status"] as? Int == 0)

            let app = try await store.verifyReceipt(["receipt-data": receipt, "password": secret])
            #expect(app.json["status"] as? Int == 0, "\(app.text)")
            let pending = try #require((app.json["pending_renewal_info"] as? [[String: Any]])?.first)
            #expect(pending["auto_renew_status"] as? String == "0")
            #expect(pending["expiration_intent"] as? String == "1")
        }
    }

    /// 21010: the account that bought is gone (a deleted tester), so its receipt no longer authorizes anything.
    @Test(arguments: TestDatabase.available)
    func deletedAccountAnswers21010(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.preparePurchaseCatalog()
            let token = try await store.signIn()
            let bought = try await store.pay(TestStore.removeAds, token: token)
            let receipt = try await store.appReceipt(token: token)
            let transactionReceipt = try #require(
                (bought.json["transaction"] as? [String: Any])?["transactionReceipt"] as? String)
            #expect(try await store.verifyReceipt(["receipt-data": receipt]).json["status"] as? Int == 0)

            #expect(try await store.request(.DELETE, "/admin/v1/testers/\(TestStore.testerEmail)").status == 204)
            #expect(try await store.verifyReceipt(["receipt-data": receipt]).json["status"] as? Int == 21010)
            #expect(try await store.verifyReceipt(["receipt-data": transactionReceipt]).json["status"] as? Int == 21010)
        }
    }

    private func expectDateTriple(_ object: [String: Any], _ name: String) throws {
        let text = try #require(object[name] as? String, "\(name) missing")
        let milliseconds = try #require(object[name + "_ms"] as? String, "\(name)_ms missing")
        let pacific = try #require(object[name + "_pst"] as? String, "\(name)_pst missing")
        #expect(text.wholeMatch(of: /\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} Etc\/GMT/) != nil, "\(name): \(text)")
        #expect(pacific.wholeMatch(of: /\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} America\/Los_Angeles/) != nil)
        #expect(Int64(milliseconds) != nil, "\(name)_ms: \(milliseconds)")
    }
}

extension TestStore {
    /// The subscription catalog with a shared secret, and a tester who bought the monthly plan: the secret, the
    /// tester's session token, the purchase's answer and its iOS 6-style receipt.
    func buyMonthlyWithSharedSecret() async throws -> (
        secret: String, token: String, bought: Answer, transactionReceipt: String
    ) {
        try await prepareSubscriptionCatalog()
        let secret = try #require(
            try await request(.POST, "/admin/v1/apps/\(Self.bundleId)/shared-secret").json["sharedSecret"] as? String)
        let token = try await signIn()
        let bought = try await pay(Self.monthly, token: token)
        let transactionReceipt = try #require(
            (bought.json["transaction"] as? [String: Any])?["transactionReceipt"] as? String)
        return (secret, token, bought, transactionReceipt)
    }

    /// The purchase catalog and a tester who bought Remove Ads: that tester's app receipt, base64.
    func removeAdsReceipt() async throws -> String {
        try await preparePurchaseCatalog()
        let token = try await signIn()
        _ = try await pay(Self.removeAds, token: token)
        return try await appReceipt(token: token)
    }

    /// Arms the app's next `count` `verifyReceipt` answers to be `error`, through the sandbox test controls.
    func armVerifyReceiptFailures(count: Int, error: String) async throws -> Answer {
        try await request(
            .PUT, "/sandbox/test/v1/apps/\(Self.bundleId)/failures",
            json: ["api": "verifyReceipt", "count": count, "error": error], token: .some(adminToken))
    }

    /// POSTs a `verifyReceipt` body to the sandbox (or production) endpoint.
    func verifyReceipt(_ body: [String: Any], sandbox: Bool = true) async throws -> Answer {
        try await request(.POST, sandbox ? "/sandbox/verifyReceipt" : "/verifyReceipt", json: body)
    }

    /// The session's app receipt, base64, as `SKReceiptRefreshRequest` gets it.
    func appReceipt(token: String, sandbox: Bool = true) async throws -> String {
        let answer = try await client(.GET, "/receipt", token: token, sandbox: sandbox)
        #expect(answer.status == 200, "\(answer.text)")
        return try #require(answer.json["receipt"] as? String)
    }

    /// Submits and approves a product, so production sells it.
    func approve(_ productId: String) async throws {
        for action in ["submit", "approve"] {
            let answer = try await request(
                .POST, "/admin/v1/apps/\(Self.bundleId)/products/\(productId)/review", json: ["action": action])
            #expect(answer.status == 200, "\(answer.text)")
        }
    }
}

/// The sandbox test controls make `verifyReceipt` answer a temporary failure, so merchants can test their retry.
struct VerifyReceiptTestControlTests {
    @Test(arguments: TestDatabase.available)
    func armedStatusesAnswerOnceEach(database: TestDatabase) async throws {
        try await withStore(database) { store in
            let receipt = try await store.removeAdsReceipt()
            let bad = try await store.armVerifyReceiptFailures(count: 1, error: "21003")
            #expect(bad.status == 400)
            #expect(bad.errorField == "error")
            let armed = try await store.armVerifyReceiptFailures(count: 2, error: "21100")
            #expect(armed.status == 200, "\(armed.text)")

            let first = try await store.verifyReceipt(["receipt-data": receipt])
            #expect(first.json["status"] as? Int == 21100)
            #expect(first.json["is-retryable"] as? Bool == true)
            #expect(try await store.verifyReceipt(["receipt-data": receipt]).json["status"] as? Int == 21100)
            let third = try await store.verifyReceipt(["receipt-data": receipt])
            #expect(third.json["status"] as? Int == 0)
            #expect(third.json["is-retryable"] == nil)
        }
    }

    /// An armed failure is seen in a read and used up in a write of its own: requests racing for the armed failures
    /// get each one exactly once, however they interleave, and every other request is answered normally.
    @Test(arguments: TestDatabase.available)
    func armedFailuresAreUsedOnceByConcurrentRequests(database: TestDatabase) async throws {
        try await withStore(database) { store in
            let receipt = try await store.removeAdsReceipt()
            let armed = try await store.armVerifyReceiptFailures(count: 3, error: "21100")
            #expect(armed.status == 200, "\(armed.text)")

            let statuses = try await withThrowingTaskGroup(of: Int?.self) { group in
                for _ in 0..<12 {
                    group.addTask { try await store.verifyReceipt(["receipt-data": receipt]).json["status"] as? Int }
                }
                return try await group.reduce(into: [Int?]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 21100 }.count == 3, "\(statuses)")
            #expect(statuses.filter { $0 == 0 }.count == 9, "\(statuses)")
            #expect(try await store.verifyReceipt(["receipt-data": receipt]).json["status"] as? Int == 0)
        }
    }
}
