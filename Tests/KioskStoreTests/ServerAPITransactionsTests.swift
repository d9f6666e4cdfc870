import Crypto
import Foundation
import KioskCore
import KioskStorage
import KioskTestSupport
import KioskTesting
import Testing

/// The transaction endpoints of Apple's App Store Server API (`/inApps/…`), driven over HTTP on both engines.
@Suite struct ServerAPITransactionsTests {
    /// Transaction info answers the caller's signed transaction; ids that are not numbers are 4000006, unknown
    /// ones and those of another environment or app 4040010, every error as `application/json` exactly.
    @Test(arguments: TestDatabase.available)
    func transactionInfoIsScopedToTheCallersAppAndEnvironment(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.preparePurchaseCatalog()
            let key = try await store.createServerAPIKey()
            let token = try await store.signIn()
            let bought = try await store.pay(TestStore.removeAds, token: token)
            let id = try #require(bought.transactionId)

            let info = try await store.serverAPI(.GET, "/inApps/v1/transactions/\(id)", key: key)
            #expect(info.status == 200, "\(info.text)")
            #expect(info.header("Content-Type") == "application/json")
            let signed = try #require(info.json["signedTransactionInfo"] as? String)
            // Written as bytes (a JWS needs no escaping): exactly what JSONEncoder writes, and nothing else.
            #expect(info.text == #"{"signedTransactionInfo":""# + signed + #""}"#)
            let payload = try jwsPayload(signed)
            #expect(payload["transactionId"] as? String == id)
            let appTransactionId = try #require(payload["appTransactionId"] as? String)
            #expect(appTransactionId.count == 18 && Int64(appTransactionId) != nil)
            // A stored form that is not a compact JWS (a hand-edited row) is still answered as valid JSON, escaped.
            let edited = #"not "a" JWS\"#
            let transactionId = try #require(Int64(id))
            var row = try #require(
                try await store.built.database.transaction { tx in
                    try await tx.transaction(id: transactionId, environment: .sandbox)
                })
            row.signedTransaction = edited
            row.revision += 1
            let editedRow = row
            try await store.built.database.transaction { tx in try await tx.updateTransaction(editedRow) }
            let answered = try await store.serverAPI(.GET, "/inApps/v1/transactions/\(id)", key: key)
            #expect(answered.status == 200 && answered.json["signedTransactionInfo"] as? String == edited)
            #expect(answered.text == #"{"signedTransactionInfo":"not \"a\" JWS\\"}"#, "\(answered.text)")

            try await expectAPIError(
                store.serverAPI(.GET, "/inApps/v1/transactions/abc", key: key), 400, 4_000_006)
            try await expectAPIError(
                store.serverAPI(.GET, "/inApps/v1/transactions/1999999999999999", key: key), 404, 4_040_010)
            try await expectAPIError(
                store.serverAPI(.GET, "/inApps/v1/transactions/\(id)", key: key, sandbox: false), 404, 4_040_010)
            try await store.createApp("com.example.other", name: "Other")
            let otherKey = try await store.createServerAPIKey(bundleId: "com.example.other")
            try await expectAPIError(
                store.serverAPI(.GET, "/inApps/v1/transactions/\(id)", key: otherKey), 404, 4_040_010)
        }
    }

    /// History pages by 20 in last-modified order with an opaque revision that can be replayed; every filter
    /// narrows it; v1 leaves out finished consumables; bad parameters get Apple's codes.
    @Test(arguments: TestDatabase.available)
    func historyPagesFiltersAndSorts(database: TestDatabase) async throws {
        let clock = ManualClock(Date(millisecondsSince1970: Date().millisecondsSince1970))
        try await withTestStore(engine: database, clock: clock) { store in
            try await store.preparePurchaseCatalog()
            let key = try await store.createServerAPIKey()
            let token = try await store.signIn()
            var coins: [String] = []
            var sequences: [Int] = []
            for _ in 0..<22 {
                clock.advance(by: 1)
                let bought = try await store.pay(TestStore.coins, token: token)
                coins.append(try #require(bought.transactionId))
                sequences.append(try #require(bought.json["sequence"] as? Int))
            }
            clock.advance(by: 1)
            let unlock = try #require(try await store.pay(TestStore.removeAds, token: token).transactionId)
            let all = coins + [unlock]
            let start = clock.now().millisecondsSince1970 - 23_000

            func history(_ query: String, version: Int = 2, id: String? = nil) async throws -> TestStore.Answer {
                try await store.serverAPI(.GET, "/inApps/v\(version)/history/\(id ?? unlock)?\(query)", key: key)
            }
            let first = try await history("")
            #expect(first.status == 200, "\(first.text)")
            #expect(first.json["hasMore"] as? Bool == true)
            #expect(first.json["bundleId"] as? String == TestStore.bundleId)
            #expect(first.json["environment"] as? String == "Sandbox")
            #expect(first.json["appAppleId"] is Int)
            #expect(try ids(first) == Array(all.prefix(20)))
            let revision = try #require(first.json["revision"] as? String)
            let second = try await history("revision=\(revision)")
            #expect(try ids(second) == Array(all.suffix(3)))
            #expect(second.json["hasMore"] as? Bool == false)
            #expect(try ids(try await history("revision=\(revision)")) == Array(all.suffix(3)))

            let descending = try await history("sort=DESCENDING")
            #expect(try ids(descending) == Array(all.reversed().prefix(20)))
            let descendingRevision = try #require(descending.json["revision"] as? String)
            let descendingRest = try await history("sort=DESCENDING&revision=\(descendingRevision)")
            #expect(try ids(descendingRest) == Array(all.reversed().suffix(3)))
            try await expectAPIError(history("revision=\(descendingRevision)"), 400, 4_000_005)

            // Any id of the customer names the same history: a transaction id or the app transaction id.
            let signed = try await storedTransaction(store, unlock).signedTransaction
            let appTransactionId = try #require(try jwsPayload(signed)["appTransactionId"] as? String)
            #expect(try ids(try await history("", id: coins[0])) == Array(all.prefix(20)))
            #expect(try ids(try await history("", id: appTransactionId)) == Array(all.prefix(20)))

            #expect(try ids(try await history("productId=\(TestStore.removeAds)")) == [unlock])
            #expect(try ids(try await history("productType=NON_CONSUMABLE")) == [unlock])
            #expect(
                try ids(try await history("productType=CONSUMABLE&productType=NON_CONSUMABLE")) == Array(all.prefix(20))
            )
            #expect(
                try ids(try await history("startDate=\(start + 3000)&endDate=\(start + 8000)")) == Array(coins[2..<7]))
            #expect(try ids(try await history("subscriptionGroupIdentifier=21000001")).isEmpty)
            #expect(try ids(try await history("inAppOwnershipType=FAMILY_SHARED")).isEmpty)
            #expect(try ids(try await history("inAppOwnershipType=PURCHASED&productType=NON_CONSUMABLE")) == [unlock])

            clock.advance(by: 1)
            try await refund(store, coins[0])
            #expect(try ids(try await history("revoked=True")) == [coins[0]])
            #expect(try ids(try await history("revoked=false&productType=NON_CONSUMABLE")) == [unlock])
            #expect(try ids(try await history("excludeRevoked=true&productId=\(TestStore.coins)")).count == 20)

            // A change moves a transaction to the end: a client that paged to the end sees it again.
            let end = try #require(second.json["revision"] as? String)
            clock.advance(by: 1)
            let tokenSet = try await store.serverAPI(
                .PUT, "/inApps/v1/transactions/\(unlock)/appAccountToken", key: key,
                json: ["appAccountToken": UUID().uuidString])
            #expect(tokenSet.status == 200, "\(tokenSet.text)")
            #expect(try ids(try await history("revision=\(end)")) == [coins[0], unlock])

            // v1 drops consumables once finished; v2 keeps them.
            _ = try await store.client(.POST, "/queue/\(sequences[1])/finish", token: token)
            #expect(try ids(try await history("productId=\(TestStore.coins)", version: 1)).contains(coins[1]) == false)
            #expect(try ids(try await history("productId=\(TestStore.coins)", version: 1)).contains(coins[2]))
            #expect(try ids(try await history("productId=\(TestStore.coins)", version: 2)).contains(coins[1]))

            for (query, status, code) in [
                ("revision=garbage!", 400, 4_000_005), ("startDate=yesterday", 400, 4_000_015),
                ("endDate=-5", 400, 4_000_016), ("startDate=2000&endDate=1000", 400, 4_000_013),
                ("sort=UP", 400, 4_000_021), ("productType=SUBSCRIPTION", 400, 4_000_022),
                ("productId=", 400, 4_000_023),
                ("subscriptionGroupIdentifier=pro", 400, 4_000_024), ("excludeRevoked=maybe", 400, 4_000_025),
                ("inAppOwnershipType=SHARED", 400, 4_000_026), ("revoked=yes", 400, 4_000_030),
            ] {
                try await expectAPIError(history(query), status, code)
            }
            try await expectAPIError(history("", id: "12ab"), 400, 4_000_006)
            try await expectAPIError(history("", id: "1999999999999999"), 404, 4_040_010)
        }
    }

    /// Refund history lists the customer's revoked transactions and pages by revision; order lookup finds an
    /// order's transactions (status 0) or answers status 1.
    @Test(arguments: TestDatabase.available)
    func refundHistoryAndOrderLookup(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.preparePurchaseCatalog()
            let key = try await store.createServerAPIKey()
            let token = try await store.signIn()
            let coins = try #require(try await store.pay(TestStore.coins, token: token).transactionId)
            let unlock = try #require(try await store.pay(TestStore.removeAds, token: token).transactionId)

            let none = try await store.serverAPI(.GET, "/inApps/v2/refund/lookup/\(coins)", key: key)
            #expect(none.status == 200, "\(none.text)")
            #expect(try ids(none).isEmpty)
            #expect(none.json["hasMore"] as? Bool == false)
            try await refund(store, unlock)
            let refunds = try await store.serverAPI(.GET, "/inApps/v2/refund/lookup/\(coins)", key: key)
            #expect(try ids(refunds) == [unlock])
            let revision = try #require(refunds.json["revision"] as? String)
            let later = try await store.serverAPI(
                .GET, "/inApps/v2/refund/lookup/\(coins)?revision=\(revision)", key: key)
            #expect(try ids(later).isEmpty)
            try await expectAPIError(
                store.serverAPI(.GET, "/inApps/v2/refund/lookup/\(coins)?revision=nope", key: key), 400, 4_000_005)
            try await expectAPIError(store.serverAPI(.GET, "/inApps/v2/refund/lookup/x1", key: key), 400, 4_000_006)

            let orderId = try await storedTransaction(store, coins).orderId
            // Ten letters and digits, like Apple's `MK5TTTVWJH`, without the easily confused 0, 1, I and O.
            #expect(orderId.wholeMatch(of: /[A-HJ-NP-Z2-9]{10}/) != nil, "\(orderId)")
            let found = try await store.serverAPI(.GET, "/inApps/v1/lookup/\(orderId)", key: key)
            #expect(found.status == 200, "\(found.text)")
            #expect(found.json["status"] as? Int == 0)
            #expect(try ids(found) == [coins])
            let unknown = try await store.serverAPI(.GET, "/inApps/v1/lookup/NOSUCHORDR", key: key)
            #expect(unknown.status == 200)
            #expect(unknown.json["status"] as? Int == 1)
            #expect(try ids(unknown).isEmpty)
            let production = try await store.serverAPI(.GET, "/inApps/v1/lookup/\(orderId)", key: key, sandbox: false)
            #expect(production.json["status"] as? Int == 1)
            #expect(try ids(production).isEmpty)
        }
    }

    /// Consumption information v1 (integers) and v2 (names) is checked field by field with Apple's codes,
    /// answered 202 with no body, and the latest report is kept.
    @Test(arguments: TestDatabase.available)
    func consumptionInformationIsValidatedAndKept(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.preparePurchaseCatalog()
            let key = try await store.createServerAPIKey()
            let token = try await store.signIn()
            let coins = try #require(try await store.pay(TestStore.coins, token: token).transactionId)
            let unlock = try #require(try await store.pay(TestStore.removeAds, token: token).transactionId)
            let v1: [String: Any] = [
                "customerConsented": true, "consumptionStatus": 1, "platform": 1, "sampleContentProvided": false,
                "deliveryStatus": 0, "appAccountToken": "", "accountTenure": 2, "playTime": 3,
                "lifetimeDollarsRefunded": 0, "lifetimeDollarsPurchased": 1, "userStatus": 1,
            ]
            let accepted = try await store.serverAPI(
                .PUT, "/inApps/v1/transactions/consumption/\(coins)", key: key, json: v1)
            #expect(accepted.status == 202, "\(accepted.text)")
            #expect(accepted.body.isEmpty)
            #expect(try await consumptionReport(store, coins)?.apiVersion == 1)
            try await expectAPIError(
                store.serverAPI(.PUT, "/inApps/v1/transactions/consumption/\(unlock)", key: key, json: v1), 400,
                4_000_043)

            let v1Errors: [(String, Any?, Int)] = [
                ("customerConsented", false, 4_000_035), ("customerConsented", nil, 4_000_035),
                ("consumptionStatus", 4, 4_000_034), ("platform", "1", 4_000_039),
                ("sampleContentProvided", 0, 4_000_041), ("deliveryStatus", 6, 4_000_036),
                ("appAccountToken", "not-a-uuid", 4_000_033), ("accountTenure", 8, 4_000_032),
                ("playTime", -1, 4_000_040), ("lifetimeDollarsRefunded", 8, 4_000_038),
                ("lifetimeDollarsPurchased", 1.5, 4_000_037), ("userStatus", 5, 4_000_042),
                ("refundPreference", 4, 4_000_000),
            ]
            for (field, value, code) in v1Errors {
                var body = v1
                body[field] = value
                try await expectAPIError(
                    store.serverAPI(.PUT, "/inApps/v1/transactions/consumption/\(coins)", key: key, json: body), 400,
                    code, "\(field) = \(String(describing: value))")
            }

            let v2: [String: Any] = [
                "customerConsented": true, "sampleContentProvided": false, "deliveryStatus": "DELIVERED",
                "consumptionPercentage": 50000, "refundPreference": "DECLINE",
            ]
            for id in [coins, unlock] {
                let answer = try await store.serverAPI(
                    .PUT, "/inApps/v2/transactions/consumption/\(id)", key: key, json: v2)
                #expect(answer.status == 202, "\(answer.text)")
                #expect(answer.body.isEmpty)
            }
            let report = try #require(try await consumptionReport(store, coins))
            #expect(report.apiVersion == 2)
            #expect(report.body.contains("\"DELIVERED\""))
            let v2Errors: [(String, Any?, Int)] = [
                ("customerConsented", false, 4_000_035), ("sampleContentProvided", nil, 4_000_041),
                ("deliveryStatus", "LOST", 4_000_036), ("deliveryStatus", nil, 4_000_036),
                ("consumptionPercentage", 100_001, 4_000_000), ("refundPreference", "MAYBE", 4_000_000),
            ]
            for (field, value, code) in v2Errors {
                var body = v2
                body[field] = value
                try await expectAPIError(
                    store.serverAPI(.PUT, "/inApps/v2/transactions/consumption/\(coins)", key: key, json: body), 400,
                    code, "\(field) = \(String(describing: value))")
            }
            try await expectAPIError(
                store.request(
                    .PUT, "/sandbox/inApps/v2/transactions/consumption/\(coins)", body: Data("[1]".utf8),
                    token: .some(try key.token())), 400, 4_000_000)
            try await expectAPIError(
                store.serverAPI(.PUT, "/inApps/v2/transactions/consumption/1999999999999999", key: key, json: v2), 404,
                4_040_010)
            try await expectAPIError(
                store.serverAPI(.PUT, "/inApps/v2/transactions/consumption/zz", key: key, json: v2), 400, 4_000_006)
        }
    }

    /// Setting the app account token of an original transaction re-signs it with the token and a new signed
    /// date and bumps its modification time; other ids and bad tokens get Apple's codes.
    @Test(arguments: TestDatabase.available)
    func appAccountTokenReSignsTheTransactions(database: TestDatabase) async throws {
        let clock = ManualClock(Date(millisecondsSince1970: Date().millisecondsSince1970))
        try await withTestStore(engine: database, clock: clock) { store in
            try await store.preparePurchaseCatalog()
            let key = try await store.createServerAPIKey()
            let token = try await store.signIn()
            let unlock = try #require(try await store.pay(TestStore.removeAds, token: token).transactionId)
            let before = try await storedTransaction(store, unlock)

            clock.advance(by: 5)
            let appAccountToken = UUID()
            let answer = try await store.serverAPI(
                .PUT, "/inApps/v1/transactions/\(unlock)/appAccountToken", key: key,
                json: ["appAccountToken": appAccountToken.uuidString])
            #expect(answer.status == 200, "\(answer.text)")
            #expect(answer.body.isEmpty)
            let after = try await storedTransaction(store, unlock)
            #expect(after.appAccountToken == appAccountToken)
            #expect(after.modifiedAt == clock.now())
            let payload = try jwsPayload(after.signedTransaction)
            #expect(payload["appAccountToken"] as? String == appAccountToken.uuidString.lowercased())
            #expect(payload["signedDate"] as? Int == Int(clock.now().millisecondsSince1970))
            #expect(try jwsPayload(before.signedTransaction)["signedDate"] as? Int != payload["signedDate"] as? Int)
            let info = try await store.serverAPI(.GET, "/inApps/v1/transactions/\(unlock)", key: key)
            #expect(info.json["signedTransactionInfo"] as? String == after.signedTransaction)

            // A transaction that continues another is not an original transaction.
            var renewal = after
            renewal.id = after.id + 1_000
            try await store.built.database.transaction { [renewal] tx in try await tx.insertTransaction(renewal) }
            try await expectAPIError(
                store.serverAPI(
                    .PUT, "/inApps/v1/transactions/\(renewal.id)/appAccountToken", key: key,
                    json: ["appAccountToken": UUID().uuidString]), 400, 4_000_187)
            for body: [String: Any] in [["appAccountToken": "not-a-uuid"], ["appAccountToken": 5], [:]] {
                try await expectAPIError(
                    store.serverAPI(.PUT, "/inApps/v1/transactions/\(unlock)/appAccountToken", key: key, json: body),
                    400, 4_000_183)
            }
            try await expectAPIError(
                store.serverAPI(
                    .PUT, "/inApps/v1/transactions/1999999999999999/appAccountToken", key: key,
                    json: ["appAccountToken": UUID().uuidString]), 404, 4_040_010)
            try await expectAPIError(
                store.serverAPI(
                    .PUT, "/inApps/v1/transactions/abc/appAccountToken", key: key,
                    json: ["appAccountToken": UUID().uuidString]), 400, 4_000_008)
        }
    }

    /// Each account has one app transaction per app, made at sign-in or by a sandbox test purchase; its id is
    /// the transactions' `appTransactionId`; an account without one gets 4040019.
    @Test(arguments: TestDatabase.available)
    func appTransactionInfoNamesTheCustomersAppTransaction(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.preparePurchaseCatalog()
            let key = try await store.createServerAPIKey()
            let token = try await store.signIn()
            let unlock = try #require(try await store.pay(TestStore.removeAds, token: token).transactionId)
            let transaction = try await storedTransaction(store, unlock)
            let appTransactionId = try #require(
                jwsPayload(transaction.signedTransaction)["appTransactionId"] as? String)

            for id in [unlock, appTransactionId] {
                let answer = try await store.serverAPI(.GET, "/inApps/v1/transactions/appTransactions/\(id)", key: key)
                #expect(answer.status == 200, "\(answer.text)")
                let payload = try jwsPayload(try #require(answer.json["signedAppTransactionInfo"] as? String))
                #expect(payload["appTransactionId"] as? String == appTransactionId)
                #expect(payload["receiptType"] as? String == "Sandbox")
                #expect(payload["bundleId"] as? String == TestStore.bundleId)
                #expect(payload["appAppleId"] as? Int == Int(transaction.appId))
                #expect(payload["applicationVersion"] as? String == "1.0")
                #expect(payload["originalApplicationVersion"] as? String == "1.0")
                #expect(payload["originalPlatform"] as? String == "iOS")
                #expect(
                    payload["originalPurchaseDate"] as? Int ?? .max
                        <= Int(transaction.purchaseDate.millisecondsSince1970))
                #expect(payload["receiptCreationDate"] is Int && payload["signedDate"] is Int)
            }

            // The app receipt's original purchase date is the same customer's first getting of the app, not the
            // app's creation: Apple documents both as when this customer first got the app.
            let first = try await store.serverAPI(.GET, "/inApps/v1/transactions/appTransactions/\(unlock)", key: key)
            let firstInfo = try #require(first.json["signedAppTransactionInfo"] as? String, "\(first.text)")
            let originalPurchase = try #require(try jwsPayload(firstInfo)["originalPurchaseDate"] as? Int)
            let verified = try await store.verifyReceipt(
                ["receipt-data": try await store.appReceipt(token: token)])
            let receipt = try #require(verified.json["receipt"] as? [String: Any], "\(verified.text)")
            #expect(receipt["original_purchase_date_ms"] as? String == String(originalPurchase), "\(verified.text)")

            // A tester who never signed in gets an app transaction with the first test purchase.
            try await store.createTester("second@example.com")
            let testBuy = try await store.request(
                .POST, "/sandbox/test/v1/apps/\(TestStore.bundleId)/purchases",
                json: ["tester": "second@example.com", "productId": TestStore.removeAds], token: .some(store.adminToken)
            )
            #expect(testBuy.status == 201, "\(testBuy.text)")
            let testBought = try #require(testBuy.transactionId)
            let second = try await store.serverAPI(
                .GET, "/inApps/v1/transactions/appTransactions/\(testBought)", key: key)
            #expect(second.status == 200, "\(second.text)")
            let secondPayload = try jwsPayload(try #require(second.json["signedAppTransactionInfo"] as? String))
            let testBoughtPayload = try jwsPayload(try await storedTransaction(store, testBought).signedTransaction)
            let secondAppTransactionId = try #require(secondPayload["appTransactionId"] as? String)
            #expect(secondAppTransactionId != appTransactionId)
            #expect(secondAppTransactionId == testBoughtPayload["appTransactionId"] as? String)

            var orphan = transaction
            orphan.id = transaction.id + 1_000
            orphan.originalTransactionId = orphan.id
            orphan.accountId = UUID()
            try await store.built.database.transaction { [orphan] tx in try await tx.insertTransaction(orphan) }
            try await expectAPIError(
                store.serverAPI(.GET, "/inApps/v1/transactions/appTransactions/\(orphan.id)", key: key), 404, 4_040_019)
            try await expectAPIError(
                store.serverAPI(.GET, "/inApps/v1/transactions/appTransactions/1999999999999999", key: key), 404,
                4_040_010)
            try await expectAPIError(
                store.serverAPI(.GET, "/inApps/v1/transactions/appTransactions/-1", key: key), 400, 4_000_006)
        }
    }

    /// Finishing through the Server API finishes the client's queue entry, as the app would; again is fine.
    @Test(arguments: TestDatabase.available)
    func finishTransactionFinishesTheQueueEntry(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.preparePurchaseCatalog()
            let key = try await store.createServerAPIKey()
            let token = try await store.signIn()
            let coins = try #require(try await store.pay(TestStore.coins, token: token).transactionId)
            func unfinished() async throws -> [String] {
                let queue = try await store.client(.GET, "/queue", token: token)
                return ((queue.json["entries"] as? [[String: Any]]) ?? []).compactMap {
                    ($0["transaction"] as? [String: Any])?["transactionId"] as? String
                }
            }
            #expect(try await unfinished() == [coins])
            for _ in 0..<2 {
                let answer = try await store.serverAPI(.POST, "/inApps/v1/transactions/\(coins)/finish", key: key)
                #expect(answer.status == 200, "\(answer.text)")
                #expect(answer.body.isEmpty)
            }
            #expect(try await unfinished().isEmpty)
            try await expectAPIError(
                store.serverAPI(.POST, "/inApps/v1/transactions/1999999999999999/finish", key: key), 404, 4_040_010)
            try await expectAPIError(
                store.serverAPI(.POST, "/inApps/v1/transactions/x/finish", key: key), 400, 4_000_006)
        }
    }

    /// Tokens Apple would refuse get a bare 401 with no body; a token without `iat` (as Apple's Python client
    /// makes them) and one with it are both accepted.
    @Test(arguments: TestDatabase.available)
    func badTokensGetABare401(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.preparePurchaseCatalog()
            let key = try await store.createServerAPIKey()
            try await store.createApp("com.example.other", name: "Other")
            let signer = try P256.Signing.PrivateKey(pemRepresentation: key.privateKeyPEM)
            let now = Date().timeIntervalSince1970.rounded(.down)
            let header: [String: Any] = ["alg": "ES256", "kid": key.keyId, "typ": "JWT"]
            let claims: [String: Any] = [
                "iss": key.issuerId, "bid": key.bundleId, "aud": "appstoreconnect-v1", "exp": now + 300,
            ]
            func call(_ bearer: String?) async throws -> TestStore.Answer {
                try await store.request(.GET, "/sandbox/inApps/v1/transactions/1999999999999999", token: .some(bearer))
            }
            func forged(
                header changedHeader: [String: Any]? = nil, claims changedClaims: [String: Any]? = nil,
                by otherSigner: P256.Signing.PrivateKey? = nil
            ) throws -> String {
                try forgedToken(
                    header: changedHeader ?? header, claims: changedClaims ?? claims, signer: otherSigner ?? signer)
            }
            // Accepted: the request reaches the handler, which answers "not found".
            try await expectAPIError(call(try forged()), 404, 4_040_010)
            try await expectAPIError(call(try forged(claims: claims.merging(["iat": now]) { $1 })), 404, 4_040_010)

            var refused: [(String, String?)] = [
                ("no token", nil), ("not a JWT", "garbage"),
                ("unknown kid", try forged(header: header.merging(["kid": "NOSUCHKEY1"]) { $1 })),
                ("wrong iss", try forged(claims: claims.merging(["iss": UUID().uuidString]) { $1 })),
                ("another app's bid", try forged(claims: claims.merging(["bid": "com.example.other"]) { $1 })),
                ("wrong aud", try forged(claims: claims.merging(["aud": "appstoreconnect-v2"]) { $1 })),
                ("expired", try forged(claims: claims.merging(["exp": now - 10]) { $1 })),
                ("exp over an hour ahead", try forged(claims: claims.merging(["exp": now + 7_200]) { $1 })),
                ("no exp", try forged(claims: claims.filter { $0.key != "exp" })),
                ("bad signature", try forged(by: P256.Signing.PrivateKey())),
                ("alg ES384", try forged(header: header.merging(["alg": "ES384"]) { $1 })),
                ("alg none", try forged(header: header.merging(["alg": "none"]) { $1 })),
            ]
            let otherKey = try await store.createServerAPIKey(bundleId: "com.example.other")
            let otherSigner = try P256.Signing.PrivateKey(pemRepresentation: otherKey.privateKeyPEM)
            let genuine = try forged()
            let parts = genuine.split(separator: ".").map(String.init)
            func segment(_ json: String) -> String { base64URL(Data(json.utf8)) }
            func with(_ claim: String, _ json: String) throws -> String {
                // A claim whose JSON value JSONSerialization cannot write (1e400, a string for a number).
                let text = String(
                    decoding: try JSONSerialization.data(withJSONObject: claims, options: .sortedKeys), as: UTF8.self)
                let patched = "{\"\(claim)\":\(json)," + text.dropFirst()
                let input = parts[0] + "." + segment(patched)
                return input + "." + base64URL(try signer.signature(for: Data(input.utf8)).rawRepresentation)
            }
            let publicKeyPEM = signer.publicKey.pemRepresentation
            let hs256Input = segment(#"{"alg":"HS256","typ":"JWT"}"#) + "." + parts[1]
            let hs256 =
                hs256Input + "."
                + base64URL(
                    Data(
                        HMAC<SHA256>.authenticationCode(
                            for: Data(hs256Input.utf8), using: SymmetricKey(data: Data(publicKeyPEM.utf8)))))
            refused += [
                ("HS256 keyed with the public key", hs256),
                ("alg HS256 over an ES256 signature", try forged(header: header.merging(["alg": "HS256"]) { $1 })),
                ("no alg", try forged(header: header.filter { $0.key != "alg" })),
                ("no kid", try forged(header: header.filter { $0.key != "kid" })),
                ("empty kid", try forged(header: header.merging(["kid": ""]) { $1 })),
                ("no iss", try forged(claims: claims.filter { $0.key != "iss" })),
                ("no bid", try forged(claims: claims.filter { $0.key != "bid" })),
                ("no aud", try forged(claims: claims.filter { $0.key != "aud" })),
                ("exp as a string", try forged(claims: claims.merging(["exp": "\(now + 300)"]) { $1 })),
                ("exp 1e400", try with("exp", "1e400")),
                ("exp -1e15", try with("exp", "-1e15")),
                ("exp 2^63", try with("exp", "9223372036854775808")),
                (
                    "another app's key for this app",
                    try forged(header: header.merging(["kid": otherKey.keyId]) { $1 }, by: otherSigner)
                ),
                (
                    "this key, the other app's bid",
                    try forged(claims: claims.merging(["bid": otherKey.bundleId]) { $1 })
                ),
                (
                    "claims changed after signing",
                    parts[0] + "." + segment(#"{"aud":"appstoreconnect-v1","bid":"com.example.other"}"#) + "."
                        + parts[2]
                ),
                (
                    "header changed after signing",
                    segment(#"{"alg":"ES256","kid":"x","typ":"JWT"}"#) + "." + parts[1] + "." + parts[2]
                ),
                ("signature truncated", parts[0] + "." + parts[1] + "." + String(parts[2].dropLast(8))),
                ("no signature", parts[0] + "." + parts[1] + "."),
                ("four segments", genuine + "." + parts[2]),
                ("two segments", parts[0] + "." + parts[1]),
                ("header not base64", "!!!." + parts[1] + "." + parts[2]),
                ("header not JSON", segment("not json") + "." + parts[1] + "." + parts[2]),
                ("claims not an object", parts[0] + "." + segment("[1,2]") + "." + parts[2]),
            ]
            // A header larger than the server reads is refused by the HTTP layer, before authentication.
            let huge = try await call(String(repeating: "a", count: 1 << 20))
            #expect(huge.status == 400, "a megabyte of token: \(huge.status) \(huge.text)")
            for (reason, value) in [("Basic scheme", "Basic \(genuine)"), ("no scheme", genuine)] {
                let answer = try await store.request(
                    .GET, "/sandbox/inApps/v1/transactions/1999999999999999", token: .some(nil),
                    headers: ["Authorization": value])
                #expect(answer.status == 401, "\(reason): \(answer.status) \(answer.text)")
            }
            let revoked = try await store.request(.DELETE, "/admin/v1/apps/\(TestStore.bundleId)/keys/\(key.keyId)")
            #expect(revoked.status == 200, "\(revoked.text)")
            refused.append(("revoked key", try forged()))
            #expect(refused.count >= 25, "the battery has \(refused.count) forgeries")
            for (reason, bearer) in refused {
                let answer = try await call(bearer)
                #expect(answer.status == 401, "\(reason): \(answer.status) \(answer.text)")
                #expect(answer.body.isEmpty, "\(reason)")
            }
        }
    }

    /// A key over its request rate gets 429 with 4290000 and `Retry-After`; other keys are not affected.
    @Test(arguments: TestDatabase.available)
    func rateLimitIsPerKey(database: TestDatabase) async throws {
        try await withTestStore(engine: database, serverAPIRequestsPerSecond: 0.01) { store in
            try await store.preparePurchaseCatalog()
            let key = try await store.createServerAPIKey()
            let other = try await store.createServerAPIKey()
            let path = "/inApps/v1/transactions/1999999999999999"
            try await expectAPIError(store.serverAPI(.GET, path, key: key), 404, 4_040_010)
            let limited = try await store.serverAPI(.GET, path, key: key)
            try expectAPIError(limited, 429, 4_290_000)
            let retryAfter = try #require(limited.header("Retry-After").flatMap(Int.init))
            #expect((1...100).contains(retryAfter))
            try await expectAPIError(store.serverAPI(.GET, path, key: other), 404, 4_040_010)
        }
    }

    /// Apple's per-endpoint limits (per app, over an hour, the sandbox at a tenth): the 361st test-notification
    /// status request of an hour in the sandbox (1 a second → 360) gets 429 `4290000` with `Retry-After` the UNIX
    /// milliseconds of the hour's end, as Apple answers; other endpoints and other apps are not affected; the next
    /// hour admits it again. With the default scope (production only) the sandbox is not limited.
    @Test func appleEndpointLimitsApplyPerAppAndHour() async throws {
        // Tokens are signed at the real time, so the store's clock starts there.
        let clock = ManualClock(Date())
        // The per-key limit (a flood guard in real time) is set out of the way.
        try await withTestStore(
            clock: clock, serverAPIRequestsPerSecond: 1_000_000, configure: { $0.serverAPIRateLimits = .all }
        ) { store in
            try await store.preparePurchaseCatalog()
            let key = try await store.createServerAPIKey()
            let status = "/inApps/v1/notifications/test/not-a-token"
            let start = clock.now()
            for _ in 0..<360 {
                let answer = try await store.serverAPI(.GET, status, key: key)
                #expect(answer.status != 429 && answer.status != 401, "\(answer.text)")
                if answer.status == 429 || answer.status == 401 { return }
            }
            let limited = try await store.serverAPI(.GET, status, key: key)
            try expectAPIError(limited, 429, 4_290_000)
            #expect(limited.header("Retry-After") == String((start + 3600).millisecondsSince1970))
            try await expectAPIError(
                store.serverAPI(.GET, "/inApps/v1/transactions/1999999999999999", key: key), 404, 4_040_010)
            clock.advance(by: 3600)
            let nextHour = try await store.request(
                .GET, "/sandbox" + status, token: .some(try key.token(now: clock.now())))
            #expect(nextHour.status != 429 && nextHour.status != 401, "\(nextHour.text)")
        }
        try await withTestStore(clock: clock, serverAPIRequestsPerSecond: 1_000_000) { store in
            try await store.preparePurchaseCatalog()
            let key = try await store.createServerAPIKey()
            for _ in 0..<361 {
                let answer = try await store.serverAPI(.GET, "/inApps/v1/notifications/test/x", key: key)
                if answer.status == 429 { Issue.record("the default scope limits only production: \(answer.text)") }
            }
        }
    }

    /// Authentication remembers keys and verified tokens, yet a revoked key's token, even one that worked a moment
    /// ago, is refused on the very next request; a token reused many times keeps working.
    @Test(arguments: TestDatabase.available)
    func revokedKeyIsRefusedAtOnce(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.preparePurchaseCatalog()
            let key = try await store.createServerAPIKey()
            let bearer = try key.token()
            let path = "/sandbox/inApps/v1/transactions/1999999999999999"
            for _ in 0..<3 {
                try expectAPIError(try await store.request(.GET, path, token: .some(bearer)), 404, 4_040_010)
            }
            let revoked = try await store.request(.DELETE, "/admin/v1/apps/\(TestStore.bundleId)/keys/\(key.keyId)")
            #expect(revoked.status == 200, "\(revoked.text)")
            let refused = try await store.request(.GET, path, token: .some(bearer))
            #expect(refused.status == 401, "\(refused.status) \(refused.text)")
            #expect(refused.text.isEmpty)
        }
    }

    /// A token authentication already verified (and keeps parsed) is still checked for expiry on every request: it
    /// works until its `exp` and is refused from the first request after.
    @Test(arguments: TestDatabase.available)
    func aRememberedTokenIsRefusedOnceItExpires(database: TestDatabase) async throws {
        let clock = ManualClock(Date(millisecondsSince1970: Date().millisecondsSince1970))
        try await withTestStore(engine: database, clock: clock) { store in
            try await store.preparePurchaseCatalog()
            let key = try await store.createServerAPIKey()
            let bearer = try key.token(expiresIn: 300, now: clock.now())
            let path = "/sandbox/inApps/v1/transactions/1999999999999999"
            try expectAPIError(try await store.request(.GET, path, token: .some(bearer)), 404, 4_040_010)
            clock.advance(by: 299)
            try expectAPIError(try await store.request(.GET, path, token: .some(bearer)), 404, 4_040_010)
            clock.advance(by: 1)
            let refused = try await store.request(.GET, path, token: .some(bearer))
            #expect(refused.status == 401, "\(refused.status) \(refused.text)")
            #expect(refused.text.isEmpty)
        }
    }

    /// Production works the same on `/inApps`, with production transactions only.
    @Test(arguments: TestDatabase.available)
    func productionServesProductionTransactions(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.preparePurchaseCatalog()
            try await store.prepareProductionBuyer()
            let key = try await store.createServerAPIKey()
            let token = try await store.signIn("buyer@example.com", sandbox: false)
            let unlock = try #require(
                try await store.pay(TestStore.removeAds, token: token, sandbox: false).transactionId)
            let history = try await store.serverAPI(.GET, "/inApps/v2/history/\(unlock)", key: key, sandbox: false)
            #expect(history.status == 200, "\(history.text)")
            #expect(history.json["environment"] as? String == "Production")
            #expect(try ids(history) == [unlock])
            let app = try await store.serverAPI(
                .GET, "/inApps/v1/transactions/appTransactions/\(unlock)", key: key, sandbox: false)
            #expect(
                try jwsPayload(try #require(app.json["signedAppTransactionInfo"] as? String))["receiptType"] as? String
                    == "Production")
            try await expectAPIError(store.serverAPI(.GET, "/inApps/v2/history/\(unlock)", key: key), 404, 4_040_010)
        }
    }
}

/// Apple's own Python client (`AppStoreServerAPIClient`) against a live store, and Apple's `SignedDataVerifier`
/// on what it fetched.
@Suite(
    .enabled(
        if: TestEnvironment.runs(.python),
        "set KIOSK_TEST_PYTHON (.ci/run does) to a python with PyPI app-store-server-library"))
struct ServerAPITransactionsAppleInteropTests {
    @Test(arguments: ["Sandbox", "Production"])
    func appleClientCallsEveryTransactionEndpoint(environment: String) async throws {
        let sandbox = environment == "Sandbox"
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kiosk-interop-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file: @Sendable (String) -> String = { [directory] name in directory.appendingPathComponent(name).path }
        let python = try TestEnvironment.require(.python)
        let interop = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Interop")

        let (output, coins, unlock, appAppleId) = try await withStore(.sqlite) { store in
            try await store.preparePurchaseCatalog()
            try await store.prepareProductionBuyer()
            let key = try await store.createServerAPIKey()
            try key.privateKeyPEM.write(toFile: file("key.p8"), atomically: true, encoding: .ascii)
            let root = try await store.request(
                .GET, "/admin/v1/certificates/\(sandbox ? "sandbox" : "production")/root?format=der")
            try root.body.write(to: URL(fileURLWithPath: file("root.der")))
            let token = try await store.signIn(sandbox ? TestStore.testerEmail : "buyer@example.com", sandbox: sandbox)
            let coins = try #require(try await store.pay(TestStore.coins, token: token, sandbox: sandbox).transactionId)
            let unlock = try #require(
                try await store.pay(TestStore.removeAds, token: token, sandbox: sandbox).transactionId)
            let orderId = try await storedTransaction(store, coins, sandbox: sandbox).orderId
            let (status, output) = try await runProcess(
                python,
                [
                    interop.appendingPathComponent("server_api_transactions.py").path,
                    "--base-url", store.baseURL + (sandbox ? "/sandbox" : ""), "--key-file", file("key.p8"),
                    "--key-id", key.keyId, "--issuer-id", key.issuerId, "--bundle-id", key.bundleId,
                    "--environment", environment, "--consumable-id", coins, "--non-consumable-id", unlock,
                    "--order-id", orderId, "--resigned-transaction-out", file("resigned.jws"),
                    "--app-transaction-out", file("app-transaction.jws"),
                ])
            #expect(status == 0, "\(output)")
            let app = try await store.request(.GET, "/admin/v1/apps/\(TestStore.bundleId)")
            return (output, coins, unlock, try #require(app.json["appAppleId"] as? Int))
        }
        let line = try #require(output.split(separator: "\n").last.map(String.init), "\(output)")
        let summary = try #require(
            try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(output)")

        func section(_ name: String) -> [String: Any] { summary[name] as? [String: Any] ?? [:] }
        #expect(section("historyV1")["transactionIds"] as? [String] == [coins, unlock])
        #expect(section("historyV1")["environment"] as? String == environment)
        #expect(section("historyV1")["appAppleId"] as? Int == appAppleId)
        #expect(section("historyV2")["transactionIds"] as? [String] == [unlock, coins])
        #expect(section("historyV2")["hasMore"] as? Bool == false)
        #expect(section("historyV2Next")["count"] as? Int == 0)
        #expect(section("transactionInfo")["transactionId"] as? String == coins)
        #expect(section("lookup")["status"] as? Int == 0 && section("lookup")["count"] as? Int == 1)
        #expect(section("unknownOrder")["status"] as? Int == 1)
        #expect(section("refundHistory")["count"] as? Int == 0)
        #expect(summary["consumptionV1"] as? String == "accepted" && summary["consumptionV2"] as? String == "accepted")
        #expect(section("appAccountToken")["signed"] as? String == section("appAccountToken")["sent"] as? String)
        #expect(section("appTransaction")["receiptType"] as? String == environment)
        #expect(summary["finish"] as? String == "ok")
        #expect(section("historyV1AfterFinish")["transactionIds"] as? [String] == [unlock])
        #expect(section("unknownTransaction")["status"] as? Int == 404)
        #expect(section("unknownTransaction")["apiError"] as? String == "TRANSACTION_ID_NOT_FOUND")
        #expect(section("invalidTransaction")["apiError"] as? String == "INVALID_TRANSACTION_ID")
        #expect(section("badKey")["status"] as? Int == 401)
        #expect(section("badKey")["rawApiError"] is NSNull)

        for (kind, jws, expected) in [
            ("app-transaction", "app-transaction.jws", #""receiptType": "\#(environment)""#),
            ("transaction", "resigned.jws", #""appAccountToken": ""#),
        ] {
            let (status, output) = try await runProcess(
                python,
                [
                    interop.appendingPathComponent("verify_signed_data.py").path, "--root-der", file("root.der"),
                    "--environment", environment, "--bundle-id", TestStore.bundleId, "--app-apple-id",
                    String(appAppleId), "--kind", kind, "--jws-file", file(jws),
                ])
            #expect(status == 0, "\(kind): \(output)")
            #expect(output.contains(expected), "\(kind): \(output)")
        }
    }
}

extension TestStore {
    /// Approves the catalog's products for production and creates the customer account `buyer@example.com`.
    fileprivate func prepareProductionBuyer() async throws {
        for product in [TestStore.coins, TestStore.removeAds] {
            for action in ["submit", "approve"] {
                let reviewed = try await request(
                    .POST, "/admin/v1/apps/\(TestStore.bundleId)/products/\(product)/review", json: ["action": action])
                #expect(reviewed.status == 200, "\(reviewed.text)")
            }
        }
        let account = try await request(
            .POST, "/admin/v1/accounts", json: ["email": "buyer@example.com", "password": TestStore.password])
        #expect(account.status == 201, "\(account.text)")
    }
}

/// Expects an App Store Server API error: the status, `errorCode` and `errorMessage`, and
/// `Content-Type: application/json` exactly (Apple's Python client ignores the body otherwise).
private func expectAPIError(
    _ answer: TestStore.Answer, _ status: Int, _ code: Int, _ comment: String = "",
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    #expect(answer.status == status, "\(comment) \(answer.text)", sourceLocation: sourceLocation)
    #expect(answer.json["errorCode"] as? Int == code, "\(comment) \(answer.text)", sourceLocation: sourceLocation)
    #expect(answer.json["errorMessage"] is String, "\(comment)", sourceLocation: sourceLocation)
    #expect(answer.header("Content-Type") == "application/json", "\(comment)", sourceLocation: sourceLocation)
}

/// The transaction ids of a history, refund-history or order-lookup answer, in order. The answer must be a 200
/// with `signedTransactions` (empty or not): an error answer is a failure here, never an empty list.
private func ids(_ answer: TestStore.Answer, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String] {
    try #require(answer.status == 200, "\(answer.status) \(answer.text)", sourceLocation: sourceLocation)
    let signed = try #require(
        answer.json["signedTransactions"] as? [String], "no signedTransactions: \(answer.text)",
        sourceLocation: sourceLocation)
    return try signed.map {
        try #require(try jwsPayload($0)["transactionId"] as? String, sourceLocation: sourceLocation)
    }
}

/// The claims of a compact JWS, unverified.
private func jwsPayload(_ jws: String) throws -> [String: Any] {
    let parts = jws.split(separator: ".")
    #expect(parts.count == 3)
    var base64 = String(parts[1]).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
    let data = try #require(Data(base64Encoded: base64))
    return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
}

/// `data` in base64url without padding, as JWS segments are written.
private func base64URL(_ data: Data) -> String {
    data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}

/// A JWT with any header and claims, ES256-signed by `signer` whatever the header says.
private func forgedToken(header: [String: Any], claims: [String: Any], signer: P256.Signing.PrivateKey) throws -> String
{
    let input =
        base64URL(try JSONSerialization.data(withJSONObject: header, options: .sortedKeys)) + "."
        + base64URL(try JSONSerialization.data(withJSONObject: claims, options: .sortedKeys))
    return input + "." + base64URL(try signer.signature(for: Data(input.utf8)).rawRepresentation)
}

private func storedTransaction(_ store: TestStore, _ id: String, sandbox: Bool = true) async throws -> StoreTransaction
{
    let id = try #require(Int64(id))
    let found = try await store.built.database.transaction { tx in
        try await tx.transaction(id: id, environment: sandbox ? .sandbox : .production)
    }
    return try #require(found)
}

/// Refunds a sandbox transaction in full through the test controls (at the store's sandbox time).
private func refund(_ store: TestStore, _ id: String) async throws {
    let answer = try await store.request(
        .POST, "/sandbox/test/v1/apps/\(TestStore.bundleId)/transactions/\(id)/refund", json: [:],
        token: .some(store.adminToken))
    #expect(answer.status == 200, "\(answer.text)")
}

private func consumptionReport(_ store: TestStore, _ id: String) async throws -> ConsumptionReport? {
    let id = try #require(Int64(id))
    return try await store.built.database.transaction { tx in
        try await tx.consumptionReport(transactionId: id, environment: .sandbox)
    }
}
