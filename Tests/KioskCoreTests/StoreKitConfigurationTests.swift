import Foundation
import Testing

@testable import KioskCore

@Suite("StoreKitConfiguration")
struct StoreKitConfigurationTests {
    static func sampleData() throws -> Data {
        let url = try #require(
            Bundle.module.url(forResource: "Sample", withExtension: "storekit", subdirectory: "Resources"))
        return try Data(contentsOf: url)
    }

    static func sampleText() throws -> String {
        try #require(String(data: try sampleData(), encoding: .utf8))
    }

    static func importSample() throws -> CatalogDocument {
        try StoreKitConfiguration.importing(try sampleData(), bundleId: "com.example.trails", appName: "Trails")
            .document
    }

    static func read(_ text: String) throws(KioskError) -> StoreKitConfiguration.Reading {
        try StoreKitConfiguration.read(from: Data(text.utf8))
    }

    // The sample file becomes the catalog it describes: types, prices in its storefront exactly, groups, levels,
    // offers.
    @Test func importMapsEveryPart() throws {
        let document = try Self.importSample()
        #expect(
            document.products.map(\.productId) == [
                "com.example.trails.hints10", "com.example.trails.hints50", "com.example.trails.offlinemaps",
                "com.example.trails.plus.monthly", "com.example.trails.plus.weekly", "com.example.trails.plus.yearly",
                "com.example.trails.seasonpass",
            ])
        let byId = Dictionary(uniqueKeysWithValues: document.products.map { ($0.productId, $0) })
        // 0.99 is tier 1's USA price, but the file names no tier: the price stays the file's, in its storefront.
        #expect(byId["com.example.trails.hints10"]?.pricing == Pricing(customPrices: ["USA": 99]))
        #expect(byId["com.example.trails.hints50"]?.pricing == Pricing(customPrices: ["USA": 249]))
        #expect(byId["com.example.trails.offlinemaps"]?.type == .nonConsumable)
        #expect(byId["com.example.trails.offlinemaps"]?.familyShareable == true)
        #expect(byId["com.example.trails.seasonpass"]?.type == .nonRenewing)
        let monthly = try #require(byId["com.example.trails.plus.monthly"])
        #expect(monthly.type == .autoRenewable)
        #expect(monthly.subscription == .init(group: "Trails Plus", level: 2))
        #expect(monthly.duration == .oneMonth)
        #expect(monthly.reviewState == nil)
        #expect(
            monthly.introductoryOffers == [
                IntroductoryOffer(
                    schedule: OfferSchedule(paymentMode: .freeTrial, period: OfferPeriod(count: 1, unit: .week)))
            ])
        #expect(
            monthly.promotionalOffers == [
                PromotionalOffer(
                    identifier: "com.example.trails.plus.monthly.comeback", referenceName: "Come back",
                    schedule: OfferSchedule(
                        paymentMode: .payAsYouGo, period: OfferPeriod(count: 1, unit: .month), numberOfPeriods: 3,
                        pricing: Pricing(customPrices: ["USA": 199])))
            ])
        let yearly = try #require(byId["com.example.trails.plus.yearly"])
        #expect(yearly.localizations.map(\.locale) == ["en_US", "es_ES"])
        #expect(
            document.subscriptionGroups == [
                .init(
                    referenceName: "Trails Plus",
                    localizations: [
                        .init(locale: "en_US", name: "Trails Plus"), .init(locale: "es_ES", name: "Trails Plus"),
                    ])
            ])
    }

    // .storekit → catalog → .storekit → catalog gives the first catalog again.
    @Test func roundTripThroughExport() throws {
        let first = try Self.importSample()
        let exported = try StoreKitConfiguration(document: first).encode()
        let second = try StoreKitConfiguration.importing(exported, bundleId: "com.example.trails", appName: "Trails")
            .document
        #expect(second == first)
    }

    // The store keeps only what the catalog does not model of an upload: what is kept, written and read back as
    // the store does, gives the export the same file as the whole upload, and none of the catalog's texts.
    @Test func unmodeledPartsKeepWhatTheExportNeeds() throws {
        let original = try Self.read(try Self.sampleText()).configuration
        let stored = original.unmodeledParts.encode()
        let kept = try StoreKitConfiguration.read(from: stored).configuration
        let export = try StoreKitConfiguration(document: try Self.importSample())
        #expect(export.keeping(from: kept).encode() == export.keeping(from: original).encode())
        let storedText = String(decoding: stored, as: UTF8.self)
        for entry in original.allProducts {
            #expect(!storedText.contains("\"\(entry.referenceName)\""), "\(entry.productID)")
            for localization in entry.localizations where !localization.description.isEmpty {
                #expect(!storedText.contains(localization.description), "\(entry.productID)")
            }
        }
        #expect(stored.count < (try Self.sampleData()).count)
    }

    // Exporting the same catalog twice gives identical bytes, with ids that look like Xcode's.
    @Test func exportIsDeterministicAndXcodeShaped() throws {
        let document = try Self.importSample()
        let first = try StoreKitConfiguration(document: document)
        let second = try StoreKitConfiguration(document: document)
        #expect(first.encode() == second.encode())
        #expect(first.version == .init(major: 4, minor: 0))
        #expect(first.storefrontCode == "USA")
        let ids =
            [first.identifier] + first.products.map(\.internalID) + first.subscriptionGroups.map(\.id)
            + first.subscriptionGroups.flatMap { $0.subscriptions.map(\.internalID) }
        #expect(Set(ids).count == ids.count)
        #expect(ids.allSatisfy { $0.count == 8 && $0.allSatisfy(\.isHexDigit) })
        let group = try #require(first.subscriptionGroups.first)
        #expect(group.subscriptions.map(\.groupNumber) == [1, 2, 3])
        #expect(group.subscriptions.allSatisfy { $0.subscriptionGroupID == group.id })
        let text = try #require(String(data: first.encode(), encoding: .utf8))
        #expect(text.contains("\"introductoryOffer\" : null"))
        #expect(text.contains("\"displayPrice\" : \"49.99\""))
        #expect(text.contains("\"paymentMode\" : \"free\""))
        #expect(text.contains("\"type\" : \"RecurringSubscription\""))
        #expect(text.contains("\"_storefront\" : \"USA\""))
    }

    // Reading a file and writing it back keeps settings Kiosk does not interpret; the sample needs no warning.
    @Test func readWriteKeepsUnknownSettings() throws {
        let reading = try StoreKitConfiguration.read(from: try Self.sampleData())
        let configuration = reading.configuration
        #expect(configuration.settings["_timeRate"] == .integer(0))
        let again = try StoreKitConfiguration.read(from: configuration.encode()).configuration
        #expect(again == configuration)
        #expect(reading.warnings.isEmpty)
    }

    // Offer codes, which Kiosk does not import, are warnings rather than dropped silently.
    @Test func unsupportedContentIsAWarning() throws {
        let text = try Self.sampleText().replacingOccurrences(
            of: "\"codeOffers\" : [\n\n          ],\n          \"displayPrice\" : \"49.99\"",
            with: """
                "codeOffers" : [{"internalID" : "4373DD6D", "isStackable" : true, "eligibility" : ["new"],
                  "paymentMode" : "free", "referenceName" : "Codes", "subscriptionPeriod" : "P3D"}],
                          "displayPrice" : "49.99"
                """)
        let imported = try StoreKitConfiguration.importing(Data(text.utf8), bundleId: "b", appName: "n")
        #expect(imported.warnings.map(\.code) == ["kept_not_used"])
        #expect(imported.warnings.first?.path == "subscriptionGroups[0].subscriptions[2].codeOffers")
        #expect(imported.warnings.first?.productId == "com.example.trails.plus.yearly")
    }

    // Prices are read in the currency of the file's storefront; JPY has no minor digits, so "0.99" imports as ¥1
    // with a warning naming the product and its path.
    @Test func pricesFollowTheFileStorefront() throws {
        let text = try Self.sampleText()
            .replacingOccurrences(of: "\"_storefront\" : \"USA\"", with: "\"_storefront\" : \"JPN\"")
        let imported = try StoreKitConfiguration.importing(Data(text.utf8), bundleId: "b", appName: "n")
        let rounded = try #require(imported.warnings.first { $0.path == "products[0].displayPrice" })
        #expect(rounded.code == "price_rounded")
        #expect(rounded.productId == "com.example.trails.hints10")
        #expect(rounded.message.contains("'0.99' has more decimals than JPY has"), "\(rounded.message)")
        #expect(
            imported.document.products.first { $0.productId == "com.example.trails.hints10" }?.pricing
                == Pricing(customPrices: ["JPN": 1]))
        let japanese = """
            {"identifier" : "1", "nonRenewingSubscriptions" : [], "settings" : {"_storefront" : "JPN"},
             "products" : [{"displayPrice" : "160", "familyShareable" : false, "internalID" : "2",
               "localizations" : [{"description" : "", "displayName" : "", "locale" : "ja"}], "productID" : "p",
               "referenceName" : "p", "type" : "Consumable"}],
             "subscriptionGroups" : [], "version" : {"major" : 3, "minor" : 0}}
            """
        let document = try StoreKitConfiguration.importing(Data(japanese.utf8), bundleId: "b", appName: "n")
        #expect(document.document.products.first?.pricing == Pricing(customPrices: ["JPN": 160]))
        #expect(document.document.products.first?.localizations.first?.locale == "ja_JP")
        #expect(document.warnings.map(\.code) == ["locale_mapped"])
    }

    // A product without a price in the export storefront cannot be written, and the error names it.
    @Test func exportWithoutPriceInStorefrontFails() throws {
        let document = try Self.importSample()
        let japan = try #require(Storefront.named("JPN"))
        let error = try #require(throws: KioskError.self) {
            try StoreKitConfiguration(document: document, storefront: japan)
        }
        #expect(error.code == .storekitExportFailed)
        let unpriced = try #require(document.products.firstIndex { $0.pricing.price(in: japan) == nil })
        #expect(error.field == "products[\(unpriced)].pricing")
    }

    /// One way of breaking the sample file and where the error must point.
    struct Breakage: Sendable, CustomTestStringConvertible {
        var name: String
        var replace: String
        var with: String
        var field: String
        var messageContains: String
        var testDescription: String { name }
    }

    static let breakages: [Breakage] = [
        .init(
            name: "wrong type of renewal period", replace: "\"recurringSubscriptionPeriod\" : \"P1M\"",
            with: "\"recurringSubscriptionPeriod\" : 1",
            field: "subscriptionGroups[0].subscriptions[1].recurringSubscriptionPeriod", messageContains: "a string"),
        .init(
            name: "unknown renewal period", replace: "\"recurringSubscriptionPeriod\" : \"P1M\"",
            with: "\"recurringSubscriptionPeriod\" : \"P2W\"",
            field: "subscriptionGroups[0].subscriptions[1].recurringSubscriptionPeriod", messageContains: "'P2W'"),
        .init(
            name: "unknown product type", replace: "\"type\" : \"NonConsumable\"", with: "\"type\" : \"Bundle\"",
            field: "products[2].type", messageContains: "'Bundle' is not a product type"),
        .init(
            name: "product in the wrong list", replace: "\"type\" : \"NonConsumable\"",
            with: "\"type\" : \"NonRenewingSubscription\"", field: "products[2].type",
            messageContains: "cannot be in 'products'"),
        .init(
            name: "unknown payment mode", replace: "\"paymentMode\" : \"free\"", with: "\"paymentMode\" : \"trial\"",
            field: "subscriptionGroups[0].subscriptions[1].introductoryOffer.paymentMode",
            messageContains: "'trial' is not a payment mode"),
        .init(
            name: "price that is not a number", replace: "\"displayPrice\" : \"4.99\"",
            with: "\"displayPrice\" : \"abc\"", field: "products[2].displayPrice",
            messageContains: "'abc' is not a price in USD"),
        .init(
            name: "offer price that is not a number", replace: "\"displayPrice\" : \"1.99\"",
            with: "\"displayPrice\" : \"1,99\"",
            field: "subscriptionGroups[0].subscriptions[1].adHocOffers[0].displayPrice",
            messageContains: "'1,99'"),
        .init(
            name: "missing product id", replace: "\"productID\" : \"com.example.trails.offlinemaps\",", with: "",
            field: "products[2].productID", messageContains: "'productID' is missing"),
        .init(
            name: "format version 0", replace: "\"major\" : 4", with: "\"major\" : 0",
            field: "version.major", messageContains: "version 0 does not exist"),
        .init(
            name: "unknown storefront", replace: "\"_storefront\" : \"USA\"", with: "\"_storefront\" : \"XYZ\"",
            field: "settings._storefront", messageContains: "'XYZ'"),
    ]

    // Each kind of malformed .storekit file is an invalid_storekit_file error naming the JSON path of the problem.
    @Test(arguments: breakages)
    func malformedFileNamesThePath(_ breakage: Breakage) throws {
        let original = try Self.sampleText()
        #expect(original.contains(breakage.replace))
        let text = original.replacingOccurrences(of: breakage.replace, with: breakage.with)
        let error = try #require(throws: KioskError.self) {
            try StoreKitConfiguration.importing(Data(text.utf8), bundleId: "b", appName: "n")
        }
        #expect(error.code == .invalidStorekitFile)
        #expect(error.field == breakage.field)
        #expect(error.message.contains(breakage.messageContains), "\(error.message)")
    }

    // A truncated .storekit file reports the line and column where the JSON stops.
    @Test func truncatedFileReportsLineAndColumn() throws {
        let text = String(try Self.sampleText().prefix(600))
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let error = try #require(throws: KioskError.self) { try StoreKitConfiguration.read(from: Data(text.utf8)) }
        #expect(error.code == .invalidStorekitFile)
        #expect(error.field == "line \(lines.count), column \(lines.last!.utf8.count + 1)")
    }

    // Structures of real Xcode files parse: version 1 without codeOffers, version 5 with billing plans.
    @Test func olderAndNewerVersionsParse() throws {
        let version1 = """
            {"identifier" : "B495CDA2", "nonRenewingSubscriptions" : [], "products" : [], "settings" : {},
             "subscriptionGroups" : [{"id" : "7096FF06", "localizations" : [], "name" : "group",
               "subscriptions" : [{"adHocOffers" : [], "displayPrice" : "4.99", "familyShareable" : true,
                 "groupNumber" : 1, "internalID" : "E5E51B92",
                 "introductoryOffer" : {"internalID" : "D4FA46D0", "paymentMode" : "free", "subscriptionPeriod" : "P2W"},
                 "localizations" : [{"description" : "", "displayName" : "", "locale" : "en_US"}],
                 "productID" : "monthly", "recurringSubscriptionPeriod" : "P1M", "referenceName" : "monthly",
                 "subscriptionGroupID" : "7096FF06", "type" : "RecurringSubscription"}]}],
             "version" : {"major" : 1, "minor" : 1}}
            """
        let old = try Self.read(version1).configuration.catalogDocument(bundleId: "b", appName: "n")
        #expect(old.products.first?.introductoryOffers.first?.period == OfferPeriod(count: 2, unit: .week))
        let version5 =
            version1
            .replacingOccurrences(of: "\"major\" : 1, \"minor\" : 1", with: "\"major\" : 5, \"minor\" : 0")
            .replacingOccurrences(
                of: "\"adHocOffers\" : [],",
                with: """
                    "adHocOffers" : [], "billingPlans" : [{"billingPlanType" : "MONTHLY", "commitmentDisplayPrice" : "6.00",
                      "displayPrice" : "0.5", "internalID" : "8BCD7D45", "isEnabled" : true}],
                    "introductoryOffers" : [{"billingPlanType" : "BILLED_UPFRONT", "internalID" : "9EB4AFC5",
                      "numberOfPeriods" : 1, "paymentMode" : "free", "subscriptionPeriod" : "P1M"}],
                    """)
        let newer = try StoreKitConfiguration.importing(Data(version5.utf8), bundleId: "b", appName: "n")
        #expect(
            newer.warnings.map(\.path) == ["settings", "subscriptionGroups[0].subscriptions[0].billingPlans[0]"],
            "the file names no storefront; its billing plan is kept, not sold")
        #expect(
            newer.document.products.first?.introductoryOffers.first?.period == OfferPeriod(count: 1, unit: .month))
    }

    // A one-year subscription's monthly plan exports as version 5's billing plans (up front and MONTHLY, each with
    // its commitment's total) and imports back as the same plan; a file whose commitmentDisplayPrice is not 12
    // payments imports with a warning, and the next export keeps its ids under the catalog's prices.
    @Test func monthlyPlansRoundTripAsBillingPlans() throws {
        let document = CatalogDocument(
            app: CatalogDocument.AppEntry(bundleId: "b", name: "n"),
            subscriptionGroups: [CatalogDocument.GroupEntry(referenceName: "Orbit")],
            products: [
                CatalogDocument.ProductEntry(
                    productId: "pro.annual", referenceName: "Pro", type: .autoRenewable,
                    pricing: Pricing(customPrices: ["USA": 5999]),
                    localizations: [ProductLocalization(locale: "en_US", displayName: "Pro", description: "Pro")],
                    subscription: CatalogDocument.ProductEntry.Membership(group: "Orbit", level: 1),
                    duration: .oneYear, monthlyPlan: MonthlyPlan(pricing: Pricing(customPrices: ["USA": 599])))
            ])
        let exported = try StoreKitConfiguration(document: document, storefront: Storefront.named("USA")!)
        #expect(exported.version == StoreKitConfiguration.billingPlansVersion)
        let entry = try #require(exported.subscriptionGroups.first?.subscriptions.first)
        let plans = try #require(entry.billingPlans)
        func field(_ plan: JSONValue, _ key: String) -> String? {
            if case .object(let object) = plan { object[key]?.stringValue } else { nil }
        }
        #expect(plans.map { field($0, "billingPlanType") } == ["BILLED_UPFRONT", "MONTHLY"])
        #expect(plans.map { field($0, "displayPrice") } == ["59.99", "5.99"])
        #expect(plans.map { field($0, "commitmentDisplayPrice") } == ["59.99", "71.88"])
        let back = try StoreKitConfiguration.importing(exported.encode(), bundleId: "b", appName: "n")
        #expect(back.document.products.first?.monthlyPlan == MonthlyPlan(pricing: Pricing(customPrices: ["USA": 599])))
        #expect(back.warnings.isEmpty, "\(back.warnings.map(\.message))")

        // A hand-edited total: Kiosk charges 12 payments, and says so.
        let edited = String(decoding: exported.encode(), as: UTF8.self)
            .replacingOccurrences(of: "\"71.88\"", with: "\"70.00\"")
        let warned = try StoreKitConfiguration.importing(Data(edited.utf8), bundleId: "b", appName: "n")
        #expect(warned.warnings.map(\.code) == ["commitment_price_recomputed"])
        #expect(
            warned.warnings.first?.path
                == "subscriptionGroups[0].subscriptions[0].billingPlans[1].commitmentDisplayPrice")

        // A new monthly price exports under the file's ids; dropping the plan drops it from the file.
        let original = try Self.read(edited).configuration
        var cheaper = document
        cheaper.products[0].monthlyPlan = MonthlyPlan(pricing: Pricing(customPrices: ["USA": 549]))
        let kept = try StoreKitConfiguration(document: cheaper, storefront: Storefront.named("USA")!)
            .keeping(from: original)
        let keptPlans = kept.subscriptionGroups.first?.subscriptions.first?.billingPlans ?? []
        #expect(keptPlans.map { field($0, "displayPrice") } == ["59.99", "5.49"])
        #expect(keptPlans.map { field($0, "internalID") } == plans.map { field($0, "internalID") })
        var none = document
        none.products[0].monthlyPlan = nil
        let dropped = try StoreKitConfiguration(document: none, storefront: Storefront.named("USA")!)
            .keeping(from: original)
        #expect(
            dropped.subscriptionGroups.first?.subscriptions.first?.billingPlans?.map { field($0, "billingPlanType") }
                == ["BILLED_UPFRONT"])
    }

    // Every problem of a file comes at once, each at its path in the file with its product id.
    @Test func everyProblemIsReportedAtOnce() throws {
        var text = try Self.sampleText()
        for breakage in Self.breakages
        where ["unknown product type", "unknown payment mode", "price that is not a number"].contains(breakage.name) {
            text = text.replacingOccurrences(of: breakage.replace, with: breakage.with)
        }
        text = text.replacingOccurrences(
            of: "\"recurringSubscriptionPeriod\" : \"P1M\"", with: "\"recurringSubscriptionPeriod\" : \"P5D\"")
        let error = try #require(throws: KioskError.self) {
            try StoreKitConfiguration.importing(Data(text.utf8), bundleId: "b", appName: "n")
        }
        #expect(
            error.all.map { "\($0.productId ?? "-") \($0.field ?? "-")" }
                == [
                    "com.example.trails.offlinemaps products[2].displayPrice",
                    "com.example.trails.offlinemaps products[2].type",
                    "com.example.trails.plus.monthly subscriptionGroups[0].subscriptions[1].introductoryOffer.paymentMode",
                    "com.example.trails.plus.monthly subscriptionGroups[0].subscriptions[1].recurringSubscriptionPeriod",
                ], "in the order of the file")
    }

    /// One way Xcode's files differ from the strict shape, and the warning it gives instead of an error.
    struct Leniency: Sendable, CustomTestStringConvertible {
        var name: String
        var replace: String
        var with: String
        var code: String
        var path: String?
        var testDescription: String { name }
    }

    static let leniencies: [Leniency] = [
        .init(
            name: "unknown key kept", replace: "\"familyShareable\" : true,\n      \"internalID\" : \"36835F3D\"",
            with: "\"familySharable\" : true,\n      \"internalID\" : \"36835F3D\"", code: "unknown_key_kept",
            path: "products[2].familySharable"),
        .init(
            name: "missing group number", replace: "\"groupNumber\" : 3,", with: "", code: "level_defaulted",
            path: "subscriptionGroups[0].subscriptions[0].groupNumber"),
        .init(
            name: "newer format version", replace: "\"major\" : 4", with: "\"major\" : 9", code: "newer_version",
            path: "version"),
        .init(
            name: "price with too many digits", replace: "\"displayPrice\" : \"0.99\"",
            with: "\"displayPrice\" : \"0.999\"", code: "price_rounded", path: "products[0].displayPrice"),
        .init(
            name: "null reference name", replace: "\"referenceName\" : \"Offline Maps\"",
            with: "\"referenceName\" : null", code: "reference_name_defaulted", path: "products[2].referenceName"),
        .init(
            name: "language-only locale", replace: "\"locale\" : \"es-ES\"", with: "\"locale\" : \"es\"",
            code: "locale_mapped", path: "subscriptionGroups[0].subscriptions[2].localizations[1].locale"),
    ]

    // What Xcode writes and the strict shape would refuse imports, with one warning at its path in the file.
    @Test(arguments: leniencies)
    func xcodeLeniencyIsAWarning(_ leniency: Leniency) throws {
        let original = try Self.sampleText()
        #expect(original.contains(leniency.replace))
        let text = original.replacingOccurrences(of: leniency.replace, with: leniency.with)
        let imported = try StoreKitConfiguration.importing(Data(text.utf8), bundleId: "b", appName: "n")
        #expect(imported.warnings.map(\.code) == [leniency.code])
        #expect(imported.warnings.first?.path == leniency.path)
    }
}
