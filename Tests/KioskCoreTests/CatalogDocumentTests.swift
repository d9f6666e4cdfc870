import Foundation
import Testing

@testable import KioskCore

/// A small catalog as stored entities: a consumable, a deleted product, an auto-renewable in a group.
private enum Fixture {
    static let now = Date(timeIntervalSince1970: 1_767_225_600)
    static let app = App(id: 7, bundleId: "com.example.trails", name: "Trails", createdAt: now, updatedAt: now)
    static let group = SubscriptionGroup(
        id: 21_000_001, appId: 7, referenceName: "Trails Plus",
        localizations: [
            SubscriptionGroupLocalization(locale: "es_ES", name: "Trails Plus"),
            SubscriptionGroupLocalization(locale: "en_US", name: "Trails Plus", customAppName: "Trails"),
        ], createdAt: now, updatedAt: now)
    static let monthly = Product(
        appId: 7, productId: "plus.monthly", referenceName: "Plus Monthly", type: .autoRenewable,
        pricing: Pricing(tier: 6, customPrices: ["JPN": 800]),
        localizations: [
            ProductLocalization(locale: "en_US", displayName: "Plus Monthly", description: "Every trail"),
            ProductLocalization(locale: "es_ES", displayName: "Plus mensual", description: "Todas las rutas"),
        ], reviewState: .approved, subscription: SubscriptionMembership(groupId: 21_000_001, level: 2),
        duration: .oneMonth,
        introductoryOffers: [
            IntroductoryOffer(
                schedule: OfferSchedule(paymentMode: .freeTrial, period: OfferPeriod(count: 1, unit: .week)))
        ],
        promotionalOffers: [
            PromotionalOffer(
                identifier: "comeback", referenceName: "Come back",
                schedule: OfferSchedule(
                    paymentMode: .payAsYouGo, period: OfferPeriod(count: 1, unit: .month), numberOfPeriods: 3,
                    pricing: Pricing(tier: 2)))
        ],
        winBackOffers: [
            WinBackOffer(
                identifier: "lapsed", referenceName: "Lapsed",
                schedule: OfferSchedule(
                    paymentMode: .payUpFront, period: OfferPeriod(count: 3, unit: .month),
                    pricing: Pricing(customPrices: ["USA": 999])),
                paidSubscriptionDurationInMonths: 2,
                timeSinceLastSubscribedInMonths: WinBackOffer.MonthRange(minimum: 1, maximum: 12),
                waitBetweenOffersInMonths: 6, startDate: now, endDate: now.addingTimeInterval(86_400), priority: .high)
        ], createdAt: now, updatedAt: now)
    static let hints = Product(
        appId: 7, productId: "hints10", referenceName: "10 Hints", type: .consumable, pricing: Pricing(tier: 1),
        localizations: [ProductLocalization(locale: "en_US", displayName: "10 Hints", description: "Ten hints")],
        reviewState: .readyToSubmit, createdAt: now, updatedAt: now)
    static let deleted = Product(
        appId: 7, productId: "old", referenceName: "Old", type: .nonConsumable, createdAt: now, updatedAt: now,
        deletedAt: now)

    static var document: CatalogDocument {
        CatalogDocument(app: app, groups: [group], products: [monthly, deleted, hints])
    }

    /// A valid catalog file as text, for the error tests to break in one place each.
    static let validJSON = """
        {
          "format": "kiosk-catalog",
          "version": 1,
          "app": {"bundleId": "com.example.trails", "name": "Trails"},
          "subscriptionGroups": [{"referenceName": "Plus", "localizations": [{"locale": "en_US", "name": "Plus"}]}],
          "products": [
            {"productId": "hints10", "referenceName": "10 Hints", "type": "consumable", "pricing": {"tier": 1},
             "localizations": [{"locale": "en_US", "displayName": "10 Hints", "description": "Ten hints"}],
             "clearedForSale": true, "familyShareable": false},
            {"productId": "plus.monthly", "referenceName": "Plus Monthly", "type": "auto_renewable",
             "pricing": {"tier": 5}, "localizations": [], "clearedForSale": true, "familyShareable": false,
             "subscription": {"group": "Plus", "level": 1}, "duration": "P1M",
             "introductoryOffers": [{"paymentMode": "free_trial", "period": "P1W", "numberOfPeriods": 1}],
             "winBackOffers": [{"identifier": "lapsed", "referenceName": "Lapsed", "paymentMode": "free_trial",
              "period": "P1M", "numberOfPeriods": 1, "paidSubscriptionDurationInMonths": 1,
              "timeSinceLastSubscribedInMonths": {"minimum": 1}, "startDate": "2026-01-01T00:00:00Z",
              "priority": "normal"}]}
          ]
        }
        """
}

@Suite("CatalogDocument")
struct CatalogDocumentTests {
    // Exporting entities skips deleted products, orders everything by id or name, and names groups by reference.
    @Test func exportSkipsDeletedAndOrdersDeterministically() {
        let document = Fixture.document
        #expect(document.products.map(\.productId) == ["hints10", "plus.monthly"])
        #expect(document.products[1].subscription == .init(group: "Trails Plus", level: 2))
        #expect(document.subscriptionGroups[0].localizations.map(\.locale) == ["en_US", "es_ES"])
        #expect(document.app == .init(bundleId: "com.example.trails", name: "Trails"))
    }

    // Encoding is stable: encode → decode gives the same document and re-encoding gives identical bytes.
    @Test func encodeDecodeEncodeIsByteIdentical() throws {
        let first = Fixture.document.encode()
        let decoded = try CatalogDocument.decode(from: first)
        #expect(decoded == Fixture.document)
        #expect(decoded.encode() == first)
        let text = try #require(String(data: first, encoding: .utf8))
        #expect(text.contains("\"format\" : \"kiosk-catalog\""))
        #expect(text.contains("\"group\" : \"Trails Plus\""))
        #expect(!text.contains("\"deletedAt\""))
    }

    // An entry turned into a product and back is the same entry, so re-importing an export changes nothing.
    @Test func entryToProductAndBackMatches() throws {
        let entry = Fixture.document.products[1]
        let product = try entry.product(
            appId: 7, groupId: { $0 == "Trails Plus" ? 21_000_001 : nil }, defaultReviewState: .readyToSubmit,
            now: Fixture.now)
        #expect(product == Fixture.monthly)
        let again = CatalogDocument.ProductEntry(product, groupName: { $0 == 21_000_001 ? "Trails Plus" : nil })
        #expect(again == entry)
        #expect(entry.matches(again))
    }

    // An entry without a review state matches any stored state, keeps it when applied, and other changes show.
    @Test func nilReviewStateKeepsTheStoredState() throws {
        var entry = Fixture.document.products[1]
        entry.reviewState = nil
        let stored = CatalogDocument.ProductEntry(Fixture.monthly, groupName: { _ in "Trails Plus" })
        #expect(entry.matches(stored))
        let later = Fixture.now.addingTimeInterval(60)
        let applied = try entry.applied(to: Fixture.monthly, groupId: { _ in 21_000_001 }, now: later)
        #expect(applied.reviewState == .approved)
        #expect(applied.createdAt == Fixture.now && applied.updatedAt == later)
        entry.pricing = Pricing(tier: 7)
        #expect(!entry.matches(stored))
        let created = try entry.product(
            appId: 7, groupId: { _ in 1 }, defaultReviewState: .readyToSubmit, now: Fixture.now)
        #expect(created.reviewState == .readyToSubmit)
    }

    // A group entry made from a group produces the same group again.
    @Test func groupEntryRoundTrip() {
        let entry = CatalogDocument.GroupEntry(Fixture.group)
        let group = entry.group(id: Fixture.group.id, appId: 7, now: Fixture.now)
        #expect(CatalogDocument.GroupEntry(group) == entry)
        #expect(entry.applied(to: Fixture.group, now: Fixture.now).referenceName == "Trails Plus")
    }

    // A product naming a group the importer cannot find is an error, not a product without group.
    @Test func unknownGroupWhenConvertingIsAnError() {
        let entry = Fixture.document.products[1]
        #expect(throws: KioskError.self) {
            try entry.product(appId: 7, groupId: { _ in nil }, defaultReviewState: .readyToSubmit, now: Fixture.now)
        }
    }

    // The valid sample file decodes; the error table below breaks it in one place each.
    @Test func validSampleDecodes() throws {
        let document = try CatalogDocument.decode(from: Data(Fixture.validJSON.utf8))
        #expect(document.products.count == 2)
        #expect(document.products[1].introductoryOffers.first?.paymentMode == .freeTrial)
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
            name: "wrong format", replace: "\"kiosk-catalog\"", with: "\"storekit\"", field: "format",
            messageContains: "not a Kiosk catalog"),
        .init(
            name: "unsupported version", replace: "\"version\": 1", with: "\"version\": 2", field: "version",
            messageContains: "version 2 is not supported"),
        .init(
            name: "typo in a key", replace: "\"pricing\": {\"tier\": 1}", with: "\"prcing\": {\"tier\": 1}",
            field: "products[0].prcing", messageContains: "unknown key 'prcing'"),
        .init(
            name: "type mismatch", replace: "\"clearedForSale\": true, \"familyShareable\": false}",
            with: "\"clearedForSale\": \"yes\", \"familyShareable\": false}", field: "products[0].clearedForSale",
            messageContains: "true or false"),
        .init(
            name: "missing key", replace: "\"displayName\": \"10 Hints\", ", with: "",
            field: "products[0].localizations[0].displayName", messageContains: "'displayName'"),
        .init(
            name: "wrong type deep inside", replace: "{\"locale\": \"en_US\", \"displayName\"",
            with: "{\"locale\": 5, \"displayName\"", field: "products[0].localizations[0].locale",
            messageContains: "a string"),
        .init(
            name: "unknown product type", replace: "\"type\": \"consumable\"", with: "\"type\": \"subscription\"",
            field: "products[0].type", messageContains: "'subscription' is not one of"),
        .init(
            name: "unknown payment mode", replace: "\"free_trial\"", with: "\"free\"",
            field: "products[1].introductoryOffers[0].paymentMode", messageContains: "'free' is not one of"),
        .init(
            name: "bad offer period", replace: "\"period\": \"P1W\"", with: "\"period\": \"P1X\"",
            field: "products[1].introductoryOffers[0].period", messageContains: "P1X"),
        .init(
            name: "bad win-back date", replace: "\"2026-01-01T00:00:00Z\"", with: "\"10000-01-01T00:00:00Z\"",
            field: "products[1].winBackOffers[0].startDate", messageContains: "ISO 8601"),
        .init(
            name: "typo in a win-back range", replace: "{\"minimum\": 1}", with: "{\"minimum\": 1, \"max\": 2}",
            field: "products[1].winBackOffers[0].timeSinceLastSubscribedInMonths.max",
            messageContains: "unknown key 'max'"),
        .init(
            name: "unknown group", replace: "{\"group\": \"Plus\"", with: "{\"group\": \"Pro\"",
            field: "products[1].subscription.group", messageContains: "'Pro'"),
        .init(
            name: "duplicate product", replace: "\"productId\": \"plus.monthly\"", with: "\"productId\": \"hints10\"",
            field: "products[1].productId", messageContains: "more than once"),
    ]

    // Each kind of malformed catalog file is an invalid_catalog_file error naming the JSON path of the problem.
    @Test(arguments: breakages)
    func malformedFileNamesThePath(_ breakage: Breakage) throws {
        #expect(Fixture.validJSON.contains(breakage.replace))
        let text = Fixture.validJSON.replacingOccurrences(of: breakage.replace, with: breakage.with)
        let error = try #require(throws: KioskError.self) { try CatalogDocument.decode(from: Data(text.utf8)) }
        #expect(error.code == .invalidCatalogFile)
        #expect(error.kind == .invalidInput)
        #expect(error.field == breakage.field)
        #expect(error.message.contains(breakage.messageContains), "\(error.message)")
        #expect(error.fix != nil)
    }

    // A file with several broken entries reports each of them at once, at its path and with its product id.
    @Test func everyBrokenEntryIsReportedAtOnce() throws {
        var text = Fixture.validJSON
        for name in ["typo in a key", "unknown payment mode"] {
            let breakage = try #require(Self.breakages.first { $0.name == name })
            text = text.replacingOccurrences(of: breakage.replace, with: breakage.with)
        }
        text = text.replacingOccurrences(of: "\"version\": 1", with: "\"version\": 2")
        let error = try #require(throws: KioskError.self) { try CatalogDocument.decode(from: Data(text.utf8)) }
        #expect(
            error.all.map { "\($0.productId ?? "-") \($0.field ?? "-")" } == [
                "- version", "hints10 products[0].prcing", "plus.monthly products[1].introductoryOffers[0].paymentMode",
            ])
    }

    // Broken JSON syntax is reported with the line and column where the scanner stopped.
    @Test func syntaxErrorReportsLineAndColumn() throws {
        let text = "{\n  \"format\": \"kiosk-catalog\",\n  \"version\": 1,\n  \"app\": {\"bundleId\" \"x\"}\n}"
        let error = try #require(throws: KioskError.self) { try CatalogDocument.decode(from: Data(text.utf8)) }
        #expect(error.code == .invalidCatalogFile)
        #expect(error.field == "line 4, column 22")
        #expect(error.message.contains("expected ':'"))
    }

    // A truncated file is reported at the end, on the last line.
    @Test func truncatedFileReportsItsEnd() throws {
        let text = String(Fixture.validJSON.prefix(120))
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let error = try #require(throws: KioskError.self) { try CatalogDocument.decode(from: Data(text.utf8)) }
        #expect(error.field == "line \(lines.count), column \(lines.last!.count + 1)")
    }
}

@Suite("JSONSyntaxCheck")
struct JSONSyntaxCheckTests {
    /// A document and the failure the scanner must report (nil: well-formed).
    struct Case: Sendable, CustomTestStringConvertible {
        var text: String
        var failure: JSONSyntaxCheck.Failure?
        var testDescription: String { text.debugDescription }
    }

    static let cases: [Case] = [
        .init(text: "{\"a\": [1, -2.5e3, true, false, null, \"\\u00e9\\n\"]}", failure: nil),
        .init(text: "  [ ]  ", failure: nil),
        .init(text: "{\"a\": 1,}", failure: .init(message: "expected a quoted key", line: 1, column: 9)),
        .init(text: "[1 2]", failure: .init(message: "expected ',' or ']' in an array", line: 1, column: 4)),
        .init(text: "{\n\"é\": tru}", failure: .init(message: "expected 'true'", line: 2, column: 9)),
        .init(
            text: "\"abc",
            failure: .init(
                message: "the document ends inside a string (missing closing quote)", line: 1, column: 5)),
        .init(
            text: "01",
            failure: .init(
                message: "unexpected text after the end of the document", line: 1, column: 2)),
        .init(text: "", failure: .init(message: "the document ends where a value was expected", line: 1, column: 1)),
    ]

    // The scanner accepts well-formed JSON and reports the first error with its line and column.
    @Test(arguments: cases)
    func scan(_ testCase: Case) {
        #expect(JSONSyntaxCheck.firstFailure(in: Array(testCase.text.utf8)) == testCase.failure)
    }
}
