import Foundation
import KioskCore
import KioskTestSupport
import KioskTesting
import Testing

/// Xcode-shaped `.storekit` files of every format version and every leniency Xcode allows (`Resources/
/// StoreKitCorpus`, described in its `CORPUS.md`), each imported into a real store, sold in the sandbox, exported
/// and imported again, with nothing dropped on the way.
@Suite struct StoreKitCorpusTests {
    /// One corpus file and the warnings its import must give, by code.
    struct Case: Sendable, CustomTestStringConvertible {
        var file: String
        var warnings: Set<String>
        var testDescription: String { file }
    }

    static let cases: [Case] = [
        Case(file: "v1-minimal", warnings: ["reference_name_defaulted", "storefront_assumed"]),
        Case(file: "v1-subscriptions", warnings: ["storefront_assumed", "kept_not_used"]),
        Case(file: "v2-empty-texts", warnings: ["invalid_display_name", "invalid_description"]),
        Case(file: "v2-language-locales", warnings: ["locale_mapped", "kept_not_used"]),
        Case(file: "v3-promotional", warnings: ["kept_not_used"]),
        Case(file: "v3-long-texts", warnings: ["invalid_product_id", "invalid_display_name", "invalid_description"]),
        Case(file: "v4-winback", warnings: ["kept_not_used", "win_back_eligibility_defaulted"]),
        Case(file: "v5-billing-plans", warnings: ["kept_not_used"]),
        Case(file: "v4-storefront-fin", warnings: ["locale_mapped", "kept_not_used"]),
        Case(file: "v4-storefront-jpn", warnings: ["price_rounded", "locale_mapped", "kept_not_used"]),
        Case(file: "v4-nonrenewing", warnings: ["kept_not_used"]),
        Case(file: "v6-future", warnings: ["newer_version", "unknown_key_kept", "kept_not_used"]),
        Case(
            file: "v4-unknown-keys", warnings: ["unknown_key_kept", "kept_not_used", "win_back_eligibility_defaulted"]),
        Case(file: "v4-test-settings", warnings: ["test_settings_not_applied"]),
    ]

    static func data(_ name: String) throws -> Data {
        let url = try #require(
            Bundle.module.url(
                forResource: name, withExtension: "storekit", subdirectory: "Resources/StoreKitCorpus"))
        return try Data(contentsOf: url)
    }

    // Each file imports with exactly its expected kinds of warning, sells in the sandbox at the file's price in
    // the file's storefront, exports with every key it had (locales mapped, prices rounded and reference names
    // filled in as warned), and the export imports into another app as the same catalog.
    @Test(arguments: cases)
    func importsSellsAndRoundTrips(_ corpus: Case) async throws {
        let original = try Self.data(corpus.file)
        try await withTestStore { store in
            let file = try #require(try JSONSerialization.jsonObject(with: original) as? [String: Any])
            let storefront = ((file["settings"] as? [String: Any])?["_storefront"] as? String) ?? "USA"
            try await store.createApp(TestStore.bundleId)
            let imported = try await store.request(
                .POST, "/admin/v1/apps/\(TestStore.bundleId)/catalog?format=storekit", body: original)
            #expect(imported.status == 200, "\(imported.text)")
            let warnings = (imported.json["warnings"] as? [[String: Any]]) ?? []
            #expect(Set(warnings.compactMap { $0["code"] as? String }) == corpus.warnings, "\(imported.text)")
            #expect(warnings.allSatisfy { $0["path"] is String && $0["message"] is String }, "\(imported.text)")
            let products = Self.products(in: file)
            #expect(
                (imported.json["created"] as? [String])?.filter { $0.hasPrefix("product:") }.count == products.count)

            // What App Store review would refuse keeps the product out of production, with the reason named.
            if let finding = warnings.first(where: { warning in
                CatalogValidator.reviewRuleCodes.contains { $0.rawValue == (warning["code"] as? String) }
            }) {
                let id = try #require(finding["productId"] as? String)
                let product = try await store.request(.GET, "/admin/v1/apps/\(TestStore.bundleId)/products/\(id)")
                let production = (product.json["availability"] as? [[String: Any]])?.first {
                    $0["environment"] as? String == "production"
                }
                let reasons = ((production?["reasons"] as? [[String: Any]]) ?? []).compactMap { $0["code"] as? String }
                #expect(reasons.contains("review_findings"), "\(id): \(product.text)")
            }

            // A sandbox purchase of the first product, by a tester of the file's storefront, at the file's price.
            _ = try await store.request(.POST, "/admin/v1/agreements/paid-apps/accept", json: SampleAgreement.json)
            try await store.createTester(TestStore.testerEmail, settings: ["storefront": storefront])
            let token = try await store.signIn()
            let bought = try #require(products.first)
            let productId = try #require(bought["productID"] as? String)
            let paid = try await store.pay(productId, token: token)
            #expect(paid.json["state"] as? String == "purchased", "\(productId): \(paid.text)")
            let signed = try #require((paid.json["transaction"] as? [String: Any])?["signedTransaction"] as? String)
            let payload = try Self.payload(signed)
            #expect(payload["storefront"] as? String == storefront)
            let price = try #require(bought["displayPrice"] as? String)
            if !warnings.contains(where: {
                $0["code"] as? String == "price_rounded" && $0["productId"] as? String == productId
            }) {
                #expect(payload["price"] as? Int == Self.milliunits(price), "\(productId) at \(price)")
            }

            // Export: every key of the file comes back.
            let exported = try await store.request(
                .GET, "/admin/v1/apps/\(TestStore.bundleId)/catalog?format=storekit")
            #expect(exported.status == 200, "\(exported.text)")
            let written = try #require(try JSONSerialization.jsonObject(with: exported.body) as? [String: Any])
            let before = Self.leaves(file)
            let after = Self.leaves(written)
            // An empty object or array may come back filled (Xcode's settings written for the storefront).
            let dropped = before.keys.filter { path in
                after[path] == nil && !after.keys.contains { $0.hasPrefix(path + "/") }
            }.sorted()
            #expect(dropped.isEmpty, "dropped on export: \(dropped)")
            let changed = before.filter { path, value in
                guard let now = after[path], now != value else { return false }
                return !["displayPrice", "locale", "referenceName"].contains(path.split(separator: "/").last ?? "")
            }
            #expect(changed.isEmpty, "changed on export: \(changed.keys.sorted())")
            let major = try #require((file["version"] as? [String: Any])?["major"] as? Int, "\(corpus.file)")
            #expect((written["version"] as? [String: Any])?["major"] as? Int == major)

            // The export imports into another app as the same catalog.
            try await store.createApp("com.example.copy", name: "Copy")
            let again = try await store.request(
                .POST, "/admin/v1/apps/com.example.copy/catalog?format=storekit", body: exported.body)
            #expect(again.status == 200, "\(again.text)")
            let first = try await store.request(.GET, "/admin/v1/apps/\(TestStore.bundleId)/catalog")
            let second = try await store.request(.GET, "/admin/v1/apps/com.example.copy/catalog")
            for key in ["products", "subscriptionGroups"] {
                let original = try #require(first.json[key] as? NSArray, "\(first.text)")
                #expect(second.json[key] as? NSArray == original, "\(key): \(second.text)")
            }
        }
    }

    // Win-back offers import as the catalog's, at the file's prices, with the eligibility defaults named in one
    // warning per offer and none saying they are only kept; eligibility the file gives imports and is written back
    // as read, and the defaults are not added to a file that had none.
    @Test func winBackOffersImportAndRoundTrip() async throws {
        let text = String(decoding: try Self.data("v4-winback"), as: UTF8.self).replacingOccurrences(
            of: "\"offerID\" : \"plus_yearly_winback_upfront\",",
            with: """
                "customerEligibilityPaidSubscriptionDurationInMonths" : 12,
                "customerEligibilityTimeSinceLastSubscribedInMonths" : {"maximum" : 24, "minimum" : 2},
                "customerEligibilityWaitBetweenOffersInMonths" : 6, "endDate" : "2027-01-01T00:00:00Z",
                "offerID" : "plus_yearly_winback_upfront", "priority" : "HIGH",
                """)
        try await withTestStore { store in
            try await store.createApp(TestStore.bundleId)
            let imported = try await store.request(
                .POST, "/admin/v1/apps/\(TestStore.bundleId)/catalog?format=storekit", body: Data(text.utf8))
            #expect(imported.status == 200, "\(imported.text)")
            let warnings = (imported.json["warnings"] as? [[String: Any]]) ?? []
            let defaulted = warnings.filter { $0["code"] as? String == "win_back_eligibility_defaulted" }
            #expect(
                defaulted.compactMap { $0["path"] as? String } == [
                    "subscriptionGroups[0].subscriptions[0].winbackOffers[0]",
                    "subscriptionGroups[0].subscriptions[0].winbackOffers[1]",
                ])
            #expect(
                !warnings.contains {
                    ($0["path"] as? String)?.contains("winbackOffers") == true
                        && $0["code"] as? String == "kept_not_used"
                })

            let products = "/admin/v1/apps/\(TestStore.bundleId)/products/com.offshore.tidewater.plus"
            let monthly = try await store.request(.GET, "\(products).monthly")
            let offers = try #require(monthly.json["winBackOffers"] as? [[String: Any]])
            #expect(
                offers.compactMap { $0["identifier"] as? String } == [
                    "plus_monthly_winback_free", "plus_monthly_winback_half",
                ])
            #expect(offers[1]["paymentMode"] as? String == "pay_as_you_go")
            #expect(offers[1]["numberOfPeriods"] as? Int == 3)
            #expect((offers[1]["pricing"] as? [String: Any])?["customPrices"] as? [String: Int] == ["USA": 249])
            #expect(offers[1]["paidSubscriptionDurationInMonths"] as? Int == 1)
            let yearly = try await store.request(.GET, "\(products).yearly")
            let upfront = try #require((yearly.json["winBackOffers"] as? [[String: Any]])?.first)
            #expect(upfront["paidSubscriptionDurationInMonths"] as? Int == 12)
            #expect(upfront["timeSinceLastSubscribedInMonths"] as? [String: Int] == ["minimum": 2, "maximum": 24])
            #expect(upfront["waitBetweenOffersInMonths"] as? Int == 6)
            #expect(upfront["endDate"] as? String == "2027-01-01T00:00:00Z")
            #expect(upfront["priority"] as? String == "high")

            let exported = try await store.request(
                .GET, "/admin/v1/apps/\(TestStore.bundleId)/catalog?format=storekit")
            let written = try #require(try JSONSerialization.jsonObject(with: exported.body) as? [String: Any])
            let subscriptions = try #require(
                ((written["subscriptionGroups"] as? [[String: Any]])?.first)?["subscriptions"] as? [[String: Any]])
            let byId = Dictionary(
                uniqueKeysWithValues: subscriptions.map { ($0["productID"] as? String ?? "", $0) })
            let half = try #require(
                (byId["com.offshore.tidewater.plus.monthly"]?["winbackOffers"] as? [[String: Any]])?.first {
                    $0["offerID"] as? String == "plus_monthly_winback_half"
                })
            #expect(
                Set(half.keys) == [
                    "displayPrice", "internalID", "isEligible", "numberOfPeriods", "offerID", "paymentMode",
                    "referenceName", "subscriptionPeriod",
                ])
            let kept = try #require(
                (byId["com.offshore.tidewater.plus.yearly"]?["winbackOffers"] as? [[String: Any]])?.first)
            #expect(kept["customerEligibilityPaidSubscriptionDurationInMonths"] as? Int == 12)
            #expect(
                kept["customerEligibilityTimeSinceLastSubscribedInMonths"] as? [String: Int] == [
                    "minimum": 2, "maximum": 24,
                ])
            #expect(kept["customerEligibilityWaitBetweenOffersInMonths"] as? Int == 6)
            #expect(kept["endDate"] as? String == "2027-01-01T00:00:00Z")
            #expect(kept["priority"] as? String == "HIGH")
            #expect(kept["isEligible"] as? Bool == true)
        }
    }

    // A version 5 file's commitment billing plan (MONTHLY) imports as the annual subscription's monthly plan and is
    // sold: the first of 12 monthly payments of its displayPrice (5.99), the commitment's total 71.88 as the file
    // says; a subscription without the plan and a name that is no plan are refused.
    @Test func commitmentBillingPlansAreSold() async throws {
        try await withTestStore { store in
            try await store.createApp(TestStore.bundleId)
            let imported = try await store.request(
                .POST, "/admin/v1/apps/\(TestStore.bundleId)/catalog?format=storekit",
                body: try Self.data("v5-billing-plans"))
            #expect(imported.status == 200, "\(imported.text)")
            let product = try await store.request(
                .GET, "/admin/v1/apps/\(TestStore.bundleId)/products/com.graviton.orbitfit.pro.annual")
            #expect(
                ((product.json["monthlyPlan"] as? [String: Any])?["pricing"] as? [String: Any])?["customPrices"]
                    as? [String: Int] == ["USA": 599], "\(product.text)")
            _ = try await store.request(.POST, "/admin/v1/agreements/paid-apps/accept", json: SampleAgreement.json)
            try await store.createTester(TestStore.testerEmail, settings: ["storefront": "USA"])
            let token = try await store.signIn()
            func pay(_ plan: String, _ productId: String = "com.graviton.orbitfit.pro.annual") async throws
                -> TestStore.Answer
            {
                try await store.client(
                    .POST, "/payments", token: token,
                    json: [
                        "productId": productId, "quantity": 1, "idempotencyKey": UUID().uuidString,
                        "billingPlanType": plan,
                    ])
            }
            let unknown = try await pay("WEEKLY")
            #expect(unknown.status == 400, "\(unknown.text)")
            #expect(unknown.errorCode == "billing_plan_not_supported")
            let monthly = try await pay("MONTHLY")
            #expect(monthly.json["state"] as? String == "purchased", "\(monthly.text)")
            let signed = try #require(
                (monthly.json["transaction"] as? [String: Any])?["signedTransaction"] as? String, "\(monthly.text)")
            let payload = try Self.payload(signed)
            #expect(payload["billingPlanType"] as? String == "MONTHLY")
            #expect(payload["price"] as? Int == 5990)
            let commitment = payload["commitmentInfo"] as? [String: Any]
            #expect(commitment?["commitmentPrice"] as? Int == 71880)
            #expect(commitment?["billingPeriodNumber"] as? Int == 1)
            #expect(commitment?["totalBillingPeriods"] as? Int == 12)
            // The monthly subscription has only the up-front plan.
            let notOffered = try await pay("MONTHLY", "com.graviton.orbitfit.pro.monthly")
            #expect(notOffered.json["state"] as? String == "failed", "\(notOffered.text)")
            #expect((notOffered.json["error"] as? [String: Any])?["code"] as? String == "billing_plan_not_offered")
        }
    }

    // The file with five independent errors reports all five in one answer, each at its path in the file with its
    // product id, and imports nothing.
    @Test func brokenFileReportsEveryProblemAtOnce() async throws {
        try await withTestStore { store in
            try await store.createApp(TestStore.bundleId)
            let answer = try await store.request(
                .POST, "/admin/v1/apps/\(TestStore.bundleId)/catalog?format=storekit",
                body: try Self.data("broken-many-errors"))
            #expect(answer.status == 400, "\(answer.text)")
            let errors = try #require(answer.json["errors"] as? [[String: Any]], "\(answer.text)")
            let found = Set(errors.map { "\($0["productId"] as? String ?? "-") \($0["field"] as? String ?? "-")" })
            #expect(
                found == [
                    "com.driftwood.photo.filters.lifetime products[1].type",
                    "com.driftwood.photo.prints_credit_5 products[2].displayPrice",
                    "com.driftwood.photo.pro.monthly subscriptionGroups[0].subscriptions[0].adHocOffers[0].offerID",
                    "com.driftwood.photo.pro.fiveday subscriptionGroups[0].subscriptions[1].recurringSubscriptionPeriod",
                    "com.driftwood.photo.filters.film subscriptionGroups[1].subscriptions[0].productID",
                ], "\(answer.text)")
            #expect(errors.allSatisfy { ($0["fix"] as? String)?.isEmpty == false }, "\(answer.text)")
            let products = try await store.request(.GET, "/admin/v1/apps/\(TestStore.bundleId)/products")
            #expect((products.json["products"] as? [Any])?.isEmpty == true)
        }
    }

    /// Every product of a file, whatever list it is in.
    static func products(in file: [String: Any]) -> [[String: Any]] {
        let groups = (file["subscriptionGroups"] as? [[String: Any]]) ?? []
        return ((file["products"] as? [[String: Any]]) ?? [])
            + ((file["nonRenewingSubscriptions"] as? [[String: Any]]) ?? [])
            + groups.flatMap { ($0["subscriptions"] as? [[String: Any]]) ?? [] }
    }

    /// `"4.99"` → 4990, the JWS price in milliunits.
    static func milliunits(_ price: String) -> Int? {
        guard let value = Decimal(string: price, locale: Locale(identifier: "en_US_POSIX")) else { return nil }
        return NSDecimalNumber(decimal: value * 1000).intValue
    }

    /// The JSON of a JWS's payload, unverified (other tests verify signatures).
    static func payload(_ jws: String) throws -> [String: Any] {
        let part = String(jws.split(separator: ".")[1])
        var base64 = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        let data = try #require(Data(base64Encoded: base64))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// Every leaf of a file by a path that names array elements by what identifies them (a product id, an offer
    /// id, a locale mapped as the importer maps it, a name), so order and mapped locales do not matter.
    static func leaves(_ value: Any, path: String = "") -> [String: String] {
        switch value {
        case let object as [String: Any]:
            var result: [String: String] = [:]
            for (key, member) in object { result.merge(leaves(member, path: "\(path)/\(key)")) { $1 } }
            return result.isEmpty ? [path: "{}"] : result
        case let array as [Any]:
            var result: [String: String] = [:]
            for (index, element) in array.enumerated() {
                result.merge(leaves(element, path: "\(path)/\(identity(of: element) ?? String(index))")) { $1 }
            }
            return result.isEmpty ? [path: "[]"] : result
        default:
            return [path: "\(value)"]
        }
    }

    private static func identity(of element: Any) -> String? {
        guard let object = element as? [String: Any] else { return nil }
        if let locale = object["locale"] as? String {
            return AppStoreLocale.normalized(locale) ?? AppStoreLocale.forLanguage(locale) ?? locale
        }
        for key in ["productID", "offerID", "billingPlanType", "name", "internalID"] {
            if let text = object[key] as? String { return "\(key)=\(text)" }
        }
        return nil
    }
}
