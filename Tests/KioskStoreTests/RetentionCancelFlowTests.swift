import Crypto
import Foundation
import KioskCore
import KioskSigning
import KioskStorage
import KioskTestSupport
import KioskTesting
import NIOHTTP1
import Testing

/// The real-time cancel flow: a sandbox subscriber turns auto-renew off (taps Cancel), the store POSTs Apple's
/// signed real-time request to the app's Get Retention Message endpoint (HTTPS on loopback), shows what it answers
/// within the budget, and applies what the subscriber does with it; a slow or failing endpoint gets Apple's default
/// behaviour. The endpoint's requests and every notification pass Apple's own verifier.
@Suite struct RetentionCancelFlowTests {
    static let start = SubscriptionPurchaseTests.start
    static let premium = SubscriptionPurchaseTests.premium
    static let monthly = SubscriptionPurchaseTests.monthly
    /// A text message with an image, one without, and a default message.
    static let withImage = "11111111-2222-4333-8444-555555555501"
    static let textOnly = "11111111-2222-4333-8444-555555555502"
    static let fallback = "11111111-2222-4333-8444-555555555503"
    static let image = "11111111-2222-4333-8444-5555555555aa"
    /// Budgets: generous where the endpoint answers (a loaded machine may be slow), Apple's where it never does.
    static let answeringBudget: Duration = .seconds(60)
    static let appleBudget: Duration = .milliseconds(700)

    /// The subscription catalog, a key, the sandbox messages, the endpoint as the real-time URL, and the tester
    /// subscribed to premium; answers the key and the original transaction id.
    static func prepare(
        _ store: TestStore, endpoint: RetentionEndpoint, receiver: NotificationReceiver, clock: ManualClock
    )
        async throws -> (ServerAPIKey, String)
    {
        try await SubscriptionPurchaseTests.prepareCatalog(store)
        try await store.setNotificationURLs([receiver.url])
        let key = try await store.createServerAPIKey()
        #expect(
            try await store.inApps(
                .PUT, "/inApps/v1/messaging/image/\(image)", key: key, body: TestPNG.fullSize, clock: clock
            ).status == 200)
        for (identifier, json) in [
            (withImage, TestStore.retentionMessage(header: "Before you go", image: image)),
            (textOnly, TestStore.retentionMessage(header: "A better plan")),
            (fallback, TestStore.retentionMessage(header: "We'd miss you")),
        ] {
            let uploaded = try await store.inApps(
                .PUT, "/inApps/v1/messaging/message/\(identifier)", key: key, json: json, clock: clock)
            #expect(uploaded.status == 200, "\(uploaded.text)")
        }
        let url = try await store.inApps(
            .PUT, "/inApps/v1/messaging/realtime/url", key: key, json: ["realtimeURL": endpoint.url], clock: clock)
        #expect(url.status == 200, "\(url.text)")
        let bought = try await store.pay(premium, token: try await store.signIn())
        #expect(bought.json["state"] as? String == "purchased", "\(bought.text)")
        try await receiver.drain(1, from: store)
        return (key, try #require(bought.transactionId))
    }

    /// The `auto-renew-off` test control with the subscriber's `choice`.
    static func cancel(
        _ store: TestStore, _ originalTransactionId: String, choice: String? = nil, requestIdentifier: UUID? = nil
    ) async throws -> [String: Any] {
        var json: [String: Any] = ["action": "auto-renew-off"]
        if let choice { json["retentionChoice"] = choice }
        if let requestIdentifier { json["requestIdentifier"] = requestIdentifier.uuidString }
        let answer = try await store.request(
            .POST, "/sandbox/test/v1/apps/\(TestStore.bundleId)/subscriptions/\(originalTransactionId)", json: json,
            token: .some(store.adminToken))
        #expect(answer.status == 200, "\(answer.text)")
        return answer.json
    }

    static func autoRenewOn(_ store: TestStore, _ originalTransactionId: String) async throws {
        let answer = try await store.request(
            .POST, "/sandbox/test/v1/apps/\(TestStore.bundleId)/subscriptions/\(originalTransactionId)",
            json: ["action": "auto-renew-on"], token: .some(store.adminToken))
        #expect(answer.status == 200, "\(answer.text)")
    }

    /// The notifications delivered since the last look: type, subtype, and the renewal info's claims.
    static func notifications(_ receiver: NotificationReceiver, store: TestStore) async throws
        -> [(type: String, subtype: String?, renewal: [String: Any], transaction: [String: Any])]
    {
        let payloads = try await receiver.payloads(from: store)
        try await receiver.drain(payloads.count, from: store)
        return try payloads.map { payload in
            let claims = try AppleVerifier.claims(of: payload)
            let data = claims["data"] as? [String: Any] ?? [:]
            return (
                claims["notificationType"] as? String ?? "", claims["subtype"] as? String,
                try (data["signedRenewalInfo"] as? String).map(AppleVerifier.claims) ?? [:],
                try (data["signedTransactionInfo"] as? String).map(AppleVerifier.claims) ?? [:]
            )
        }
    }

    // Proves each answer the endpoint gives is shown and applied: a message (the subscriber cancels: auto-renew off
    // and DID_CHANGE_RENEWAL_STATUS; or stays: nothing changes), a plan switch (DID_CHANGE_RENEWAL_PREF/DOWNGRADE),
    // a promotional offer signed either way (OFFER_REDEEMED, offerType 2 at the next renewal) and one whose
    // signature the store refuses (nothing changes); that the request the store signed is what Apple's verifier
    // accepts; and that the answer, the console API and the events say which message the subscriber saw.
    @Test(arguments: TestDatabase.available)
    func realtimeAnswersAreShownAndApplied(database: TestDatabase) async throws {
        let clock = ManualClock(Self.start)
        try await withRetentionEndpoint { endpoint in
            try await withNotificationReceiver { receiver in
                try await withTestStore(
                    engine: database, clock: clock, configure: endpoint.configure(budget: Self.answeringBudget)
                ) { store in
                    let (key, original) = try await Self.prepare(
                        store, endpoint: endpoint, receiver: receiver, clock: clock)

                    // A message, then the subscriber confirms.
                    endpoint.answer = .json(#"{"message":{"messageIdentifier":"\#(Self.withImage)"}}"#)
                    let cancelled = try await Self.cancel(store, original)
                    #expect(cancelled["autoRenewStatus"] as? Bool == false)
                    let event = try #require(cancelled["retention"] as? [String: Any], "\(cancelled)")
                    #expect(event["source"] as? String == "realtime")
                    #expect(event["outcome"] as? String == "cancelled")
                    #expect((event["realtime"] as? [String: Any])?["result"] as? String == "answered")
                    let shown = try #require(event["shown"] as? [String: Any])
                    #expect(shown["kind"] as? String == "message")
                    #expect(shown["messageIdentifier"] as? String == Self.withImage)
                    #expect(shown["header"] as? String == "Before you go")
                    #expect((event["summary"] as? String)?.contains("auto-renew is off") == true, "\(event)")
                    var sent = try await Self.notifications(receiver, store: store)
                    #expect(sent.map(\.type) == ["DID_CHANGE_RENEWAL_STATUS"])
                    #expect(sent.first?.subtype == "AUTO_RENEW_DISABLED")

                    // The store's request: Apple's verifier accepts it, and it names the subscription.
                    let requests = endpoint.received
                    #expect(requests.count == 1)
                    try await AppleVerifier.expectAccepts(
                        requests, kind: .realtimeRequest, store: store, bundleId: TestStore.bundleId)
                    let claims = try AppleVerifier.claims(of: try #require(requests.first))
                    #expect(claims["originalTransactionId"] as? String == original)
                    #expect(claims["productId"] as? String == Self.premium)
                    #expect(claims["userLocale"] as? String == "en-US")
                    #expect(claims["environment"] as? String == "Sandbox")
                    #expect(claims["requestIdentifier"] as? String == event["requestIdentifier"] as? String)
                    #expect(claims["signedDate"] as? Int64 == clock.now().millisecondsSince1970)

                    // The same message, and the subscriber stays: nothing changes, nothing is sent.
                    try await Self.autoRenewOn(store, original)
                    _ = try await Self.notifications(receiver, store: store)
                    let kept = try await Self.cancel(store, original, choice: "accept")
                    #expect(kept["autoRenewStatus"] as? Bool == true)
                    #expect((kept["retention"] as? [String: Any])?["outcome"] as? String == "kept")
                    #expect(try await Self.notifications(receiver, store: store).isEmpty)

                    // A plan switch to the lower level: a downgrade at the next renewal.
                    endpoint.answer = .json(
                        #"{"alternateProduct":{"messageIdentifier":"\#(Self.textOnly)","productId":"\#(Self.monthly)"}}"#
                    )
                    let switched = try await Self.cancel(store, original, choice: "accept")
                    #expect(switched["autoRenewStatus"] as? Bool == true)
                    #expect(switched["autoRenewProductId"] as? String == Self.monthly)
                    let switchEvent = try #require(switched["retention"] as? [String: Any])
                    #expect(switchEvent["outcome"] as? String == "switched", "\(switchEvent)")
                    #expect((switchEvent["shown"] as? [String: Any])?["productId"] as? String == Self.monthly)
                    sent = try await Self.notifications(receiver, store: store)
                    #expect(sent.map(\.type) == ["DID_CHANGE_RENEWAL_PREF"])
                    #expect(sent.first?.subtype == "DOWNGRADE")
                    #expect(sent.first?.renewal["autoRenewProductId"] as? String == Self.monthly)

                    // A promotional offer with Apple's first signature scheme.
                    let signingKey = try P256.Signing.PrivateKey(pemRepresentation: key.privateKeyPEM)
                    let v1 = try OfferTests.discount(
                        keyId: key.keyId, key: signingKey, timestamp: clock.now().millisecondsSince1970)
                    func promotional(_ signature: String) -> RetentionEndpoint.Answer {
                        .json(#"{"promotionalOffer":{"messageIdentifier":"\#(Self.textOnly)",\#(signature)}}"#)
                    }
                    endpoint.answer = promotional(
                        #""promotionalOfferSignatureV1":{"encodedSignature":"\#(v1["signature"]!)","productId":"\#(Self.premium)","nonce":"\#(v1["nonce"]!)","timestamp":\#(v1["timestamp"]!),"keyId":"\#(key.keyId)","offerIdentifier":"comeback"}"#
                    )
                    let redeemed = try await Self.cancel(store, original, choice: "accept")
                    #expect(redeemed["autoRenewStatus"] as? Bool == true)
                    #expect(redeemed["autoRenewProductId"] as? String == Self.premium)
                    let offerEvent = try #require(redeemed["retention"] as? [String: Any])
                    #expect(offerEvent["outcome"] as? String == "offer-redeemed", "\(offerEvent)")
                    #expect((offerEvent["shown"] as? [String: Any])?["offerIdentifier"] as? String == "comeback")
                    sent = try await Self.notifications(receiver, store: store)
                    #expect(sent.map(\.type) == ["OFFER_REDEEMED"])
                    #expect(sent.first?.subtype == nil)
                    #expect(sent.first?.renewal["offerType"] as? Int == 2)
                    #expect(sent.first?.renewal["offerIdentifier"] as? String == "comeback")

                    // The same nonce again: the store refuses the offer, and nothing changes.
                    let replayed = try await Self.cancel(store, original, choice: "accept")
                    let refusal = try #require(replayed["retention"] as? [String: Any])
                    #expect(refusal["outcome"] as? String == "refused", "\(refusal)")
                    #expect((refusal["summary"] as? String)?.contains("nonce") == true, "\(refusal)")
                    #expect(replayed["autoRenewStatus"] as? Bool == true)
                    #expect(try await Self.notifications(receiver, store: store).isEmpty)

                    // A promotional offer signed as a compact JWS.
                    let v2 = try SignedOfferTests.sign(key, iat: clock.now())
                    endpoint.answer = promotional(#""promotionalOfferSignatureV2":"\#(v2)""#)
                    let jws = try await Self.cancel(store, original, choice: "accept")
                    #expect((jws["retention"] as? [String: Any])?["outcome"] as? String == "offer-redeemed", "\(jws)")
                    #expect(try await Self.notifications(receiver, store: store).map(\.type) == ["OFFER_REDEEMED"])

                    // The console API lists every cancellation, newest first, with the message seen.
                    let overview = try await store.request(.GET, "/admin/v1/apps/\(TestStore.bundleId)/retention")
                    let events = try #require(overview.json["events"] as? [[String: Any]], "\(overview.text)")
                    #expect(
                        events.map { $0["outcome"] as? String ?? "" }
                            == ["offer-redeemed", "refused", "offer-redeemed", "switched", "kept", "cancelled"])
                    #expect(
                        (events.last?["shown"] as? [String: Any])?["messageIdentifier"] as? String == Self.withImage)
                    #expect(endpoint.received.count == 6)
                    try await AppleVerifier.expectAccepts(
                        endpoint.received, kind: .realtimeRequest, store: store, bundleId: TestStore.bundleId)
                }
            }
        }
    }

    /// A retention offer of premium for the app, and premium's default message: what the fallback shows.
    static func offerRetention(_ store: TestStore, key: ServerAPIKey, clock: ManualClock) async throws {
        let configured = try await store.inApps(
            .PUT, "/inApps/v1/messaging/default/\(premium)/en-US", key: key, json: ["messageIdentifier": fallback],
            clock: clock)
        #expect(configured.status == 200, "\(configured.text)")
        let offer = try await store.request(
            .POST, "/admin/v1/apps/\(TestStore.bundleId)/retention/offers",
            json: [
                "productId": premium, "identifier": "stay_half", "referenceName": "Half a month",
                "paymentMode": "pay_up_front", "period": "P1M", "pricing": ["customPrices": ["USA": 199]],
            ])
        #expect(offer.status == 200, "\(offer.text)")
    }

    // Proves a cancellation is idempotent by the client's request identifier: the request sent again (a client's
    // retry) answers the first outcome without asking the endpoint again — the subscriber who kept the
    // subscription keeps it even if the retry says cancel — and an offer taken is redeemed once, with one
    // notification; the same identifier for another subscription is refused.
    @Test(arguments: TestDatabase.available)
    func aRepeatedCancellationAnswersTheFirstOutcome(database: TestDatabase) async throws {
        let clock = ManualClock(Self.start)
        try await withRetentionEndpoint { endpoint in
            try await withNotificationReceiver { receiver in
                try await withTestStore(
                    engine: database, clock: clock, configure: endpoint.configure(budget: Self.answeringBudget)
                ) { store in
                    let (key, original) = try await Self.prepare(
                        store, endpoint: endpoint, receiver: receiver, clock: clock)
                    try await Self.offerRetention(store, key: key, clock: clock)

                    endpoint.answer = .json(#"{"message":{"messageIdentifier":"\#(Self.textOnly)"}}"#)
                    let kept = UUID()
                    let first = try await Self.cancel(store, original, choice: "accept", requestIdentifier: kept)
                    let retried = try await Self.cancel(store, original, choice: "cancel", requestIdentifier: kept)
                    expectSameOutcome(first, retried, outcome: "kept", identifier: kept)
                    #expect(retried["autoRenewStatus"] as? Bool == true)
                    #expect(endpoint.received.count == 1)
                    #expect(try await Self.notifications(receiver, store: store).isEmpty)

                    // The endpoint's answer unusable: the retention offer, taken twice by one request.
                    endpoint.answer = .json("{}")
                    let taken = UUID()
                    let redeemed = try await Self.cancel(store, original, choice: "accept", requestIdentifier: taken)
                    let again = try await Self.cancel(store, original, choice: "accept", requestIdentifier: taken)
                    expectSameOutcome(redeemed, again, outcome: "offer-redeemed", identifier: taken)
                    #expect(endpoint.received.count == 2)
                    #expect(try await Self.notifications(receiver, store: store).map(\.type) == ["OFFER_REDEEMED"])
                    let overview = try await store.request(.GET, "/admin/v1/apps/\(TestStore.bundleId)/retention")
                    let events = try #require(overview.json["events"] as? [[String: Any]], "\(overview.text)")
                    #expect(events.map { $0["outcome"] as? String ?? "" } == ["offer-redeemed", "kept"])

                    // Another tester's subscription.
                    try await store.createTester("other@example.com")
                    let other = try await store.pay(Self.premium, token: try await store.signIn("other@example.com"))
                    try await receiver.drain(1, from: store)
                    let reused = try await store.request(
                        .POST,
                        "/sandbox/test/v1/apps/\(TestStore.bundleId)/subscriptions/\(try #require(other.transactionId))",
                        json: ["action": "auto-renew-off", "requestIdentifier": taken.uuidString],
                        token: .some(store.adminToken))
                    #expect(reused.status == 409 && reused.errorCode == "idempotency_key_reused", "\(reused.text)")
                    #expect(endpoint.received.count == 2)

                    // The console's "Turn auto-renew off" pressed twice on one page: one cancellation flow.
                    let console = ConsoleTests.Visitor(store)
                    _ = try await console.signIn()
                    let page = try await console.get("/console/customers/sandbox/tester%40example.com").text
                    let form = try Self.subscriptionForm(in: page, original: original)
                    for _ in 1...2 {
                        let pressed = try await console.post(form.action, form.fields + "&action=auto-renew-off")
                        #expect(pressed.status == 303, "\(pressed.text)")
                    }
                    #expect(endpoint.received.count == 3, "one request to the endpoint for the page")
                }
            }
        }
    }

    /// The console's test-control form of subscription `original` on a customer page: where it posts and its hidden
    /// fields, form-encoded.
    static func subscriptionForm(in page: String, original: String) throws -> (action: String, fields: String) {
        let start = try #require(page.range(of: "/subscriptions/\(original)\""), "no form for \(original)")
        let before = page[..<start.lowerBound]
        let actionStart = try #require(before.range(of: "action=\"", options: .backwards))
        let action = String(page[actionStart.upperBound..<start.lowerBound]) + "/subscriptions/\(original)"
        let form = page[start.upperBound...]
        let end = try #require(form.range(of: "</form>"))
        var fields: [String] = []
        for match in form[..<end.lowerBound].matches(of: /<input type="hidden" name="([^"]+)" value="([^"]*)">/) {
            let value = String(match.2).replacingOccurrences(of: "&#x2F;", with: "/")
            fields.append("\(match.1)=\(value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? value)")
        }
        return (action, fields.joined(separator: "&"))
    }

    // Proves a plan switch may name a product's monthly plan with a 12-month commitment when the storefront offers
    // it: taking it buys that plan (a downgrade at the next renewal); a product without one is not shown.
    @Test func aSwitchToAMonthlyPlanIsShownWhereItIsOffered() async throws {
        let clock = ManualClock(Self.start)
        try await withRetentionEndpoint { endpoint in
            try await withNotificationReceiver { receiver in
                try await withTestStore(clock: clock, configure: endpoint.configure(budget: Self.answeringBudget)) {
                    store in
                    let (_, original) = try await Self.prepare(
                        store, endpoint: endpoint, receiver: receiver, clock: clock)
                    let planned = try await store.request(
                        .PATCH, "/admin/v1/apps/\(TestStore.bundleId)/products/\(SubscriptionPurchaseTests.yearly)",
                        json: ["monthlyPlan": ["pricing": ["customPrices": ["USA": 99]]]])
                    #expect(planned.status == 200, "\(planned.text)")
                    func monthlyPlan(of productId: String) -> RetentionEndpoint.Answer {
                        .json(
                            #"{"alternateProduct":{"messageIdentifier":"\#(Self.textOnly)","productId":"\#(productId)","billingPlanType":"MONTHLY"}}"#
                        )
                    }

                    endpoint.answer = monthlyPlan(of: Self.monthly)
                    let refused = try await Self.cancel(store, original, choice: "accept")
                    let unusable = try #require(refused["retention"] as? [String: Any])
                    let realtime = try #require(unusable["realtime"] as? [String: Any])
                    #expect(realtime["result"] as? String == "invalid-answer", "\(unusable)")
                    #expect(
                        realtime["reason"] as? String == "\(Self.monthly) has no monthly plan offered in USA",
                        "\(unusable)")
                    try await Self.autoRenewOn(store, original)
                    _ = try await Self.notifications(receiver, store: store)

                    endpoint.answer = monthlyPlan(of: SubscriptionPurchaseTests.yearly)
                    let switched = try await Self.cancel(store, original, choice: "accept")
                    let event = try #require(switched["retention"] as? [String: Any])
                    #expect(event["outcome"] as? String == "switched", "\(event)")
                    #expect(switched["autoRenewStatus"] as? Bool == true)
                    #expect(switched["autoRenewProductId"] as? String == SubscriptionPurchaseTests.yearly)
                    let sent = try await Self.notifications(receiver, store: store)
                    #expect(sent.map(\.type) == ["DID_CHANGE_RENEWAL_PREF"])
                    #expect(sent.first?.subtype == "DOWNGRADE")
                }
            }
        }
    }

    // Proves that an answer the store cannot show (a message that does not exist, one App Review rejected, an
    // image on a switch-plan message, several options at once) gets Apple's fallback: the app's retention offer the
    // subscriber is eligible for, with the default message; that taking it notifies OFFER_REDEEMED and renews with
    // offerType 5; and that once redeemed it is not offered again, so the default message is shown instead.
    @Test(arguments: TestDatabase.available)
    func retentionOfferWhenTheAnswerCannotBeShown(database: TestDatabase) async throws {
        let clock = ManualClock(Self.start)
        try await withRetentionEndpoint { endpoint in
            try await withNotificationReceiver { receiver in
                try await withTestStore(
                    engine: database, clock: clock, configure: endpoint.configure(budget: Self.answeringBudget)
                ) { store in
                    let (key, original) = try await Self.prepare(
                        store, endpoint: endpoint, receiver: receiver, clock: clock)
                    #expect(
                        try await store.inApps(
                            .PUT, "/inApps/v1/messaging/default/\(Self.premium)/en-US", key: key,
                            json: ["messageIdentifier": Self.fallback], clock: clock
                        ).status == 200)
                    let offer = try await store.request(
                        .POST, "/admin/v1/apps/\(TestStore.bundleId)/retention/offers",
                        json: [
                            "productId": Self.premium, "identifier": "stay_half", "referenceName": "Half a month",
                            "paymentMode": "pay_up_front", "period": "P1M", "pricing": ["customPrices": ["USA": 199]],
                        ])
                    #expect(offer.status == 200, "\(offer.text)")
                    let rejected = try await store.request(
                        .POST, "/admin/v1/apps/\(TestStore.bundleId)/retention/review",
                        json: ["environment": "sandbox", "messageIdentifier": Self.textOnly, "state": "REJECTED"])
                    #expect(rejected.status == 200, "\(rejected.text)")

                    for (answer, reason) in [
                        (#"{"message":{"messageIdentifier":"\#(UUID())"}}"#, "there is no message"),
                        (#"{"message":{"messageIdentifier":"\#(Self.textOnly)"}}"#, "REJECTED"),
                        (
                            #"{"alternateProduct":{"messageIdentifier":"\#(Self.withImage)","productId":"\#(Self.monthly)"}}"#,
                            "has an image"
                        ),
                        (
                            #"{"message":{"messageIdentifier":"\#(Self.withImage)"},"alternateProduct":{"productId":"x"}}"#,
                            "more than one"
                        ),
                        (#"{}"#, "none of"),
                        (#"{"advancedCommerceInfo":{"advancedCommerceData":"e30="}}"#, "Advanced Commerce"),
                    ] {
                        endpoint.answer = .json(answer)
                        let shown = try await Self.cancel(store, original)
                        let event = try #require(shown["retention"] as? [String: Any])
                        let realtime = try #require(event["realtime"] as? [String: Any])
                        #expect(realtime["result"] as? String == "invalid-answer", "\(answer): \(event)")
                        #expect((realtime["reason"] as? String)?.contains(reason) == true, "\(answer): \(event)")
                        #expect(event["source"] as? String == "retention-offer", "\(answer): \(event)")
                        try await Self.autoRenewOn(store, original)
                    }
                    // An answer larger than the store reads is no answer either.
                    endpoint.answer = .json(String(repeating: " ", count: 70_000) + "{}")
                    let huge = try await Self.cancel(store, original)
                    let hugeEvent = try #require(huge["retention"] as? [String: Any])
                    let hugeCall = try #require(hugeEvent["realtime"] as? [String: Any])
                    #expect(hugeCall["result"] as? String == "failed", "\(hugeEvent)")
                    #expect(hugeCall["sendAttemptResult"] as? String == "INVALID_RESPONSE")
                    #expect((hugeCall["reason"] as? String)?.contains("64 KiB") == true, "\(hugeEvent)")
                    #expect(hugeEvent["source"] as? String == "retention-offer")
                    try await Self.autoRenewOn(store, original)
                    _ = try await Self.notifications(receiver, store: store)

                    endpoint.answer = .json(#"{"message":{"messageIdentifier":"\#(UUID())"}}"#)
                    let taken = try await Self.cancel(store, original, choice: "accept")
                    let event = try #require(taken["retention"] as? [String: Any])
                    #expect(event["outcome"] as? String == "offer-redeemed", "\(event)")
                    let shown = try #require(event["shown"] as? [String: Any])
                    #expect(shown["kind"] as? String == "retention-offer")
                    #expect(shown["offerIdentifier"] as? String == "stay_half")
                    #expect(shown["messageIdentifier"] as? String == Self.fallback)
                    #expect(taken["autoRenewStatus"] as? Bool == true)
                    var sent = try await Self.notifications(receiver, store: store)
                    #expect(sent.map(\.type) == ["OFFER_REDEEMED"])
                    #expect(sent.first?.subtype == nil)
                    #expect(sent.first?.renewal["offerType"] as? Int == 5)
                    #expect(sent.first?.renewal["offerIdentifier"] as? String == "stay_half")
                    #expect(sent.first?.renewal["offerDiscountType"] as? String == "PAY_UP_FRONT")

                    // The next renewal is charged with the retention offer.
                    let renewed = try await store.request(
                        .POST, "/sandbox/test/v1/apps/\(TestStore.bundleId)/subscriptions/\(original)",
                        json: ["action": "renew"], token: .some(store.adminToken))
                    #expect(renewed.status == 200, "\(renewed.text)")
                    sent = try await Self.notifications(receiver, store: store)
                    #expect(sent.map(\.type) == ["DID_RENEW"])
                    #expect(sent.first?.transaction["offerType"] as? Int == 5)
                    #expect(sent.first?.transaction["offerIdentifier"] as? String == "stay_half")
                    #expect(sent.first?.transaction["offerPeriod"] as? String == "P1M")
                    #expect(sent.first?.transaction["price"] as? Int == 1990)

                    // Redeemed once, it is not offered again: the default message is.
                    let again = try await Self.cancel(store, original)
                    let second = try #require(again["retention"] as? [String: Any])
                    #expect(second["source"] as? String == "default", "\(second)")
                    #expect((second["shown"] as? [String: Any])?["messageIdentifier"] as? String == Self.fallback)
                    #expect(again["autoRenewStatus"] as? Bool == false)
                }
            }
        }
    }

    // Proves Apple's budget decides, not luck: an endpoint that never answers is given up on after the budget and
    // the default message is shown; one that fails (HTTP 500) too; without a default message nothing is shown;
    // without a real-time URL the store asks no one. The cancellation proceeds each time.
    @Test(arguments: TestDatabase.available)
    func aSlowOrFailingEndpointGetsTheDefaultBehaviour(database: TestDatabase) async throws {
        let clock = ManualClock(Self.start)
        try await withRetentionEndpoint { endpoint in
            try await withNotificationReceiver { receiver in
                try await withTestStore(
                    engine: database, clock: clock, configure: endpoint.configure(budget: Self.appleBudget)
                ) { store in
                    let (key, original) = try await Self.prepare(
                        store, endpoint: endpoint, receiver: receiver, clock: clock)
                    #expect(
                        try await store.inApps(
                            .PUT, "/inApps/v1/messaging/default/\(Self.premium)/en-US", key: key,
                            json: ["messageIdentifier": Self.withImage], clock: clock
                        ).status == 200)

                    endpoint.answer = .never
                    let slow = try await Self.cancel(store, original, choice: "accept")
                    let event = try #require(slow["retention"] as? [String: Any])
                    let realtime = try #require(event["realtime"] as? [String: Any])
                    #expect(realtime["result"] as? String == "timed-out", "\(event)")
                    #expect(realtime["sendAttemptResult"] as? String == "TIMED_OUT")
                    #expect((realtime["milliseconds"] as? Int ?? 0) >= 700)
                    #expect(realtime["budgetMilliseconds"] as? Int == 700)
                    #expect(event["source"] as? String == "default")
                    #expect((event["shown"] as? [String: Any])?["messageIdentifier"] as? String == Self.withImage)
                    // A default message offers nothing to take: accepting it keeps the subscription.
                    #expect(event["outcome"] as? String == "kept")
                    #expect(slow["autoRenewStatus"] as? Bool == true)

                    endpoint.answer = .status(500)
                    let failing = try await Self.cancel(store, original)
                    let failed = try #require(failing["retention"] as? [String: Any])
                    #expect((failed["realtime"] as? [String: Any])?["httpStatus"] as? Int == 500, "\(failed)")
                    #expect((failed["realtime"] as? [String: Any])?["result"] as? String == "failed")
                    #expect(failed["source"] as? String == "default")
                    #expect(failed["outcome"] as? String == "cancelled")
                    #expect(failing["autoRenewStatus"] as? Bool == false)
                    #expect(
                        try await Self.notifications(receiver, store: store).map(\.type) == [
                            "DID_CHANGE_RENEWAL_STATUS"
                        ])

                    // No default message, no real-time URL: nothing is shown, nobody is asked.
                    try await Self.autoRenewOn(store, original)
                    #expect(
                        try await store.inApps(
                            .DELETE, "/inApps/v1/messaging/default/\(Self.premium)/en-US", key: key, clock: clock
                        ).status == 200)
                    #expect(
                        try await store.inApps(.DELETE, "/inApps/v1/messaging/realtime/url", key: key, clock: clock)
                            .status == 200)
                    let asked = endpoint.received.count
                    let bare = try await Self.cancel(store, original, choice: "accept")
                    let nothing = try #require(bare["retention"] as? [String: Any])
                    #expect(nothing["realtime"] == nil)
                    #expect(nothing["source"] as? String == "none")
                    #expect((nothing["shown"] as? [String: Any])?["kind"] as? String == "none")
                    #expect(nothing["outcome"] as? String == "cancelled")
                    #expect(endpoint.received.count == asked)
                    #expect(bare["autoRenewStatus"] as? Bool == false)
                }
            }
        }
    }

    /// Polls a performance test's result until it is no longer `PENDING`.
    static func performanceTestResult(
        _ requestId: String, store: TestStore, key: ServerAPIKey, clock: ManualClock
    ) async throws -> [String: Any] {
        for _ in 0..<1200 {
            let answer = try await store.inApps(
                .GET, "/inApps/v1/messaging/performanceTest/result/\(requestId)", key: key, clock: clock)
            #expect(answer.status == 200, "\(answer.text)")
            if answer.json["result"] as? String != "PENDING" { return answer.json }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("the performance test \(requestId) never finished")
        return [:]
    }

    // Proves an app runs one performance test at a time, decided by the store, not by luck: starts sent at once
    // get exactly one test, the others Apple's 4000213; and that a test the store cannot run (its purchase gone,
    // found when a restarted store resumes it) ends FAIL with why instead of staying pending and blocking the next.
    @Test(arguments: TestDatabase.available)
    func performanceTestsRunOneAtATimeAndEndEvenWhenTheyCannotRun(database: TestDatabase) async throws {
        let clock = ManualClock(Self.start)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-perf-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withRetentionEndpoint { endpoint in
            try await withNotificationReceiver { receiver in
                try await database.withFreshDatabase { url in
                    let configure = endpoint.configure(budget: Self.answeringBudget)
                    let (key, original, stuck) = try await withTestStore(
                        databaseURL: url, clock: clock, dataDirectory: directory, configure: configure
                    ) { store in
                        let (key, original) = try await Self.prepare(
                            store, endpoint: endpoint, receiver: receiver, clock: clock)
                        endpoint.answer = .held("{}")
                        let starts = try await withThrowingTaskGroup(of: TestStore.Answer.self) { group in
                            for _ in 0..<4 {
                                group.addTask {
                                    try await store.inApps(
                                        .POST, "/inApps/v1/messaging/performanceTest", key: key,
                                        json: ["originalTransactionId": original], clock: clock)
                                }
                            }
                            return try await group.reduce(into: []) { $0.append($1) }
                        }
                        let started = starts.filter { $0.status == 200 }
                        #expect(started.count == 1, "\(starts.map(\.text))")
                        #expect(
                            starts.filter { $0.status == 400 && $0.appleErrorCode == 4_000_213 }.count == 3,
                            "\(starts.map(\.text))")
                        endpoint.release()
                        let requestId = try #require(started.first?.json["requestId"] as? String)
                        let finished = try await Self.performanceTestResult(
                            requestId, store: store, key: key, clock: clock)
                        #expect(finished["result"] as? String == "PASS", "\(finished)")

                        // A pending test whose purchase is gone, as a stopped store could leave one.
                        let stuck = UUID().uuidString.lowercased()
                        try await store.built.database.transaction { tx in
                            let app = try #require(try await tx.app(bundleId: TestStore.bundleId))
                            try await tx.insertRetentionPerformanceTest(
                                RetentionPerformanceTestRecord(
                                    requestId: stuck, appId: app.id, environment: .sandbox,
                                    originalTransactionId: 2_999_999_999_999_999, target: endpoint.url,
                                    state: "PENDING",
                                    config:
                                        #"{"maxConcurrentRequests":4,"totalRequests":20,"totalDuration":1,"responseTimeThreshold":1,"successRateThreshold":90}"#,
                                    createdAt: clock.now()))
                        }
                        return (key, original, stuck)
                    }
                    try await withTestStore(
                        databaseURL: url, clock: clock, dataDirectory: directory, configure: configure
                    ) { store in
                        let failed = try await Self.performanceTestResult(stuck, store: store, key: key, clock: clock)
                        #expect(failed["result"] as? String == "FAIL", "\(failed)")
                        #expect(failed["numPending"] as? Int == 0, "\(failed)")
                        let overview = try await store.request(
                            .GET, "/admin/v1/apps/\(TestStore.bundleId)/retention")
                        let tests = try #require(overview.json["performanceTests"] as? [[String: Any]])
                        let reason = tests.first { $0["requestId"] as? String == stuck }?["failureReason"] as? String
                        #expect(reason?.contains("no longer exists") == true, "\(overview.text)")
                        endpoint.answer = .json("{}")
                        let next = try await store.inApps(
                            .POST, "/inApps/v1/messaging/performanceTest", key: key,
                            json: ["originalTransactionId": original], clock: clock)
                        #expect(next.status == 200, "\(next.text)")
                        let requestId = try #require(next.json["requestId"] as? String)
                        let passed = try await Self.performanceTestResult(
                            requestId, store: store, key: key, clock: clock)
                        #expect(passed["result"] as? String == "PASS", "\(passed)")
                    }
                }
            }
        }
    }

    // Proves the sandbox performance test calls the endpoint as the cancel flow does and times it: an endpoint that
    // answers passes (and then a production URL may be set), one answering 500 fails with Apple's failure reason;
    // one test at a time; and Apple's errors for what the request names.
    @Test func performanceTestTimesTheEndpoint() async throws {
        let clock = ManualClock(Self.start)
        try await withRetentionEndpoint { endpoint in
            try await withNotificationReceiver { receiver in
                try await withTestStore(clock: clock, configure: endpoint.configure(budget: Self.answeringBudget)) {
                    store in
                    let (key, original) = try await Self.prepare(
                        store, endpoint: endpoint, receiver: receiver, clock: clock)
                    func start(_ json: [String: Any]) async throws -> TestStore.Answer {
                        try await store.inApps(
                            .POST, "/inApps/v1/messaging/performanceTest", key: key, json: json, clock: clock)
                    }
                    func result(_ requestId: String) async throws -> [String: Any] {
                        for _ in 0..<1200 {
                            let answer = try await store.inApps(
                                .GET, "/inApps/v1/messaging/performanceTest/result/\(requestId)", key: key, clock: clock
                            )
                            #expect(answer.status == 200, "\(answer.text)")
                            if answer.json["result"] as? String != "PENDING" { return answer.json }
                            try await Task.sleep(for: .milliseconds(100))
                        }
                        Issue.record("the performance test \(requestId) never finished")
                        return [:]
                    }

                    endpoint.answer = .json(#"{"message":{"messageIdentifier":"\#(Self.withImage)"}}"#)
                    let started = try await start(["originalTransactionId": original])
                    #expect(started.status == 200, "\(started.text)")
                    let config = try #require(started.json["config"] as? [String: Any])
                    #expect(config["responseTimeThreshold"] as? Int == 60_000)
                    #expect(config["totalRequests"] as? Int == 20)
                    let passed = try await result(try #require(started.json["requestId"] as? String))
                    #expect(passed["result"] as? String == "PASS", "\(passed)")
                    #expect(passed["successRate"] as? Int == 100)
                    #expect(passed["numPending"] as? Int == 0)
                    #expect(passed["target"] as? String == endpoint.url)
                    #expect((passed["responseTimes"] as? [String: Any])?["p95"] is Int)
                    #expect(endpoint.received.count == 20)
                    let production = try await store.inApps(
                        .PUT, "/inApps/v1/messaging/realtime/url", key: key,
                        json: ["realtimeURL": "https://example.com/production"], sandbox: false, clock: clock)
                    #expect(production.status == 200, "\(production.text)")

                    endpoint.answer = .status(500)
                    let failing = try await start(["originalTransactionId": original])
                    let failed = try await result(try #require(failing.json["requestId"] as? String))
                    #expect(failed["result"] as? String == "FAIL", "\(failed)")
                    #expect(failed["successRate"] as? Int == 0)
                    #expect(failed["failures"] as? [String: Int] == ["UNSUCCESSFUL_HTTP_RESPONSE_CODE": 20])

                    #expect(try await start([:]).appleErrorCode == 4_000_211)
                    #expect(try await start(["originalTransactionId": 5]).appleErrorCode == 4_000_211)
                    #expect(try await start(["originalTransactionId": "abc"]).appleErrorCode == 4_000_006)
                    #expect(try await start(["originalTransactionId": "2999999999999999"]).appleErrorCode == 4_000_006)
                    let renewed = try await store.request(
                        .POST, "/sandbox/test/v1/apps/\(TestStore.bundleId)/subscriptions/\(original)",
                        json: ["action": "renew"], token: .some(store.adminToken))
                    let latest = try #require(renewed.json["latestTransactionId"] as? String, "\(renewed.text)")
                    #expect(try await start(["originalTransactionId": latest]).appleErrorCode == 4_000_187)
                    let badId = try await store.inApps(
                        .GET, "/inApps/v1/messaging/performanceTest/result/nope", key: key, clock: clock)
                    #expect(badId.status == 400 && badId.appleErrorCode == 4_000_212, "\(badId.text)")
                    let unknown = try await store.inApps(
                        .GET, "/inApps/v1/messaging/performanceTest/result/\(UUID())", key: key, clock: clock)
                    #expect(unknown.status == 404 && unknown.appleErrorCode == 4_040_018, "\(unknown.text)")

                    // One test at a time: while one waits on the endpoint, another is refused.
                    endpoint.answer = .held("{}")
                    let held = try await start(["originalTransactionId": original])
                    #expect(held.status == 200, "\(held.text)")
                    let second = try await start(["originalTransactionId": original])
                    #expect(second.status == 400 && second.appleErrorCode == 4_000_213, "\(second.text)")
                    endpoint.release()
                    let finished = try await result(try #require(held.json["requestId"] as? String))
                    #expect(finished["result"] as? String == "PASS", "\(finished)")
                }
            }
        }
    }
}

/// The first answer of a request and its repeat tell the same outcome of the same event.
private func expectSameOutcome(
    _ first: [String: Any], _ repeated: [String: Any], outcome: String, identifier: UUID,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let event = first["retention"] as? [String: Any]
    let again = repeated["retention"] as? [String: Any]
    #expect(event?["outcome"] as? String == outcome, "\(first)", sourceLocation: sourceLocation)
    #expect(
        event?["requestIdentifier"] as? String == identifier.uuidString.lowercased(), "\(first)",
        sourceLocation: sourceLocation)
    #expect(again?["outcome"] as? String == outcome, "\(repeated)", sourceLocation: sourceLocation)
    #expect(
        again?["requestIdentifier"] as? String == event?["requestIdentifier"] as? String, sourceLocation: sourceLocation
    )
    #expect(again?["summary"] as? String == event?["summary"] as? String, sourceLocation: sourceLocation)
    #expect(repeated["autoRenewStatus"] as? Bool == first["autoRenewStatus"] as? Bool, sourceLocation: sourceLocation)
}
