import Foundation
import KioskTestSupport
import KioskTesting
import Testing

@Suite struct ConsoleProductsTests {
    /// The "zero products" pitfall: a complete product stays unavailable until the Paid Apps agreement is active,
    /// and the console says exactly that; the sandbox then accepts Ready to Submit while production needs Approved.
    @Test(arguments: TestDatabase.available)
    func availabilityExplainsZeroProducts(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.createApp()
            let created = try await store.createProduct("com.example.coins.100")
            #expect(created.status == 201, "\(created.text)")
            #expect(created.json["reviewState"] as? String == "ready_to_submit")

            let path = "/admin/v1/apps/com.example.app/products/com.example.coins.100/availability"
            let pending = try await store.request(.GET, path + "?environment=sandbox&storefront=USA")
            #expect(pending.json["available"] as? Bool == false)
            let codes = (pending.json["reasons"] as? [[String: Any]])?.compactMap { $0["code"] as? String }
            #expect(codes == ["agreement_not_active"])

            let accepted = try await store.request(
                .POST, "/admin/v1/agreements/paid-apps/accept", json: SampleAgreement.json)
            #expect(accepted.json["status"] as? String == "active")
            let sandbox = try await store.request(.GET, path + "?environment=sandbox")
            #expect(sandbox.json["available"] as? Bool == true)
            let production = try await store.request(.GET, path + "?environment=production")
            let productionCodes = (production.json["reasons"] as? [[String: Any]])?.compactMap { $0["code"] as? String }
            #expect(productionCodes == ["not_approved"])

            for action in ["submit", "approve"] {
                let reviewed = try await store.request(
                    .POST, "/admin/v1/apps/com.example.app/products/com.example.coins.100/review",
                    json: ["action": action])
                #expect(reviewed.status == 200, "\(action): \(reviewed.text)")
            }
            let approved = try await store.request(.GET, path + "?environment=production")
            #expect(approved.json["available"] as? Bool == true)

            let illegal = try await store.request(
                .POST, "/admin/v1/apps/com.example.app/products/com.example.coins.100/review",
                json: ["action": "approve"])
            #expect(illegal.status == 409)
            #expect(illegal.errorCode == "invalid_review_transition")
        }
    }

    /// A product without a localization sells in the sandbox (texts are App Store review's concern, as in Xcode's
    /// StoreKit testing) but not in production, which names the finding; a localization clears it.
    @Test(arguments: TestDatabase.available)
    func undescribedProductSellsOnlyInTheSandbox(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.createApp()
            _ = try await store.request(.POST, "/admin/v1/agreements/paid-apps/accept", json: SampleAgreement.json)
            let bare = try await store.createProduct(
                "com.example.unlock", type: "non_consumable", fields: ["localizations": []])
            #expect(bare.json["reviewState"] as? String == "ready_to_submit", "\(bare.text)")
            let availability = bare.json["availability"] as? [[String: Any]]
            let reasons = { (environment: String) in
                let entry = availability?.first { $0["environment"] as? String == environment }
                return ((entry?["reasons"] as? [[String: Any]]) ?? []).compactMap { $0["code"] as? String }
            }
            #expect(reasons("sandbox") == [], "\(bare.text)")
            #expect(reasons("production").contains("review_findings"), "\(bare.text)")

            let localized = try await store.request(
                .PUT, "/admin/v1/apps/com.example.app/products/com.example.unlock/localizations/zh-CN",
                json: ["displayName": "解锁全部关卡", "description": "一次购买，永久解锁"])
            #expect(localized.status == 200, "\(localized.text)")
            #expect(localized.json["reviewState"] as? String == "ready_to_submit")
            let locales = (localized.json["localizations"] as? [[String: Any]])?.compactMap { $0["locale"] as? String }
            #expect(locales == ["zh_CN"])
        }
    }

    /// Product ids are permanent, as at Apple: a deleted product's id can never be reused, and a live one not twice.
    @Test(arguments: TestDatabase.available)
    func productIdsArePermanent(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.createApp()
            try await store.createProduct("com.example.gems")
            let duplicate = try await store.createProduct("com.example.gems")
            #expect(duplicate.status == 409)
            #expect(duplicate.errorCode == "duplicate_product_id")

            let deleted = try await store.request(.DELETE, "/admin/v1/apps/com.example.app/products/com.example.gems")
            #expect(deleted.status == 200)
            #expect(deleted.json["deletedAt"] != nil)
            let reused = try await store.createProduct("com.example.gems")
            #expect(reused.status == 409)
            #expect(reused.errorCode == "product_id_deleted")
            #expect(reused.errorField == "productId")

            let gone = try await store.request(.GET, "/admin/v1/apps/com.example.app/products/com.example.gems")
            #expect(gone.errorCode == "product_deleted")
            let listed = try await store.request(.GET, "/admin/v1/apps/com.example.app/products")
            #expect((listed.json["products"] as? [Any])?.isEmpty == true)
            let withDeleted = try await store.request(
                .GET, "/admin/v1/apps/com.example.app/products?includeDeleted=true")
            #expect((withDeleted.json["products"] as? [Any])?.count == 1)
        }
    }

    /// Tier 1 is CNY 6, HKD 8 and USD 0.99 (as at Apple), in integer minor units; custom price points win in their
    /// storefront; JPY has no minor unit.
    @Test(arguments: TestDatabase.available)
    func pricesPerStorefront(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.createApp()
            try await store.createProduct(
                "com.example.coins", fields: ["pricing": ["tier": 1, "customPrices": ["GBR": 149, "KOR": 1500]]])
            let answer = try await store.request(
                .GET, "/admin/v1/apps/com.example.app/products/com.example.coins/prices")
            let prices = try #require(answer.json["prices"] as? [[String: Any]])
            func price(_ storefront: String) -> (Int?, String?, String?) {
                let entry = prices.first { $0["storefront"] as? String == storefront }
                return (entry?["priceMinorUnits"] as? Int, entry?["price"] as? String, entry?["source"] as? String)
            }
            #expect(price("CHN").0 == 600 && price("CHN").1 == "6.00")
            #expect(price("HKG").0 == 800)
            #expect(price("USA").0 == 99 && price("USA").1 == "0.99")
            #expect(price("JPN").1?.contains(".") == false)
            #expect(price("KOR").0 == 1500 && price("KOR").2 == "custom")
            #expect(prices.count >= 40)

            let unknownStorefront = try await store.request(
                .PATCH, "/admin/v1/apps/com.example.app/products/com.example.coins",
                json: ["pricing": ["customPrices": ["XYZ": 100]]])
            #expect(unknownStorefront.status == 400)
            #expect(unknownStorefront.errorField?.hasPrefix("pricing.customPrices") == true)
            let badTier = try await store.request(
                .PATCH, "/admin/v1/apps/com.example.app/products/com.example.coins", json: ["pricing": ["tier": 99]])
            #expect(badTier.status == 400)
            #expect(badTier.errorField == "pricing.tier")
        }
    }

    /// Invalid product input is rejected with the field named and nothing stored.
    @Test(arguments: TestDatabase.available)
    func invalidProductsAreRejected(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.createApp()
            let badLocale = try await store.createProduct(
                "com.example.a",
                fields: ["localizations": [["locale": "xx_YY", "displayName": "A", "description": "B"]]])
            #expect(badLocale.status == 400)
            #expect(badLocale.errorField == "localizations[0].locale")
            let longName = try await store.createProduct(
                "com.example.b",
                fields: [
                    "localizations": [
                        ["locale": "en_US", "displayName": String(repeating: "x", count: 36), "description": "B"]
                    ]
                ])
            #expect(longName.status == 400)
            #expect(longName.errorField == "localizations[0].displayName")
            let badType = try await store.createProduct("com.example.c", type: "subscription")
            #expect(badType.status == 400)
            #expect(badType.errorField == "type")
            let badId = try await store.createProduct("com example d")
            #expect(badId.status == 400)
            #expect(badId.errorField == "productId")
            let noGroup = try await store.createProduct(
                "com.example.e", type: "auto_renewable", fields: ["duration": "P1M"])
            #expect(noGroup.status == 400)
            #expect(noGroup.errorField == "subscription")

            let nestedTypo = try await store.createProduct(
                "com.example.g",
                fields: ["localizations": [["locale": "en_US", "displayName": "G", "descripton": "typo"]]])
            #expect(nestedTypo.status == 400)
            // The misspelt key is named, with the key it was meant to be, rather than the missing description.
            #expect(nestedTypo.errorCode == "unknown_field", "\(nestedTypo.text)")
            #expect(nestedTypo.errorField == "localizations[0].descripton", "\(nestedTypo.text)")
            #expect(nestedTypo.errorFix == "Did you mean 'description'?", "\(nestedTypo.text)")
            let nestedExtra = try await store.createProduct(
                "com.example.h", fields: ["pricing": ["tier": 1, "currency": "USD"]])
            #expect(nestedExtra.errorCode == "unknown_field")
            #expect(nestedExtra.errorField == "pricing.currency")

            try await store.createProduct("com.example.f")
            let typeChange = try await store.request(
                .PATCH, "/admin/v1/apps/com.example.app/products/com.example.f", json: ["type": "non_consumable"])
            #expect(typeChange.errorCode == "type_immutable")

            let listed = try await store.request(.GET, "/admin/v1/apps/com.example.app/products")
            #expect((listed.json["products"] as? [[String: Any]])?.count == 1)
        }
    }

    /// Subscription groups hold auto-renewable products at levels; a group with products cannot be deleted, and
    /// offers are stored with the product.
    @Test(arguments: TestDatabase.available)
    func subscriptionGroupsAndOffers(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.createApp()
            let group = try await store.request(
                .POST, "/admin/v1/apps/com.example.app/subscription-groups",
                json: ["referenceName": "Pro", "localizations": [["locale": "en-US", "name": "Pro"]]])
            #expect(group.status == 201, "\(group.text)")
            let groupId = try #require(group.json["groupId"] as? Int)
            #expect(groupId == 21_000_001)
            #expect(group.json["subscriptionGroupIdentifier"] as? String == "21000001")

            let duplicateGroup = try await store.request(
                .POST, "/admin/v1/apps/com.example.app/subscription-groups", json: ["referenceName": "Pro"])
            #expect(duplicateGroup.errorCode == "duplicate_group")

            let monthly = try await store.createProduct(
                "com.example.pro.monthly", type: "auto_renewable",
                fields: [
                    "subscription": ["group": "Pro", "level": 1], "duration": "P1M",
                    "introductoryOffers": [["paymentMode": "free_trial", "period": "P1W", "numberOfPeriods": 1]],
                    "promotionalOffers": [
                        [
                            "identifier": "winback", "referenceName": "Win back", "paymentMode": "pay_as_you_go",
                            "period": "P1M", "numberOfPeriods": 3, "pricing": ["tier": 1],
                        ]
                    ],
                ])
            #expect(monthly.status == 201, "\(monthly.text)")
            #expect((monthly.json["subscription"] as? [String: Any])?["groupId"] as? Int == groupId)
            #expect(
                (monthly.json["promotionalOffers"] as? [[String: Any]])?.first?["identifier"] as? String == "winback")

            let unknownGroup = try await store.createProduct(
                "com.example.pro.yearly", type: "auto_renewable",
                fields: ["subscription": ["group": "Premium", "level": 1], "duration": "P1Y"])
            #expect(unknownGroup.status == 404)
            #expect(unknownGroup.errorCode == "group_not_found")

            let delete = try await store.request(
                .DELETE, "/admin/v1/apps/com.example.app/subscription-groups/\(groupId)")
            #expect(delete.status == 409)
            #expect(delete.errorCode == "group_not_empty")
        }
    }

    /// Win-back offers are created, read back whole, changed by PATCH and refused with the field and a fix when
    /// their eligibility is out of range, including numbers no Int holds.
    @Test(arguments: TestDatabase.available)
    func winBackOffersThroughTheConsole(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.createApp()
            let group = try await store.request(
                .POST, "/admin/v1/apps/com.example.app/subscription-groups", json: ["referenceName": "Pro"])
            #expect(group.status == 201, "\(group.text)")
            let offer: [String: Any] = [
                "identifier": "lapsed_half", "referenceName": "Half price", "paymentMode": "pay_as_you_go",
                "period": "P1M", "numberOfPeriods": 3, "pricing": ["customPrices": ["USA": 249]],
                "paidSubscriptionDurationInMonths": 2,
                "timeSinceLastSubscribedInMonths": ["minimum": 1, "maximum": 6], "waitBetweenOffersInMonths": 12,
                "startDate": "2026-01-01T00:00:00Z", "endDate": "2027-01-01T00:00:00Z", "priority": "high",
            ]
            let created = try await store.createProduct(
                "com.example.pro.monthly", type: "auto_renewable",
                fields: ["subscription": ["group": "Pro", "level": 1], "duration": "P1M", "winBackOffers": [offer]])
            #expect(created.status == 201, "\(created.text)")
            let path = "/admin/v1/apps/com.example.app/products/com.example.pro.monthly"
            let read = try await store.request(.GET, path)
            let offers = try #require(read.json["winBackOffers"] as? [[String: Any]])
            #expect(offers.count == 1)
            #expect(offers.first.map { NSDictionary(dictionary: $0) } == NSDictionary(dictionary: offer))

            let minimal = try await store.request(
                .PATCH, path,
                json: [
                    "winBackOffers": [
                        [
                            "identifier": "lapsed_free", "referenceName": "Free", "paymentMode": "free_trial",
                            "period": "P1M",
                        ]
                    ]
                ])
            #expect(minimal.status == 200, "\(minimal.text)")
            let defaults = try #require((minimal.json["winBackOffers"] as? [[String: Any]])?.first)
            #expect(defaults["paidSubscriptionDurationInMonths"] as? Int == 1)
            #expect((defaults["timeSinceLastSubscribedInMonths"] as? [String: Any])?["minimum"] as? Int == 1)
            #expect(defaults["priority"] as? String == "normal")

            var tooLong = offer
            tooLong["timeSinceLastSubscribedInMonths"] = ["minimum": 1, "maximum": 121]
            let refused = try await store.request(.PATCH, path, json: ["winBackOffers": [tooLong]])
            #expect(refused.status == 400, "\(refused.text)")
            #expect(refused.errorCode == "invalid_win_back_months")
            let error = refused.json["error"] as? [String: Any]
            #expect(error?["field"] as? String == "winBackOffers[0].timeSinceLastSubscribedInMonths.maximum")
            #expect(error?["fix"] is String)

            var hostile = offer
            hostile["paidSubscriptionDurationInMonths"] = 1e30
            let hostileAnswer = try await store.request(.PATCH, path, json: ["winBackOffers": [hostile]])
            #expect(hostileAnswer.status == 400, "\(hostileAnswer.text)")

            let consumable = try await store.createProduct(
                "com.example.coins", fields: ["winBackOffers": [offer]])
            #expect(consumable.errorCode == "offers_require_auto_renewable")
        }
    }

    /// An introductory offer given for `usa` is stored as `USA` and taken by a USA tester's first purchase
    /// (it used to be accepted and then never applied, as purchases compare codes exactly).
    @Test func introductoryOfferStorefrontInAnyCaseApplies() async throws {
        try await withTestStore { store in
            try await store.preparePurchaseCatalog()
            let group = try await store.request(
                .POST, "/admin/v1/apps/\(TestStore.bundleId)/subscription-groups",
                json: ["referenceName": "Pro", "localizations": [["locale": "en_US", "name": "Pro"]]])
            #expect(group.status == 201, "\(group.text)")
            let created = try await store.createProduct(
                "com.example.pro", type: "auto_renewable",
                fields: [
                    "subscription": ["group": "Pro", "level": 1], "duration": "P1M", "pricing": ["tier": 3],
                    "introductoryOffers": [
                        [
                            "storefront": "usa", "paymentMode": "pay_up_front", "period": "P1M",
                            "pricing": ["customPrices": ["USA": 49]],
                        ]
                    ],
                ])
            #expect(created.status == 201, "\(created.text)")
            let offers = created.json["introductoryOffers"] as? [[String: Any]]
            #expect(offers?.first?["storefront"] as? String == "USA", "\(created.text)")
            let paid = try await store.pay("com.example.pro", token: try await store.signIn())
            let signed = try #require((paid.json["transaction"] as? [String: Any])?["signedTransaction"] as? String)
            let payload = try StoreKitCorpusTests.payload(signed)
            #expect(payload["offerType"] as? Int == 1, "\(payload)")
            #expect(payload["price"] as? Int == 490, "\(payload)")
        }
    }
}
