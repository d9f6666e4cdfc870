import Foundation
import KioskCore
import Testing

/// Everything in place: an approved, cleared, fully described consumable of app 1 priced at tier 1.
struct AvailabilityFixture {
    static let epoch = Date(timeIntervalSince1970: 1_767_225_600)
    var product = Product(
        appId: 1, productId: "com.himi.wahaha", referenceName: "Wahaha", type: .consumable, pricing: Pricing(tier: 1),
        localizations: [ProductLocalization(locale: "zh_CN", displayName: "娃哈哈", description: "一瓶娃哈哈")],
        clearedForSale: true, reviewState: .approved, createdAt: epoch, updatedAt: epoch)
    var app = App(
        id: 1, bundleId: "com.himi.ProjectForBuyTest", name: "ProjectForBuyTest", createdAt: epoch, updatedAt: epoch)
    var agreement = PaidAppsAgreement(
        acceptedAt: epoch, legalEntity: LegalEntity(name: "Himi Games Ltd", country: "CHN"),
        bankAccount: BankAccount(holderName: "Himi Games Ltd", accountNumberEnding: "6819", currency: "CNY"),
        taxInformation: TaxInformation(form: .w8bene, taxIdEnding: "4321"))
    var environment = StoreEnvironment.production
    var storefront = Storefront.named("CHN") ?? Storefront.all[0]

    func evaluate() -> ProductAvailability {
        ProductAvailability.evaluate(
            product: product, app: app, agreement: agreement, environment: environment, storefront: storefront)
    }
}

@Suite("Product availability")
struct ProductAvailabilityTests {
    // Proves the fixture is available in both environments and every storefront.
    @Test(arguments: StoreEnvironment.allCases)
    func everythingRightIsAvailable(environment: StoreEnvironment) {
        var fixture = AvailabilityFixture()
        fixture.environment = environment
        for storefront in Storefront.all {
            fixture.storefront = storefront
            #expect(fixture.evaluate().isAvailable, "\(storefront.code)")
        }
    }

    // Proves the "zero products" pitfall: with everything else right, a pending Paid Apps agreement alone makes the
    // product unavailable, and the one reason says to run `kiosk agreements accept`.
    @Test(arguments: StoreEnvironment.allCases)
    func seed002PendingAgreementIsTheOnlyReason(environment: StoreEnvironment) throws {
        var fixture = AvailabilityFixture()
        fixture.environment = environment
        fixture.agreement = PaidAppsAgreement()
        let availability = fixture.evaluate()
        #expect(!availability.isAvailable)
        let reason = try #require(availability.reasons.first)
        #expect(availability.reasons.map(\.code) == ["agreement_not_active"])
        #expect(reason.fix.contains("kiosk agreements accept"))
        #expect(reason.message.contains("zero products"))
    }

    // Proves the agreement stays pending while any business detail is missing, and the reason names exactly what is
    // missing and the options that supply it.
    @Test func agreementWithTermsButNoBankOrTaxNamesWhatIsMissing() throws {
        var fixture = AvailabilityFixture()
        fixture.agreement.bankAccount = nil
        fixture.agreement.taxInformation = nil
        #expect(fixture.agreement.status == .pending)
        #expect(fixture.agreement.missing == [.bankAccount, .taxInformation])
        let reason = try #require(fixture.evaluate().reasons.first)
        #expect(reason.message.contains("it still needs a bank account and tax information"))
        #expect(reason.fix.contains("--bank-account NUMBER"))
        #expect(reason.fix.contains("--tax-form"))
        #expect(!reason.fix.contains("--legal-name"))
    }

    /// One broken condition and the single reason code it must produce.
    struct Breakage: Sendable, CustomTestStringConvertible {
        var code: String
        var testDescription: String { code }
        var apply: @Sendable (inout AvailabilityFixture) -> Void
    }

    static let breakages: [Breakage] = [
        Breakage(code: "product_deleted") { $0.product.deletedAt = AvailabilityFixture.epoch },
        Breakage(code: "wrong_app") { $0.app.id = 2 },
        Breakage(code: "not_cleared_for_sale") { $0.product.clearedForSale = false },
        Breakage(code: "missing_metadata") { $0.product.type = .autoRenewable },
        Breakage(code: "not_approved") { $0.product.reviewState = .readyToSubmit },
        Breakage(code: "removed_from_sale") { $0.product.reviewState = .developerRemovedFromSale },
        Breakage(code: "review_findings") { $0.product.localizations = [] },
        Breakage(code: "agreement_not_active") { $0.agreement.acceptedAt = nil },
        Breakage(code: "no_price_in_storefront") { $0.product.pricing = Pricing(customPrices: ["USA": 99]) },
    ]

    // Proves each condition alone makes the product unavailable with exactly its own reason, message and fix.
    @Test(arguments: breakages)
    func eachReasonAlone(_ breakage: Breakage) throws {
        var fixture = AvailabilityFixture()
        breakage.apply(&fixture)
        let availability = fixture.evaluate()
        #expect(availability.reasons.map(\.code) == [breakage.code])
        let reason = try #require(availability.reasons.first)
        #expect(!reason.message.isEmpty && !reason.fix.isEmpty)
    }

    // Proves all failing conditions are listed together, in a fixed order.
    @Test func allReasonsListed() {
        var fixture = AvailabilityFixture()
        for breakage in Self.breakages where breakage.code != "removed_from_sale" { breakage.apply(&fixture) }
        #expect(
            fixture.evaluate().reasons.map(\.code) == [
                "product_deleted", "wrong_app", "not_cleared_for_sale", "missing_metadata", "not_approved",
                "review_findings", "agreement_not_active", "no_price_in_storefront",
            ])
    }

    // Proves the sandbox accepts Ready to Submit and Waiting for Review while production needs Approved.
    @Test(arguments: ReviewState.allCases)
    func reviewStatePerEnvironment(state: ReviewState) {
        var fixture = AvailabilityFixture()
        fixture.product.reviewState = state
        fixture.environment = .sandbox
        let sandboxOK = [.readyToSubmit, .waitingForReview, .approved].contains(state)
        #expect(fixture.evaluate().isAvailable == sandboxOK)
        fixture.environment = .production
        #expect(fixture.evaluate().isAvailable == (state == .approved))
        if state == .readyToSubmit {
            let message = fixture.evaluate().reasons.first?.message ?? ""
            #expect(message.contains("Ready to Submit") && message.contains("needs Approved"))
        }
    }

    // Proves the missing_metadata message lists what is missing, e.g. an auto-renewable's group and duration.
    @Test func missingMetadataMessageListsItems() throws {
        var fixture = AvailabilityFixture()
        fixture.product.type = .autoRenewable
        let reason = try #require(fixture.evaluate().reasons.first { $0.code == "missing_metadata" })
        #expect(reason.message.contains("a subscription group and level"))
        #expect(reason.message.contains("a subscription duration"))
    }

    // Proves what only App Store review would refuse (no texts, a long description) keeps a product out of
    // production, with the findings in the message, while the sandbox sells it.
    @Test func reviewFindingsBlockOnlyProduction() throws {
        var fixture = AvailabilityFixture()
        fixture.product.localizations = [
            ProductLocalization(locale: "de", displayName: "", description: String(repeating: "x", count: 56))
        ]
        let reason = try #require(fixture.evaluate().reasons.first)
        #expect(fixture.evaluate().reasons.map(\.code) == ["review_findings"])
        #expect(reason.message.contains("'de' is not an App Store Connect locale"), "\(reason.message)")
        #expect(reason.message.contains("56 characters"), "\(reason.message)")
        fixture.environment = .sandbox
        #expect(fixture.evaluate().isAvailable)
    }

    // Proves a custom price in the storefront alone is enough, and its absence elsewhere is reported per storefront.
    @Test func pricePerStorefront() throws {
        var fixture = AvailabilityFixture()
        fixture.product.pricing = Pricing(customPrices: ["JPN": 160])
        fixture.storefront = try #require(Storefront.named("JPN"))
        #expect(fixture.evaluate().isAvailable)
        fixture.storefront = try #require(Storefront.named("USA"))
        #expect(fixture.evaluate().reasons.map(\.code) == ["no_price_in_storefront"])
    }
}
