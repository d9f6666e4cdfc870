import Foundation
import KioskCore
import KioskStore
import KioskTesting
import Testing

/// Win-back offers, promotional offer prices, territory availability and group submissions through the App Store
/// Connect API: what a script sets there is what the store then lists and sells, and every answer matches Apple's
/// schemas (``ConnectCatalogTests/Client`` checks each one).
@Suite struct ConnectOfferAndAvailabilityTests {
    typealias Client = ConnectCatalogTests.Client

    static func relationship(_ type: String, _ id: String) -> [String: Any] {
        ConnectCatalogTests.relationship(type, id)
    }

    /// The id of the subscription's price point at `price` (as Apple writes it, `0.99`) in `territory`.
    static func pricePoint(_ client: Client, _ subscription: String, _ territory: String, _ price: String)
        async throws -> String
    {
        let points = try await client.send(
            .GET, "/v1/subscriptions/{id}/pricePoints", id: subscription, query: "filter[territory]=\(territory)")
        let point = (points.json["data"] as? [[String: Any]])?.first {
            ($0["attributes"] as? [String: Any])?["customerPrice"] as? String == price
        }
        return try #require(point?["id"] as? String, "\(territory) \(price) in \(points.text)")
    }

    /// `{"data": [linkages], "included": [prices]}` parts of a body that prices an offer in each territory given.
    static func prices(_ type: String, _ points: [String: String]) -> (
        linkage: [[String: Any]], included: [[String: Any]]
    ) {
        let sorted = points.sorted { $0.key < $1.key }
        return (
            sorted.map { ["type": type, "id": "${\($0.key)}"] },
            sorted.map { territory, point in
                [
                    "type": type, "id": "${\(territory)}",
                    "relationships": [
                        "territory": relationship("territories", territory),
                        "subscriptionPricePoint": relationship("subscriptionPricePoints", point),
                    ],
                ]
            }
        )
    }

    static func ids(_ answer: TestStore.Answer, _ key: String = "data") -> [String] {
        (answer.json[key] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
    }

    static func total(_ answer: TestStore.Answer) -> Int? {
        ((answer.json["meta"] as? [String: Any])?["paging"] as? [String: Any])?["total"] as? Int
    }

    static func monthlyId(_ client: Client) async throws -> String {
        let apps = try await client.send(.GET, "/v1/apps", query: "filter[bundleId]=\(TestStore.bundleId)")
        let appId = try #require(ids(apps).first, "\(apps.text)")
        return "\(appId)-\(TestStore.monthly)"
    }

    @Test func aWinBackOfferMadeThroughTheAPIIsListedToCustomers() async throws {
        try await withTestStore { store in
            try await store.prepareSubscriptionCatalog()
            let client = try await Client.make(store, role: "APP_MANAGER")
            let subscription = try await Self.monthlyId(client)
            let usa = try await Self.pricePoint(client, subscription, "USA", "0.99")
            let prices = Self.prices("winBackOfferPrices", ["USA": usa])
            func offer(_ attributes: [String: Any]) -> [String: Any] {
                var all: [String: Any] = [
                    "referenceName": "Come back", "offerId": "come_back", "duration": "ONE_MONTH",
                    "offerMode": "PAY_AS_YOU_GO", "periodCount": 2,
                    "customerEligibilityPaidSubscriptionDurationInMonths": 1,
                    "customerEligibilityTimeSinceLastSubscribedInMonths": ["minimum": 1, "maximum": 6],
                    "startDate": "2020-01-01", "priority": "NORMAL",
                ]
                all.merge(attributes) { $1 }
                return [
                    "data": [
                        "type": "winBackOffers", "attributes": all,
                        "relationships": [
                            "subscription": Self.relationship("subscriptions", subscription),
                            "prices": ["data": prices.linkage],
                        ],
                    ],
                    "included": prices.included,
                ]
            }
            let monthlyPlan = try await client.send(
                .POST, "/v1/winBackOffers", json: offer(["targetSubscriptionPlanType": "MONTHLY"]))
            #expect(monthlyPlan.status == 409, "\(monthlyPlan.text)")
            let created = try await client.send(.POST, "/v1/winBackOffers", json: offer([:]))
            #expect(created.status == 201, "\(created.text)")
            let id = try #require(ConnectCatalogTests.data(created)["id"] as? String, "\(created.text)")
            let twice = try await client.send(.POST, "/v1/winBackOffers", json: offer([:]))
            #expect(twice.status == 409, "one offer per identifier: \(twice.text)")

            let listed = try await client.send(
                .GET, "/v1/subscriptions/{id}/winBackOffers", id: subscription, query: "include=prices")
            #expect(Self.ids(listed) == [id], "\(listed.text)")
            #expect(Self.ids(listed, "included") == ["\(id)~USA"], "\(listed.text)")
            let linkage = try await client.send(
                .GET, "/v1/subscriptions/{id}/relationships/winBackOffers", id: subscription)
            #expect(Self.ids(linkage) == [id], "\(linkage.text)")
            let offerPrices = try await client.send(
                .GET, "/v1/winBackOffers/{id}/prices", id: id, query: "include=subscriptionPricePoint")
            #expect(Self.ids(offerPrices) == ["\(id)~USA"] && Self.ids(offerPrices, "included") == [usa])

            let backwards = try await client.send(
                .PATCH, "/v1/winBackOffers/{id}", id: id,
                json: ["data": ["type": "winBackOffers", "id": id, "attributes": ["endDate": "2019-06-01"]]])
            #expect(backwards.status == 409, "an end before the start: \(backwards.text)")
            let changed = try await client.send(
                .PATCH, "/v1/winBackOffers/{id}", id: id,
                json: [
                    "data": [
                        "type": "winBackOffers", "id": id,
                        "attributes": ["priority": "HIGH", "customerEligibilityWaitBetweenOffersInMonths": 3],
                    ]
                ])
            #expect(changed.status == 200, "\(changed.text)")
            #expect(ConnectCatalogTests.attributes(changed)["priority"] as? String == "HIGH", "\(changed.text)")

            // The store lists the offer to customers, at the price set, with what the PATCH changed.
            let token = try await store.signIn()
            let products = try await store.client(
                .POST, "/products", token: token, json: ["identifiers": [TestStore.monthly]])
            let info = try #require((products.json["products"] as? [[String: Any]])?.first, "\(products.text)")
            let winBack = try #require((info["winBackOffers"] as? [[String: Any]])?.first, "\(products.text)")
            #expect(winBack["identifier"] as? String == "come_back", "\(products.text)")
            #expect((winBack["price"] as? [String: Any])?["minorUnits"] as? Int == 99, "\(products.text)")
            let admin = try await store.request(
                .GET, "/admin/v1/apps/\(TestStore.bundleId)/products/\(TestStore.monthly)")
            let stored = (admin.json["winBackOffers"] as? [[String: Any]])?.first
            #expect(stored?["priority"] as? String == "high" && stored?["waitBetweenOffersInMonths"] as? Int == 3)

            #expect(try await client.send(.DELETE, "/v1/winBackOffers/{id}", id: id).status == 204)
            let gone = try await client.send(.GET, "/v1/winBackOffers/{id}", id: id)
            #expect(gone.status == 404, "\(gone.text)")
        }
    }

    @Test func aPromotionalOffersPricesChangeWithAPatch() async throws {
        try await withTestStore { store in
            try await store.prepareSubscriptionCatalog()
            let client = try await Client.make(store, role: "ADMIN")
            let subscription = try await Self.monthlyId(client)
            let first = Self.prices(
                "subscriptionPromotionalOfferPrices",
                ["USA": try await Self.pricePoint(client, subscription, "USA", "0.99")])
            let created = try await client.send(
                .POST, "/v1/subscriptionPromotionalOffers",
                json: [
                    "data": [
                        "type": "subscriptionPromotionalOffers",
                        "attributes": [
                            "name": "Stay", "offerCode": "stay", "duration": "ONE_MONTH", "offerMode": "PAY_AS_YOU_GO",
                            "numberOfPeriods": 1,
                        ],
                        "relationships": [
                            "subscription": Self.relationship("subscriptions", subscription),
                            "prices": ["data": first.linkage],
                        ],
                    ],
                    "included": first.included,
                ])
            #expect(created.status == 201, "\(created.text)")
            let id = try #require(ConnectCatalogTests.data(created)["id"] as? String)
            let second = Self.prices(
                "subscriptionPromotionalOfferPrices",
                [
                    "USA": try await Self.pricePoint(client, subscription, "USA", "1.99"),
                    "GBR": try await Self.pricePoint(client, subscription, "GBR", "1.99"),
                ])
            let patched = try await client.send(
                .PATCH, "/v1/subscriptionPromotionalOffers/{id}", id: id,
                json: [
                    "data": [
                        "type": "subscriptionPromotionalOffers", "id": id,
                        "relationships": ["prices": ["data": second.linkage]],
                    ],
                    "included": second.included,
                ])
            #expect(patched.status == 200, "\(patched.text)")
            let prices = try await client.send(
                .GET, "/v1/subscriptionPromotionalOffers/{id}/prices", id: id, query: "include=subscriptionPricePoint")
            #expect(Self.ids(prices) == ["\(id)~GBR", "\(id)~USA"], "\(prices.text)")
            let charged = (prices.json["included"] as? [[String: Any]] ?? []).compactMap {
                ($0["attributes"] as? [String: Any])?["customerPrice"] as? String
            }
            #expect(charged == ["1.99", "1.99"], "\(prices.text)")
            let linkage = try await client.send(
                .GET, "/v1/subscriptionPromotionalOffers/{id}/relationships/prices", id: id)
            #expect(Self.total(linkage) == 2, "\(linkage.text)")
            let admin = try await store.request(
                .GET, "/admin/v1/apps/\(TestStore.bundleId)/products/\(TestStore.monthly)")
            let stored = (admin.json["promotionalOffers"] as? [[String: Any]])?.first
            #expect(
                (stored?["pricing"] as? [String: Any])?["customPrices"] as? [String: Int] == ["USA": 199, "GBR": 199],
                "\(admin.text)")
        }
    }

    @Test func anInAppPurchaseLeftOutOfATerritoryIsNotSoldThere() async throws {
        try await withTestStore { store in
            try await store.prepareSubscriptionCatalog()
            try await store.createTester("uk@example.com", settings: ["storefront": "GBR"])
            let client = try await Client.make(store, role: "APP_MANAGER")
            let monthly = try await Self.monthlyId(client)
            let coins = monthly.replacingOccurrences(of: TestStore.monthly, with: TestStore.coins)

            // Never set: offered everywhere, and new territories are added.
            let everywhere = try await client.send(
                .GET, "/v1/subscriptions/{id}/subscriptionAvailability", id: monthly,
                query: "include=availableTerritories&limit[availableTerritories]=5")
            #expect(
                ConnectCatalogTests.attributes(everywhere)["availableInNewTerritories"] as? Bool == true,
                "\(everywhere.text)")
            let all = try await client.send(
                .GET, "/v1/subscriptionAvailabilities/{id}/availableTerritories", id: monthly, query: "limit=1")
            #expect(Self.total(all) == Storefront.all.count, "\(all.text)")

            func availability(_ territories: [String]) -> [String: Any] {
                [
                    "data": [
                        "type": "inAppPurchaseAvailabilities", "attributes": ["availableInNewTerritories": false],
                        "relationships": [
                            "inAppPurchase": Self.relationship("inAppPurchases", coins),
                            "availableTerritories": [
                                "data": territories.map { ["type": "territories", "id": $0] }
                            ],
                        ],
                    ]
                ]
            }
            let unknown = try await client.send(.POST, "/v1/inAppPurchaseAvailabilities", json: availability(["XXX"]))
            #expect(unknown.status == 409, "\(unknown.text)")
            let set = try await client.send(
                .POST, "/v1/inAppPurchaseAvailabilities", json: availability(["USA", "CAN"]))
            #expect(set.status == 201, "\(set.text)")
            let read = try await client.send(
                .GET, "/v2/inAppPurchases/{id}/inAppPurchaseAvailability", id: coins,
                query: "include=availableTerritories")
            #expect(Set(Self.ids(read, "included")) == ["USA", "CAN"], "\(read.text)")
            #expect(ConnectCatalogTests.attributes(read)["availableInNewTerritories"] as? Bool == false)
            let linkage = try await client.send(
                .GET, "/v2/inAppPurchases/{id}/relationships/inAppPurchaseAvailability", id: coins)
            #expect(ConnectCatalogTests.data(linkage)["id"] as? String == coins, "\(linkage.text)")

            let british = try await store.signIn("uk@example.com")
            let refused = try await store.pay(TestStore.coins, token: british)
            #expect(refused.errorCode == "product_not_available", "\(refused.text)")
            #expect(refused.transactionId == nil)
            let listed = try await store.client(
                .POST, "/products", token: british, json: ["identifiers": [TestStore.coins]])
            #expect((listed.json["products"] as? [Any])?.isEmpty == true, "\(listed.text)")
            let american = try await store.signIn()
            #expect(try await store.pay(TestStore.coins, token: american).transactionId != nil)

            // The catalog file carries the availability, so an export imported elsewhere keeps it.
            let exported = try await store.request(.GET, "/admin/v1/apps/\(TestStore.bundleId)/catalog")
            let entry = (exported.json["products"] as? [[String: Any]])?.first {
                $0["productId"] as? String == TestStore.coins
            }
            let territories = (entry?["territoryAvailability"] as? [String: Any])?["territories"] as? [String]
            #expect(territories == ["CAN", "USA"], "\(exported.text.prefix(2000))")
        }
    }

    @Test func aGroupSubmissionSubmitsItsSubscriptionsOnce() async throws {
        try await withTestStore { store in
            try await store.prepareSubscriptionCatalog()
            let client = try await Client.make(store, role: "APP_MANAGER")
            let monthly = try await Self.monthlyId(client)
            let appId = String(monthly.prefix { $0 != "-" })
            let groups = try await client.send(.GET, "/v1/apps/{id}/subscriptionGroups", id: appId)
            let group = try #require(Self.ids(groups).first, "\(groups.text)")
            let body: [String: Any] = [
                "data": [
                    "type": "subscriptionGroupSubmissions",
                    "relationships": ["subscriptionGroup": Self.relationship("subscriptionGroups", group)],
                ]
            ]
            let submitted = try await client.send(.POST, "/v1/subscriptionGroupSubmissions", json: body)
            #expect(submitted.status == 201, "\(submitted.text)")
            let state = try await client.send(.GET, "/v1/subscriptions/{id}", id: monthly)
            #expect(ConnectCatalogTests.attributes(state)["state"] as? String == "WAITING_FOR_REVIEW", "\(state.text)")
            let again = try await client.send(.POST, "/v1/subscriptionGroupSubmissions", json: body)
            #expect(again.status == 409, "\(again.text)")
            let detail = ConnectCatalogTests.firstError(again)["detail"] as? String ?? ""
            #expect(detail.hasPrefix("Nothing was submitted"), "\(again.text)")
        }
    }

    /// An offer code's body: terms priced at `price` in the United States (none for a free trial), for `customers`.
    static func offerCode(
        _ name: String, _ customers: [String], mode: String, price: String?, subscription: String
    ) -> [String: Any] {
        let prices = Self.prices("subscriptionOfferCodePrices", price.map { ["USA": $0] } ?? [:])
        return [
            "data": [
                "type": "subscriptionOfferCodes",
                "attributes": [
                    "name": name, "customerEligibilities": customers, "offerEligibility": "REPLACE_INTRO_OFFERS",
                    "duration": "ONE_MONTH", "offerMode": mode, "numberOfPeriods": mode == "FREE_TRIAL" ? 1 : 2,
                ],
                "relationships": [
                    "subscription": relationship("subscriptions", subscription), "prices": ["data": prices.linkage],
                ],
            ],
            "included": prices.included,
        ]
    }

    /// A body creating codes of `type` for the offer code `campaign` (a subscription's unless `type` says otherwise).
    static func codes(_ type: String, of campaign: String, _ attributes: [String: Any]) -> [String: Any] {
        let campaignType = type.hasPrefix("inAppPurchase") ? "inAppPurchaseOfferCodes" : "subscriptionOfferCodes"
        return [
            "data": [
                "type": type, "attributes": attributes,
                "relationships": ["offerCode": relationship(campaignType, campaign)],
            ]
        ]
    }

    /// Three offer codes made through the API — one-time codes for new customers (sandbox and production batches),
    /// a custom code one new customer may redeem, a free month for lapsed customers — are each redeemed only by the
    /// customers, environment and number they are for, and a redeemed code's price continues at renewal.
    @Test(arguments: TestDatabase.available)
    func offerCodesAreRedeemedByTheCustomersTheyAreFor(database: TestDatabase) async throws {
        let clock = ManualClock(SubscriptionPurchaseTests.start)
        try await withTestStore(engine: database, clock: clock) { store in
            try await store.prepareSubscriptionCatalog()
            for email in ["second@example.com", "third@example.com"] { try await store.createTester(email) }
            let client = try await Client.make(store, role: "APP_MANAGER", clock: clock)
            let subscription = try await Self.monthlyId(client)
            let cents99 = try await Self.pricePoint(client, subscription, "USA", "0.99")
            let cents199 = try await Self.pricePoint(client, subscription, "USA", "1.99")
            var campaigns: [String: String] = [:]
            for (name, customers, mode, price) in [
                ("Holiday", ["NEW"], "PAY_AS_YOU_GO", cents99), ("Friends", ["NEW"], "PAY_AS_YOU_GO", cents199),
                ("Lapsed", ["EXPIRED"], "FREE_TRIAL", nil),
            ] as [(String, [String], String, String?)] {
                let created = try await client.send(
                    .POST, "/v1/subscriptionOfferCodes",
                    json: Self.offerCode(name, customers, mode: mode, price: price, subscription: subscription))
                #expect(created.status == 201, "\(created.text)")
                campaigns[name] = ConnectCatalogTests.data(created)["id"] as? String
            }
            let holiday = try #require(campaigns["Holiday"])
            let oneTime = "subscriptionOfferCodeOneTimeUseCodes"
            let sandboxBatch = try await client.send(
                .POST, "/v1/\(oneTime)",
                json: Self.codes(
                    oneTime, of: holiday,
                    ["numberOfCodes": 2, "expirationDate": "2030-01-01", "environment": "SANDBOX"]))
            #expect(sandboxBatch.status == 201, "\(sandboxBatch.text)")
            let productionBatch = try await client.send(
                .POST, "/v1/\(oneTime)",
                json: Self.codes(oneTime, of: holiday, ["numberOfCodes": 1, "expirationDate": "2030-01-01"]))
            #expect(ConnectCatalogTests.attributes(productionBatch)["environment"] as? String == "PRODUCTION")
            let custom = "subscriptionOfferCodeCustomCodes"
            for (campaign, code, count, status) in [
                ("Friends", "FRIENDS26", 1, 201), ("Lapsed", "friends26", 5, 409), ("Lapsed", "COMEBACK", 5, 201),
            ] {
                let made = try await client.send(
                    .POST, "/v1/\(custom)",
                    json: Self.codes(
                        custom, of: try #require(campaigns[campaign]), ["customCode": code, "numberOfCodes": count]))
                #expect(made.status == status, "\(code): \(made.text)")
            }

            let read = try await client.send(
                .GET, "/v1/subscriptionOfferCodes/{id}", id: holiday, query: "include=oneTimeUseCodes,prices")
            let counts = ConnectCatalogTests.attributes(read)
            #expect(
                counts["totalNumberOfCodes"] as? Int == 3 && counts["sandboxCodeCount"] as? Int == 2, "\(read.text)")
            #expect(Self.ids(read, "included").count == 3, "two batches and a price: \(read.text)")
            let listed = try await client.send(.GET, "/v1/subscriptions/{id}/offerCodes", id: subscription)
            #expect(Self.total(listed) == 3, "\(listed.text)")
            let sandboxCodes = try await Self.values(sandboxBatch, client)
            let productionCodes = try await Self.values(productionBatch, client)
            #expect(sandboxCodes.count == 2 && productionCodes.count == 1)

            let first = try await store.signIn()
            let second = try await store.signIn("second@example.com")
            let third = try await store.signIn("third@example.com")
            let bought = try await OfferCodeTests.pay(
                TestStore.monthly, code: sandboxCodes[0], token: first, store: store)
            #expect(bought.json["state"] as? String == "purchased", "\(bought.text)")
            let transaction = try await SubscriptionPurchaseTests.transaction(
                SubscriptionPurchaseTests.signedTransaction(bought), store: store, clock: clock)
            #expect(transaction.offerType == 3 && transaction.offerIdentifier == "Holiday" && transaction.price == 990)
            for (token, code, refusal) in [
                (first, "COMEBACK", "offer_code_ineligible"),  // subscribed: not EXPIRED
                (second, productionCodes[0], "offer_code_inactive"),  // a production code in the sandbox
            ] {
                let answer = try await OfferCodeTests.pay(TestStore.monthly, code: code, token: token, store: store)
                #expect(answer.errorCode == refusal && answer.transactionId == nil, "\(code): \(answer.text)")
            }
            let friend = try await OfferCodeTests.pay(TestStore.monthly, code: "friends26", token: second, store: store)
            #expect(friend.json["state"] as? String == "purchased", "\(friend.text)")
            let turnedOff = try await client.send(
                .PATCH, "/v1/subscriptionOfferCodes/{id}", id: holiday,
                json: ["data": ["type": "subscriptionOfferCodes", "id": holiday, "attributes": ["active": false]]])
            #expect(ConnectCatalogTests.attributes(turnedOff)["active"] as? Bool == false, "\(turnedOff.text)")
            for (code, refusal) in [
                ("FRIENDS26", "offer_code_redeemed"),  // its one redemption is used
                (sandboxCodes[1], "offer_code_inactive"),  // its offer code was turned off
                ("COMEBACK", "offer_code_ineligible"),  // never subscribed: not EXPIRED
            ] {
                let answer = try await OfferCodeTests.pay(TestStore.monthly, code: code, token: third, store: store)
                #expect(answer.errorCode == refusal && answer.transactionId == nil, "\(code): \(answer.text)")
            }

            // A month on, both renewals continue their code's price: 0.99 from the one-time code, 1.99 from the
            // custom code (whose offer code has no code rows of its own).
            let advanced = try await store.advanceSandboxClock("5m")
            #expect(advanced.json["renewed"] as? Int == 2, "\(advanced.text)")
            #expect(try await store.subscriptionPeriods(clock: clock).map(\.price) == [990, 990])
            let (renewed, _) = try await ConnectCatalogTests.charged(
                TestStore.monthly, tester: "second@example.com", store: store)
            #expect(renewed == 199)
        }
    }

    /// An in-app purchase's offer code made through the API sells one item at its price to the customers it is for
    /// (here: those who never paid in the app), as Apple's offer type 3 with the discount type `ONE_TIME`.
    @Test func anInAppPurchaseOfferCodeSellsOneItemToNonSpenders() async throws {
        let clock = ManualClock(SubscriptionPurchaseTests.start)
        try await withTestStore(clock: clock) { store in
            try await store.preparePurchaseCatalog()
            let client = try await Client.make(store, role: "APP_MANAGER", clock: clock)
            let apps = try await client.send(.GET, "/v1/apps", query: "filter[bundleId]=\(TestStore.bundleId)")
            let coins = "\(try #require(Self.ids(apps).first))-\(TestStore.coins)"
            let points = try await client.send(
                .GET, "/v2/inAppPurchases/{id}/pricePoints", id: coins, query: "filter[territory]=USA")
            let point = (points.json["data"] as? [[String: Any]])?.first {
                ($0["attributes"] as? [String: Any])?["customerPrice"] as? String == "0.99"
            }
            let pointId = try #require(point?["id"] as? String, "\(points.text)")
            func offerCode(_ customers: [String]) -> [String: Any] {
                [
                    "data": [
                        "type": "inAppPurchaseOfferCodes",
                        "attributes": ["name": "Welcome", "customerEligibilities": customers],
                        "relationships": [
                            "inAppPurchase": Self.relationship("inAppPurchases", coins),
                            "prices": ["data": [["type": "inAppPurchaseOfferPrices", "id": "${usa}"]]],
                        ],
                    ],
                    "included": [
                        [
                            "type": "inAppPurchaseOfferPrices", "id": "${usa}",
                            "relationships": [
                                "territory": Self.relationship("territories", "USA"),
                                "pricePoint": Self.relationship("inAppPurchasePricePoints", pointId),
                            ],
                        ]
                    ],
                ]
            }
            let subscribers = try await client.send(.POST, "/v1/inAppPurchaseOfferCodes", json: offerCode(["NEW"]))
            #expect(subscribers.status == 409, "NEW is a subscription's kind of customer: \(subscribers.text)")
            let created = try await client.send(
                .POST, "/v1/inAppPurchaseOfferCodes", json: offerCode(["NON_SPENDER"]))
            #expect(created.status == 201, "\(created.text)")
            let campaign = try #require(ConnectCatalogTests.data(created)["id"] as? String)
            let custom = try await client.send(
                .POST, "/v1/inAppPurchaseOfferCodeCustomCodes",
                json: Self.codes(
                    "inAppPurchaseOfferCodeCustomCodes", of: campaign, ["customCode": "WELCOME", "numberOfCodes": 10]))
            #expect(custom.status == 201, "\(custom.text)")
            let oneTime = try await client.send(
                .POST, "/v1/inAppPurchaseOfferCodeOneTimeUseCodes",
                json: Self.codes(
                    "inAppPurchaseOfferCodeOneTimeUseCodes", of: campaign,
                    ["numberOfCodes": 1, "expirationDate": "2030-01-01", "environment": "SANDBOX"]))
            #expect(oneTime.status == 201, "\(oneTime.text)")
            let listed = try await client.send(
                .GET, "/v2/inAppPurchases/{id}/offerCodes", id: coins,
                query: "include=customCodes,oneTimeUseCodes,prices")
            #expect(Self.ids(listed) == [campaign] && Self.ids(listed, "included").count == 3, "\(listed.text)")

            let token = try await store.signIn()
            let three = try await store.client(
                .POST, "/payments", token: token,
                json: [
                    "productId": TestStore.coins, "quantity": 3, "idempotencyKey": UUID().uuidString,
                    "offerCode": "WELCOME",
                ])
            #expect(three.errorCode == "quantity_not_allowed" && three.transactionId == nil, "\(three.text)")
            let bought = try await OfferCodeTests.pay(TestStore.coins, code: "welcome", token: token, store: store)
            #expect(bought.json["state"] as? String == "purchased", "\(bought.text)")
            let signed = try #require(SubscriptionPurchaseTests.signedTransaction(bought), "\(bought.text)")
            try await AppleVerifier.expectAccepts([signed], kind: .transaction, store: store)
            let transaction = try await SubscriptionPurchaseTests.transaction(signed, store: store, clock: clock)
            #expect(transaction.offerType == 3 && transaction.offerIdentifier == "Welcome")
            #expect(transaction.offerDiscountType == "ONE_TIME" && transaction.offerPeriod == nil)
            #expect(transaction.price == 990 && transaction.expiresDate == nil)

            // Having paid, the tester is an active spender: a code for non-spenders is refused and charges nothing.
            let codes = try await Self.values(oneTime, client)
            let again = try await OfferCodeTests.pay(TestStore.coins, code: codes[0], token: token, store: store)
            #expect(again.errorCode == "offer_code_ineligible" && again.transactionId == nil, "\(again.text)")
        }
    }

    /// The codes of a one-time codes batch, from its `values` file (one code per line).
    static func values(_ batch: TestStore.Answer, _ client: Client) async throws -> [String] {
        let id = try #require(ConnectCatalogTests.data(batch)["id"] as? String, "\(batch.text)")
        let file = try await client.store.request(
            .GET, "/v1/\(ConnectCatalogTests.data(batch)["type"] as? String ?? "")/\(id)/values",
            token: .some(try client.key.token(now: client.clock.now(), lifetime: 600)))
        #expect(file.status == 200 && file.header("Content-Type") == "text/csv", "\(file.text)")
        return file.text.split(separator: "\n").map(String.init)
    }
}
