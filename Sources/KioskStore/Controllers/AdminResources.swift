import Foundation
import Hummingbird
import KioskCore
import KioskHTTP
import KioskProtocol

// The console API's request bodies (`/admin/v1`), as documented in openapi.yaml; its answers are in KioskProtocol.

extension AppResource: ResponseEncodable {}
extension AppList: ResponseEncodable {}
extension AvailabilityResource: ResponseEncodable {}
extension ProductResource: ResponseEncodable {}
extension ProductList: ResponseEncodable {}
extension PriceList: ResponseEncodable {}
extension GroupResource: ResponseEncodable {}
extension GroupList: ResponseEncodable {}
extension TesterResource: ResponseEncodable {}
extension TesterList: ResponseEncodable {}
extension KeyResource: ResponseEncodable {}
extension KeyList: ResponseEncodable {}
extension AgreementResource: ResponseEncodable {}
extension AccountResource: ResponseEncodable {}
extension AccountList: ResponseEncodable {}
extension OfferCodeList: ResponseEncodable {}

// MARK: Request bodies

package struct AppCreateBody: Codable {
    package var bundleId: String
    package var name: String
}

package struct AppUpdateBody: Codable {
    package var name: String?
    package var productionNotificationURLs: [String]?
    package var sandboxNotificationURLs: [String]?
    package var sandboxNotificationRetries: Bool?
}

package struct KeyCreateBody: Codable {
    package var name: String?
}

package struct AgreementBody: Codable {
    package var status: PaidAppsAgreement.Status
}

package struct TesterBody: Codable, Sendable {
    package var email: String?
    package var password: String?
    package var firstName: String?
    package var lastName: String?
    package var storefront: String?
    package var interruptPurchases: Bool?
    package var askToBuy: Bool?
    package var renewalRate: RenewalRate?
    package var paymentOutcome: PaymentOutcome?

    package var changes: AccountChanges {
        AccountChanges(
            password: password, firstName: firstName, lastName: lastName, storefront: storefront,
            paymentOutcome: paymentOutcome, interruptPurchases: interruptPurchases, askToBuy: askToBuy,
            renewalRate: renewalRate)
    }
}

package struct GroupBody: Codable {
    package var referenceName: String?
    package var localizations: [SubscriptionGroupLocalization]?
}

package struct ProductBody: Codable {
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

package struct LocalizationBody: Codable {
    package var displayName: String
    package var description: String
}

package struct ReviewBody: Codable {
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

package struct AccountBody: Codable, Sendable {
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
