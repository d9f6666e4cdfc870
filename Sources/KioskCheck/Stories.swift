import Crypto
import Foundation
import KioskCore
import KioskProtocol
import KioskSigning

/// A life story the App Store can put a server through, or a fault on the notification path, with what the probe
/// must show after each step.
struct Story: Sendable {
    enum Kind: String, Sendable { case life, fault }

    var name: String
    var kind: Kind
    /// What it asserts, one sentence.
    var summary: String
    var play: @Sendable (StoryRun) async throws -> Void
}

/// The faults that can be laid on every life story (`--fault NAME`); the others are stories of their own.
let deliveryFaults: [String: RelayMode] = [
    RelayMode.duplicate.rawValue: .duplicate, RelayMode.concurrentDuplicate.rawValue: .concurrentDuplicate,
]

/// Every story, in the order a run plays them.
let stories: [Story] = lifeStories + faultStories

private let lifeStories: [Story] = [
    Story(name: "consumable", kind: .life, summary: "3 consumables bought at once credit 3 × the amount") { run in
        let coins = try run.product(run.catalog.consumable, "consumable with a balance")
        _ = try await run.buy(coins, quantity: 3)
        try await run.expect(
            "after ONE_TIME_CHARGE: \(coins.balance!) 3 × \(coins.amount!)",
            balances: [coins.balance!: 3 * coins.amount!])
    },
    Story(name: "non-consumable", kind: .life, summary: "a non-consumable unlocks its entitlement") { run in
        let product = try run.product(run.catalog.nonConsumable, "non-consumable")
        _ = try await run.buy(product)
        try await run.expect(
            "after ONE_TIME_CHARGE: \(product.entitlement!) active", entitlements: [product.entitlement!: true])
    },
    Story(name: "non-renewing", kind: .life, summary: "a non-renewing subscription unlocks its entitlement") { run in
        let product = try run.product(run.catalog.nonRenewing, "non-renewing subscription")
        _ = try await run.buy(product)
        try await run.expect(
            "after ONE_TIME_CHARGE: \(product.entitlement!) active", entitlements: [product.entitlement!: true])
    },
    Story(
        name: "subscription-renewals", kind: .life,
        summary: "a subscription is active when bought and after each of two renewals"
    ) { run in
        let product = try run.product(run.catalog.subscription, "auto-renewable subscription")
        let name = product.entitlement!
        let purchase = try await run.buy(product)
        try await run.expect("after SUBSCRIBED: \(name) active", entitlements: [name: true])
        for renewal in 1...2 {
            try await run.passExpiry(of: purchase)
            try await run.expect("after DID_RENEW #\(renewal): \(name) active", entitlements: [name: true])
        }
    },
    Story(
        name: "introductory-offer", kind: .life,
        summary: "a subscription bought with its introductory offer is active, then renews"
    ) { run in
        let product = try run.product(run.catalog.introductoryOffer, "subscription with an introductory offer")
        let name = product.entitlement!
        let purchase = try await run.buy(product)
        try await run.expect("after SUBSCRIBED with the offer: \(name) active", entitlements: [name: true])
        try await run.passExpiry(of: purchase)
        try await run.expect("after DID_RENEW at the full price: \(name) active", entitlements: [name: true])
    },
    Story(
        name: "auto-renew-off", kind: .life,
        summary: "turning auto-renew off keeps access to the period's end, then EXPIRED ends it"
    ) { run in
        let product = try run.product(run.catalog.subscription, "auto-renewable subscription")
        let name = product.entitlement!
        let purchase = try await run.buy(product)
        try await run.subscription(purchase, "auto-renew-off")
        try await run.expect("after DID_CHANGE_RENEWAL_STATUS: \(name) still active", entitlements: [name: true])
        try await run.passExpiry(of: purchase)
        try await run.expect("after EXPIRED (VOLUNTARY): \(name) not active", entitlements: [name: false])
    },
    Story(
        name: "billing-retry-recovery", kind: .life,
        summary: "a failed renewal ends access; the recovered billing restores it"
    ) { run in
        let product = try run.product(run.catalog.subscription, "auto-renewable subscription")
        let name = product.entitlement!
        let purchase = try await run.buy(product)
        try await run.subscription(purchase, "fail-renewal")
        try await run.passExpiry(of: purchase)
        try await run.expect("after DID_FAIL_TO_RENEW: \(name) not active", entitlements: [name: false])
        try await run.subscription(purchase, "recover")
        try await run.expect("after DID_RENEW (BILLING_RECOVERY): \(name) active", entitlements: [name: true])
    },
    Story(
        name: "grace-period-expiry", kind: .life,
        summary: "a failed renewal in a grace period keeps access until GRACE_PERIOD_EXPIRED"
    ) { run in
        let product = try run.product(run.catalog.subscription, "auto-renewable subscription")
        let name = product.entitlement!
        let earlier = try await run.store.gracePeriod()
        try await run.step("the app's billing grace period is set to 3 days") { try await run.store.setGracePeriod(3) }
        do {
            let purchase = try await run.buy(product)
            try await run.step("the tester's card is declined from now on") {
                try await run.store.setPaymentOutcome(tester: run.tester, "decline")
            }
            try await run.passExpiry(of: purchase)
            try await run.expect(
                "after DID_FAIL_TO_RENEW (GRACE_PERIOD): \(name) still active", entitlements: [name: true])
            try await run.passExpiry(of: purchase, grace: true)
            try await run.expect("after GRACE_PERIOD_EXPIRED: \(name) not active", entitlements: [name: false])
        } catch {
            _ = try? await run.store.setGracePeriod(earlier.days)
            throw error
        }
        try await run.step("the grace period setting is put back") { try await run.store.setGracePeriod(earlier.days) }
    },
    Story(
        name: "upgrade", kind: .life, summary: "buying a higher level of the same group gives its entitlement at once"
    ) { run in
        guard let pair = run.catalog.pair else {
            throw NotMade("the check file names no two subscriptions of one group at different levels")
        }
        _ = try await run.buy(pair.lower)
        _ = try await run.buy(pair.higher)
        try await run.expect(
            "after DID_CHANGE_RENEWAL_PREF (UPGRADE): \(pair.higher.entitlement!) active",
            entitlements: [pair.higher.entitlement!: true])
    },
    Story(
        name: "downgrade", kind: .life,
        summary: "a downgrade keeps the higher level to the period's end, then the lower one"
    ) { run in
        guard let pair = run.catalog.pair else {
            throw NotMade("the check file names no two subscriptions of one group at different levels")
        }
        let purchase = try await run.buy(pair.higher)
        try await run.subscription(purchase, "set-auto-renew-product", productId: pair.lower.productId)
        try await run.expect(
            "after DID_CHANGE_RENEWAL_PREF (DOWNGRADE): \(pair.higher.entitlement!) still active",
            entitlements: [pair.higher.entitlement!: true])
        try await run.passExpiry(of: purchase)
        var expected = [pair.lower.entitlement!: true]
        if pair.lower.entitlement != pair.higher.entitlement { expected[pair.higher.entitlement!] = false }
        try await run.expect(
            "after DID_RENEW of \(pair.lower.productId): \(pair.lower.entitlement!) active", entitlements: expected)
    },
    Story(
        name: "crossgrade", kind: .life,
        summary: "moving to another subscription of the group keeps one entitlement active"
    ) { run in
        guard let pair = run.catalog.pair else {
            throw NotMade("the check file names no two subscriptions of one group at different levels")
        }
        let purchase = try await run.buy(pair.higher)
        try await run.subscription(purchase, "set-auto-renew-product", productId: pair.lower.productId)
        try await run.subscription(purchase, "set-auto-renew-product", productId: pair.higher.productId)
        try await run.passExpiry(of: purchase)
        try await run.expect(
            "after DID_RENEW of the kept product: \(pair.higher.entitlement!) active",
            entitlements: [pair.higher.entitlement!: true])
    },
    Story(
        name: "offer-code", kind: .life,
        summary: "a subscription bought with a one-time offer code is active, then renews"
    ) { run in
        let subscriptions = Set([run.catalog.subscription, run.catalog.introductoryOffer].compactMap { $0?.productId })
        guard
            let code = try await run.store.offerCodes().first(where: {
                $0.state == "available" && subscriptions.contains($0.productId)
            }),
            let product = run.server.file.grant(of: code.productId)
        else {
            throw NotMade(
                "the app has no available one-time offer code for a subscription the check file names (`kiosk offer-codes create`)"
            )
        }
        let purchase = try await run.buy(product, offerCode: code.code)
        try await run.expect(
            "after SUBSCRIBED with offer code \(code.referenceName): \(product.entitlement!) active",
            entitlements: [product.entitlement!: true])
        try await run.passExpiry(of: purchase)
        try await run.expect(
            "after DID_RENEW: \(product.entitlement!) active", entitlements: [product.entitlement!: true])
    },
    Story(
        name: "win-back-offer", kind: .life, summary: "a lapsed subscriber who takes a win-back offer is active again"
    ) { run in
        guard let winBack = run.catalog.winBack else {
            throw NotMade("no subscription the check file names has a win-back offer")
        }
        let product = winBack.grant
        let name = product.entitlement!
        let purchase = try await run.buy(product)
        for _ in 1..<winBack.periods { try await run.passExpiry(of: purchase) }
        try await run.subscription(purchase, "auto-renew-off")
        try await run.passExpiry(of: purchase)
        try await run.expect("after EXPIRED (VOLUNTARY): \(name) not active", entitlements: [name: false])
        // Eligible once the lapse reaches the offer's minimum, counted in sandbox months.
        let lapse =
            Int(
                Double(winBack.offer.timeSinceLastSubscribedInMonths.minimum)
                    * SubscriptionDuration.oneMonth.sandboxSeconds) + 1
        try await run.advance(by: "\(lapse)s")
        _ = try await run.buy(product, winBackOfferId: winBack.offer.identifier)
        try await run.expect(
            "after SUBSCRIBED (RESUBSCRIBE) with win-back offer \(winBack.offer.identifier): \(name) active",
            entitlements: [name: true])
    },
    Story(
        name: "promotional-offer", kind: .life,
        summary: "a lapsed subscriber who takes a signed promotional offer is active again"
    ) { run in
        guard let promotional = run.catalog.promotional else {
            throw NotMade("no subscription the check file names has a promotional offer")
        }
        let product = promotional.grant
        let name = product.entitlement!
        let purchase = try await run.buy(product)
        try await run.subscription(purchase, "auto-renew-off")
        try await run.passExpiry(of: purchase)
        try await run.expect("after EXPIRED (VOLUNTARY): \(name) not active", entitlements: [name: false])
        // The app's server signs promotional offers; the check signs as it would, with a key of its own.
        let key = try await run.store.createKey(name: "kiosk check: promotional offers")
        do {
            let discount = try PromotionalOfferSigner.sign(
                bundleId: run.store.bundleId, key: key, productId: product.productId, offerId: promotional.offerId,
                applicationUsername: run.userToken, nonce: UUID(), timestamp: try await run.store.clock().now)
            _ = try await run.buy(product, discount: discount)
            try await run.expect(
                "after SUBSCRIBED (RESUBSCRIBE) with promotional offer \(promotional.offerId): \(name) active",
                entitlements: [name: true])
        } catch {
            try? await run.store.revokeKey(key.keyId)
            throw error
        }
        try await run.store.revokeKey(key.keyId)
    },
    Story(name: "refund-consumable", kind: .life, summary: "REFUND of a consumable takes its credit back") { run in
        let coins = try run.product(run.catalog.consumable, "consumable with a balance")
        let purchase = try await run.buy(coins)
        try await run.expect(
            "after ONE_TIME_CHARGE: \(coins.balance!) \(coins.amount!)", balances: [coins.balance!: coins.amount!])
        try await run.transaction(purchase, "refund")
        try await run.expect("after REFUND: \(coins.balance!) back to 0", balances: [coins.balance!: 0])
    },
    Story(name: "refund-subscription", kind: .life, summary: "REFUND of a subscription ends its entitlement") { run in
        let product = try run.product(run.catalog.subscription, "auto-renewable subscription")
        let purchase = try await run.buy(product)
        try await run.transaction(purchase, "refund")
        try await run.expect(
            "after REFUND: \(product.entitlement!) not active", entitlements: [product.entitlement!: false])
    },
    Story(
        name: "prorated-refund", kind: .life, summary: "a prorated (50 %) REFUND of a subscription ends its entitlement"
    ) { run in
        let product = try run.product(run.catalog.subscription, "auto-renewable subscription")
        let purchase = try await run.buy(product)
        try await run.transaction(purchase, "refund", body: #"{"percentage": 50}"#)
        try await run.expect(
            "after REFUND (50 %): \(product.entitlement!) not active", entitlements: [product.entitlement!: false])
    },
    Story(name: "refund-reversed", kind: .life, summary: "REFUND_REVERSED gives back what REFUND took") { run in
        let product = try run.product(run.catalog.nonConsumable, "non-consumable")
        let name = product.entitlement!
        let purchase = try await run.buy(product)
        try await run.transaction(purchase, "refund")
        try await run.expect("after REFUND: \(name) not active", entitlements: [name: false])
        try await run.transaction(purchase, "reverse-refund")
        try await run.expect("after REFUND_REVERSED: \(name) active again", entitlements: [name: true])
    },
    Story(
        name: "family-sharing-revoke", kind: .life, summary: "REVOKE (Family Sharing ended) takes the entitlement away"
    ) { run in
        let product = try run.product(run.catalog.nonConsumable, "non-consumable")
        let purchase = try await run.buy(product)
        try await run.transaction(purchase, "revoke")
        try await run.expect(
            "after REVOKE: \(product.entitlement!) not active", entitlements: [product.entitlement!: false])
    },
    Story(
        name: "price-increase-accepted", kind: .life, summary: "a price increase the customer accepts renews as before"
    ) { run in
        let product = try run.product(run.catalog.subscription, "auto-renewable subscription")
        let purchase = try await run.buy(product)
        try await run.subscription(purchase, "price-increase")
        try await run.subscription(purchase, "consent-accept")
        try await run.passExpiry(of: purchase)
        try await run.expect(
            "after PRICE_INCREASE (ACCEPTED) and DID_RENEW: \(product.entitlement!) active",
            entitlements: [product.entitlement!: true])
    },
    Story(
        name: "price-increase-declined", kind: .life,
        summary: "a price increase the customer declines ends access at the period's end"
    ) { run in
        let product = try run.product(run.catalog.subscription, "auto-renewable subscription")
        let purchase = try await run.buy(product)
        try await run.subscription(purchase, "price-increase")
        try await run.subscription(purchase, "consent-decline")
        try await run.expect(
            "after DID_CHANGE_RENEWAL_STATUS: \(product.entitlement!) still active",
            entitlements: [product.entitlement!: true])
        try await run.passExpiry(of: purchase)
        try await run.expect(
            "after EXPIRED (PRICE_INCREASE): \(product.entitlement!) not active",
            entitlements: [product.entitlement!: false])
    },
    Story(
        name: "consumption-request", kind: .life,
        summary: "CONSUMPTION_REQUEST is answered 2xx and changes nothing; consumption information sent is noted"
    ) { run in
        let coins = try run.product(run.catalog.consumable, "consumable with a balance")
        let purchase = try await run.buy(coins)
        try await run.transaction(purchase, "request-refund", body: #"{"reason": "UNINTENDED_PURCHASE"}"#)
        try await run.awaitConsumptionInformation(purchase)
        try await run.expect(
            "after CONSUMPTION_REQUEST: \(coins.balance!) still \(coins.amount!)",
            balances: [coins.balance!: coins.amount!])
    },
    Story(name: "test-notification", kind: .life, summary: "the TEST notification is answered 2xx") { run in
        let signed = try await run.store.signedTestNotification()
        try await run.step("the store sends the TEST notification") {
            let body = try JSONEncoder().encode(["signedPayload": signed])
            let status = await run.relay.take(body)
            guard (200..<300).contains(status.code) else {
                throw StoryFailure("the server answered TEST with \(status.code)")
            }
        }
    },
]

private let faultStories: [Story] = [
    Story(name: "duplicate", kind: .fault, summary: "the same notification delivered twice credits once") { run in
        let coins = try run.product(run.catalog.consumable, "consumable with a balance")
        run.relay.set(.duplicate)
        _ = try await run.buy(coins)
        try await run.expect(
            "after ONE_TIME_CHARGE twice: \(coins.balance!) \(coins.amount!), not more",
            balances: [coins.balance!: coins.amount!])
    },
    Story(
        name: "concurrent-duplicate", kind: .fault,
        summary: "the same notification delivered twice at once credits once"
    ) { run in
        let coins = try run.product(run.catalog.consumable, "consumable with a balance")
        run.relay.set(.concurrentDuplicate)
        _ = try await run.buy(coins)
        try await run.expect(
            "after ONE_TIME_CHARGE twice at once: \(coins.balance!) \(coins.amount!), not more",
            balances: [coins.balance!: coins.amount!])
    },
    Story(
        name: "refund-before-purchase", kind: .fault,
        summary: "a REFUND that arrives before the purchase's notification still wins"
    ) { run in
        let product = try run.product(run.catalog.nonConsumable, "non-consumable")
        run.relay.set(.hold, for: [.oneTimeCharge])
        run.note("the relay holds ONE_TIME_CHARGE")
        let purchase = try await run.buy(product)
        try await run.transaction(purchase, "refund")
        try await run.step("the held ONE_TIME_CHARGE arrives after the REFUND") { await run.relay.release() }
        try await run.expect(
            "after REFUND, then ONE_TIME_CHARGE: \(product.entitlement!) not active",
            entitlements: [product.entitlement!: false])
        if run.server.file.purchaseCall != nil {
            try await run.report(purchase)
            try await run.expect(
                "after the app's late report too: \(product.entitlement!) not active",
                entitlements: [product.entitlement!: false])
        }
    },
    Story(
        name: "renewal-before-subscribed", kind: .fault,
        summary: "DID_RENEW before SUBSCRIBED leaves the subscription active"
    ) { run in
        let product = try run.product(run.catalog.subscription, "auto-renewable subscription")
        run.relay.set(.hold, for: [.subscribed])
        run.note("the relay holds SUBSCRIBED")
        let purchase = try await run.buy(product)
        try await run.passExpiry(of: purchase)
        try await run.step("the held SUBSCRIBED arrives after DID_RENEW") { await run.relay.release() }
        try await run.expect(
            "after DID_RENEW, then SUBSCRIBED: \(product.entitlement!) active",
            entitlements: [product.entitlement!: true])
    },
    Story(name: "app-report-first", kind: .fault, summary: "the app's report before the notification credits once") {
        run in
        let coins = try run.product(run.catalog.consumable, "consumable with a balance")
        guard run.server.file.purchaseCall != nil else { throw NotMade("the check file has no purchaseCall") }
        run.relay.set(.hold, for: [.oneTimeCharge])
        let purchase = try await run.buy(coins)
        try await run.report(purchase)
        try await run.expect(
            "after the app's report: \(coins.balance!) \(coins.amount!)", balances: [coins.balance!: coins.amount!])
        try await run.step("the held ONE_TIME_CHARGE arrives") { await run.relay.release() }
        try await run.expect(
            "after ONE_TIME_CHARGE too: \(coins.balance!) still \(coins.amount!)",
            balances: [coins.balance!: coins.amount!])
    },
    Story(name: "app-report-late", kind: .fault, summary: "the app's report after the notification credits once") {
        run in
        let coins = try run.product(run.catalog.consumable, "consumable with a balance")
        guard run.server.file.purchaseCall != nil else { throw NotMade("the check file has no purchaseCall") }
        let purchase = try await run.buy(coins)
        try await run.report(purchase)
        try await run.expect(
            "after ONE_TIME_CHARGE and the app's report: \(coins.balance!) \(coins.amount!)",
            balances: [coins.balance!: coins.amount!])
    },
    Story(
        name: "lost-notification", kind: .fault,
        summary: "a purchase whose notification was lost is found by the server's reconciliation"
    ) { run in
        let product = try run.product(run.catalog.nonConsumable, "non-consumable")
        guard let call = run.server.file.reconcileCall else { throw NotMade("the check file has no reconcileCall") }
        run.relay.set(.drop, for: [.oneTimeCharge])
        run.note("the relay loses ONE_TIME_CHARGE")
        _ = try await run.buy(product)
        try await run.step("the server is asked to reconcile") {
            try await run.server.perform(
                call, values: try await run.timeValues().merging(["appAccountToken": run.userToken]) { $1 },
                what: "the reconcile call")
        }
        try await run.expect(
            "after reconciliation: \(product.entitlement!) active", entitlements: [product.entitlement!: true])
    },
    Story(
        name: "server-down", kind: .fault,
        summary: "a notification the server missed while down arrives on Apple's retry schedule and is granted"
    ) { run in
        let product = try run.product(run.catalog.nonConsumable, "non-consumable")
        run.relay.set(.down)
        run.note("the server is down (the relay answers the store 503)")
        _ = try await run.buy(product)
        try await run.advance(by: "1h")
        run.relay.set(.forward)
        run.note("the server is back")
        try await run.advance(by: "12h")
        let passed = run.relay.deliveries.filter {
            $0.type == .oneTimeCharge && $0.handling == "forward" && $0.appAccountToken == run.userToken
        }
        guard !passed.isEmpty else { throw StoryFailure("the store did not retry ONE_TIME_CHARGE after 1 h and 12 h") }
        try await run.expect(
            "after the 12-hour retry: \(product.entitlement!) active", entitlements: [product.entitlement!: true])
    },
    Story(name: "forged-notification", kind: .fault, summary: "a REFUND signed by another key changes nothing") { run in
        let product = try run.product(run.catalog.nonConsumable, "non-consumable")
        let purchase = try await run.buy(product)
        try await run.expect(
            "after ONE_TIME_CHARGE: \(product.entitlement!) active", entitlements: [product.entitlement!: true])
        guard
            let genuine = run.relay.received.last(where: {
                $0.type == .oneTimeCharge && $0.appAccountToken == run.userToken
            })
        else {
            throw CheckError("The relay saw no ONE_TIME_CHARGE for \(purchase.transactionId).")
        }
        try await run.step("a REFUND of transaction \(purchase.transactionId) signed by another key is sent") {
            let forged = try Forgery.refund(of: genuine)
            _ = await run.relay.sendForged(
                forged.body, type: .refund, uuid: forged.uuid, appAccountToken: genuine.appAccountToken)
        }
        try await run.expect(
            "after the forged REFUND: \(product.entitlement!) still active", entitlements: [product.entitlement!: true])
    },
    Story(
        name: "other-app-notification", kind: .fault, summary: "a genuine notification of another app changes nothing"
    ) { run in
        let coins = try run.product(run.catalog.consumable, "consumable with a balance")
        let other = run.store.app("\(run.store.bundleId).kiosk-check-other")
        try await run.step("another app (\(other.bundleId)) sells \(coins.productId) and notifies this server") {
            try await other.ensureApp(name: "kiosk check: another app")
            try await other.ensureConsumable(coins.productId)
            _ = try await other.updateApp(AppUpdateBody(sandboxNotificationURLs: [run.relay.url]))
        }
        do {
            try await run.step("the user buys \(coins.productId) in the other app", app: other) {
                _ = try await other.purchase(
                    TestPurchaseRequest(tester: run.tester, productId: coins.productId, appAccountToken: run.user))
            }
            try await run.expect(
                "after the other app's ONE_TIME_CHARGE: \(coins.balance!) 0", balances: [coins.balance!: 0])
        } catch {
            _ = try? await other.updateApp(AppUpdateBody(sandboxNotificationURLs: []))
            throw error
        }
        _ = try await other.updateApp(AppUpdateBody(sandboxNotificationURLs: []))
    },
]

/// Notifications signed by a chain the server must not trust.
enum Forgery {
    /// `genuine` turned into a REFUND of its transaction, with a new uuid, signed (payload and transaction) by a
    /// freshly made chain with Apple's shape.
    static func refund(of genuine: RelayedNotification) throws -> (body: Data, uuid: String) {
        guard var payload = try JSONSerialization.jsonObject(with: genuine.payload) as? [String: Any],
            var data = payload["data"] as? [String: Any],
            let signedTransaction = data["signedTransactionInfo"] as? String,
            let transactionData = JWSPayload.decode(signedTransaction),
            var transaction = try JSONSerialization.jsonObject(with: transactionData) as? [String: Any]
        else { throw CheckError("The genuine notification could not be read to forge one.") }
        let signer = JWSSigner(identity: try SigningIdentity.generate(environment: .sandbox, now: Date()))
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        transaction["revocationDate"] = now
        transaction["revocationReason"] = 0
        data["signedTransactionInfo"] = try signer.sign(
            payloadJSON: Array(try JSONSerialization.data(withJSONObject: transaction, options: .sortedKeys)))
        let uuid = UUID().uuidString.lowercased()
        payload["data"] = data
        payload["notificationType"] = "REFUND"
        payload.removeValue(forKey: "subtype")
        payload["notificationUUID"] = uuid
        payload["signedDate"] = now
        let signed = try signer.sign(
            payloadJSON: Array(try JSONSerialization.data(withJSONObject: payload, options: .sortedKeys)))
        return (try JSONEncoder().encode(["signedPayload": signed]), uuid)
    }
}

/// Signs a promotional offer as the app's server does (Apple's V1 scheme): ECDSA P-256 over the fields joined by
/// U+2063, DER, base64.
enum PromotionalOfferSigner {
    static func sign(
        bundleId: String, key: KeyResource, productId: String, offerId: String, applicationUsername: String,
        nonce: UUID, timestamp: Int64
    ) throws -> PaymentDiscount {
        guard let pem = key.privateKey else {
            throw CheckError("The store answered a new key without its private key.")
        }
        let message = [
            bundleId, key.keyId, productId, offerId, applicationUsername.lowercased(), nonce.uuidString.lowercased(),
            String(timestamp),
        ].joined(separator: "\u{2063}")
        let signature = try P256.Signing.PrivateKey(pemRepresentation: pem).signature(for: Data(message.utf8))
        return PaymentDiscount(
            identifier: offerId, keyIdentifier: key.keyId, nonce: nonce,
            signature: signature.derRepresentation.base64EncodedString(), timestamp: timestamp)
    }
}
