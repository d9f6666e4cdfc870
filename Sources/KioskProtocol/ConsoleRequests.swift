import Foundation
import KioskCore

// The bodies the console API (`/admin/v1`) takes, as the CLI sends them and the store decodes them (strictly: a key
// these types do not read is refused). Optional fields left out keep what is stored.

/// `POST /apps`.
public struct AppCreateBody: Codable, Sendable {
    public var bundleId: String
    public var name: String

    public init(bundleId: String, name: String) {
        self.bundleId = bundleId
        self.name = name
    }
}

/// `PATCH /apps/{bundleId}`.
public struct AppUpdateBody: Codable, Sendable {
    public var name: String?
    public var productionNotificationURLs: [String]?
    public var sandboxNotificationURLs: [String]?
    public var sandboxNotificationRetries: Bool?

    public init(
        name: String? = nil, productionNotificationURLs: [String]? = nil, sandboxNotificationURLs: [String]? = nil,
        sandboxNotificationRetries: Bool? = nil
    ) {
        self.name = name
        self.productionNotificationURLs = productionNotificationURLs
        self.sandboxNotificationURLs = sandboxNotificationURLs
        self.sandboxNotificationRetries = sandboxNotificationRetries
    }
}

/// `POST /apps/{bundleId}/keys`.
public struct KeyCreateBody: Codable, Sendable {
    public var name: String?

    public init(name: String? = nil) {
        self.name = name
    }
}

/// `PUT /agreements/paid-apps`.
public struct AgreementBody: Codable, Sendable {
    public var status: PaidAppsAgreement.Status

    public init(status: PaidAppsAgreement.Status) {
        self.status = status
    }
}

/// `POST /agreements/paid-apps/accept` (optional) and `PATCH /agreements/paid-apps`: the business details the
/// agreement needs. Each part given replaces the one on file; parts left out stay as they are.
public struct AgreementDetailsBody: Codable, Sendable {
    public struct LegalEntityBody: Codable, Sendable {
        public var name: String
        /// A storefront's three-letter country code.
        public var country: String

        public init(name: String, country: String) {
            self.name = name
            self.country = country
        }
    }

    public struct BankAccountBody: Codable, Sendable {
        public var holderName: String
        /// The IBAN or account number; only its last four characters are kept.
        public var accountNumber: String
        public var currency: String

        public init(holderName: String, accountNumber: String, currency: String) {
            self.holderName = holderName
            self.accountNumber = accountNumber
            self.currency = currency
        }
    }

    public struct TaxInformationBody: Codable, Sendable {
        /// W-9, W-8BEN or W-8BEN-E.
        public var form: String
        /// Only its last four characters are kept.
        public var taxId: String

        public init(form: String, taxId: String) {
            self.form = form
            self.taxId = taxId
        }
    }

    public var legalEntity: LegalEntityBody?
    public var bankAccount: BankAccountBody?
    public var taxInformation: TaxInformationBody?

    public init(
        legalEntity: LegalEntityBody? = nil, bankAccount: BankAccountBody? = nil,
        taxInformation: TaxInformationBody? = nil
    ) {
        self.legalEntity = legalEntity
        self.bankAccount = bankAccount
        self.taxInformation = taxInformation
    }
}

/// `POST /testers`, `PATCH /testers/{email}`: a sandbox tester.
public struct TesterBody: Codable, Sendable {
    public var email: String?
    public var password: String?
    public var firstName: String?
    public var lastName: String?
    public var storefront: String?
    public var interruptPurchases: Bool?
    public var askToBuy: Bool?
    public var renewalRate: RenewalRate?
    public var paymentOutcome: PaymentOutcome?

    public init(
        email: String? = nil, password: String? = nil, firstName: String? = nil, lastName: String? = nil,
        storefront: String? = nil, interruptPurchases: Bool? = nil, askToBuy: Bool? = nil,
        renewalRate: RenewalRate? = nil, paymentOutcome: PaymentOutcome? = nil
    ) {
        self.email = email
        self.password = password
        self.firstName = firstName
        self.lastName = lastName
        self.storefront = storefront
        self.interruptPurchases = interruptPurchases
        self.askToBuy = askToBuy
        self.renewalRate = renewalRate
        self.paymentOutcome = paymentOutcome
    }
}

/// `POST /apps/{bundleId}/subscription-groups`, and its `PATCH`.
public struct GroupBody: Codable, Sendable {
    public var referenceName: String?
    public var localizations: [SubscriptionGroupLocalization]?

    public init(referenceName: String? = nil, localizations: [SubscriptionGroupLocalization]? = nil) {
        self.referenceName = referenceName
        self.localizations = localizations
    }
}

/// `POST /apps/{bundleId}/products` (where `productId`, `type` and `referenceName` are required) and its `PATCH`:
/// the product's id and type beside its ``ProductChanges``, in one flat JSON object.
public struct ProductBody: Codable, Sendable {
    public var productId: String?
    public var type: ProductType?
    public var changes: ProductChanges

    public init(productId: String? = nil, type: ProductType? = nil, changes: ProductChanges = ProductChanges()) {
        self.productId = productId
        self.type = type
        self.changes = changes
    }

    private enum CodingKeys: String, CodingKey {
        case productId, type
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        productId = try container.decodeIfPresent(String.self, forKey: .productId)
        type = try container.decodeIfPresent(ProductType.self, forKey: .type)
        changes = try ProductChanges(from: decoder)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(productId, forKey: .productId)
        try container.encodeIfPresent(type, forKey: .type)
        try changes.encode(to: encoder)
    }
}

/// The fields of a product a caller may set; nil leaves a field as it is. Arrays replace the whole list.
public struct ProductChanges: Codable, Sendable {
    public var referenceName: String?
    public var pricing: Pricing?
    public var localizations: [ProductLocalization]?
    public var clearedForSale: Bool?
    public var familyShareable: Bool?
    public var subscription: SubscriptionPlacement?
    public var duration: SubscriptionDuration?
    public var introductoryOffers: [IntroductoryOffer]?
    public var promotionalOffers: [PromotionalOffer]?
    public var winBackOffers: [WinBackOffer]?
    /// The monthly plan with a 12-month commitment; one whose pricing is empty removes the plan.
    public var monthlyPlan: MonthlyPlan?
    /// The territories the product is offered in (every territory where it has a price when never set).
    public var territoryAvailability: TerritoryAvailability?

    public init(
        referenceName: String? = nil, pricing: Pricing? = nil, localizations: [ProductLocalization]? = nil,
        clearedForSale: Bool? = nil, familyShareable: Bool? = nil, subscription: SubscriptionPlacement? = nil,
        duration: SubscriptionDuration? = nil, introductoryOffers: [IntroductoryOffer]? = nil,
        promotionalOffers: [PromotionalOffer]? = nil, winBackOffers: [WinBackOffer]? = nil,
        monthlyPlan: MonthlyPlan? = nil, territoryAvailability: TerritoryAvailability? = nil
    ) {
        self.referenceName = referenceName
        self.pricing = pricing
        self.localizations = localizations
        self.clearedForSale = clearedForSale
        self.familyShareable = familyShareable
        self.subscription = subscription
        self.duration = duration
        self.introductoryOffers = introductoryOffers
        self.promotionalOffers = promotionalOffers
        self.winBackOffers = winBackOffers
        self.monthlyPlan = monthlyPlan
        self.territoryAvailability = territoryAvailability
    }
}

/// `PUT /apps/{bundleId}/products/{productId}/localizations/{locale}`.
public struct LocalizationBody: Codable, Sendable {
    public var displayName: String
    public var description: String

    public init(displayName: String, description: String) {
        self.displayName = displayName
        self.description = description
    }
}

/// `POST /apps/{bundleId}/products/{productId}/review`.
public struct ReviewBody: Codable, Sendable {
    public var action: ReviewAction

    public init(action: ReviewAction) {
        self.action = action
    }
}

/// `POST /accounts`, `PATCH /accounts/{email}`: a production customer account.
public struct AccountBody: Codable, Sendable {
    public var email: String?
    public var password: String?
    public var firstName: String?
    public var lastName: String?
    public var storefront: String?
    public var paymentOutcome: PaymentOutcome?

    public init(
        email: String? = nil, password: String? = nil, firstName: String? = nil, lastName: String? = nil,
        storefront: String? = nil, paymentOutcome: PaymentOutcome? = nil
    ) {
        self.email = email
        self.password = password
        self.firstName = firstName
        self.lastName = lastName
        self.storefront = storefront
        self.paymentOutcome = paymentOutcome
    }
}

/// A product's place in a subscription group, naming the group by id or by reference name.
public struct SubscriptionPlacement: Codable, Sendable, Hashable {
    public var groupId: Int64?
    public var group: String?
    public var level: Int

    public init(groupId: Int64? = nil, group: String? = nil, level: Int) {
        self.groupId = groupId
        self.group = group
        self.level = level
    }
}

/// What App Store review does to a product, driven from the console (the operator is also the reviewer).
public enum ReviewAction: String, Codable, Sendable, CaseIterable {
    case submit
    case approve
    case reject
    case removeFromSale = "remove_from_sale"
    case restoreToSale = "restore_to_sale"
}

/// `PUT /tax-rules/{storefront}`: a storefront's tax from `effectiveFrom` (now when absent) on.
public struct TaxRuleBody: Codable, Sendable {
    public var pricesIncludeTax: Bool
    /// Hundredths of a percent: 2000 is 20%.
    public var rateBasisPoints: Int
    public var effectiveFrom: Date?

    public init(pricesIncludeTax: Bool, rateBasisPoints: Int, effectiveFrom: Date? = nil) {
        self.pricesIncludeTax = pricesIncludeTax
        self.rateBasisPoints = rateBasisPoints
        self.effectiveFrom = effectiveFrom
    }
}

/// `PUT /agreements/small-business`: enrolment in the Small Business Program from `since` on; null ends it.
public struct SmallBusinessBody: Codable, Sendable {
    public var since: Date?

    public init(since: Date?) {
        self.since = since
    }
}

/// `POST /api-keys`: a team key of the App Store Connect API with these App Store Connect roles.
public struct TeamKeyCreateBody: Codable, Sendable {
    public var name: String?
    public var roles: [TeamRole]

    public init(name: String? = nil, roles: [TeamRole]) {
        self.name = name
        self.roles = roles
    }
}

/// `PUT /exchange-rates/{currency}`: US dollars per unit of the currency, from `effectiveFrom` (now when absent) on.
public struct ExchangeRateBody: Codable, Sendable {
    /// A decimal with at most six places, such as "1.27".
    public var usdPerUnit: String
    public var effectiveFrom: Date?

    public init(usdPerUnit: String, effectiveFrom: Date? = nil) {
        self.usdPerUnit = usdPerUnit
        self.effectiveFrom = effectiveFrom
    }
}

/// `POST /console-users`: a person who signs in to the console. Without `password` the store makes a temporary one,
/// answered once, which they replace at their first sign-in.
public struct ConsoleUserCreateBody: Codable, Sendable {
    public var email: String
    public var name: String
    public var roles: [TeamRole]
    public var password: String?

    public init(email: String, name: String, roles: [TeamRole], password: String? = nil) {
        self.email = email
        self.name = name
        self.roles = roles
        self.password = password
    }
}

/// `PATCH /console-users/{email}`.
public struct ConsoleUserUpdateBody: Codable, Sendable {
    public var name: String?
    public var roles: [TeamRole]?
    /// True stops the user signing in (and ends their sessions); false lets them in again.
    public var disabled: Bool?

    public init(name: String? = nil, roles: [TeamRole]? = nil, disabled: Bool? = nil) {
        self.name = name
        self.roles = roles
        self.disabled = disabled
    }
}
