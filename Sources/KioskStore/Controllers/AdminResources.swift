import Foundation
import Hummingbird
import KioskCore
import KioskHTTP

// The JSON shapes of the console API (`/admin/v1`), as documented in openapi.yaml.

package struct AppResource: ResponseCodable {
    package var appAppleId: Int64
    package var bundleId: String
    package var name: String
    package var sharedSecret: String?
    package var productionNotificationURLs: [String]
    package var sandboxNotificationURLs: [String]
    /// Whether failed sandbox notifications are retried like production ones (off: one attempt, as Apple's sandbox).
    package var sandboxNotificationRetries: Bool
    package var createdAt: Date
    package var updatedAt: Date

    package init(_ app: App) {
        appAppleId = app.id
        bundleId = app.bundleId
        name = app.name
        sharedSecret = app.sharedSecret
        productionNotificationURLs = app.productionNotificationURLs
        sandboxNotificationURLs = app.sandboxNotificationURLs
        sandboxNotificationRetries = app.sandboxNotificationRetries
        createdAt = app.createdAt
        updatedAt = app.updatedAt
    }
}

package struct AppList: ResponseCodable { package var apps: [AppResource] }

package struct AvailabilityResource: ResponseCodable {
    package struct Reason: Codable, Sendable {
        package var code: String
        package var message: String
        package var fix: String?
    }

    package var environment: StoreEnvironment
    package var storefront: String
    package var available: Bool
    package var reasons: [Reason]

    package init(_ availability: ProductAvailability, environment: StoreEnvironment, storefront: String) {
        self.environment = environment
        self.storefront = storefront
        available = availability.isAvailable
        reasons = availability.reasons.map { Reason(code: $0.code, message: $0.message, fix: $0.fix) }
    }
}

package struct ProductResource: ResponseCodable {
    package var productId: String
    package var referenceName: String
    package var type: ProductType
    package var pricing: Pricing
    package var localizations: [ProductLocalization]
    package var clearedForSale: Bool
    package var reviewState: ReviewState
    package var familyShareable: Bool
    package var subscription: SubscriptionMembership?
    package var duration: SubscriptionDuration?
    package var introductoryOffers: [IntroductoryOffer]
    package var promotionalOffers: [PromotionalOffer]
    package var winBackOffers: [WinBackOffer]
    package var createdAt: Date
    package var updatedAt: Date
    package var deletedAt: Date?
    /// Whether clients get the product, per environment, in the storefront named in `storefront`.
    package var availability: [AvailabilityResource]?

    package init(_ product: Product, availability: [AvailabilityResource]? = nil) {
        productId = product.productId
        referenceName = product.referenceName
        type = product.type
        pricing = product.pricing
        localizations = product.localizations
        clearedForSale = product.clearedForSale
        reviewState = product.reviewState
        familyShareable = product.familyShareable
        subscription = product.subscription
        duration = product.duration
        introductoryOffers = product.introductoryOffers
        promotionalOffers = product.promotionalOffers
        winBackOffers = product.winBackOffers
        createdAt = product.createdAt
        updatedAt = product.updatedAt
        deletedAt = product.deletedAt
        self.availability = availability
    }
}

package struct ProductList: ResponseCodable { package var products: [ProductResource] }

package struct PriceResource: Codable, Sendable {
    package var storefront: String
    package var storefrontId: String
    package var currency: String
    package var priceMinorUnits: Int
    /// The price as a plain decimal in the currency, e.g. "0.99"; for display only.
    package var price: String
    /// `tier` or `custom`.
    package var source: String
}

package struct PriceList: ResponseCodable {
    package var productId: String
    package var prices: [PriceResource]
}

package struct GroupResource: ResponseCodable {
    package var groupId: Int64
    /// Apple's `subscriptionGroupIdentifier`, the same number as a string.
    package var subscriptionGroupIdentifier: String
    package var referenceName: String
    package var localizations: [SubscriptionGroupLocalization]
    package var createdAt: Date
    package var updatedAt: Date

    package init(_ group: SubscriptionGroup) {
        groupId = group.id
        subscriptionGroupIdentifier = String(group.id)
        referenceName = group.referenceName
        localizations = group.localizations
        createdAt = group.createdAt
        updatedAt = group.updatedAt
    }
}

package struct GroupList: ResponseCodable { package var subscriptionGroups: [GroupResource] }

package struct TesterResource: ResponseCodable {
    package var id: UUID
    package var email: String
    package var firstName: String
    package var lastName: String
    package var storefront: String
    package var interruptPurchases: Bool
    package var askToBuy: Bool
    package var renewalRate: RenewalRate
    package var paymentOutcome: PaymentOutcome
    package var purchaseHistoryClearedAt: Date?
    package var createdAt: Date
    package var updatedAt: Date

    package init(_ tester: Tester) {
        id = tester.id
        email = tester.email
        firstName = tester.firstName
        lastName = tester.lastName
        storefront = tester.storefront
        interruptPurchases = tester.settings.interruptPurchases
        askToBuy = tester.settings.askToBuy
        renewalRate = tester.settings.renewalRate
        paymentOutcome = tester.settings.paymentOutcome
        purchaseHistoryClearedAt = tester.purchaseHistoryClearedAt
        createdAt = tester.createdAt
        updatedAt = tester.updatedAt
    }
}

package struct TesterList: ResponseCodable { package var testers: [TesterResource] }

package struct KeyResource: ResponseCodable {
    package var keyId: String
    package var name: String
    package var bundleId: String
    package var status: String
    package var createdAt: Date
    package var revokedAt: Date?
    /// Only in the answer that created the key.
    package var issuerId: String?
    /// Only in the answer that created the key: PKCS#8 PEM, never shown again.
    package var privateKey: String?

    package init(_ key: InAppPurchaseKey, bundleId: String, issuerId: String? = nil, privateKey: String? = nil) {
        keyId = key.id
        name = key.name
        self.bundleId = bundleId
        status = key.revokedAt == nil ? "active" : "revoked"
        createdAt = key.createdAt
        revokedAt = key.revokedAt
        self.issuerId = issuerId
        self.privateKey = privateKey
    }
}

package struct KeyList: ResponseCodable {
    package var issuerId: String
    package var keys: [KeyResource]
}

package struct AgreementResource: ResponseCodable {
    package var status: PaidAppsAgreement.Status
    package var acceptedAt: Date?

    package init(_ agreement: PaidAppsAgreement) {
        status = agreement.status
        acceptedAt = agreement.acceptedAt
    }
}

// MARK: Request bodies

package struct AppCreateBody: StrictlyDecodable {
    package static let knownKeys: Set<String> = ["bundleId", "name"]
    package var bundleId: String
    package var name: String
}

package struct AppUpdateBody: StrictlyDecodable {
    package static let knownKeys: Set<String> = [
        "name", "productionNotificationURLs", "sandboxNotificationURLs", "sandboxNotificationRetries",
    ]
    package var name: String?
    package var productionNotificationURLs: [String]?
    package var sandboxNotificationURLs: [String]?
    package var sandboxNotificationRetries: Bool?
}

package struct KeyCreateBody: StrictlyDecodable {
    package static let knownKeys: Set<String> = ["name"]
    package var name: String?
}

package struct AgreementBody: StrictlyDecodable {
    package static let knownKeys: Set<String> = ["status"]
    package var status: PaidAppsAgreement.Status
}

package struct TesterBody: StrictlyDecodable {
    package static let knownKeys: Set<String> = [
        "email", "password", "firstName", "lastName", "storefront", "interruptPurchases", "askToBuy", "renewalRate",
        "paymentOutcome",
    ]
    package var email: String?
    package var password: String?
    package var firstName: String?
    package var lastName: String?
    package var storefront: String?
    package var interruptPurchases: Bool?
    package var askToBuy: Bool?
    package var renewalRate: RenewalRate?
    package var paymentOutcome: PaymentOutcome?

    package var changes: TesterChanges {
        TesterChanges(
            password: password, firstName: firstName, lastName: lastName, storefront: storefront,
            interruptPurchases: interruptPurchases, askToBuy: askToBuy, renewalRate: renewalRate,
            paymentOutcome: paymentOutcome)
    }
}

package struct GroupBody: StrictlyDecodable {
    package static let knownKeys: Set<String> = ["referenceName", "localizations"]
    package var referenceName: String?
    package var localizations: [SubscriptionGroupLocalization]?
}

package struct ProductBody: StrictlyDecodable {
    package static let knownKeys: Set<String> = [
        "productId", "type", "referenceName", "pricing", "localizations", "clearedForSale", "familyShareable",
        "subscription", "duration", "introductoryOffers", "promotionalOffers", "winBackOffers",
    ]
    package var productId: String?
    package var type: ProductType?
    package var referenceName: String?
    package var pricing: Pricing?
    package var localizations: [ProductLocalization]?
    package var clearedForSale: Bool?
    package var familyShareable: Bool?
    package var subscription: SubscriptionPlacement?
    package var duration: SubscriptionDuration?
    package var introductoryOffers: [IntroductoryOffer]?
    package var promotionalOffers: [PromotionalOffer]?
    package var winBackOffers: [WinBackOffer]?

    package var changes: ProductChanges {
        ProductChanges(
            referenceName: referenceName, pricing: pricing, localizations: localizations,
            clearedForSale: clearedForSale, familyShareable: familyShareable, subscription: subscription,
            duration: duration, introductoryOffers: introductoryOffers, promotionalOffers: promotionalOffers,
            winBackOffers: winBackOffers)
    }
}

package struct LocalizationBody: StrictlyDecodable {
    package static let knownKeys: Set<String> = ["displayName", "description"]
    package var displayName: String
    package var description: String
}

package struct ReviewBody: StrictlyDecodable {
    package static let knownKeys: Set<String> = ["action"]
    package var action: ReviewAction
}

/// Marks a value that is both decoded from and encoded into Kiosk's JSON.
package typealias ResponseCodable = Codable & ResponseEncodable & Sendable

extension Request {
    /// A query or path parameter parsed as `StoreEnvironment`; absent means the sandbox.
    func environment(_ text: String?, field: String = "environment") throws -> StoreEnvironment {
        guard let text else { return .sandbox }
        guard let environment = StoreEnvironment(rawValue: text.lowercased()) else {
            throw KioskError.invalid(
                "invalid_environment", "Unknown environment '\(text)'.", field: field,
                fix: "Use 'sandbox' or 'production'.")
        }
        return environment
    }
}

package struct AccountResource: ResponseCodable {
    package var id: UUID
    package var email: String
    package var firstName: String
    package var lastName: String
    package var storefront: String
    package var paymentOutcome: PaymentOutcome
    package var createdAt: Date
    package var updatedAt: Date

    package init(_ account: CustomerAccount) {
        id = account.id
        email = account.email
        firstName = account.firstName
        lastName = account.lastName
        storefront = account.storefront
        paymentOutcome = account.paymentOutcome
        createdAt = account.createdAt
        updatedAt = account.updatedAt
    }
}

package struct AccountList: ResponseCodable { package var accounts: [AccountResource] }

package struct AccountBody: StrictlyDecodable {
    package static let knownKeys: Set<String> = [
        "email", "password", "firstName", "lastName", "storefront", "paymentOutcome",
    ]
    package var email: String?
    package var password: String?
    package var firstName: String?
    package var lastName: String?
    package var storefront: String?
    package var paymentOutcome: PaymentOutcome?

    package var changes: AccountChanges {
        AccountChanges(
            password: password, firstName: firstName, lastName: lastName, storefront: storefront,
            paymentOutcome: paymentOutcome)
    }
}
