import Foundation
import KioskCore
import KioskProtocol
import KioskStore
import KioskTestSupport
import KioskTesting
import NIOHTTP1
import Testing

/// The App Store Connect API's catalog resources, driven as a script written against Apple's API drives them:
/// JSON:API documents in and out, a team key's token, Apple's paths. Every answer, errors included, is checked
/// against the contract (`app-store-connect-openapi.json`, Apple's own schemas).
@Suite struct ConnectCatalogTests {
    /// A team key and the calls a script makes with it; each answer must match the contract's schema for its status.
    struct Client {
        let store: TestStore
        let key: ConnectKey
        /// The store's clock, which checks each token's expiry.
        var clock: any KioskClock = SystemClock()

        static func make(_ store: TestStore, role: String, clock: any KioskClock = SystemClock()) async throws
            -> Client
        {
            let created = try await store.request(
                .POST, "/admin/v1/api-keys", json: ["roles": [role], "name": "ci-\(role.lowercased())"])
            #expect(created.status == 201, "\(created.text)")
            return Client(
                store: store,
                key: ConnectKey(
                    id: try #require(created.json["keyId"] as? String),
                    privateKeyPEM: try #require(created.json["privateKey"] as? String),
                    issuer: try #require(created.json["issuerId"] as? String)),
                clock: clock)
        }

        /// Sends `method operation` with `id` in place of `{id}` and `query` after it; checks the answer against the
        /// operation's schema for the status it came with.
        func send(
            _ method: HTTPMethod, _ operation: String, id: String? = nil, query: String = "",
            json: [String: Any]? = nil, rawBody: Data? = nil
        ) async throws -> TestStore.Answer {
            var path = operation
            if let id {
                path = path.replacingOccurrences(
                    of: "{id}", with: id.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? id)
            }
            let answer = try await store.request(
                method, path + (query.isEmpty ? "" : "?" + query), json: json, body: rawBody,
                token: .some(try key.token(now: clock.now(), lifetime: 600)),
                headers: rawBody == nil ? [:] : ["Content-Type": "application/json"])
            let contract = ConnectContract.served
            let served = try #require(contract.operations["\(method.rawValue) \(operation)"], "\(operation)")
            let body =
                answer.body.isEmpty ? JSONValue.null : try JSONDecoder().decode(JSONValue.self, from: answer.body)
            let violations =
                answer.body.isEmpty && answer.status == 204
                ? [] : contract.violations(ofAnswer: body, to: served, status: answer.status)
            #expect(violations.isEmpty, "\(method) \(path)?\(query) → \(answer.status): \(violations) \(answer.text)")
            return answer
        }
    }

    static func data(_ answer: TestStore.Answer) -> [String: Any] { answer.json["data"] as? [String: Any] ?? [:] }

    static func attributes(_ answer: TestStore.Answer) -> [String: Any] {
        data(answer)["attributes"] as? [String: Any] ?? [:]
    }

    static func firstError(_ answer: TestStore.Answer) -> [String: Any] {
        (answer.json["errors"] as? [[String: Any]])?.first ?? [:]
    }

    /// The price and currency of `tester`'s latest transaction of `productId`, as the test controls list it.
    static func charged(_ productId: String, tester: String, store: TestStore) async throws -> (Int?, String?) {
        let listed = try await store.request(
            .GET, "/sandbox/test/v1/apps/\(TestStore.bundleId)/transactions?tester=\(tester)",
            token: .some(store.adminToken))
        let transaction = (listed.json["transactions"] as? [[String: Any]])?.last {
            $0["productId"] as? String == productId
        }
        return (transaction?["price"] as? Int, transaction?["currency"] as? String)
    }

    /// The territory a price point's id names (base64url of `{"p":…,"s":…,"t":…}`).
    static func territory(ofPoint id: String) -> String? {
        var base64 = id.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64) else { return nil }
        return (try? JSONSerialization.jsonObject(with: data) as? [String: String])?["t"]
    }

    static func relationship(_ type: String, _ id: String) -> [String: Any] {
        ["data": ["type": type, "id": id]]
    }

    @Test func aScriptBuildsASubscriptionCatalogThroughApplesResources() async throws {
        try await withTestStore { store in
            try await store.preparePurchaseCatalog()
            let client = try await Client.make(store, role: "APP_MANAGER")
            let apps = try await client.send(.GET, "/v1/apps", query: "filter[bundleId]=\(TestStore.bundleId)")
            let app = try #require((apps.json["data"] as? [[String: Any]])?.first, "\(apps.text)")
            #expect((apps.json["data"] as? [Any])?.count == 1, "\(apps.text)")
            let appId = try #require(app["id"] as? String)

            let group = try await client.send(
                .POST, "/v1/subscriptionGroups",
                json: [
                    "data": [
                        "type": "subscriptionGroups", "attributes": ["referenceName": "Premium"],
                        "relationships": ["app": Self.relationship("apps", appId)],
                    ]
                ])
            #expect(group.status == 201, "\(group.text)")
            let groupId = try #require(Self.data(group)["id"] as? String)
            let groupLocalization = try await client.send(
                .POST, "/v1/subscriptionGroupLocalizations",
                json: [
                    "data": [
                        "type": "subscriptionGroupLocalizations",
                        "attributes": ["locale": "en-US", "name": "Premium", "customAppName": "Kiosk Premium"],
                        "relationships": ["subscriptionGroup": Self.relationship("subscriptionGroups", groupId)],
                    ]
                ])
            #expect(groupLocalization.status == 201, "\(groupLocalization.text)")
            let groupLocalizationId = try #require(Self.data(groupLocalization)["id"] as? String)

            let subscription = try await client.send(
                .POST, "/v1/subscriptions",
                json: [
                    "data": [
                        "type": "subscriptions",
                        "attributes": [
                            "productId": "com.example.premium.monthly", "name": "Premium Monthly",
                            "subscriptionPeriod": "ONE_MONTH", "familySharable": false,
                        ],
                        "relationships": ["group": Self.relationship("subscriptionGroups", groupId)],
                    ]
                ])
            #expect(subscription.status == 201, "\(subscription.text)")
            let subscriptionId = try #require(Self.data(subscription)["id"] as? String)
            #expect(Self.attributes(subscription)["state"] as? String == "MISSING_METADATA")
            #expect(Self.attributes(subscription)["groupLevel"] as? Int == 1)
            let localization = try await client.send(
                .POST, "/v1/subscriptionLocalizations",
                json: [
                    "data": [
                        "type": "subscriptionLocalizations",
                        "attributes": ["locale": "en-US", "name": "Premium", "description": "Everything, monthly."],
                        "relationships": ["subscription": Self.relationship("subscriptions", subscriptionId)],
                    ]
                ])
            #expect(localization.status == 201, "\(localization.text)")
            let localizationId = try #require(Self.data(localization)["id"] as? String)

            // Read back with include: the group holds the subscription and its localization.
            let read = try await client.send(
                .GET, "/v1/subscriptionGroups/{id}", id: groupId,
                query: "include=subscriptions,subscriptionGroupLocalizations")
            let included = try #require(read.json["included"] as? [[String: Any]], "\(read.text)")
            #expect(
                Set(included.map { "\($0["type"] ?? "")/\($0["id"] ?? "")" })
                    == ["subscriptions/\(subscriptionId)", "subscriptionGroupLocalizations/\(groupLocalizationId)"],
                "\(read.text)")
            let relationships = try #require(Self.data(read)["relationships"] as? [String: Any])
            let members = (relationships["subscriptions"] as? [String: Any])?["data"] as? [[String: Any]]
            #expect(members?.map { $0["id"] as? String } == [subscriptionId], "\(read.text)")

            let renamed = try await client.send(
                .PATCH, "/v1/subscriptions/{id}", id: subscriptionId,
                json: ["data": ["type": "subscriptions", "id": subscriptionId, "attributes": ["name": "Premium (M)"]]])
            #expect(renamed.status == 200 && Self.attributes(renamed)["name"] as? String == "Premium (M)")

            // The console API sees the same catalog: one catalog service behind both faces.
            let product = try await store.request(
                .GET, "/admin/v1/apps/\(TestStore.bundleId)/products/com.example.premium.monthly")
            #expect(product.status == 200, "\(product.text)")
            #expect(product.json["referenceName"] as? String == "Premium (M)", "\(product.text)")
            let texts = product.json["localizations"] as? [[String: Any]]
            #expect(texts?.first?["displayName"] as? String == "Premium", "\(product.text)")

            let deleted = try await client.send(.DELETE, "/v1/subscriptionLocalizations/{id}", id: localizationId)
            #expect(deleted.status == 204, "\(deleted.text)")
            let gone = try await client.send(.GET, "/v1/subscriptionLocalizations/{id}", id: localizationId)
            #expect(gone.status == 404 && Self.firstError(gone)["code"] as? String == "NOT_FOUND", "\(gone.text)")

            // Each change is in the audit log under the key's name.
            let visitor = ConsoleTests.Visitor(store)
            _ = try await visitor.signIn()
            let audit = try await visitor.get("/console/audit").text
            for action in ["group.create", "product.create", "product.update", "product.localization.delete"] {
                #expect(audit.contains(action), "\(action) in the audit log")
            }
            #expect(audit.contains("API key ci-app_manager (\(client.key.id))"), "the key is named")
        }
    }

    /// The issue's script: a subscription priced in every territory from one base price (a US price point and its
    /// equalizations), read back per territory, then bought by a sandbox tester at the price set.
    @Test func aSubscriptionPricedEverywhereFromOneBasePriceSellsAtThatPrice() async throws {
        try await withTestStore { store in
            try await store.preparePurchaseCatalog()
            let client = try await Client.make(store, role: "APP_MANAGER")
            let appId = try #require(
                ((try await client.send(.GET, "/v1/apps").json["data"] as? [[String: Any]])?.first?["id"] as? String))
            let group = try await client.send(
                .POST, "/v1/subscriptionGroups",
                json: [
                    "data": [
                        "type": "subscriptionGroups", "attributes": ["referenceName": "Plus"],
                        "relationships": ["app": Self.relationship("apps", appId)],
                    ]
                ])
            let groupId = try #require(Self.data(group)["id"] as? String, "\(group.text)")
            let created = try await client.send(
                .POST, "/v1/subscriptions",
                json: [
                    "data": [
                        "type": "subscriptions",
                        "attributes": [
                            "productId": "com.example.plus", "name": "Plus", "subscriptionPeriod": "ONE_MONTH",
                        ],
                        "relationships": ["group": Self.relationship("subscriptionGroups", groupId)],
                    ]
                ])
            let id = try #require(Self.data(created)["id"] as? String, "\(created.text)")
            let localized = try await client.send(
                .POST, "/v1/subscriptionLocalizations",
                json: [
                    "data": [
                        "type": "subscriptionLocalizations",
                        "attributes": ["locale": "en-US", "name": "Plus", "description": "More of everything."],
                        "relationships": ["subscription": Self.relationship("subscriptions", id)],
                    ]
                ])
            #expect(localized.status == 201, "\(localized.text)")

            let usPoints = try await client.send(
                .GET, "/v1/subscriptions/{id}/pricePoints", id: id, query: "filter[territory]=USA&include=territory")
            let points = try #require(usPoints.json["data"] as? [[String: Any]], "\(usPoints.text)")
            #expect(points.count == PriceTable.tiers.count, "\(usPoints.text)")
            let base = try #require(
                points.first { ($0["attributes"] as? [String: Any])?["customerPrice"] as? String == "4.99" })
            let baseId = try #require(base["id"] as? String)
            #expect((base["attributes"] as? [String: Any])?["proceeds"] as? String != nil)

            var equalizations: [[String: Any]] = []
            var query = "limit=200&include=territory"
            while true {
                let page = try await client.send(
                    .GET, "/v1/subscriptionPricePoints/{id}/equalizations", id: baseId, query: query)
                equalizations += page.json["data"] as? [[String: Any]] ?? []
                guard let next = (page.json["links"] as? [String: Any])?["next"] as? String else { break }
                query = try #require(URLComponents(string: next)?.percentEncodedQuery)
            }
            #expect(equalizations.count == Storefront.all.count - 1, "every other territory")
            for point in [base] + equalizations {
                let pointId = try #require(point["id"] as? String)
                let posted = try await client.send(
                    .POST, "/v1/subscriptionPrices",
                    json: [
                        "data": [
                            "type": "subscriptionPrices", "attributes": ["preserveCurrentPrice": false],
                            "relationships": [
                                "subscription": Self.relationship("subscriptions", id),
                                "subscriptionPricePoint": Self.relationship("subscriptionPricePoints", pointId),
                            ],
                        ]
                    ])
                #expect(posted.status == 201, "\(posted.text)")
            }
            let japan = try await client.send(
                .GET, "/v1/subscriptions/{id}/prices", id: id,
                query: "filter[territory]=JPN&include=subscriptionPricePoint,territory")
            let japanPoint = (japan.json["included"] as? [[String: Any]])?.first {
                $0["type"] as? String == "subscriptionPricePoints"
            }
            let japanStorefront = try #require(Storefront.named("JPN"))
            let tier5Yen = try #require(PriceTable.price(tier: 5, in: japanStorefront))
            #expect(
                (japanPoint?["attributes"] as? [String: Any])?["customerPrice"] as? String == String(tier5Yen),
                "\(japan.text)")
            let all = try await client.send(.GET, "/v1/subscriptions/{id}/prices", id: id, query: "limit=1")
            #expect(
                ((all.json["meta"] as? [String: Any])?["paging"] as? [String: Any])?["total"] as? Int
                    == Storefront.all.count, "\(all.text)")
            let later = try await client.send(
                .POST, "/v1/subscriptionPrices",
                json: [
                    "data": [
                        "type": "subscriptionPrices", "attributes": ["startDate": "2999-01-01"],
                        "relationships": [
                            "subscription": Self.relationship("subscriptions", id),
                            "subscriptionPricePoint": Self.relationship("subscriptionPricePoints", baseId),
                        ],
                    ]
                ])
            #expect(later.status == 409, "no schedule of future prices: \(later.text)")

            let submitted = try await client.send(
                .POST, "/v1/subscriptionSubmissions",
                json: [
                    "data": [
                        "type": "subscriptionSubmissions",
                        "relationships": ["subscription": Self.relationship("subscriptions", id)],
                    ]
                ])
            #expect(submitted.status == 201, "\(submitted.text)")
            let state = try await client.send(
                .GET, "/v1/subscriptions/{id}", id: id, query: "fields[subscriptions]=state")
            #expect(Self.attributes(state)["state"] as? String == "WAITING_FOR_REVIEW", "\(state.text)")

            let token = try await store.signIn()
            let bought = try await store.pay("com.example.plus", token: token)
            #expect(bought.transactionId != nil, "\(bought.text)")
            let (price, currency) = try await Self.charged(
                "com.example.plus", tester: TestStore.testerEmail, store: store)
            #expect(price == 499 && currency == "USD", "charged \(price ?? -1) \(currency ?? "")")
        }
    }

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Interop/connect_catalog.py").path

    /// A script written against Apple's API only (`Tests/Interop/connect_catalog.py`: requests and PyJWT, Kiosk's
    /// base URL and a team key) builds a priced subscription with offers and submits it; a tester in the United
    /// Kingdom then buys it at the British price equalized from the US base, and one in the United States at the
    /// introductory price.
    @Test(.enabled(if: TestEnvironment.runs(.connectPython), "set KIOSK_TEST_CONNECT_PYTHON (.ci/run does)"))
    func aScriptWrittenAgainstApplesAPIBuildsASubscriptionTestersBuy() async throws {
        let python = try TestEnvironment.require(.connectPython)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-asc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withTestStore { store in
            try await store.preparePurchaseCatalog()
            try await store.createTester("uk@example.com", settings: ["storefront": "GBR"])
            let client = try await Client.make(store, role: "APP_MANAGER")
            let keyFile = directory.appendingPathComponent("AuthKey.p8")
            try client.key.privateKeyPEM.write(to: keyFile, atomically: true, encoding: .utf8)
            let (status, output) = try await runProcess(
                python,
                [
                    Self.script, "--base-url", store.baseURL, "--key-id", client.key.id, "--key-file", keyFile.path,
                    "--issuer-id", client.key.issuer, "--bundle-id", TestStore.bundleId, "--product-id",
                    "com.example.script.monthly",
                ])
            #expect(status == 0, "\(output)")
            let result = try #require(
                try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], "\(output)")
            Self.checkScriptResult(result, output: output)

            let product = "com.example.script.monthly"
            let british = try await store.signIn("uk@example.com")
            #expect(try await store.pay(product, token: british).transactionId != nil)
            let pounds = PriceTable.price(tier: 3, in: Storefront.named("GBR")!)
            let (britishPrice, currency) = try await Self.charged(product, tester: "uk@example.com", store: store)
            #expect(britishPrice == pounds && currency == "GBP", "charged \(britishPrice ?? -1) \(currency ?? "")")
            let american = try await store.signIn()
            #expect(try await store.pay(product, token: american).transactionId != nil)
            let (introductory, _) = try await Self.charged(product, tester: TestStore.testerEmail, store: store)
            #expect(introductory == 99, "the introductory price, charged \(introductory ?? -1)")
        }
    }

    /// What the script says it made (outside the async closure: Swift 6.3 mis-handles checks written inline there).
    static func checkScriptResult(_ result: [String: Any], output: String) {
        #expect(result["territoriesPriced"] as? Int == Storefront.all.count, "\(output)")
        #expect((result["equalizationPages"] as? Int ?? 0) > 1, "the equalizations came in pages: \(output)")
        #expect(result["state"] as? String == "WAITING_FOR_REVIEW", "\(output)")
        #expect(
            result["included"] as? [String]
                == [
                    "subscriptionGroups", "subscriptionIntroductoryOffers", "subscriptionLocalizations",
                    "subscriptionPrices", "subscriptionPromotionalOffers",
                ], "\(output)")
        #expect(result["localizations"] as? Int == 2 && result["pricesIncluded"] as? Int == 5, "\(output)")
        #expect(result["prices"] as? Int == Storefront.all.count, "\(output)")
        #expect(result["pricePages"] as? Int == (Storefront.all.count + 39) / 40, "\(output)")
        #expect(result["promotionalOffer"] as? String == "comeback", "\(output)")
    }

    /// An in-app purchase made through `/v2/inAppPurchases` is Kiosk's product: once it has a price, a sandbox
    /// tester buys it.
    @Test func anInAppPurchaseMadeThroughTheAPIIsSoldInTheSandbox() async throws {
        try await withTestStore { store in
            try await store.preparePurchaseCatalog()
            let client = try await Client.make(store, role: "ADMIN")
            let appId = try #require(
                ((try await client.send(.GET, "/v1/apps").json["data"] as? [[String: Any]])?.first?["id"] as? String))
            let created = try await client.send(
                .POST, "/v2/inAppPurchases",
                json: [
                    "data": [
                        "type": "inAppPurchases",
                        "attributes": [
                            "productId": "com.example.gems.10", "name": "10 gems", "inAppPurchaseType": "CONSUMABLE",
                        ],
                        "relationships": ["app": Self.relationship("apps", appId)],
                    ]
                ])
            #expect(created.status == 201, "\(created.text)")
            let id = try #require(Self.data(created)["id"] as? String)
            #expect(id == "\(appId)-com.example.gems.10")
            let localized = try await client.send(
                .POST, "/v1/inAppPurchaseLocalizations",
                json: [
                    "data": [
                        "type": "inAppPurchaseLocalizations",
                        "attributes": ["locale": "en-US", "name": "10 Gems", "description": "A handful of gems."],
                        "relationships": ["inAppPurchaseV2": Self.relationship("inAppPurchases", id)],
                    ]
                ])
            #expect(localized.status == 201, "\(localized.text)")
            let twice = try await client.send(
                .POST, "/v1/inAppPurchaseLocalizations",
                json: [
                    "data": [
                        "type": "inAppPurchaseLocalizations", "attributes": ["locale": "en_US", "name": "Again"],
                        "relationships": ["inAppPurchaseV2": Self.relationship("inAppPurchases", id)],
                    ]
                ])
            #expect(twice.status == 409, "one localization per locale: \(twice.text)")
            let consumables = try await client.send(
                .GET, "/v1/apps/{id}/inAppPurchasesV2", id: appId,
                query: "filter[inAppPurchaseType]=CONSUMABLE&include=inAppPurchaseLocalizations")
            let listed = (consumables.json["data"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            #expect(Set(listed) == ["\(appId)-\(TestStore.coins)", id], "\(consumables.text)")
            #expect((consumables.json["included"] as? [Any])?.isEmpty == false, "\(consumables.text)")
            let subscriptionFace = try await client.send(.GET, "/v1/subscriptions/{id}", id: id)
            #expect(subscriptionFace.status == 404, "a consumable is no subscription")

            // A price schedule: the US base price, equalized everywhere, and a manual price in Japan.
            let points = try await client.send(
                .GET, "/v2/inAppPurchases/{id}/pricePoints", id: id, query: "filter[territory]=USA,JPN&limit=200")
            func point(_ territory: String, _ price: String) -> String? {
                let all = points.json["data"] as? [[String: Any]] ?? []
                return all.compactMap { $0["id"] as? String }.first { id in
                    let attributes = all.first { $0["id"] as? String == id }?["attributes"] as? [String: Any]
                    return Self.territory(ofPoint: id) == territory && attributes?["customerPrice"] as? String == price
                }
            }
            let usa = try #require(point("USA", "2.99"), "\(points.text)")
            let japan = try #require(point("JPN", "490"), "\(points.text)")
            let scheduled = try await client.send(
                .POST, "/v1/inAppPurchasePriceSchedules",
                json: [
                    "data": [
                        "type": "inAppPurchasePriceSchedules",
                        "relationships": [
                            "inAppPurchase": Self.relationship("inAppPurchases", id),
                            "baseTerritory": Self.relationship("territories", "USA"),
                            "manualPrices": [
                                "data": [
                                    ["type": "inAppPurchasePrices", "id": "${usa}"],
                                    ["type": "inAppPurchasePrices", "id": "${japan}"],
                                ]
                            ],
                        ],
                    ],
                    "included": [
                        [
                            "type": "inAppPurchasePrices", "id": "${usa}",
                            "relationships": [
                                "inAppPurchasePricePoint": Self.relationship("inAppPurchasePricePoints", usa)
                            ],
                        ],
                        [
                            "type": "inAppPurchasePrices", "id": "${japan}",
                            "relationships": [
                                "inAppPurchasePricePoint": Self.relationship("inAppPurchasePricePoints", japan)
                            ],
                        ],
                    ],
                ])
            #expect(scheduled.status == 201, "\(scheduled.text)")
            let manual = try await client.send(
                .GET, "/v1/inAppPurchasePriceSchedules/{id}/manualPrices", id: id, query: "include=territory")
            let manualTerritories = (manual.json["included"] as? [[String: Any]] ?? []).compactMap {
                $0["id"] as? String
            }
            #expect(Set(manualTerritories) == ["USA", "JPN"], "\(manual.text)")
            let automatic = try await client.send(
                .GET, "/v1/inAppPurchasePriceSchedules/{id}/automaticPrices", id: id, query: "limit=1")
            let total = ((automatic.json["meta"] as? [String: Any])?["paging"] as? [String: Any])?["total"] as? Int
            #expect(total == Storefront.all.count - 2, "\(automatic.text)")
            let token = try await store.signIn()
            let bought = try await store.pay("com.example.gems.10", token: token)
            #expect(bought.transactionId != nil, "\(bought.text)")
            let (price, currency) = try await Self.charged(
                "com.example.gems.10", tester: TestStore.testerEmail, store: store)
            #expect(price == 299 && currency == "USD", "charged \(price ?? -1) \(currency ?? "")")

            let deleted = try await client.send(.DELETE, "/v2/inAppPurchases/{id}", id: id)
            #expect(deleted.status == 204, "\(deleted.text)")
            let reused = try await client.send(
                .POST, "/v2/inAppPurchases",
                json: [
                    "data": [
                        "type": "inAppPurchases",
                        "attributes": [
                            "productId": "com.example.gems.10", "name": "Again", "inAppPurchaseType": "CONSUMABLE",
                        ],
                        "relationships": ["app": Self.relationship("apps", appId)],
                    ]
                ])
            #expect(reused.status == 409, "a deleted product id is never used again: \(reused.text)")
        }
    }

    /// The billing grace period is App Store Connect's `subscriptionGracePeriods` resource; the sandbox's test
    /// control reads the same setting.
    @Test func theBillingGracePeriodIsSetThroughItsResource() async throws {
        try await withTestStore { store in
            try await store.preparePurchaseCatalog()
            let client = try await Client.make(store, role: "APP_MANAGER")
            let appId = try #require(
                ((try await client.send(.GET, "/v1/apps").json["data"] as? [[String: Any]])?.first?["id"] as? String))
            let initial = try await client.send(.GET, "/v1/apps/{id}/subscriptionGracePeriod", id: appId)
            #expect(Self.attributes(initial)["optIn"] as? Bool == false, "\(initial.text)")
            let id = try #require(Self.data(initial)["id"] as? String)
            let patch: [String: Any] = [
                "data": [
                    "type": "subscriptionGracePeriods", "id": id,
                    "attributes": ["optIn": true, "sandboxOptIn": true, "duration": "TWENTY_EIGHT_DAYS"],
                ]
            ]
            let changed = try await client.send(.PATCH, "/v1/subscriptionGracePeriods/{id}", id: id, json: patch)
            #expect(changed.status == 200, "\(changed.text)")
            #expect(Self.attributes(changed)["duration"] as? String == "TWENTY_EIGHT_DAYS", "\(changed.text)")
            let control = try await store.request(
                .GET, TestControlRoutes.gracePeriod.path(TestStore.bundleId), token: .some(store.adminToken))
            #expect(control.json["days"] as? Int == 28, "\(control.text)")
            let split = try await client.send(
                .PATCH, "/v1/subscriptionGracePeriods/{id}", id: id,
                json: [
                    "data": ["type": "subscriptionGracePeriods", "id": id, "attributes": ["sandboxOptIn": false]]
                ])
            #expect(split.status == 409, "one grace period for both environments: \(split.text)")
            let off = try await client.send(
                .PATCH, "/v1/subscriptionGracePeriods/{id}", id: id,
                json: ["data": ["type": "subscriptionGracePeriods", "id": id, "attributes": ["optIn": false]]])
            #expect(Self.attributes(off)["optIn"] as? Bool == false && Self.attributes(off)["duration"] == nil)
            let reader = try await Client.make(store, role: "DEVELOPER")
            let refused = try await reader.send(.PATCH, "/v1/subscriptionGracePeriods/{id}", id: id, json: patch)
            #expect(refused.status == 403, "\(refused.text)")
        }
    }

    @Test func listsPageWithApplesCursorsAndFilterSortAndTrimFields() async throws {
        try await withTestStore { store in
            try await store.preparePurchaseCatalog()
            let client = try await Client.make(store, role: "DEVELOPER")
            var ids: [String] = []
            var query = "limit=40"
            var pages = 0
            var next: String?
            repeat {
                let page: TestStore.Answer
                if let next {
                    let url = try #require(URLComponents(string: next))
                    #expect(url.path == "/v1/territories")
                    page = try await client.send(.GET, "/v1/territories", query: url.percentEncodedQuery ?? "")
                } else {
                    page = try await client.send(.GET, "/v1/territories", query: query)
                }
                #expect(page.status == 200, "\(page.text)")
                ids += (page.json["data"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
                let paging = (page.json["meta"] as? [String: Any])?["paging"] as? [String: Any]
                #expect(paging?["total"] as? Int == Storefront.all.count && paging?["limit"] as? Int == 40)
                next = (page.json["links"] as? [String: Any])?["next"] as? String
                pages += 1
                query = ""
            } while next != nil && pages < 20
            #expect(ids.count == Storefront.all.count && Set(ids).count == ids.count, "every territory once")
            #expect(pages == (Storefront.all.count + 39) / 40)
            #expect(ids.contains("USA") && ids.contains("CHN"))

            let appId = try #require(
                ((try await client.send(.GET, "/v1/apps").json["data"] as? [[String: Any]])?.first?["id"] as? String))
            let manager = try await Client.make(store, role: "APP_MANAGER")
            for name in ["Alpha", "Gamma", "Beta"] {
                let created = try await manager.send(
                    .POST, "/v1/subscriptionGroups",
                    json: [
                        "data": [
                            "type": "subscriptionGroups", "attributes": ["referenceName": name],
                            "relationships": ["app": Self.relationship("apps", appId)],
                        ]
                    ])
                #expect(created.status == 201, "\(created.text)")
            }
            let groups = try await client.send(
                .GET, "/v1/apps/{id}/subscriptionGroups", id: appId,
                query: "sort=-referenceName&fields[subscriptionGroups]=referenceName")
            let listed = try #require(groups.json["data"] as? [[String: Any]], "\(groups.text)")
            let names = listed.compactMap { ($0["attributes"] as? [String: Any])?["referenceName"] as? String }
            #expect(names == ["Gamma", "Beta", "Alpha"], "\(groups.text)")
            #expect(listed.allSatisfy { $0["relationships"] == nil }, "fields[] trims the relationships")
            let filtered = try await client.send(
                .GET, "/v1/apps", query: "filter[bundleId]=com.example.none,\(TestStore.bundleId)&fields[apps]=name")
            let only = try #require((filtered.json["data"] as? [[String: Any]])?.first)
            #expect((only["attributes"] as? [String: Any])?.keys.sorted() == ["name"], "\(filtered.text)")
            let versions = try await client.send(.GET, "/v1/apps", query: "filter[appStoreVersions.platform]=IOS")
            #expect((versions.json["data"] as? [Any])?.isEmpty == true, "Kiosk's apps have no App Store versions")
        }
    }

    @Test func refusalsAreApplesErrorDocuments() async throws {
        try await withTestStore { store in
            try await store.preparePurchaseCatalog()
            let reader = try await Client.make(store, role: "DEVELOPER")
            let manager = try await Client.make(store, role: "APP_MANAGER")
            let appId = try #require(
                ((try await reader.send(.GET, "/v1/apps").json["data"] as? [[String: Any]])?.first?["id"] as? String))
            let createGroup: [String: Any] = [
                "data": [
                    "type": "subscriptionGroups", "attributes": ["referenceName": "Extra"],
                    "relationships": ["app": Self.relationship("apps", appId)],
                ]
            ]
            let forbidden = try await reader.send(.POST, "/v1/subscriptionGroups", json: createGroup)
            #expect(forbidden.status == 403 && Self.firstError(forbidden)["code"] as? String == "FORBIDDEN_ERROR")

            for (query, code) in [
                ("colour=blue", "PARAMETER_ERROR.ILLEGAL"),
                ("fields[territories]=currency,flag", "PARAMETER_ERROR.INVALID"),
                ("limit=201", "PARAMETER_ERROR.INVALID"),
                ("limit=0", "PARAMETER_ERROR.INVALID"),
                ("limit=99999999999999999999999", "PARAMETER_ERROR.INVALID"),
                ("cursor=bm90LWEtY3Vyc29y", "PARAMETER_ERROR.INVALID"),
                ("limit=1&limit=2", "PARAMETER_ERROR.INVALID"),
            ] {
                let refused = try await reader.send(.GET, "/v1/territories", query: query)
                #expect(refused.status == 400, "\(query): \(refused.text)")
                #expect(Self.firstError(refused)["code"] as? String == code, "\(query): \(refused.text)")
            }

            let missing = try await manager.send(
                .POST, "/v1/subscriptionGroups",
                json: ["data": ["type": "subscriptionGroups", "attributes": [:], "relationships": [:]]])
            #expect(missing.status == 409, "\(missing.text)")
            #expect(Self.firstError(missing)["code"] as? String == "ENTITY_ERROR.ATTRIBUTE.REQUIRED")
            let wrongType = try await manager.send(
                .POST, "/v1/subscriptionGroups",
                json: [
                    "data": [
                        "type": "subscriptions", "attributes": ["referenceName": "X"],
                        "relationships": ["app": Self.relationship("apps", appId)],
                    ]
                ])
            #expect(wrongType.status == 409, "\(wrongType.text)")
            #expect((Self.firstError(wrongType)["source"] as? [String: String])?["pointer"] == "/data/type")
            let notJSON = try await manager.send(.POST, "/v1/subscriptionGroups", rawBody: Data("{nope".utf8))
            #expect(notJSON.status == 422, "\(notJSON.text)")
            let unknownApp = try await manager.send(
                .POST, "/v1/subscriptionGroups",
                json: [
                    "data": [
                        "type": "subscriptionGroups", "attributes": ["referenceName": "X"],
                        "relationships": ["app": Self.relationship("apps", "999")],
                    ]
                ])
            #expect(unknownApp.status == 409, "\(unknownApp.text)")
            #expect(Self.firstError(unknownApp)["code"] as? String == "ENTITY_ERROR.RELATIONSHIP.INVALID")

            let created = try await manager.send(.POST, "/v1/subscriptionGroups", json: createGroup)
            let groupId = try #require(Self.data(created)["id"] as? String, "\(created.text)")
            let again = try await manager.send(.POST, "/v1/subscriptionGroups", json: createGroup)
            #expect(again.status == 409 && Self.firstError(again)["code"] as? String == "ENTITY_ERROR")
            #expect((Self.firstError(again)["detail"] as? String)?.contains("already has") == true, "\(again.text)")
            let mismatch = try await manager.send(
                .PATCH, "/v1/subscriptionGroups/{id}", id: groupId,
                json: ["data": ["type": "subscriptionGroups", "id": "1", "attributes": ["referenceName": "Y"]]])
            #expect(mismatch.status == 409, "\(mismatch.text)")
            for id in ["0", "-1", "abc", "99999999999999999999", "1-", "~"] {
                let unknown = try await reader.send(.GET, "/v1/subscriptionGroups/{id}", id: id)
                #expect(unknown.status == 404, "\(id): \(unknown.text)")
                let noSubscription = try await reader.send(.GET, "/v1/subscriptions/{id}", id: id)
                #expect(noSubscription.status == 404, "\(id): \(noSubscription.text)")
            }
            let withoutPeriod = try await manager.send(
                .POST, "/v1/subscriptions",
                json: [
                    "data": [
                        "type": "subscriptions", "attributes": ["productId": "com.example.x", "name": "X"],
                        "relationships": ["group": Self.relationship("subscriptionGroups", groupId)],
                    ]
                ])
            #expect(withoutPeriod.status == 409, "\(withoutPeriod.text)")
            #expect(
                (Self.firstError(withoutPeriod)["source"] as? [String: String])?["pointer"]
                    == "/data/attributes/subscriptionPeriod")
            // A level at Int.max would make "the level after the lowest" overflow; it is refused, and the next
            // subscription still gets its level.
            func subscription(_ productId: String, level: Int? = nil) -> [String: Any] {
                var attributes: [String: Any] = [
                    "productId": productId, "name": productId, "subscriptionPeriod": "ONE_MONTH",
                ]
                attributes["groupLevel"] = level
                return [
                    "data": [
                        "type": "subscriptions", "attributes": attributes,
                        "relationships": ["group": Self.relationship("subscriptionGroups", groupId)],
                    ]
                ]
            }
            let huge = try await manager.send(
                .POST, "/v1/subscriptions", json: subscription("com.example.huge", level: Int.max))
            #expect(huge.status == 409, "\(huge.text)")
            let first = try await manager.send(.POST, "/v1/subscriptions", json: subscription("com.example.first"))
            let firstId = try #require(Self.data(first)["id"] as? String, "\(first.text)")
            let raised = try await manager.send(
                .PATCH, "/v1/subscriptions/{id}", id: firstId,
                json: ["data": ["type": "subscriptions", "id": firstId, "attributes": ["groupLevel": Int.max]]])
            #expect(raised.status == 409, "\(raised.text)")
            let second = try await manager.send(.POST, "/v1/subscriptions", json: subscription("com.example.second"))
            #expect(Self.attributes(second)["groupLevel"] as? Int == 2, "\(second.text)")
            for id in [firstId, try #require(Self.data(second)["id"] as? String)] {
                #expect(try await manager.send(.DELETE, "/v1/subscriptions/{id}", id: id).status == 204)
            }
            let health = try await store.request(.GET, "/health")
            #expect(health.status == 200, "the store still answers: \(health.text)")

            // A resource Kiosk does not serve yet answers as Apple does for one it does not have.
            let token = try manager.key.token(now: Date(), lifetime: 600)
            for path in ["/v1/appStoreVersions/1", "/v2/inAppPurchases/1", "/v1/apps/1/builds"] {
                let absent = try await store.request(.GET, path, token: .some(token))
                #expect(absent.status == 404, "\(path): \(absent.text)")
                #expect(Self.firstError(absent)["code"] as? String == "NOT_FOUND", "\(path): \(absent.text)")
            }
        }
    }

    /// Every operation the contract documents is served, and every `/v1` and `/v2` route the store serves is
    /// documented: the contract and the router are one list.
    @Test func servedRoutesAreTheContractsOperations() async throws {
        try await withTestStore { store in
            let served = Set(
                store.built.routes.filter { $0.contains(" /v1/") || $0.contains(" /v2/") })
            let documented = Set(ConnectContract.served.operations.keys)
            #expect(documented.count >= 28)
            #expect(documented.subtracting(served).sorted() == [], "documented, not served")
            #expect(served.subtracting(documented).sorted() == [], "served, not documented")
        }
    }
}
